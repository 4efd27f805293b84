"""``method="laplace"`` for constrained families: N(mode, inverse Hessian) in the PyMC model's unconstrained space.

Naive Bayes and gcc declare ``laplace_space = "transformed"``; the approximation is taken over the raveled value
variables of their PyMC models (log-odds, simplex, log, LKJ-Cholesky transforms) and its draws are mapped back
to the parameters by the model's graph (:mod:`bayesclass.models._transformed_laplace`).
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest
from pytensor.compile.mode import Mode

import bayesclass as bc
from bayesclass.data import seed001_gaussians
from bayesclass.inference.engines.methods import SAMPLERS
from bayesclass.models import GaussianClassConditional, NaiveBayes
from tests.bad_inputs.harness import run
from tests.models.test_naive_bayes import ODD_PRIOR, mixed_dataset

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


#: PyTensor functions evaluated a handful of times: the Python linker, no C or Numba compilation
FAST = {"mode": Mode(linker="py", optimizer="fast_compile")}
#: each family's declared density (:meth:`laplace_log_density`) against PyMC's compiled one: every transform and
#: prior of the two families, shared and per-class covariances, one feature (no correlations) and several. PyMC's
#: Hessian graphs take minutes to build on a loaded machine even with the Python linker: two cases run by default
REFERENCE_CASES = [
    pytest.param(NaiveBayes(prior=ODD_PRIOR), mixed_dataset(), 1e-10, id="naive_bayes_every_kind"),
    pytest.param(NaiveBayes(), "iris", 1e-10, id="naive_bayes_iris", marks=pytest.mark.slow),
    pytest.param(GaussianClassConditional(), seed001_gaussians(40), 1e-6, id="gcc_lkj_shared"),
    pytest.param(
        GaussianClassConditional(covariance="per-class", prior={"lkj_eta": 1.5}),
        "iris",
        1e-6,
        id="gcc_lkj_per_class",
        marks=pytest.mark.slow,
    ),
    pytest.param(IW, "iris", 1e-6, id="gcc_inverse_wishart", marks=pytest.mark.slow),
    pytest.param(
        GaussianClassConditional(covariance="per-class", prior={"covariance_prior": "inverse_wishart"}),
        seed001_gaussians(40),
        1e-6,
        id="gcc_inverse_wishart_per_class",
        marks=pytest.mark.slow,
    ),
    pytest.param(GaussianClassConditional(), "one_feature", 1e-6, id="gcc_lkj_one_feature", marks=pytest.mark.slow),
]


def _reference_data(data):
    if data == "one_feature":
        full = seed001_gaussians(30)
        return dataclasses.replace(
            full, X=full.X[:, :1], feature_names=full.feature_names[:1], feature_kinds=full.feature_kinds[:1]
        )
    return bc.load(data) if isinstance(data, str) else data


@pytest.mark.parametrize(("family", "data", "rtol"), REFERENCE_CASES)
def test_declared_density_curvature_mode_and_map_equal_pymcs_compiled_ones(family, data, rtol):
    """The closed-form (naive Bayes) and numpy (gcc) densities are PyMC's: the same value variables, log density
    (up to a constant), gradient and Hessian (PyMC's ``d2logp``, the route compiled before) at the mode and at
    points away from it, the same mode (an independent BFGS of PyMC's density from a jittered start) and the same
    map to the parameters (the model's own graph)."""
    import pymc as pm
    import pytensor
    import scipy.optimize
    from pymc.pytensorf import join_nonshared_inputs

    from bayesclass.models._transformed_laplace import transformed_posterior

    data = _reference_data(data)
    declared = family.laplace_log_density(data)
    mode, approximation = family.laplace_approximation(data)
    model = family.build(data)
    assert declared is not None and declared.value_names == tuple(var.name for var in model.value_vars)
    point = model.initial_point()
    assert declared.value_shapes == tuple(np.shape(point[name]) for name in declared.value_names)
    logp = model.compile_logp(jacobian=True, **FAST)
    dlogp = model.compile_dlogp(jacobian=True, **FAST)
    d2logp = model.compile_d2logp(jacobian=True, negate_output=False, **FAST)
    bijection = pm.blocking.DictToArrayBijection
    raveled = bijection.map({name: point[name] for name in declared.value_names})

    def as_point(z):
        return bijection.rmap(pm.blocking.RaveledVars(z, raveled.point_map_info))

    rng = np.random.default_rng(0)
    for z in (approximation.params, approximation.params + rng.normal(0, 0.3, len(approximation.params))):
        value, gradient = declared.value_and_gradient(z)
        shifted, _ = declared.value_and_gradient(z + 0.01)
        np.testing.assert_allclose(shifted - value, logp(as_point(z + 0.01)) - logp(as_point(z)), rtol=1e-9, atol=1e-9)
        reference = d2logp(as_point(z))
        np.testing.assert_allclose(
            gradient, dlogp(as_point(z)), rtol=1e-9, atol=1e-9 * max(1.0, np.abs(gradient).max())
        )
        np.testing.assert_allclose(declared.hessian(z), reference, rtol=0, atol=rtol * np.abs(reference).max())
    # the mode: PyMC's gradient vanishes there, and an independent optimisation finds it
    assert np.abs(dlogp(as_point(approximation.params))).max() < 1e-6
    start = approximation.params + rng.uniform(-0.3, 0.3, len(approximation.params))
    found = scipy.optimize.minimize(
        lambda z: -logp(as_point(z)), start, jac=lambda z: -dlogp(as_point(z)), method="BFGS", options={"gtol": 1e-8}
    )
    assert np.abs(found.jac).max() < 1e-4  # BFGS stops on precision loss near its gtol: judged by its gradient
    sd = np.sqrt(np.diag(approximation.covariance))
    assert np.all(np.abs(approximation.params - found.x) <= 1e-3 * sd)
    precision = -d2logp(as_point(approximation.params))
    np.testing.assert_allclose(
        np.linalg.inv(approximation.covariance), precision, rtol=0, atol=10 * rtol * np.abs(precision).max()
    )
    assert approximation.kind == "laplace" and len(approximation.labels) == len(approximation.params)
    # the map to the parameters: the model's graph from the value variables
    names = declared.parameter_names
    outputs = model.replace_rvs_by_values([model[name] for name in names])
    joined, flat = join_nonshared_inputs(point=point, outputs=outputs, inputs=model.value_vars)
    graph_map = pytensor.function([flat], joined, **FAST)
    rows = approximation.params + rng.normal(0, 0.5, (3, len(approximation.params)))
    for row, *values in zip(rows, *declared.parameters(rows), strict=True):
        for value, expected in zip(values, graph_map(row), strict=True):
            np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-14)
    dims = model.named_vars_to_dims
    assert declared.parameter_dims == tuple(tuple(dims[name]) for name in names)
    assert transformed_posterior(family, data).value_names == declared.value_names  # the route a fit takes


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
    """Seed 001's Gaussians. Measured (2 x 2000 draws of each): at 2000 rows, means within 0.11 exact sd and sd
    ratios within 0.92-1.08 (the Monte-Carlo error of 4000 draws is about 0.02 sd and 2%); at 12 rows (6 per
    class) naive Bayes's Laplace means are up to 0.38 exact sd off and its smallest sd ratio is 0.45 (the
    inverse-gamma posterior of a variance is skewed; the Gaussian is over log sigma^2, at its mode).
    """
    # 0.12: naive Bayes's max mean difference at 2000 rows was 0.096 by the compiled Hessian and is 0.104 by the
    # closed form, the same approximation to 1e-15 drawn through an eigendecomposition that rounding rotates
    large = _agreement(family, seed001_gaussians(2000))
    small = _agreement(family, seed001_gaussians(12))
    assert large[0] <= 0.12 and 0.92 <= large[1] and large[2] <= 1.08
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Undeclared(GaussianClassConditional):
    """gcc without its own density: the generic route, compiled from the PyMC model."""

    def laplace_log_density(self, data):
        return None


def test_a_model_of_new_data_of_the_same_layout_reuses_the_compiled_functions_with_its_own_data():
    from bayesclass.models import _transformed_laplace

    family, first, second = _Undeclared(prior=IW.prior), seed001_gaussians(40), seed001_gaussians(300)
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
    _, declared = IW.laplace_approximation(second)  # the declared density: the same approximation
    np.testing.assert_allclose(declared.params, fresh.params, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(
        declared.covariance, fresh.covariance, rtol=1e-6, atol=1e-6 * np.abs(fresh.covariance).max()
    )


@pytest.mark.parametrize(
    "family", [NaiveBayes(), GaussianClassConditional(covariance="per-class"), IW], ids=["nb", "gcc_per_class", "iw"]
)
def test_the_memory_check_counts_the_declared_parameters_as_the_pymc_model_declares_them(family):
    from bayesclass.inference._memory import parameter_values
    from bayesclass.inference.engines.laplace import SAMPLER

    for data in (bc.load("iris"), seed001_gaussians(40)):
        assert SAMPLER.values_per_draw is not None
        assert SAMPLER.values_per_draw(family, data) == parameter_values(family, data)


def test_naive_bayes_and_gcc_fit_by_laplace_without_compiling_or_warning(monkeypatch):
    """Their densities are declared: nothing is compiled (a fit took 10-50 s and printed Numba's object-mode
    warning about ``Blockwise{Pad...}``); measured 0.25-0.7 s a fit on 40 rows on a loaded machine."""
    from bayesclass.models import _transformed_laplace

    def refuse(*args, **kwargs):
        raise AssertionError("compiled a PyTensor graph")

    monkeypatch.setattr(_transformed_laplace, "_compile", refuse)
    data = seed001_gaussians(40)
    settings = bc.SamplerSettings(draws=50, chains=2)
    families = (NaiveBayes(), GaussianClassConditional(), GaussianClassConditional(covariance="per-class"), IW)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for family in families:
            result = bc.fit(family, data, method="laplace", sampler=settings, random_seed=0)
            assert set(result["posterior"].data_vars) == set(family.parameter_names(data))
    assert not [str(w.message) for w in caught if "object mode" in str(w.message) or "Blockwise" in str(w.message)]


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
