"""``method="laplace"`` for constrained families: N(mode, inverse Hessian) in the PyMC model's unconstrained space.

Naive Bayes and gcc declare ``laplace_space = "transformed"``; the approximation is taken over the raveled value
variables of their PyMC models (log-odds, simplex, log, LKJ-Cholesky transforms) and its draws are mapped back
to the parameters by the model's graph (:mod:`bayesclass.models._transformed_laplace`).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.data import seed001_gaussians
from bayesclass.inference.engines.methods import SAMPLERS
from bayesclass.models import GaussianClassConditional, NaiveBayes
from tests.bad_inputs.harness import run

IW = GaussianClassConditional(prior={"covariance_prior": "inverse_wishart"})
MANY = bc.SamplerSettings(draws=4000, chains=2)


def _flat(result, names) -> np.ndarray:
    posterior = result["posterior"].to_dataset()
    n = posterior.sizes["chain"] * posterior.sizes["draw"]
    return np.hstack([posterior[name].transpose("chain", "draw", ...).values.reshape(n, -1) for name in names])


def _captured_draws(monkeypatch, family_type) -> list:
    """Record the unconstrained draws the engine hands to ``laplace_parameters``."""
    captured: list = []
    original = family_type.laplace_parameters

    def recording(self, draws, data):
        captured.append(draws)
        return original(self, draws, data)

    monkeypatch.setattr(family_type, "laplace_parameters", recording)
    return captured


@pytest.mark.parametrize(
    ("family", "data"),
    [
        (NaiveBayes(), "transport"),  # binary and continuous features: log-odds, simplex, log transforms
        (GaussianClassConditional(), "iris"),  # LKJ: the Cholesky-correlation transform
    ],
    ids=["naive_bayes", "gcc_lkj"],
)
def test_unconstrained_draws_have_the_mode_mean_and_inverse_hessian_covariance(monkeypatch, family, data):
    data = bc.load(data)
    captured = _captured_draws(monkeypatch, type(family))
    result = bc.fit(family, data, method="laplace", sampler=MANY, standardize=False, random_seed=4)  # as below
    mode, approximation = family.laplace_approximation(data)
    draws = captured[0]
    assert tuple(draws.data_vars) == approximation.names == tuple(mode.data_vars)
    rows = np.hstack(
        [draws[name].values.reshape(draws.sizes["chain"] * draws.sizes["draw"], -1) for name in approximation.names]
    )
    n, covariance = len(rows), approximation.covariance
    variance = np.diag(covariance)
    assert np.all(np.abs(rows.mean(axis=0) - approximation.params) <= 5 * np.sqrt(variance / n))
    error = np.sqrt((np.outer(variance, variance) + covariance**2) / n)  # sd of a Gaussian sample covariance
    assert np.all(np.abs(np.cov(rows, rowvar=False) - covariance) <= 5 * error)
    # the parameters are the model's (dims and names as NUTS's), every draw valid
    posterior = result["posterior"]
    assert set(posterior.data_vars) == set(family.parameter_names(data))
    np.testing.assert_allclose(posterior["class_prior"].sum("class"), 1.0, rtol=1e-12)
    assert float(posterior["class_prior"].min()) > 0
    if "covariance" in posterior:
        assert posterior["covariance"].dims[-2:] == ("feature", "other_feature")
        assert np.linalg.eigvalsh(posterior["covariance"].values).min() > 0
    else:
        assert float(posterior["gaussian_variance"].min()) > 0
        assert 0 < float(posterior["binary_proba"].min()) and float(posterior["binary_proba"].max()) < 1


@pytest.mark.parametrize(
    ("family", "data"), [(NaiveBayes(), "iris"), (IW, "iris")], ids=["naive_bayes", "gcc_inverse_wishart"]
)
def test_mode_and_hessian_equal_an_independent_optimisation_of_pymcs_own_log_density(family, data):
    """PyMC's compiled ``logp``/``dlogp``/``d2logp`` (Jacobian included), optimised by BFGS from a jittered start."""
    import pymc as pm
    import scipy.optimize

    data = bc.load(data)
    mode, approximation = family.laplace_approximation(data)
    model = family.build(data)
    point = model.initial_point()
    logp = model.compile_logp(jacobian=True)
    dlogp = model.compile_dlogp(jacobian=True)
    d2logp = model.compile_d2logp(jacobian=True, negate_output=False)  # the Hessian
    bijection = pm.blocking.DictToArrayBijection
    raveled = bijection.map({v.name: point[v.name] for v in model.value_vars})

    def as_point(z):
        return bijection.rmap(pm.blocking.RaveledVars(z, raveled.point_map_info))

    start = raveled.data + np.random.default_rng(0).uniform(-0.5, 0.5, raveled.data.shape)
    found = scipy.optimize.minimize(
        lambda z: -logp(as_point(z)), start, jac=lambda z: -dlogp(as_point(z)), method="BFGS", options={"gtol": 1e-8}
    )
    assert np.abs(found.jac).max() < 1e-4  # BFGS stops on precision loss near its gtol: judged by its gradient
    sd = np.sqrt(np.diag(approximation.covariance))
    assert np.all(np.abs(approximation.params - found.x) <= 1e-3 * sd)
    precision = -d2logp(as_point(approximation.params))
    np.testing.assert_allclose(approximation.covariance, np.linalg.inv(precision), rtol=1e-8, atol=1e-12)
    assert approximation.kind == "laplace" and len(approximation.labels) == len(approximation.params)


