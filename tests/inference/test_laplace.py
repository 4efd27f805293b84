"""``method="laplace"``: independent draws from N(MAP, inverse Hessian), laid out and used as any posterior."""

from __future__ import annotations

import dataclasses
import json
from typing import ClassVar

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.data import seed001_gaussians
from bayesclass.inference.engines.laplace import gaussian_draws
from bayesclass.inference.engines.methods import SAMPLERS
from bayesclass.models import GaussianClassConditional, LogisticRegression, NaiveBayes
from bayesclass.models.approximation import GaussianApproximation
from tests.bad_inputs.harness import assert_one_line_error, run

MANY = bc.SamplerSettings(draws=5000, chains=4)


def _flat_draws(result) -> np.ndarray:
    """The posterior draws as rows of the flattened parameters, in the covariance's order (intercept, weights)."""
    posterior = result["posterior"].to_dataset()
    columns = [
        posterior[name].values.reshape(posterior.sizes["chain"] * posterior.sizes["draw"], -1)
        for name in ("intercept", "weights")
    ]
    return np.hstack(columns)


def _stored_approximation(result) -> GaussianApproximation:
    estimate = result["point_estimate_map"].to_dataset()
    return GaussianApproximation.from_dataset(result["estimate_covariance_map"].to_dataset(), estimate)


def _assert_mean_and_covariance_match(draws: np.ndarray, approximation: GaussianApproximation) -> None:
    """Mean and covariance of the draws equal N(params, covariance)'s within 5 Monte-Carlo standard errors."""
    n = len(draws)
    covariance = approximation.covariance
    variance = np.diag(covariance)
    assert np.all(np.abs(draws.mean(axis=0) - approximation.params) <= 5 * np.sqrt(variance / n) + 1e-12)
    # the sampling sd of a Gaussian sample covariance element: sqrt((S_ii S_jj + S_ij^2) / n)
    error = np.sqrt((np.outer(variance, variance) + covariance**2) / n)
    assert np.all(np.abs(np.cov(draws, rowvar=False) - covariance) <= 5 * error + 1e-12)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_binary_draws_have_the_map_mean_and_the_inverse_hessian_covariance(link):
    data = seed001_gaussians(200)
    result = bc.fit(LogisticRegression(link=link), data, method="laplace", sampler=MANY, random_seed=3)
    posterior = result["posterior"]
    assert posterior["weights"].dims == ("chain", "draw", "feature") and posterior["intercept"].dims == (
        "chain",
        "draw",
    )
    assert list(posterior["feature"].values) == list(data.feature_names)
    assert (posterior.sizes["chain"], posterior.sizes["draw"]) == (4, 5000)
    approximation = _stored_approximation(result)
    assert approximation.names == ("intercept", "weights")
    _assert_mean_and_covariance_match(_flat_draws(result), approximation)


def test_softmax_draws_on_iris_match_the_map_and_sum_to_zero_over_classes():
    data = bc.load("iris")
    result = bc.fit("logistic", data, method="laplace", sampler=MANY, random_seed=5, standardize=True)
    posterior = result["posterior"]
    assert posterior["weights"].dims == ("chain", "draw", "feature", "class")
    assert list(posterior["class"].values) == list(data.class_names)
    for name in ("intercept", "weights"):  # the covariance is singular (zero-sum): the draws stay on the plane
        scale = float(np.abs(posterior[name]).max())
        assert float(np.abs(posterior[name].sum("class")).max()) < 1e-10 * scale
    _assert_mean_and_covariance_match(_flat_draws(result), _stored_approximation(result))


def test_same_seed_same_draws_other_seed_other_draws():
    data = seed001_gaussians(60)
    settings = bc.SamplerSettings(draws=50, chains=2)
    first, again, other = (
        bc.fit("logistic", data, method="laplace", sampler=settings, random_seed=seed) for seed in (7, 7, 8)
    )
    assert first["posterior"].to_dataset().identical(again["posterior"].to_dataset())
    assert not np.allclose(first["posterior"]["weights"].values, other["posterior"]["weights"].values)


def test_gaussian_draws_handle_a_singular_covariance_and_refuse_a_negative_one():
    basis = np.eye(3) - 1.0 / 3.0  # the zero-sum projection: rank 2
    draws = gaussian_draws(np.zeros(3), 4.0 * basis, (2, 3000), random_seed=0)
    assert draws.shape == (2, 3000, 3) and np.abs(draws.sum(axis=-1)).max() < 1e-12
    np.testing.assert_allclose(np.cov(draws.reshape(-1, 3), rowvar=False), 4.0 * basis, atol=0.3)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        gaussian_draws(np.zeros(2), np.diag([1.0, -1.0]), (1, 10), random_seed=0)
    with pytest.raises(ValueError, match="NaN or inf"):
        gaussian_draws(np.zeros(2), np.full((2, 2), np.nan), (1, 10), random_seed=0)


