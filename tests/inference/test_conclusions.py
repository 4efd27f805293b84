"""The conclusion's findings on the four families: every number a sentence states equals the same number computed
here independently (ArviZ's r_hat and ESS, sklearn's per-row log loss, numpy quantiles and the stored covariance's
Wald intervals), the "larger than its noise" verdict flips at twice the standard error, and a missing MLE is stated
with the fit's reason."""

from __future__ import annotations

import dataclasses
import math

import arviz_stats as azs
import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import log_loss

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation.conclusions import (
    NOISE_MULTIPLE,
    ConvergenceFinding,
    IntervalFinding,
    MissingEstimate,
    Omitted,
    ScoreFinding,
    paired_log_loss,
)
from bayesclass.inference.evaluation.parameters import parameter_comparison
from bayesclass.inference.evaluation.report_evaluation import evaluate_comparison
from bayesclass.inference.result import gaussian_approximation
from bayesclass.models import GaussianClassConditional, GaussianClassConditionalPrior, LatentGaussianProcess
from bayesclass.reports.comparison import format_comparison
from bayesclass.reports.conclusion import conclusion_omissions, conclusion_sentences
from bayesclass.reports.labels import estimate_label

SAMPLER = SamplerSettings(draws=200, tune=300, chains=2, progressbar=False)
GP_SAMPLER = SamplerSettings(draws=100, tune=100, chains=2, progressbar=False)
INTERVAL_PROB = 0.89


def _fit(family: str):
    """A small fast fit of ``family`` on the training part of a split, and the split's validation rows."""
    source = data.seed004_gp(60, random_seed=2) if family == "gp" else data.seed001_gaussians(150, random_seed=1)
    train, validation, _ = data.train_validation_test_split(source, fractions=(0.5, 0.45, 0.05), random_seed=0)
    if family == "logistic":
        return inference.fit("logistic", train, method="nuts", sampler=SAMPLER, random_seed=1), validation
    if family == "naive_bayes":
        return inference.fit("naive_bayes", train, method="exact", sampler=SAMPLER, random_seed=1), validation
    if family == "gcc":
        model = GaussianClassConditional(prior=GaussianClassConditionalPrior(covariance_prior="inverse_wishart"))
        return inference.fit(model, train, method="exact", sampler=SAMPLER, random_seed=1), validation
    return inference.fit(LatentGaussianProcess(), train, sampler=GP_SAMPLER, random_seed=1), validation


@pytest.fixture(scope="module", params=["logistic", "naive_bayes", "gcc", "gp"])
def family_run(request):
    result, heldout = _fit(request.param)
    comparison = evaluate_comparison(result, {"held-out": heldout}, interval_prob=INTERVAL_PROB)
    return request.param, result, heldout, comparison


# -- (a) convergence -------------------------------------------------------------------------------------------------


def test_convergence_numbers_are_arviz_numbers(family_run):
    _, result, _, comparison = family_run
    finding = comparison.conclusion.convergence
    assert isinstance(finding, ConvergenceFinding)
    posterior = result["posterior"].to_dataset()
    r_hat = max(float(v.max()) for v in azs.rhat(posterior).data_vars.values())
    bulk = min(float(v.min()) for v in azs.ess(posterior, method="bulk").data_vars.values())
    tail = min(float(v.min()) for v in azs.ess(posterior, method="tail").data_vars.values())
    assert finding.max_r_hat == pytest.approx(r_hat, rel=1e-12)
    assert finding.min_ess_bulk == pytest.approx(bulk, rel=1e-12)
    assert finding.min_ess_tail == pytest.approx(tail, rel=1e-12)
    assert (finding.n_chains, finding.n_draws) == (posterior.sizes["chain"], posterior.sizes["draw"])
    stats = result["sample_stats"].to_dataset() if "sample_stats" in result.children else None
    sentence = conclusion_sentences(comparison.conclusion)[0]
    if stats is None:  # exact conjugate draws: independent, no verdict
        assert finding.verdict == "no_verdict" and finding.n_divergences is None
        assert "no verdict" in sentence and f"{finding.n_chains * finding.n_draws} draws" in sentence
    else:
        assert finding.verdict in ("pass", "fail")
        expected = int(stats["diverging"].sum()) if "diverging" in stats else None
        assert finding.n_divergences == expected
        assert f"max r_hat {r_hat:.4f}" in sentence and f"min ESS bulk {bulk:.0f} / tail {tail:.0f}" in sentence
        if expected is not None:
            assert f"{expected} divergent transitions" in sentence


# -- (b) held-out scores ---------------------------------------------------------------------------------------------


def _per_row_log_loss(proba: np.ndarray, y: np.ndarray) -> np.ndarray:
    labels = np.arange(proba.shape[1])
    return np.array([log_loss([code], [row], labels=labels) for code, row in zip(y, proba, strict=True)])


