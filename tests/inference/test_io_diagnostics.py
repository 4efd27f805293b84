"""Tests of inference.save/load (netCDF round trip, atomic writes) and inference.diagnose."""

from __future__ import annotations

import dataclasses
import math
import re
import warnings

import arviz_stats as azs
import numpy as np
import pytest
import xarray as xr

from bayesclass import inference
from bayesclass.data.arguments import speaking
from bayesclass.inference import MAX_R_HAT, MIN_ESS, SamplerSettings, diagnose, fit, load, predict, save
from bayesclass.models import LogisticPrior, LogisticRegression

# --------------------------------------------------------------------------- save / load


def test_round_trip_preserves_draws_attrs_and_predictions(nuts_gaussians, gaussians_small, tmp_path):
    path = save(nuts_gaussians, tmp_path / "posterior.nc")
    assert path == tmp_path / "posterior.nc" and path.is_file()
    loaded = load(path)
    assert set(loaded.children) == set(nuts_gaussians.children)
    for group in nuts_gaussians.children:
        xr.testing.assert_equal(loaded[group].to_dataset(), nuts_gaussians[group].to_dataset())
    assert loaded.attrs == nuts_gaussians.attrs
    assert inference.model_of(loaded) == inference.model_of(nuts_gaussians)

    X = gaussians_small.X[:30]
    before, after = predict(nuts_gaussians, X), predict(loaded, X)
    for name in before.data_vars:
        if name == "predicted":
            np.testing.assert_array_equal(after[name].values, before[name].values)
        else:
            np.testing.assert_array_equal(after[name].values, before[name].values, err_msg=name)


def test_round_trip_of_a_point_estimate_with_a_flat_prior(breast_cancer_std, tmp_path):
    result = fit(LogisticRegression(prior=LogisticPrior(intercept_sigma=math.inf)), breast_cancer_std, method="map")
    loaded = load(save(result, tmp_path / "map.nc"))
    assert inference.model_of(loaded).prior.intercept_sigma == math.inf
    xr.testing.assert_equal(loaded["point_estimate_map"].to_dataset(), result["point_estimate_map"].to_dataset())
    np.testing.assert_array_equal(
        predict(loaded, breast_cancer_std.X)["class_proba"].values,
        predict(result, breast_cancer_std.X)["class_proba"].values,
    )


def test_load_is_independent_of_the_file(map_gaussians, tmp_path):
    path = save(map_gaussians, tmp_path / "map.nc")
    loaded = load(path)
    path.unlink()  # everything was read into memory
    assert float(loaded["point_estimate_map"]["intercept"]) == float(map_gaussians["point_estimate_map"]["intercept"])