def _agreement(family, data, draws=2000) -> tuple[float, float, float]:
    """Max |mean difference| in exact-posterior sds, and the min and max sd ratio (Laplace / exact)."""
    settings = bc.SamplerSettings(draws=draws, chains=2)
    names = family.parameter_names(data)
    laplace = _flat(bc.fit(family, data, method="laplace", sampler=settings, random_seed=1), names)
    exact = _flat(bc.fit(family, data, method="exact", sampler=settings, random_seed=1), names)
    sd = exact.std(axis=0)
    ratio = laplace.std(axis=0) / sd
    return float((np.abs(laplace.mean(axis=0) - exact.mean(axis=0)) / sd).max()), float(ratio.min()), float(ratio.max())


@pytest.mark.parametrize("family", [NaiveBayes(), IW], ids=["naive_bayes", "gcc_inverse_wishart"])
def test_laplace_agrees_with_the_exact_posterior_at_large_n_and_measurably_less_at_small_n(family):
    """Seed 001's Gaussians. Measured (2 x 2000 draws of each): at 2000 rows, means within 0.1 exact sd and sd
    ratios within 0.92-1.08 (the Monte-Carlo error of 4000 draws is about 0.02 sd and 2%); at 12 rows (6 per
    class) naive Bayes's Laplace means are up to 0.38 exact sd off and its smallest sd ratio is 0.45 (the
    inverse-gamma posterior of a variance is skewed; the Gaussian is over log sigma^2, at its mode).
    """
    large = _agreement(family, seed001_gaussians(2000))
    small = _agreement(family, seed001_gaussians(12))
    assert large[0] <= 0.1 and 0.92 <= large[1] and large[2] <= 1.08
    assert small[0] > 2 * large[0]  # the approximation degrades with few rows, measurably
    assert small[0] <= 1.5 and 0.35 <= small[1]


def test_fit_predict_diagnose_for_naive_bayes_and_gcc():
    data = bc.load("iris")
    settings = bc.SamplerSettings(draws=200, chains=2)
    for family in (NaiveBayes(), IW):
        assert SAMPLERS["laplace"].accepts(family) and family.has_laplace()
        result = bc.fit(family, data, method="laplace", sampler=settings, random_seed=0)
        assert result.attrs["method"] == "laplace" and "log_likelihood" in result
        assert (result["posterior"].sizes["chain"], result["posterior"].sizes["draw"]) == (2, 200)
        proba = bc.predict(result, data.X[:7])["class_proba"]
        np.testing.assert_allclose(proba.sum("class"), 1.0)
        report = bc.diagnose(result)
        assert not report.applies and report.advice == ()  # independent draws: no verdict


def test_same_seed_same_draws():
    data = bc.load("transport")
    settings = bc.SamplerSettings(draws=50, chains=2)
    first, again = (bc.fit(NaiveBayes(), data, method="laplace", sampler=settings, random_seed=9) for _ in "ab")
    assert first["posterior"].to_dataset().identical(again["posterior"].to_dataset())


def test_a_model_of_new_data_of_the_same_layout_reuses_the_compiled_functions_with_its_own_data():
    from bayesclass.models import _transformed_laplace

    family, first, second = IW, seed001_gaussians(40), seed001_gaussians(300)
    family.laplace_approximation(first)
    compiled = len(_transformed_laplace._COMPILED)
    _, reused = family.laplace_approximation(second)
    assert len(_transformed_laplace._COMPILED) == compiled  # no new compilation
    _transformed_laplace._COMPILED.clear()
    _, fresh = family.laplace_approximation(second)
    np.testing.assert_array_equal(reused.params, fresh.params)
    np.testing.assert_array_equal(reused.covariance, fresh.covariance)
    _, again = family.laplace_approximation(first)  # the other data's values are set back at each call
    assert not np.allclose(again.params, fresh.params)


@pytest.mark.slow  # compiles two models' value, gradient and Hessian (about a minute on 2 cores)
def test_cli_fit_compare_and_report_with_laplace_for_nb_and_gcc(tmp_path, capsys):
    for model in ("naive_bayes", "gcc"):
        common = ("--data", "iris", "--model", model, "--method", "laplace", "--draws", "100", "--seed", "2")
        out = tmp_path / f"{model}.nc"
        assert run("fit", *common, "--out", str(out)) == 0
        assert "by laplace" in capsys.readouterr().out
        page = tmp_path / f"{model}.html"
        assert run("compare", *common, "--report", str(page)) == 0
        text = page.read_text(encoding="utf-8")
        assert "laplace" in text and "Traceback" not in text
        assert run("report", "--run", str(out), "--data", "iris", "--out", str(tmp_path / f"{model}_report.html")) == 0


def test_a_two_cell_study_with_laplace_for_naive_bayes(tmp_path):
    from bayesclass.inference.studies.runner import run_study
    from bayesclass.inference.studies.spec import parse_spec

    spec = parse_spec(
        {
            "name": "laplace_nb",
            "seed": 0,
            "training_sizes": [20, 40],
            "repeats": 1,
            "test_fraction": 0.3,
            "sampler": {"draws": 100, "chains": 2},
            "models": [{"family": "naive_bayes", "method": "laplace", "point_estimates": ["mle", "map"]}],
            "datasets": [{"name": "seed001_gaussians", "generator": {"n": 200, "random_seed": 1}}],
        }
    )
    table = run_study(spec, tmp_path / "study", serial=True, progress=False)
    assert table["key"].nunique() == 2 and np.isfinite(table.loc[table["metric"] == "log_loss", "value"]).all()
    for record in sorted((tmp_path / "study" / "cells").glob("*.json")):
        cell = json.loads(record.read_text(encoding="utf-8"))
        assert cell["cell"]["method"] == "laplace" and cell["diagnostics"]["passed"] is None
