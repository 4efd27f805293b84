"""The chunked prediction engine: re-tiling of chunks, order and threads, exact per-row intervals, the same
floats however rows are chunked (every family, draws and point estimates), and bounded memory."""

from __future__ import annotations

import json
import threading
import tracemalloc

import arviz_stats as azs
import numpy as np
import pytest
import xarray as xr

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings, predict
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.prediction import tiles as chunks_module
from bayesclass.inference.prediction.predict import Predictor, predict_chunks, predict_log_proba
from bayesclass.inference.prediction.tiles import draw_interval, map_row_chunks, tile_rows_for
from bayesclass.models import (
    GaussianClassConditional,
    GaussianClassConditionalPrior,
    LatentGaussianProcess,
    NaiveBayes,
)
from tests.conftest import NUTS_SEED

TINY_NUTS = SamplerSettings(draws=60, tune=100, chains=2, progressbar=False)
EXACT = SamplerSettings(draws=500, chains=2, progressbar=False)

# --------------------------------------------------------------------------- the engine


def test_tile_rows_follow_the_memory_budget_within_bounds():
    assert tile_rows_for(2 * 2000, tile_bytes=16 * 2**20) == 16 * 2**20 // (8 * 4000)
    assert tile_rows_for(10**9) == 1  # wider than the budget: one row at a time
    assert tile_rows_for(1) == chunks_module.MAX_TILE_ROWS  # a point estimate: capped
    assert tile_rows_for(4000, setup_rows=3000) == 3000  # a costly setup per call asks for bigger tiles
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="values_per_row must be a positive integer"):
            tile_rows_for(bad)


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("sizes", [[1] * 23, [7, 7, 7, 2], [23], [0, 5, 0, 18], [4, 4, 15]])
def test_chunks_of_any_size_are_recut_into_the_same_tiles_in_order(sizes, workers):
    rows = np.arange(23.0)
    starts = np.cumsum([0, *sizes])
    chunks = [rows[a:b] for a, b in zip(starts[:-1], starts[1:], strict=True)]
    seen = list(map_row_chunks(lambda tile: tile.copy(), chunks, tile_rows=5, workers=workers))
    assert [first for first, _ in seen] == [0, 5, 10, 15, 20]
    assert [tile.tolist() for _, tile in seen] == [rows[i : i + 5].tolist() for i in range(0, 23, 5)]


def test_tuples_of_arrays_are_cut_at_the_same_rows():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10)
    pieces = [(X[:3], y[:3]), (X[3:], y[3:])]
    tiles = [tile for _, tile in map_row_chunks(lambda tile: tile, pieces, tile_rows=4, workers=1)]
    assert [len(x) for x, _ in tiles] == [4, 4, 2]
    for x, labels in tiles:
        np.testing.assert_array_equal(x[:, 0] / 2, labels)
    with pytest.raises(ValueError, match="same number of rows"):
        list(map_row_chunks(lambda tile: tile, [(X[:3], y[:2])], tile_rows=4))


def test_workers_run_tiles_in_threads_with_one_blas_thread():
    from threadpoolctl import threadpool_info

    def where(tile):
        blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
        return threading.current_thread().name, set(blas)

    results = [value for _, value in map_row_chunks(where, [np.zeros(40)], tile_rows=5, workers=2)]
    assert all(name.startswith("bayesclass-tile") for name, _ in results)
    assert all(threads == {1} for _, threads in results)


def test_an_error_in_a_tile_reaches_the_caller_and_stops_the_work():
    evaluated = []

    def failing(tile):
        evaluated.append(int(tile[0]))
        if tile[0] == 10:
            raise ValueError("bad tile")
        return tile

    with pytest.raises(ValueError, match="bad tile"):
        list(map_row_chunks(failing, [np.arange(1000.0)], tile_rows=5, workers=2))
    assert len(evaluated) < 200  # tiles not started yet were dropped


def test_engine_arguments_are_checked():
    with pytest.raises(ValueError, match="tile_rows must be a positive integer"):
        list(map_row_chunks(lambda tile: tile, [np.zeros(3)], tile_rows=0))
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        list(map_row_chunks(lambda tile: tile, [np.zeros(3)], tile_rows=2, workers=0))


