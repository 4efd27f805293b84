"""Tests of inference.save/load (netCDF round trip, atomic writes) and inference.diagnose."""

from __future__ import annotations

import math

import arviz_stats as azs
import numpy as np
import pytest
import xarray as xr

from bayesclass import inference
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
    assert any(message.startswith("r_hat nan") for message in report.failures)


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