def test_save_rejects_a_path_not_ending_in_nc(map_gaussians, tmp_path):
    for name in ("result.pkl", "result.nc.tmp", "result"):
        with pytest.raises(ValueError, match=rf"path '.*{name}' must end in \.nc"):
            save(map_gaussians, tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_save_rejects_a_missing_directory(map_gaussians, tmp_path):
    with pytest.raises(ValueError, match=r"directory '.*missing' does not exist"):
        save(map_gaussians, tmp_path / "missing" / "result.nc")


def test_load_of_a_missing_file_says_so(tmp_path):
    with pytest.raises(ValueError, match=r"no result file at '.*nothing\.nc'"):
        load(tmp_path / "nothing.nc")


def test_interrupted_save_leaves_the_previous_file_intact(map_gaussians, nuts_gaussians, tmp_path, monkeypatch):
    path = save(map_gaussians, tmp_path / "result.nc")
    original_bytes = path.read_bytes()

    def failing_to_netcdf(self, filepath, *args, **kwargs):
        with open(filepath, "wb") as handle:  # a partial, corrupt write ...
            handle.write(b"\x89HDF garbage, not a netCDF file")
        raise OSError("disk full")  # ... then the failure

    monkeypatch.setattr(xr.DataTree, "to_netcdf", failing_to_netcdf)
    with pytest.raises(OSError, match="disk full"):
        save(nuts_gaussians, path)
    monkeypatch.undo()

    assert path.read_bytes() == original_bytes
    assert [entry.name for entry in tmp_path.iterdir()] == ["result.nc"]  # no temporary file left behind
    assert load(path).attrs["method"] == "map"


def test_interrupted_first_save_leaves_nothing(map_gaussians, tmp_path, monkeypatch):
    def failing_to_netcdf(self, filepath, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(xr.DataTree, "to_netcdf", failing_to_netcdf)
    with pytest.raises(KeyboardInterrupt):
        save(map_gaussians, tmp_path / "result.nc")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- diagnose


def test_good_fit_passes_with_consistent_numbers(nuts_gaussians):
    report = diagnose(nuts_gaussians)
    assert report.passed, str(report)
    assert report.failures == ()
    assert report.max_r_hat <= MAX_R_HAT == 1.01
    assert min(report.min_ess_bulk, report.min_ess_tail) >= MIN_ESS == 400
    assert report.n_divergences == 0
    # the worst cases are those of ArviZ's own per-element diagnostics
    posterior = nuts_gaussians["posterior"].to_dataset()
    r_hat = azs.rhat(posterior)
    assert report.max_r_hat == pytest.approx(max(float(r_hat[name].max()) for name in r_hat.data_vars))
    ess = azs.ess(posterior, method="bulk")
    assert report.min_ess_bulk == pytest.approx(min(float(ess[name].min()) for name in ess.data_vars))
    assert 0 < report.max_mcse_mean < 0.1 * float(posterior["intercept"].std())
    # the table has one row per parameter element
    assert list(report.table.index) == ["intercept", "weights[x1]", "weights[x2]"]
    assert {"mean", "sd", "ess_bulk", "ess_tail", "r_hat", "mcse_mean"} <= set(report.table.columns)
    assert report.table["r_hat"].max() == pytest.approx(report.max_r_hat)
    assert str(report).startswith("convergence PASS")


def test_short_run_fails_with_messages(gaussians_small, nuts_gaussians):
    short = fit(
        LogisticRegression(),
        gaussians_small,
        sampler=SamplerSettings(draws=20, tune=5, chains=2, progressbar=False),
        random_seed=1,
    )
    with np.errstate(all="ignore"):  # chains stuck after 5 warm-up steps have 0 within-chain variance
        report = diagnose(short)
    assert not report.passed
    # 40 draws cannot hold 400 effective draws
    assert report.min_ess_bulk < MIN_ESS
    assert any(message.startswith("bulk ESS") and f"< {MIN_ESS}" in message for message in report.failures)
    assert str(report).startswith("convergence FAIL: ")


def test_divergences_and_stuck_chains_are_reported(nuts_gaussians):
    """Tamper with a good run: mark 3 divergent draws and shift one chain far away."""
    tampered = nuts_gaussians.copy(deep=True)
    diverging = tampered["sample_stats"]["diverging"].values.copy()
    diverging[:] = False
    diverging[0, [5, 50, 500]] = True
    tampered["sample_stats"] = tampered["sample_stats"].to_dataset().assign(diverging=(("chain", "draw"), diverging))
    posterior = tampered["posterior"].to_dataset()
    shifted = posterior["intercept"].copy()
    shifted[1] += 10 * float(posterior["intercept"].std())
    tampered["posterior"] = posterior.assign(intercept=shifted)

    report = diagnose(tampered)
    assert not report.passed
    assert report.n_divergences == 3
    assert "3 divergent transitions" in report.failures
    assert report.max_r_hat > 1.5
    assert any(message.startswith("r_hat") and f"> {MAX_R_HAT}" in message for message in report.failures)
    assert diagnose(nuts_gaussians).passed  # the original is untouched


def test_a_parameter_frozen_in_every_draw_fails(nuts_gaussians):
    """r_hat of a constant parameter is undefined (NaN) while its ESS looks perfect: it must not pass."""
    tampered = nuts_gaussians.copy(deep=True)
    posterior = tampered["posterior"].to_dataset()
    weights = posterior["weights"].copy()
    weights[..., 0] = 0.25
    tampered["posterior"] = posterior.assign(weights=weights)
    with np.errstate(all="ignore"):  # 0/0 within-chain variance
        report = diagnose(tampered)
    assert not report.passed
    assert math.isnan(report.max_r_hat)
    assert any(
        message.startswith("r_hat not available") and "take one value in every draw" in message
        for message in report.failures
    )
    assert [item.checks for item in report.unavailable] == [("r_hat",)]
    assert "max r_hat n/a" in str(report)


def _direct_worst(posterior: xr.Dataset) -> tuple[float, float, float, float]:
    """The worst r_hat, bulk/tail ESS and MCSE of the mean by arviz_stats' own calls on the whole posterior."""

    def worst(statistics: xr.Dataset, reduce) -> float:
        return float(reduce(np.concatenate([var.values.ravel() for var in statistics.data_vars.values()])))

    return (
        worst(azs.rhat(posterior), np.max),
        worst(azs.ess(posterior, method="bulk"), np.min),
        worst(azs.ess(posterior, method="tail"), np.min),
        worst(azs.mcse(posterior, method="mean"), np.max),
    )


@pytest.mark.parametrize("frozen", [False, True], ids=["good", "frozen_element"])
def test_the_worst_values_read_from_the_table_are_arviz_stats_own(nuts_gaussians, frozen):
    """diagnose reads the worst values from its summary table (computed once): they are exactly what
    ``azs.rhat``/``ess``/``mcse`` give on the whole posterior, a NaN (a frozen element's r_hat) included."""
    result = nuts_gaussians.copy(deep=True)
    posterior = result["posterior"].to_dataset()
    if frozen:
        weights = posterior["weights"].copy()
        weights[..., 1] = -0.5
        posterior = posterior.assign(weights=weights)
        result["posterior"] = posterior
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = diagnose(result)
        expected = _direct_worst(posterior)
    found = (report.max_r_hat, report.min_ess_bulk, report.min_ess_tail, report.max_mcse_mean)
    np.testing.assert_array_equal(found, expected)  # equal, NaN where NaN
    assert math.isnan(report.max_r_hat) == frozen
    assert report.passed == (not frozen)


def test_diagnose_of_a_point_estimate_is_an_error(map_gaussians):
    with pytest.raises(ValueError, match=r"method 'map' and has no posterior draws.*method='nuts'"):
        diagnose(map_gaussians)


def test_naive_bayes_with_categorical_levels_round_trips_and_diagnoses(tmp_path):
    """The category_level labels (non-dimension coords category_feature / category_code) survive netCDF,
    prediction from the loaded result is identical, and diagnose handles the labels."""
    from bayesclass.data import Dataset
    from bayesclass.models import NaiveBayes

    rng = np.random.default_rng(7)
    y = np.repeat([0, 1, 2], 20)
    colour = np.where(rng.uniform(size=60) < np.array([0.7, 0.3, 0.1])[y], 0, rng.integers(1, 3, size=60))
    data = Dataset(
        name="colours",
        X=np.column_stack([colour, rng.normal(y, 1.0)]),
        y=y,
        feature_names=("colour", "size"),
        class_names=("a", "b", "c"),
        feature_kinds=("categorical", "continuous"),
        category_names={"colour": ("red", "green", "blue")},
    )
    result = fit(NaiveBayes(), data, method="exact", sampler=SamplerSettings(draws=500, chains=2), random_seed=2)
    loaded = load(save(result, tmp_path / "nb.nc"))
    posterior = loaded["posterior"].to_dataset()
    assert list(posterior["category_level"].values) == ["colour=red", "colour=green", "colour=blue"]
    assert list(posterior["category_feature"].values) == ["colour"] * 3
    np.testing.assert_array_equal(posterior["category_code"].values, [0, 1, 2])
    np.testing.assert_array_equal(
        predict(loaded, data.X)["class_proba"].values, predict(result, data.X)["class_proba"].values
    )
    report = diagnose(loaded)
    assert report.passed
    assert "category_proba[a, colour=red]" in report.table.index


# --------------------------------------------------------------------------- advice per family x sampler, labels

#: short runs: every one fails its verdict (60 draws cannot hold 400 effective draws)
TINY = SamplerSettings(draws=30, tune=30, chains=2, progressbar=False)
#: (family, method, hyperparameters, standardize) of every family with every sampler it has
FAMILY_METHODS = [
    ("logistic", "nuts", {}, True),
    ("logistic", "nuts", {"parametrization": "centered"}, False),
    ("naive_bayes", "nuts", {}, False),
    ("naive_bayes", "exact", {}, False),
    ("gcc", "nuts", {}, True),
    ("gcc", "nuts", {"prior": {"covariance_prior": "inverse_wishart"}}, True),
    ("gcc", "exact", {"prior": {"covariance_prior": "inverse_wishart"}}, False),
    ("gp", "gibbs", {}, True),
    ("gp", "nuts", {}, True),  # nutpie: about 45 s to compile (slow)
]


def _case_id(case) -> str:
    family, method, hyperparameters, standardize = case
    options = ",".join(f"{key}={value}" for key, value in hyperparameters.items())
    return f"{family}-{method}" + (f"-{options}" if options else "") + ("-std" if standardize else "")


#: the short fits made so far, by case id (each is made when a test first needs it)
_TINY_FITS: dict[str, xr.DataTree] = {}


def _cases():
    """:data:`FAMILY_METHODS` as parameters; the GP by NUTS (a nutpie compile) is slow."""
    return [
        pytest.param(case, id=_case_id(case), marks=[pytest.mark.slow] if case[:2] == ("gp", "nuts") else [])
        for case in FAMILY_METHODS
    ]


def _tiny_fit(case) -> xr.DataTree:
    """The short fit of ``case``: iris (3 classes, 4 features) or, for the GP, 30 rows of seed004_gp."""
    from bayesclass import data
    from bayesclass.models import get_model

    key = _case_id(case)
    if key not in _TINY_FITS:
        family, method, hyperparameters, standardize = case
        rows = data.seed004_gp(n=30) if family == "gp" else data.load("iris")
        model = get_model(family, **hyperparameters)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _TINY_FITS[key] = fit(model, rows, method=method, sampler=TINY, standardize=standardize, random_seed=3)
    return _TINY_FITS[key]


def _flags_of_the_family(model) -> set[str]:
    """The CLI flags of a family's hyperparameters (its fields and its prior's fields)."""
    names = {item.name for item in dataclasses.fields(model)}
    if dataclasses.is_dataclass(model.prior):
        names |= {item.name for item in dataclasses.fields(model.prior)}
    return {"--" + name.replace("_", "-") for name in names}


@pytest.fixture
def on_the_command_line():
    """Messages worded as the command line words them (flags), as inside ``bayesclass.cli.main``."""
    with speaking("cli"):
        yield


@pytest.mark.parametrize("case", _cases())
def test_advice_names_only_options_the_fit_has(case, on_the_command_line):
    """For every check alone and all together: each flag advised is a setting the method recorded, a hyperparameter
    of this family, or dropping --no-standardize on inputs that were not standardised; a value advised is never the
    one used."""
    from bayesclass.inference.criticism.diagnostics import CHECKS, convergence_advice
    from bayesclass.inference.result import result_info

    result = _tiny_fit(case)
    info = result_info(result)
    settings = info.sampler_settings
    allowed = {"--" + name.replace("_", "-") for name in settings} | _flags_of_the_family(info.model)
    allowed |= {"--method", "--seed"}  # another seed: for a stuck chain
    if info.standardize_mode == "none":
        allowed.add("--no-standardize")
    for checks in [(name,) for name in CHECKS] + [CHECKS]:
        advice = convergence_advice(checks, info)
        text = " ".join(advice)
        assert set(re.findall(r"--[a-z][a-z-]*", text)) <= allowed, (checks, advice)
        assert "--target-accept" not in text or "target_accept" in settings
        if "target_accept" in settings and "divergences" in checks:
            assert f"--target-accept 0.95, was {settings['target_accept']:g}" in text
        assert ("--chains 4, was 2" in text) == ("r_hat" in checks), advice
        assert ("--no-standardize" in text) == (info.standardize_mode == "none" and checks != ("partial",)), advice
        if checks == ("partial",):
            assert advice == ("rerun to the end: the draws were interrupted and are incomplete",)


@pytest.mark.parametrize("case", _cases())
def test_the_verdict_of_a_short_run_advises_from_what_failed(case, on_the_command_line):
    from bayesclass.inference.criticism.diagnostics import convergence_advice
    from bayesclass.inference.result import result_info

    result = _tiny_fit(case)
    family, method, hyperparameters, _ = case
    with np.errstate(all="ignore"):
        report = diagnose(result)
    info = result_info(result)
    if method == "exact":  # independent draws: no chain to converge, no verdict, no advice
        assert not report.applies and report.advice == ()
        return
    assert report.applies and not report.passed and "ess_bulk" in report.failed_checks
    checks = report.failed_checks + (("tree_depth",) if report.notes else ())
    assert report.advice == convergence_advice(checks, info, min_ess=min(report.min_ess_bulk, report.min_ess_tail))
    text = " ".join(report.advice)
    # ESS grows about in proportion to the draws: the draws advised reach 400 at the ESS per draw seen, and more
    (advised,) = re.findall(rf"--draws (\d+), was {TINY.draws}", text)
    needed = TINY.draws * MIN_ESS / min(report.min_ess_bulk, report.min_ess_tail)
    assert max(2 * TINY.draws, needed) <= int(advised) < max(2 * TINY.draws, 1.2 * needed) + 100
    assert ("--target-accept" in text) == ("divergences" in report.failed_checks and method == "nuts")
    if family == "logistic":
        other = {"whitened": "centered", "centered": "whitened"}[info.model.parametrization]
        assert f"--parametrization {other}, was {info.model.parametrization}" in text
    if family == "gcc":
        assert ("--covariance-prior inverse_wishart" in text) == (not hyperparameters)
    assert "--covariance-prior" not in text or family == "gcc"
    assert "--parametrization" not in text or family == "logistic"
    assert all(line in str(report).splitlines() for line in (f"  try: {item}" for item in report.advice))


def _element_means(posterior: xr.Dataset) -> dict[str, float]:
    """``name[coord, ...]`` -> the posterior mean of that element, computed here element by element."""
    means = {}
    for name, variable in posterior.data_vars.items():
        dims = [dim for dim in variable.dims if dim not in ("chain", "draw")]
        for index in np.ndindex(*(variable.sizes[dim] for dim in dims)):
            labels = [str(variable[dim].values[i]) for dim, i in zip(dims, index, strict=True)]
            element = variable.isel(dict(zip(dims, index, strict=True)))
            means[f"{name}[{', '.join(labels)}]" if labels else name] = float(element.mean())
    return means


@pytest.mark.parametrize("case", _cases())
def test_every_row_of_the_convergence_table_is_labelled_with_its_own_element(case):
    """arviz_stats 1.3.3 ``summary`` of a Dataset mixing (class) and (feature, class) mislabels rows; the table
    must give each element's own mean under its own label (multiclass logistic on iris: 3 classes x 4 features)."""
    result = _tiny_fit(case)
    with np.errstate(all="ignore"):
        table = diagnose(result, full=True).table  # every element (a latent GP's block condensed otherwise)
    expected = _element_means(result["posterior"].to_dataset())
    assert list(table.index) == list(expected)
    np.testing.assert_allclose(table["mean"].to_numpy(), list(expected.values()), rtol=1e-9, atol=1e-12)


def _with_stats(result, **replaced):
    """A copy of ``result`` whose sample stats have the (chain, draw) arrays ``replaced``."""
    tampered = result.copy(deep=True)
    stats = tampered["sample_stats"].to_dataset()
    tampered["sample_stats"] = stats.assign({name: (("chain", "draw"), value) for name, value in replaced.items()})
    return tampered


def test_a_low_e_bfmi_fails_with_its_advice(nuts_gaussians, on_the_command_line):
    """E-BFMI = mean of squared energy changes / variance of the energy (Betancourt 2016): a random-walk energy
    has a tiny one; the verdict fails on it and advises warm-up and the family's parametrisation."""
    energy = nuts_gaussians["sample_stats"]["energy"].values
    walk = np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, size=energy.shape), axis=1)
    report = diagnose(_with_stats(nuts_gaussians, energy=walk))
    expected = np.min(np.mean(np.diff(walk, axis=1) ** 2, axis=1) / np.var(walk, axis=1, ddof=1))
    assert report.min_bfmi == pytest.approx(expected, rel=1e-6) and report.min_bfmi < 0.3
    assert not report.passed and report.failed_checks == ("bfmi",)
    assert report.failures == (f"E-BFMI {report.min_bfmi:.2f} < 0.3 in a chain",)
    text = " ".join(report.advice)
    assert "--tune 1000, was 500" in text and "--parametrization centered, was whitened" in text
    assert "--draws" not in text and "--target-accept" not in text and "--chains" not in text
    assert diagnose(nuts_gaussians).min_bfmi > 0.3  # the original


def test_trajectories_at_the_maximum_tree_depth_are_a_note_with_advice(nuts_gaussians):
    hits = np.zeros(nuts_gaussians["sample_stats"]["diverging"].shape, dtype=bool)
    hits[0, :7] = True
    report = diagnose(_with_stats(nuts_gaussians, reached_max_treedepth=hits))
    assert report.passed and report.failures == ()  # valid draws, a slow sampler
    assert report.notes == (f"7 of {hits.size} draws hit the maximum tree depth (slow, long trajectories)",)
    assert report.advice == (  # no option of the sampler: the trajectories' length is not one
        "the centered parametrisation (LogisticRegression(parametrization='centered'), was whitened)",
        "standardised features, the default (drop standardize=False): inputs on one scale are easier to explore",
    )
    assert "  note: 7 of" in str(report) and str(report).startswith("convergence PASS")
    with speaking("cli"):  # the same advice in flags on the command line
        assert diagnose(_with_stats(nuts_gaussians, reached_max_treedepth=hits)).advice == (
            "the centered parametrisation (--parametrization centered, was whitened)",
            "standardised features, the default (drop --no-standardize): inputs on one scale are easier to explore",
        )