def test_best_estimate_and_paired_difference_equal_sklearn_per_row_log_losses(family_run):
    _, result, heldout, comparison = family_run
    (finding,) = comparison.conclusion.scores
    assert isinstance(finding, ScoreFinding)
    prediction = inference.predict(result, heldout, interval_prob=INTERVAL_PROB)
    class_names = list(prediction["class"].values.astype(str))
    y = np.array([class_names.index(heldout.class_names[code]) for code in heldout.y])
    proba = {"posterior": prediction["class_proba"].values}
    for group in result.children:
        if group.startswith("point_estimate_"):
            kind = group.removeprefix("point_estimate_")
            proba[kind] = prediction[f"class_proba_{kind}"].values
    losses = {name: _per_row_log_loss(p, y) for name, p in proba.items()}
    ranked = sorted(losses, key=lambda name: losses[name].mean())
    # the finding ranks the same estimates in the same order, with the same mean log losses
    assert [mean for _, mean in finding.log_losses] == pytest.approx([losses[n].mean() for n in ranked], rel=1e-9)
    differences = losses[ranked[1]] - losses[ranked[0]]
    se = differences.std(ddof=1) / math.sqrt(differences.size)
    assert finding.n_rows == y.size
    assert finding.difference == pytest.approx(differences.mean(), rel=1e-9, abs=1e-15)
    assert finding.standard_error == pytest.approx(se, rel=1e-9, abs=1e-15)
    assert finding.larger_than_noise == (differences.mean() > NOISE_MULTIPLE * se)
    sentence = next(s for s in conclusion_sentences(comparison.conclusion) if s.startswith("On held-out"))
    assert f"{losses[ranked[0]].mean():.4f}" in sentence and f"{losses[ranked[1]].mean():.4f}" in sentence
    assert f"{differences.mean():.3g} with standard error {se:.3g}" in sentence
    assert ("larger than its noise" if finding.larger_than_noise else "within its noise") in sentence