def test_interval_is_arviz_eti_exactly_nan_included():
    rng = np.random.default_rng(3)
    for n_draws in (2, 3, 7, 1000, 2000, 4001):
        values = rng.beta(2.0, 5.0, size=(13, 3, n_draws))
        values[2, 0, :] = 0.25  # all draws tied
        values[4, 1, n_draws // 2] = np.nan
        for prob in (0.89, 0.5, 0.9, 0.95, 0.99, 0.1):
            lower, upper = draw_interval(values, prob)
            expected = azs.eti(values, prob, axis=-1)
            np.testing.assert_array_equal(lower, expected[..., 0], err_msg=f"{n_draws} draws, prob {prob}")
            np.testing.assert_array_equal(upper, expected[..., 1], err_msg=f"{n_draws} draws, prob {prob}")
        assert np.isnan(lower[4, 1]) and np.isnan(upper[4, 1]) and not np.isnan(lower[4, 0])
    kept = values.copy()
    draw_interval(values, 0.89)
    np.testing.assert_array_equal(values, kept)  # not sorted in place unless asked


# --------------------------------------------------------------------------- the same floats, every family


@pytest.fixture(scope="module")
def results(nuts_gaussians, nuts_iris):
    """A result of every family: draws beside every point estimate, and point-estimate-only fits."""
    wine = data.load("wine")
    iw = GaussianClassConditionalPrior(covariance_prior="inverse_wishart")
    gp_data = data.seed004_gp(40, random_seed=2)
    return {
        "logistic binary (NUTS, 2 x 1000 draws)": nuts_gaussians,
        "logistic multiclass": nuts_iris,
        "logistic map only": inference.fit("logistic", data.load("iris"), method="map", standardize=True),
        "naive_bayes digits (exact)": inference.fit(
            NaiveBayes(), data.load("digits_binary"), method="exact", sampler=EXACT, random_seed=1
        ),
        "naive_bayes transport (exact)": inference.fit(
            NaiveBayes(), data.load("transport"), method="exact", sampler=EXACT, random_seed=1
        ),
        "gcc shared (exact)": inference.fit(
            GaussianClassConditional(covariance="shared", prior=iw),
            wine,
            method="exact",
            standardize=True,
            sampler=EXACT,
            random_seed=1,
        ),
        "gcc per-class (exact)": inference.fit(
            GaussianClassConditional(covariance="per-class", prior=iw),
            wine,
            method="exact",
            standardize=True,
            sampler=EXACT,
            random_seed=1,
        ),
        "gp exact (NUTS)": inference.fit(
            LatentGaussianProcess(), gp_data, method="nuts", standardize=True, sampler=TINY_NUTS, random_seed=NUTS_SEED
        ),
        "gp hsgp (NUTS)": inference.fit(
            LatentGaussianProcess(approximation="hsgp", hsgp_basis=12),
            gp_data,
            method="nuts",
            standardize=True,
            sampler=TINY_NUTS,
            random_seed=NUTS_SEED,
        ),
        "gp map only (Laplace)": inference.fit(LatentGaussianProcess(), gp_data, method="map", standardize=True),
    }


def _new_rows(result, n: int) -> np.ndarray:
    """n rows like the training rows (resampled, continuous columns jittered), in the data's units."""
    X = result["constant_data"]["X"].values
    rng = np.random.default_rng(0)
    rows = X[rng.integers(0, len(X), n)].copy()
    kinds = np.array(json.loads(result.attrs["feature_kinds"]))
    continuous = kinds == "continuous"
    rows[:, continuous] += 0.1 * rng.standard_normal((n, int(continuous.sum()))) * X[:, continuous].std(axis=0)
    return rows


def _assert_identical(left: xr.Dataset, right: xr.Dataset, label: str) -> None:
    assert set(left.data_vars) == set(right.data_vars), label
    for name in left.data_vars:
        a, b = left[name].values, right[name].values
        if a.dtype.kind == "f":
            assert np.array_equal(a, b, equal_nan=True), f"{label}: {name} differs (max {np.nanmax(abs(a - b))})"
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{label}: {name}")


@pytest.mark.parametrize("return_draws", [False, True])
def test_chunked_predictions_are_the_same_floats_for_every_family(results, monkeypatch, return_draws):
    """Chunks of 1, 7 and more rows than the data give what one array gives, to the last bit, with several
    tiles (a small tile budget), one worker or three."""
    monkeypatch.setattr(chunks_module, "MAX_TILE_ROWS", 8)
    for label, result in results.items():
        X = _new_rows(result, 45)
        whole = predict(result, X, return_draws=return_draws, workers=1)
        assert whole.sizes["obs"] == 45
        if "posterior" in result:
            assert {"class_proba_low", "class_proba_high"} <= set(whole.data_vars)
            assert ("class_proba_draws" in whole) == return_draws
        for size in (1, 7, 100):
            for workers in (1, 3):
                pieces = list(
                    predict_chunks(
                        result,
                        (X[start : start + size] for start in range(0, len(X), size)),
                        return_draws=return_draws,
                        workers=workers,
                    )
                )
                assert [int(piece["obs"].values[0]) for piece in pieces] == list(range(0, 45, 8))
                chunked = xr.concat(pieces, dim="obs", data_vars="all").drop_vars("obs")
                _assert_identical(whole, chunked, f"{label}, chunks of {size}, {workers} workers")


def test_tiled_predictions_agree_with_the_models_class_proba(results, monkeypatch):
    """Tiles change nothing but the last bits of BLAS products: the tiled mean, interval and plug-ins are those of
    one class_proba call over all rows (``arviz_stats.eti`` for the interval)."""
    monkeypatch.setattr(chunks_module, "MAX_TILE_ROWS", 8)
    for label, result in results.items():
        X = _new_rows(result, 30)
        prediction = predict(result, X)
        model = inference.model_of(result)
        inputs = model_inputs(result, X)
        for group in result.children:
            if group.startswith("point_estimate_"):
                expected = model.class_proba(result[group].to_dataset(), inputs).values
                actual = prediction[f"class_proba_{group.removeprefix('point_estimate_')}"].values
                np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-15, err_msg=f"{label} {group}")
        if "posterior" not in result:
            continue
        draws = model.class_proba(result["posterior"].to_dataset(), inputs)
        np.testing.assert_allclose(
            prediction["class_proba"].values, draws.mean(("chain", "draw")).values, rtol=1e-12, err_msg=label
        )
        bounds = azs.eti(draws, prob=0.89, dim=("chain", "draw"))
        for bound, name in (("lower", "class_proba_low"), ("upper", "class_proba_high")):
            np.testing.assert_allclose(
                prediction[name].values, bounds.sel(ci_bound=bound).values, rtol=1e-12, atol=1e-15, err_msg=label
            )


