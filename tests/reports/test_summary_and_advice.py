"""The summary's hyperparameter table (name, value, prior) and the convergence advice computed from what failed.

Issue 29, items 3 and 1: hyperparameters were shown as raw JSON; the advice box read the same whatever failed.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

from bayesclass.inference.criticism.diagnostics import MIN_ESS, convergence_advice, diagnose, stuck_chains
from bayesclass.inference.evaluation import report_data as rd
from bayesclass.inference.evaluation.report_evaluation import convergence, hyperparameter_rows, run_summary
from bayesclass.inference.result import result_info
from bayesclass.models import REGISTRY, get_model
from bayesclass.reports.sections import Table, Text, convergence_section, summary_section, verdict_blocks


def _dotted_fields(instance, prefix: str = "") -> set[str]:
    """Every hyperparameter of a family instance by dotted name, read from its dataclass fields."""
    names = set()
    for item in dataclasses.fields(instance):
        value = getattr(instance, item.name)
        name = f"{prefix}{item.name}"
        names |= _dotted_fields(value, f"{name}.") if dataclasses.is_dataclass(value) else {name}
    return names


def _run(summary: rd.RunSummary, convergence_record: rd.Convergence | None = None) -> rd.RunEvaluation:
    """A run evaluation holding only what the summary and convergence sections read."""
    return rd.RunEvaluation(
        summary=summary, convergence=convergence_record, estimates=None, heldout=(), no_heldout_reason="",
        loo=None, pareto_k_limit=0.7, calibration=None, boundary=None, generative=None, decisions=None,
        fit_warnings=(),
    )  # type: ignore[arg-type]  # fmt: skip


def _summary(model, n_classes: int = 2) -> rd.RunSummary:
    return rd.RunSummary(
        label="run", family=model.name, family_class=type(model).__name__, hyperparameters=model.to_dict(),
        prior_formulas=model.prior_formulas(n_classes=n_classes), data_name="d", data_fingerprint="f",
        data_provenance="", n_rows=10, feature_names=("a", "b"), class_names=tuple("xyz"[:n_classes]),
        standardized_features=(), method="map", draws="point", sampler_settings={}, sampler_backend=None,
        random_seed=0, timings=(), compile_cache_hit=None, package_versions=(), created_at="",
        hyperparameter_rows=hyperparameter_rows(model.to_dict(), model.hyperparameter_priors(n_classes=n_classes)),
    )  # fmt: skip


def _cells(section) -> list[str]:
    cells = []
    for block in section.blocks:
        if isinstance(block, Table):
            cells += [block.caption, *(cell for row in block.rows for cell in row)]
        elif isinstance(block, Text):
            cells.append(block.body)
    return cells


def _hyperparameter_table(section) -> Table:
    (table,) = [b for b in section.blocks if isinstance(b, Table) and b.caption == "Hyperparameters and priors"]
    return table


# -- item 3: hyperparameters and priors ------------------------------------------------------------------------------


@pytest.mark.parametrize("family", sorted(REGISTRY))
def test_every_family_shows_its_hyperparameters_as_a_table_not_json(family):
    model = get_model(family)
    section = summary_section(_run(_summary(model)))
    table = _hyperparameter_table(section)
    assert table.header == ("name", "value", "prior")
    names = [row[0] for row in table.rows]
    assert set(names) == _dotted_fields(model), names  # nested priors flattened to dotted names, every one shown
    assert not any("{" in cell or "}" in cell for cell in _cells(section)), "raw JSON in the summary"
    stated = model.hyperparameter_priors(n_classes=2)  # gcc and gp state only the priors of the form they use
    assert all(row[2] != "-" for row in table.rows if row[0] in stated)
    assert all(row[2] == "-" for row in table.rows if row[0] in set(type(model).prior_variables) - set(stated))


def test_a_prior_formula_and_a_flattened_value_appear_beside_their_hyperparameter():
    model = get_model("gp", prior={"lengthscale_prior": "inverse_gamma", "lengthscale_alpha": 4.0})
    rows = {row[0]: row[1:] for row in _hyperparameter_table(summary_section(_run(_summary(model)))).rows}
    assert rows["prior.lengthscale_alpha"] == ("4", "lengthscale[feature] ~ InverseGamma(4, 2)")
    assert rows["prior.lengthscale_lower"] == ("0.2", "-")  # the PC prior's, unused by this one
    assert rows["prior.amplitude_sigma"] == ("3", "amplitude ~ HalfNormal(3)")
    assert rows["kernel"] == ("exp_quad", "-")  # sets no stated prior
    assert rows["hsgp_basis"] == ("none", "-")


def test_gp_states_only_the_priors_of_its_lengthscale_prior():
    pc = get_model("gp").hyperparameter_priors()
    inverse_gamma = get_model("gp", prior={"lengthscale_prior": "inverse_gamma"}).hyperparameter_priors()
    statement = "lengthscale[feature] ~ PC(P(lengthscale < 0.2) = 0.05): lengthscale^(-1/2) ~ Exponential(1.34)"
    assert pc["prior.lengthscale_lower"] == pc["prior.lengthscale_prior"] == statement  # -log(0.05) sqrt(0.2)
    assert "prior.lengthscale_alpha" not in pc and "prior.lengthscale_lower_prob" not in inverse_gamma
    assert inverse_gamma["prior.lengthscale_beta"] == "lengthscale[feature] ~ InverseGamma(3, 2)"


def test_gcc_states_only_the_priors_of_its_covariance_prior():
    lkj = get_model("gcc").hyperparameter_priors(n_classes=2)
    wishart = get_model("gcc", prior={"covariance_prior": "inverse_wishart"}).hyperparameter_priors(n_classes=2)
    assert "prior.lkj_eta" in lkj and "prior.wishart_scale" not in lkj and "prior.mean_strength" not in lkj
    assert wishart["prior.wishart_scale"].startswith("covariance ~ InverseWishart(")
    assert wishart["prior.mean_strength"] == "class_mean[c] | covariance ~ MultivariateNormal(m_0, covariance / 0.01)"
    assert "prior.lkj_eta" not in wishart and "prior.mean_sigma" not in wishart


def test_the_summary_of_a_fitted_result_carries_the_rows(map_gaussians):
    info = result_info(map_gaussians)
    summary = run_summary(map_gaussians, info, label="map")
    rows = {row[0]: row for row in summary.hyperparameter_rows}
    assert rows["prior.weight_sigma"] == ("prior.weight_sigma", "1", "weights[feature] ~ Normal(0, 1^2)")
    assert rows["parametrization"] == ("parametrization", "whitened", "")


# -- item 1: advice computed from what failed ------------------------------------------------------------------------


def _tampered(result, group: str, **replaced):
    """A copy of ``result`` whose ``group`` has the arrays ``replaced`` (same dims)."""
    copy = result.copy(deep=True)
    dataset = copy[group].to_dataset()
    copy[group] = dataset.assign({name: (dataset[name].dims, value) for name, value in replaced.items()})
    return copy


def _advice_rows(result) -> tuple[str, ...]:
    info = result_info(result)
    run = _run(run_summary(result, info, label="r"), convergence(result, info))
    section = convergence_section(run)
    assert not any(isinstance(block, Table) and block.kind == "advice" for block in section.blocks)  # at the top
    boxes = [block for block in verdict_blocks(run) if isinstance(block, Table) and block.kind == "advice"]
    assert len(boxes) <= 1
    return tuple(row[0] for row in boxes[0].rows) if boxes else ()


def test_different_failures_give_different_advice_naming_their_flags(nuts_gaussians):
    settings = result_info(nuts_gaussians).sampler_settings
    diverging = nuts_gaussians["sample_stats"]["diverging"].values.copy()
    diverging[0, :5] = True
    divergent = _advice_rows(_tampered(nuts_gaussians, "sample_stats", diverging=diverging))
    posterior = nuts_gaussians["posterior"].to_dataset()
    frozen = {}
    for name, variable in posterior.data_vars.items():  # chain 1 repeats its first draw: stuck
        frozen[name] = variable.values.copy()
        frozen[name][1] = frozen[name][1, :1]
    stuck = _advice_rows(_tampered(nuts_gaussians, "posterior", **frozen))
    assert divergent and stuck and divergent != stuck
    accept = float(settings["target_accept"])
    text = " ".join(divergent)
    assert f"SamplerSettings(target_accept=0.95), was {accept:g}" in text
    assert "random_seed" not in text and "draws=" not in text
    text = " ".join(stuck)
    assert "target_accept" not in text  # nothing diverged
    seed = result_info(nuts_gaussians).random_seed
    assert f"random_seed={seed + 1}, was {seed}" in text
    assert f"SamplerSettings(tune={max(2 * int(settings['tune']), 1000)}), was {settings['tune']}" in text


def test_low_ess_advises_the_draws_scaled_by_the_ess_seen(nuts_gaussians):
    info = result_info(nuts_gaussians)
    draws = int(info.sampler_settings["draws"])
    for min_ess in (50.0, 150.0):
        (line,) = [item for item in convergence_advice(("ess_bulk",), info, min_ess=min_ess) if "draws=" in item]
        expected = math.ceil(draws * max(2.0, 1.2 * MIN_ESS / min_ess) / 100) * 100
        assert f"SamplerSettings(draws={expected}), was {draws}" in line, line
        assert f"the smallest ESS, {min_ess:.0f} from {draws} draws" in line
    (doubled,) = [item for item in convergence_advice(("r_hat",), info, min_ess=1e6) if "draws=" in item]
    assert f"SamplerSettings(draws={math.ceil(2 * draws / 100) * 100})," in doubled and "twice the draws" in doubled


def test_a_converged_run_shows_no_advice_box(nuts_gaussians):
    assert diagnose(nuts_gaussians).passed
    assert _advice_rows(nuts_gaussians) == ()
    info = result_info(nuts_gaussians)
    section = convergence_section(_run(run_summary(nuts_gaussians, info, label="r"), convergence(nuts_gaussians, info)))
    assert not any("What to try" in cell for cell in _cells(section)) and section.alerts == ()


def test_a_stuck_chain_is_found_by_its_repeated_state(nuts_gaussians):
    posterior = nuts_gaussians["posterior"].to_dataset()
    assert stuck_chains(posterior) == {}
    n_draws = posterior.sizes["draw"]
    frozen = posterior.copy(deep=True)
    for name in frozen.data_vars:
        values = frozen[name].values
        values[1, : 3 * n_draws // 4] = values[1, :1]  # chain 1 stands still for three quarters of its draws
    found = stuck_chains(frozen)
    frozen_steps = (3 * n_draws // 4 - 1) / (n_draws - 1)  # and the few steps where NUTS kept its state
    assert list(found) == [1] and frozen_steps <= found[1] < frozen_steps + 0.05
    report = diagnose(_tampered(nuts_gaussians, "posterior", **{n: frozen[n].values for n in frozen.data_vars}))
    assert "stuck_chain" in report.failed_checks and not report.passed
    assert any(re.search(r"stuck chain 1 \(state repeats in \d+% of its draws\)", f) for f in report.failures)
    assert np.isfinite(report.max_r_hat)