def _pair(ratio: float, n: int = 200) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Two estimates whose per-row log-loss differences have mean ``ratio`` standard errors (sd 0.1)."""
    z = np.random.default_rng(0).standard_normal(n)
    z = (z - z.mean()) / z.std(ddof=1)
    sd = 0.1
    differences = ratio * sd / math.sqrt(n) + sd * z
    p_best = np.full(n, 0.6)
    p_other = p_best * np.exp(-differences)  # -log p_other - (-log p_best) = differences
    y = np.zeros(n, dtype=int)
    return {"A": np.c_[p_best, 1 - p_best], "B": np.c_[p_other, 1 - p_other]}, y


@pytest.mark.parametrize("ratio", [1.9, 2.1, 3.0, 0.5])
def test_larger_than_its_noise_flips_at_twice_the_standard_error(ratio):
    proba, y = _pair(ratio)
    finding = paired_log_loss(proba, y, split="test")
    assert isinstance(finding, ScoreFinding)
    assert (finding.best, finding.runner_up) == ("A", "B")
    assert finding.standard_error == pytest.approx(0.1 / math.sqrt(y.size), rel=1e-12)
    assert finding.ratio == pytest.approx(ratio, rel=1e-9)
    assert finding.larger_than_noise == (ratio > NOISE_MULTIPLE)


def test_an_infinite_runner_up_is_larger_than_any_noise_and_undefined_rows_are_left_out():
    proba, y = _pair(0.0, n=20)
    proba["B"][3] = [0.0, 1.0]  # the observed class 0 gets probability 0
    proba["C"] = proba["A"].copy()
    proba["C"][5] = np.nan
    finding = paired_log_loss(proba, y)
    assert finding.runner_up == "B" and math.isinf(finding.difference) and finding.larger_than_noise
    assert finding.zero_probability_rows == (("B", 1),) and finding.left_out == (("C", 1),)


def test_one_estimate_has_nothing_to_compare_with():
    proba, y = _pair(0.0, n=10)
    finding = paired_log_loss({"A": proba["A"]}, y)
    assert finding.runner_up is None and math.isnan(finding.difference) and not finding.larger_than_noise


def test_bad_probability_shapes_are_refused():
    with pytest.raises(ValueError, match=r"proba\['A'\] has shape"):
        paired_log_loss({"A": np.ones(3)}, np.zeros(3, dtype=int))


# -- (c) the MLE that does not exist ---------------------------------------------------------------------------------


def test_separable_data_state_where_the_mle_does_not_exist_and_why():
    train = data.load("seed000_separable")
    result = inference.fit("naive_bayes", train, method="exact", sampler=SAMPLER, random_seed=0)
    logistic = inference.fit("logistic", train, method="laplace", sampler=SAMPLER, random_seed=0)
    comparison = evaluate_comparison(logistic, {"held-out": train})
    (missing,) = comparison.conclusion.missing
    assert isinstance(missing, MissingEstimate) and missing.kind == "mle"
    assert "separable" in missing.reason and missing.n_rows == train.n_obs
    sentence = next(s for s in conclusion_sentences(comparison.conclusion) if "absent" in s)
    assert f"The MLE is absent on these {train.n_obs} training rows" in sentence and "separable" in sentence
    assert "The MLE is absent" in format_comparison(comparison)
    # a family whose MLE exists on the same rows states nothing missing
    assert evaluate_comparison(result).conclusion.missing == ()


def test_a_zero_class_variance_is_the_stated_reason():
    train = data.seed001_gaussians(40, random_seed=3)
    X = train.X.copy()
    X[train.y == 0, 1] = 0.5  # feature 2 constant in class 0: its ML variance is 0, the Gaussian MLE does not exist
    constant = dataclasses.replace(train, name="constant", X=X)
    result = inference.fit("naive_bayes", constant, method="exact", sampler=SAMPLER, random_seed=0)
    missing = {finding.kind: finding for finding in evaluate_comparison(result).conclusion.missing}
    assert "mle" in missing and "variance 0" in missing["mle"].reason


# -- (d) posterior vs Wald intervals ---------------------------------------------------------------------------------


def _labelled_draws(posterior) -> dict[str, np.ndarray]:
    draws = {}
    for name, variable in posterior.data_vars.items():
        variable = variable.transpose("chain", "draw", ...)
        values, dims = variable.values, variable.dims[2:]
        for index in np.ndindex(values.shape[2:]):
            labels = [str(variable[dim].values[i]) for dim, i in zip(dims, index, strict=True)]
            draws[f"{name}[{', '.join(labels)}]" if labels else str(name)] = values[(slice(None), slice(None), *index)]
    return draws


def test_interval_comparison_equals_quantiles_and_wald_intervals(family_run):
    family, result, _, comparison = family_run
    findings = comparison.conclusion.intervals
    kinds = [k.removeprefix("point_estimate_") for k in result.children if k.startswith("point_estimate_")]
    stored = {kind: gaussian_approximation(result, kind) for kind in kinds}
    stored = {kind: approximation for kind, approximation in stored.items() if approximation is not None}
    if not stored:  # a family without covariances yet: the sentence is left out, with the reason
        assert len(findings) == 1 and isinstance(findings[0], Omitted)
        assert "stores a covariance" in findings[0].reason
        assert any("stores a covariance" in line for line in conclusion_omissions(comparison.conclusion))
        assert not any("Wald" in sentence for sentence in conclusion_sentences(comparison.conclusion))
        return
    draws = _labelled_draws(result["posterior"].to_dataset())
    z = scipy.stats.norm.ppf(0.5 + INTERVAL_PROB / 2)
    by_kind = {finding.kind: finding for finding in findings if isinstance(finding, IntervalFinding)}
    shown = {row["parameter"] for row in parameter_comparison(result, interval_prob=INTERVAL_PROB)}
    hidden = {kind for kind, approximation in stored.items() if not shown & set(approximation.labels)}
    if hidden:  # e.g. a GP's Laplace covariance over the latent values, which the comparison does not list
        assert len(findings) == 1 and isinstance(findings[0], Omitted), family
        assert all(f"{kind}: no standard error for the parameters shown" in findings[0].reason for kind in hidden)
        return
    assert set(by_kind) == set(stored), family
    for kind, approximation in stored.items():
        params = np.asarray(approximation.params, dtype=float)
        se = np.sqrt(np.diag(np.asarray(approximation.covariance, dtype=float)))
        ratios, shifts = [], []
        for label, estimate, error in zip(approximation.labels, params, se, strict=True):
            flat = draws[label].ravel()
            low, high = np.quantile(flat, [0.5 - INTERVAL_PROB / 2, 0.5 + INTERVAL_PROB / 2])
            ratios.append((high - low) / (2 * z * error))
            shifts.append(abs(flat.mean() - estimate) / flat.std(ddof=1))
        finding = by_kind[kind]
        assert finding.n_parameters == len(ratios)
        assert finding.median_width_ratio == pytest.approx(np.median(ratios), rel=1e-9)
        assert (finding.min_width_ratio, finding.max_width_ratio) == pytest.approx((min(ratios), max(ratios)), rel=1e-9)
        assert finding.largest_shift == pytest.approx(max(shifts), rel=1e-9)
        tied = [
            label
            for label, shift in zip(approximation.labels, shifts, strict=True)
            if shift >= max(shifts) * (1 - 1e-9)
        ]
        assert finding.shift_parameter in tied  # a binary class prior's two elements shift alike
        wording = f"the {estimate_label(kind)}'s 89% Wald"
        sentence = next(s for s in conclusion_sentences(comparison.conclusion) if wording in s)
        assert f"median width ratio {np.median(ratios):.3f} over {len(ratios)} parameters" in sentence
        assert f"{max(shifts):.2f} posterior sd" in sentence


def test_compare_prints_the_conclusion_last(family_run):
    _, _, _, comparison = family_run
    text = format_comparison(comparison)
    tail = text[text.rindex("conclusion:") :].splitlines()
    assert tail[1:] == [f"  {s}" for s in conclusion_sentences(comparison.conclusion)] + [
        f"  (not concluded: {line})" for line in conclusion_omissions(comparison.conclusion)
    ]