def test_predict_log_proba_is_tiled_and_the_log_of_the_mean(results, monkeypatch):
    monkeypatch.setattr(chunks_module, "MAX_TILE_ROWS", 8)
    for label, result in results.items():
        X = _new_rows(result, 30)
        log_proba = predict_log_proba(result, X, workers=2)
        assert log_proba.dims == ("obs", "class")
        np.testing.assert_allclose(
            np.exp(log_proba.values), predict(result, X)["class_proba"].values, rtol=1e-10, err_msg=label
        )
        np.testing.assert_array_equal(log_proba.values, predict_log_proba(result, X, workers=1).values)


def test_chunked_rows_are_checked_with_rows_numbered_over_all_chunks(results):
    result = results["naive_bayes digits (exact)"]
    X = _new_rows(result, 30)
    X[23, 5] = 2.0  # a pixel that is not 0/1
    with pytest.raises(ValueError, match=r"binary feature 'pixel_0_5' has the value 2.0 in row 23 of X"):
        list(predict_chunks(result, (X[i : i + 7] for i in range(0, 30, 7))))
    with pytest.raises(ValueError, match="X has 0 rows"):
        list(predict_chunks(result, [X[:0], X[:0]]))


def test_impossible_rows_under_an_mle_warn_once_with_their_global_row(monkeypatch):
    """A binary column that is 0 in every training row: under the MLE a 1 there is impossible in every class, so
    the row's MLE probabilities are NaN (one warning, the row counted over all tiles); the posterior stays defined."""
    monkeypatch.setattr(chunks_module, "MAX_TILE_ROWS", 4)
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 2, 60), np.zeros(60)]).astype(float)
    training = data.Dataset(
        name="never",
        X=X,
        y=(X[:, 0] + (rng.random(60) < 0.2)).astype(int) % 2,
        feature_names=("seen", "never_one"),
        class_names=("a", "b"),
        feature_kinds=("binary", "binary"),
        description="a binary column that is never 1",
        provenance="test",
    )
    result = inference.fit(NaiveBayes(), training, method="exact", sampler=EXACT, random_seed=1)
    new = np.zeros((10, 2))
    new[6, 1] = 1.0
    expected = r"1 row\(s\) of X \(first: row 6\) have probability 0 under every class under mle, map, unbiased"
    with pytest.warns(RuntimeWarning, match=expected):
        prediction = predict(result, new)
    assert np.isnan(prediction["class_proba_mle"].values[6]).all()
    assert np.isfinite(prediction["class_proba"].values).all()
    assert prediction["predicted"].values[6] in ("a", "b")


# --------------------------------------------------------------------------- memory


def test_twenty_thousand_rows_by_two_thousand_draws_stay_within_160_mib(nuts_gaussians):
    """The per-draw probabilities of 20,000 rows x 2,000 draws x 2 classes take 640 MB; prediction with two workers
    holds a few tiles of 32 MiB at a time (traced NumPy memory, every thread included): under 160 MiB, 5 tiles."""
    assert chunks_module.TILE_BYTES == 32 * 2**20
    X = data.seed001_gaussians(20_000, random_seed=5).X
    predict(nuts_gaussians, X[:10])  # imports and caches outside the measurement
    tracemalloc.start()
    try:
        prediction = predict(nuts_gaussians, X, workers=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert prediction["class_proba"].shape == (20_000, 2)
    assert peak < 160 * 2**20, f"peak traced memory {peak / 2**20:.0f} MiB"


def test_predictor_rejects_bad_arguments(nuts_gaussians):
    for bad in (0.0, 1.0, -0.5, 1.5, True, "0.9"):
        with pytest.raises(ValueError, match="interval_prob must be"):
            Predictor.of(nuts_gaussians, interval_prob=bad)
    with pytest.raises(ValueError, match="return_draws must be True or False"):
        predict(nuts_gaussians, [[0.0, 0.0]], return_draws="yes")


def test_keep_draws_still_works_with_a_future_warning(nuts_gaussians):
    with pytest.warns(FutureWarning, match=r"keep_draws=\.\.\.\) is deprecated: use return_draws"):
        prediction = predict(nuts_gaussians, [[0.0, 0.0]], keep_draws=True)
    assert "class_proba_draws" in prediction
