"""The log_likelihood group and PSIS-LOO (inference.loo): the group is the classifier's conditional log
probability of each observed class, computed in tiles; LOO and compare refuse what they cannot compare."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import xarray as xr

from bayesclass import data
from bayesclass.inference import SamplerSettings, fit, model_of, save
from bayesclass.inference.criticism.loo import compare, loo, pointwise_log_likelihood
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.models import GaussianClassConditional, LogisticRegression, NaiveBayes

SETTINGS = SamplerSettings(draws=300, tune=300, chains=2, progressbar=False)
PRIOR = {"covariance_prior": "inverse_wishart"}


@pytest.fixture(scope="module")
def results():
    gaussians = data.seed001_gaussians(120, random_seed=5)
    return {
        "logistic": fit(LogisticRegression(), gaussians, sampler=SETTINGS, random_seed=1),
        "probit": fit(LogisticRegression(link="probit"), gaussians, sampler=SETTINGS, random_seed=2),
        "naive_bayes": fit(NaiveBayes(), gaussians, method="exact", sampler=SETTINGS, random_seed=3),
        "gcc": fit(GaussianClassConditional(prior=PRIOR), gaussians, method="exact", sampler=SETTINGS, random_seed=4),
    }


@pytest.mark.parametrize("name", ["logistic", "naive_bayes", "gcc"])
def test_the_group_is_the_conditional_log_probability_of_each_observed_class(results, name):
    result = results[name]
    group = result["log_likelihood"]["y"]
    assert group.dims == ("chain", "draw", "obs") and group.shape == (2, 300, 120)
    X = model_inputs(result, result["constant_data"]["X"].values)
    y = result["observed_data"]["y"].values
    per_class = model_of(result).class_log_proba(result["posterior"].to_dataset(), X)
    expected = per_class.transpose("chain", "draw", "obs", "class").values[:, :, np.arange(len(y)), y]
    np.testing.assert_allclose(group.values, expected, rtol=1e-12, atol=1e-12)
    assert (group.values <= 0).all()  # log of a probability, not a density of x


def test_tiles_and_threads_do_not_change_the_floats(results):
    result = results["logistic"]
    model, posterior = model_of(result), result["posterior"].to_dataset()
    X = model_inputs(result, result["constant_data"]["X"].values)
    y = result["observed_data"]["y"].values
    one = pointwise_log_likelihood(model, posterior, X, y, workers=1)
    np.testing.assert_array_equal(one["y"].values, pointwise_log_likelihood(model, posterior, X, y)["y"].values)


def test_memory_beyond_the_output_does_not_grow_with_the_rows():
    """Beyond the output itself, the peak is a few tiles in flight (the chunked engine), whatever the rows: the
    same at 10,000 and 40,000 rows x 600 draws, and far below one rows x draws x classes array."""
    from bayesclass.inference.prediction.tiles import TILE_BYTES

    model = LogisticRegression()
    rng = np.random.default_rng(0)
    posterior = xr.Dataset(
        {
            "intercept": (("chain", "draw"), rng.normal(size=(2, 300))),
            "weights": (("chain", "draw", "feature"), rng.normal(size=(2, 300, 3))),
        },
        coords={"feature": ["a", "b", "c"], "class": ["no", "yes"]},
    )
    overheads = []
    for n_rows in (10_000, 40_000):
        X, y = rng.normal(size=(n_rows, 3)), rng.integers(0, 2, n_rows)
        tracemalloc.start()
        group = pointwise_log_likelihood(model, posterior, X, y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        overheads.append(peak - group["y"].nbytes)
    assert overheads[1] < overheads[0] + TILE_BYTES, [value / 2**20 for value in overheads]
    assert overheads[1] < 8 * TILE_BYTES < 40_000 * 600 * 2 * 8  # a few tiles, not rows x draws x classes


def test_loo_summarises_and_compare_ranks_results_on_the_same_data(results):
    summary = loo(results["logistic"])
    assert np.isfinite(summary.elpd_loo) and summary.se > 0 and 0 < summary.p_loo < 10
    assert summary.n_rows == 120 and summary.n_samples == 600
    assert summary.n_high_k == int(np.sum(summary.pareto_k > 0.7))
    table = compare({"logit": results["logistic"], "probit": results["probit"], "nb": results["naive_bayes"]})
    assert set(table.index) == {"logit", "probit", "nb"}
    assert table["weight"].sum() == pytest.approx(1.0)
    assert table["elpd_diff"].iloc[0] == 0 and (table["elpd_diff"] <= 0).all()


def test_what_loo_cannot_compare_is_a_clear_error(results):
    point = fit(LogisticRegression(), data.seed001_gaussians(120, random_seed=5), method="map")
    with pytest.raises(ValueError, match=r"point estimate \(map\): LOO needs posterior draws"):
        loo(point)
    other = fit(LogisticRegression(), data.seed001_gaussians(100, random_seed=9), sampler=SETTINGS, random_seed=1)
    with pytest.raises(ValueError, match=r"fitted on different data .*seed001_gaussians"):
        compare({"a": results["logistic"], "b": other})
    with pytest.raises(ValueError, match=r"compare needs two or more results, got 1"):
        compare({"a": results["logistic"]})


def test_the_loo_command(results, tmp_path):
    for name in ("logistic", "probit"):
        save(results[name], tmp_path / f"{name}.nc")
    command = [sys.executable, "-m", "bayesclass.cli", "loo", "--run", "logistic.nc", "--run", "probit.nc"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("elpd_loo") == 2 and "stacking weights" in done.stdout and "weight" in done.stdout
    point = fit(LogisticRegression(), data.seed001_gaussians(120, random_seed=5), method="map")
    save(point, tmp_path / "map.nc")
    refused = subprocess.run(
        [sys.executable, "-m", "bayesclass.cli", "loo", "--run", "map.nc"], cwd=tmp_path, capture_output=True, text=True
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "LOO needs posterior draws" in refused.stderr


def test_rows_whose_log_likelihood_is_the_same_in_every_draw(results):
    """Rows predicted with probability 1 in every draw (constant log-likelihood) have exact LOO = that value:
    taken out of PSIS (which cannot fit their tail) and added back; the other rows are unchanged."""
    result = results["logistic"]
    reference = loo(result)
    modified = result.copy()
    values = result["log_likelihood"]["y"].copy()
    values[..., :3] = 0.0  # log P(y|x) = 0 for the first three rows in every draw
    modified["log_likelihood"] = xr.DataTree(values.to_dataset(name="y"))
    summary = loo(modified)
    rest = result.copy()
    rest["log_likelihood"] = xr.DataTree(result["log_likelihood"]["y"].isel(obs=slice(3, None)).to_dataset(name="y"))
    others = loo(rest)
    assert summary.elpd_loo == pytest.approx(others.elpd_loo, rel=1e-12)  # the three rows add exactly 0
    assert summary.p_loo == pytest.approx(others.p_loo, rel=1e-12)
    assert np.array_equal(summary.pareto_k[:3], np.zeros(3))
    assert np.allclose(summary.pareto_k[3:], others.pareto_k)
    assert summary.n_rows == reference.n_rows == 120
    everything = result.copy()
    everything["log_likelihood"] = xr.DataTree((values * 0 - 0.25).to_dataset(name="y"))
    flat = loo(everything)
    assert flat.elpd_loo == pytest.approx(-0.25 * 120) and flat.se == 0 and flat.p_loo == 0
