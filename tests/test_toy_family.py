"""The registry drives everything: a sixth family registered at test time fits, predicts, reports and runs a study.

The toy is a renamed subclass of an existing family (naive Bayes: its exact conjugate draws keep the test fast).
Registering it is the one line ``REGISTRY["toy_naive_bayes"] = ToyNaiveBayes``; nothing else in the package is
edited or patched. Every entry point must then accept it by name: ``fit``, ``predict``, the result schema (a saved
result loads back), the HTML report, the CLI (its ``--model`` choices and flags), and a two-cell comparison study.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.cli import main
from bayesclass.inference.result import result_info
from bayesclass.models import REGISTRY, NaiveBayes

TOY = "toy_naive_bayes"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ToyNaiveBayes(NaiveBayes):
    """Naive Bayes under another registry name (only the tests register it).

    Parameters
    ----------
    prior : NaiveBayesPrior
        The naive Bayes priors.
    """

    name: ClassVar[str] = TOY


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(REGISTRY, TOY, ToyNaiveBayes)  # the one line that registers a family
    return ToyNaiveBayes()


SMALL = bc.SamplerSettings(draws=200, chains=2, progressbar=False)


def test_fit_predict_and_save_a_registered_toy_family(toy, tmp_path):
    data = bc.load("transport")
    result = bc.fit(TOY, data, method="exact", sampler=SMALL, random_seed=0)
    info = result_info(result)
    assert info.model == toy and info.method == "exact"
    same = bc.fit(bc.NaiveBayes(), data, method="exact", sampler=SMALL, random_seed=0)
    rows = data.X[:4]
    toy_proba = bc.predict(result, rows)["class_proba"].values
    np.testing.assert_allclose(toy_proba, bc.predict(same, rows)["class_proba"].values, rtol=0, atol=1e-12)
    path = bc.save_result(result, tmp_path / "toy.nc")
    loaded = bc.load_result(path)
    assert result_info(loaded).model == toy
    np.testing.assert_allclose(bc.predict(loaded, rows)["class_proba"].values, toy_proba, rtol=0, atol=1e-12)


def test_the_report_of_a_toy_family_renders(toy):
    data = bc.load("transport")
    result = bc.fit(TOY, data, method="exact", sampler=SMALL, random_seed=0)
    page = bc.report(result, data)
    assert TOY in page and "ToyNaiveBayes" in page
    assert "Generative checks" in page  # the generative section comes from the family's class, not its name


def test_the_cli_offers_and_fits_the_toy_family(toy, tmp_path, capsys):
    out = tmp_path / "toy.nc"
    assert main(["fit", "--model", TOY, "--data", "transport", "--method", "map", "--out", str(out)]) == 0
    assert result_info(bc.load_result(out)).model.name == TOY
    assert main(["fit", "--model", TOY, "--data", "transport", "--binary-alpha", "2", "--out", str(out)]) == 0
    assert result_info(bc.load_result(out)).model.prior.binary_alpha == 2.0
    capsys.readouterr()


def test_a_two_cell_study_of_the_toy_family(toy, tmp_path):
    import bayesclass.study as studies
    from bayesclass.inference.studies.runner import run_study
    from bayesclass.inference.studies.spec import parse_spec

    spec = parse_spec(
        {
            "name": "toy",
            "seed": 0,
            "training_sizes": [20, 40],
            "repeats": 1,
            "test_fraction": 0.3,
            "sampler": {"draws": 100, "chains": 2},
            "models": [{"family": TOY, "method": "exact", "point_estimates": ["mle", "map"]}],
            "datasets": [{"name": "seed001_gaussians", "generator": {"n": 200, "random_seed": 1}}],
        }
    )
    table = run_study(spec, tmp_path / "study", serial=True, progress=False)
    assert table["key"].nunique() == 2 and set(table["size"]) == {20, 40}
    assert set(table["family"]) == {TOY}
    assert np.isfinite(table.loc[table["metric"] == "log_loss", "value"]).all()
    page = studies.report(tmp_path / "study")
    assert TOY in page


# -- a sampling method registered at test time -----------------------------------------------------------------------


def _run_thinned_exact(model, training, settings, random_seed):
    """A toy sampler: the exact conjugate draws, every second one kept (it records its own settings)."""
    from bayesclass.inference.engines import exact

    run = exact.SAMPLER.run(model, training, settings, random_seed)
    return dataclasses.replace(
        run, posterior=run.posterior.isel(draw=slice(None, None, 2)), sampler_settings={**run.sampler_settings}
    )


@pytest.fixture
def toy_sampler(monkeypatch):
    from bayesclass.inference.engines.methods import SAMPLERS
    from bayesclass.inference.engines.sampler import Sampler

    sampler = Sampler(
        name="thinned_exact",
        description="every second exact conjugate draw",
        accepts=lambda model: model.has_exact(),
        run=_run_thinned_exact,
    )
    monkeypatch.setitem(SAMPLERS, sampler.name, sampler)  # the one line that registers a method
    return sampler


def test_a_registered_sampler_fits_loads_diagnoses_and_runs_from_the_cli(toy_sampler, tmp_path, capsys):
    from bayesclass.inference.engines.methods import methods_of

    data = bc.load("transport")
    assert "thinned_exact" in methods_of(bc.NaiveBayes()) and "thinned_exact" not in methods_of(bc.LogisticRegression())
    result = bc.fit(bc.NaiveBayes(), data, method="thinned_exact", sampler=SMALL, random_seed=0)
    assert result["posterior"].sizes["draw"] == SMALL.draws // 2
    assert result_info(result).has_draws and "point_estimate_map" in result.children
    bc.diagnose(result)
    loaded = bc.load_result(bc.save_result(result, tmp_path / "thinned.nc"))
    assert result_info(loaded).method == "thinned_exact"
    out = tmp_path / "cli.nc"
    assert main(["fit", "--model", "naive_bayes", "--data", "transport", "--method", "thinned_exact", "--draws",
                 "100", "--out", str(out)]) == 0  # fmt: skip
    assert result_info(bc.load_result(out)).method == "thinned_exact"
    assert main(["fit", "--model", "logistic", "--data", "iris", "--method", "thinned_exact", "--out", str(out)]) == 2
    assert "is not available for --model logistic" in capsys.readouterr().err