def test_laplace_fit_is_predicted_and_diagnosed_like_independent_draws():
    data = seed001_gaussians(80)
    result = bc.fit("logistic", data, method="laplace", sampler=bc.SamplerSettings(draws=300, chains=2), random_seed=1)
    assert SAMPLERS["laplace"].independent_draws and result.attrs["method"] == "laplace"
    assert "log_likelihood" in result and "sample_stats" not in result
    predictions = bc.predict(result, data.X[:5])
    np.testing.assert_allclose(predictions["class_proba"].sum("class"), 1.0)
    report = bc.diagnose(result)
    assert not report.applies and report.advice == ()  # independent draws: no chain, no verdict
    from bayesclass.inference.criticism.loo import loo

    summary = loo(result)  # PSIS-LOO over the draws' pointwise log-likelihood, as for any posterior
    assert np.isfinite(summary.elpd_loo) and summary.elpd_loo < 0


@dataclasses.dataclass(frozen=True, kw_only=True)
class _NoLaplaceNaiveBayes(NaiveBayes):
    """Naive Bayes that declares no Laplace approximation (test-only family)."""

    name: ClassVar[str] = "no_laplace_naive_bayes"
    laplace_space = "map"  # and no unconstrained MAP approximation: has_laplace() is False


def test_only_families_with_a_laplace_approximation_accept_it():
    accepts = SAMPLERS["laplace"].accepts
    assert accepts(LogisticRegression()) and accepts(LogisticRegression(link="probit"))
    assert accepts(NaiveBayes()) and accepts(GaussianClassConditional())  # in the unconstrained space
    assert not accepts(_NoLaplaceNaiveBayes())
    with pytest.raises(ValueError, match=r"method='laplace' is not available for the 'no_laplace_naive_bayes' model"):
        bc.fit(_NoLaplaceNaiveBayes(), seed001_gaussians(40), method="laplace")


def test_cli_fit_and_compare_with_laplace(tmp_path, capsys):
    out = tmp_path / "run.nc"
    common = ("--data", "seed001_gaussians", "--rows", "80", "--model", "logistic", "--method", "laplace")
    assert run("fit", *common, "--draws", "200", "--seed", "2", "--out", str(out)) == 0
    assert "by laplace" in capsys.readouterr().out
    page = tmp_path / "page.html"
    assert run("compare", *common, "--draws", "200", "--seed", "2", "--report", str(page)) == 0
    printed, html = capsys.readouterr().out, page.read_text(encoding="utf-8")
    assert "laplace" in html
    for text in (printed, html):  # the draws are described by their own method, not as exact conjugate draws
        assert "independent draws from the Laplace approximation" in text.replace("Independent", "independent")
        assert "exact conjugate" not in text


def test_cli_refuses_laplace_for_a_family_without_an_approximation(tmp_path, capsys, monkeypatch):
    from bayesclass.models import REGISTRY

    monkeypatch.setitem(REGISTRY, _NoLaplaceNaiveBayes.name, _NoLaplaceNaiveBayes)
    code = run(
        "fit", "--data", "transport", "--model", _NoLaplaceNaiveBayes.name, "--method", "laplace",
        "--out", str(tmp_path / "x.nc"),
    )  # fmt: skip
    assert code == 2
    assert_one_line_error(
        capsys.readouterr().err, "--method laplace is not available for --model no_laplace_naive_bayes"
    )


def _summary(result) -> tuple[np.ndarray, np.ndarray]:
    draws = _flat_draws(result)
    return draws.mean(axis=0), draws.std(axis=0)


def test_laplace_agrees_with_nuts_on_well_conditioned_data():
    """200 rows of seed 001's Gaussians: the posterior is nearly Gaussian, so N(MAP, H^-1) is close to it.

    Measured: means within 0.14 NUTS posterior sd (the posterior mean is not exactly the mode: a small skew, many
    Monte-Carlo standard errors but a small fraction of the posterior's width), sd ratios 0.99-1.02.
    """
    data = seed001_gaussians(200)
    settings = bc.SamplerSettings(draws=1000, chains=4)
    nuts_mean, nuts_sd = _summary(bc.fit("logistic", data, method="nuts", sampler=settings, random_seed=1))
    laplace_mean, laplace_sd = _summary(bc.fit("logistic", data, method="laplace", sampler=settings, random_seed=1))
    assert np.all(np.abs(laplace_mean - nuts_mean) <= 0.25 * nuts_sd)
    assert np.all(np.abs(laplace_sd / nuts_sd - 1.0) <= 0.06)


def test_a_two_cell_study_with_laplace_records_no_verdict(tmp_path):
    from bayesclass.inference.studies.runner import run_study
    from bayesclass.inference.studies.spec import parse_spec

    spec = parse_spec(
        {
            "name": "laplace",
            "seed": 0,
            "training_sizes": [20, 40],
            "repeats": 1,
            "test_fraction": 0.3,
            "sampler": {"draws": 100, "chains": 2},
            "models": [{"family": "logistic", "method": "laplace", "point_estimates": ["mle", "map"]}],
            "datasets": [{"name": "seed001_gaussians", "generator": {"n": 200, "random_seed": 1}}],
        }
    )
    table = run_study(spec, tmp_path / "study", serial=True, progress=False)
    assert table["key"].nunique() == 2 and set(table["size"]) == {20, 40}
    assert np.isfinite(table.loc[table["metric"] == "log_loss", "value"]).all()
    records = sorted((tmp_path / "study" / "cells").glob("*.json"))
    assert len(records) == 2
    for record in records:  # independent draws: no convergence verdict
        cell = json.loads(record.read_text(encoding="utf-8"))
        assert cell["cell"]["method"] == "laplace" and cell["diagnostics"]["passed"] is None
