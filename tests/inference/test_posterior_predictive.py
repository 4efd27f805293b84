"""The ``posterior_predictive`` group (inference.criticism.posterior_predictive): ArviZ takes a saved result as it is.

- for a short fit of every family and sampler (logistic NUTS/Laplace, naive Bayes exact, gcc exact with a shared and
  a per-class covariance, GP Gibbs/Laplace), saved and loaded: ``arviz_plots.plot_ppc_pava`` and
  ``arviz_stats.loo_pit`` run unchanged and the LOO-PIT values lie in [0, 1];
- the replicated labels are draws of the posterior class probabilities: per class, their count over every draw and
  row matches the sum of the per-draw probabilities within Monte-Carlo error (exact: given the draws, the labels
  are independent), and per row too;
- the generative families' replicated features, grouped by the replicated class, have the closed-form posterior
  predictive mean (the posterior mean of the class means) within Monte-Carlo error;
- same seed, same group (whatever the tiling and threads); another seed, other labels; a point estimate has no
  group; results written before the group existed still load.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import arviz_plots
import arviz_stats
import numpy as np
import pytest
import xarray as xr

import bayesclass as bc
from bayesclass.inference.criticism import posterior_predictive as pp
from bayesclass.inference.criticism.loo import loo_pit_weights
from bayesclass.inference.engines.fit import standardization_of
from bayesclass.inference.prediction import tiles
from bayesclass.inference.result import check_result, result_info, write_info

FORMAT1 = Path(__file__).parent / "format1"
SHORT = bc.SamplerSettings(draws=100, tune=100, chains=2, progressbar=False)
GAUSSIANS = bc.load("seed001_gaussians", n=120, random_seed=1)
PENGUINS = bc.load("penguins", missing="drop")  # 3 classes; categorical, binary and continuous columns
IW = bc.GaussianClassConditionalPrior(covariance_prior="inverse_wishart")

#: (id, model, data, method): one short fit of each family and sampler
FITS = {
    "logistic nuts": ("logistic", GAUSSIANS, "nuts"),
    "logistic laplace": ("logistic", GAUSSIANS, "laplace"),
    "naive_bayes exact": ("naive_bayes", GAUSSIANS, "exact"),
    "naive_bayes penguins exact": ("naive_bayes", PENGUINS, "exact"),
    "gcc shared exact": (bc.GaussianClassConditional(prior=IW), GAUSSIANS, "exact"),
    "gcc per-class exact": (bc.GaussianClassConditional(covariance="per-class", prior=IW), GAUSSIANS, "exact"),
    "gp gibbs": ("gp", bc.load("seed004_gp", n=60), "gibbs"),
    "gp laplace": ("gp", bc.load("seed004_gp", n=60), "laplace"),
}
GENERATIVE = ("naive_bayes exact", "gcc shared exact", "gcc per-class exact")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("posterior_predictive")
    paths = {}
    for label, (model, data, method) in FITS.items():
        paths[label] = folder / f"{label.replace(' ', '_')}.nc"
        bc.save_result(bc.fit(model, data, method=method, sampler=SHORT, random_seed=3), paths[label])
    return paths


@pytest.mark.parametrize("label", list(FITS))
def test_arviz_checks_take_a_saved_result_unchanged(saved, label):
    result = bc.load_result(saved[label])
    pit = arviz_stats.loo_pit(result)["y"].values
    assert pit.shape == (result["observed_data"]["y"].size,)
    assert np.isfinite(pit).all() and (pit >= 0).all() and (pit <= 1).all()
    n_classes = len(result_info(result).class_names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # matplotlib's backend notes
        collection = arviz_plots.plot_ppc_pava(result, **({"data_type": "categorical"} if n_classes > 2 else {}))
    assert collection is not None
    labels = result["posterior_predictive"]["y"]
    assert labels.dims == ("chain", "draw", "obs") and np.issubdtype(labels.dtype, np.integer)
    assert labels.shape == result["log_likelihood"]["y"].shape
    features = "X" in result["posterior_predictive"]
    assert features == label.startswith(("naive_bayes", "gcc"))
    record = result_info(result).posterior_predictive
    assert record is not None and record.random_seed == 3
    n_draws, n_obs, n_inputs = (
        labels.shape[0] * labels.shape[1],
        labels.shape[2],
        len(result_info(result).model_feature_names),
    )
    assert record.feature_replicates == (pp.feature_replicates(n_draws, n_obs, n_inputs) if features else 0)
    if features:  # 2 x 100 draws, all replicated
        assert result["posterior_predictive"]["X"].shape == (200, n_obs, n_inputs)


@pytest.mark.parametrize("label", list(FITS))
def test_replicated_labels_have_the_posterior_class_probabilities(saved, label):
    result = bc.load_result(saved[label])
    X = result["constant_data"]["X"].values
    proba = bc.predict(result, X, return_draws=True)["class_proba_draws"].transpose("chain", "draw", "obs", "class")
    p = proba.values.reshape(-1, X.shape[0], proba.sizes["class"])  # (draws, rows, classes)
    labels = result["posterior_predictive"]["y"].values.reshape(-1, X.shape[0])
    hits = labels[..., np.newaxis] == np.arange(p.shape[-1])
    # given the draws the labels are independent: the counts' variance is the sum of p (1 - p), exactly
    z_class = (hits.sum(axis=(0, 1)) - p.sum(axis=(0, 1))) / np.sqrt((p * (1 - p)).sum(axis=(0, 1)))
    assert np.abs(z_class).max() < 4.5, z_class
    # per row: the same within 5 sd, plus 3 hits for the rare classes the normal approximation does not cover
    spread = np.sqrt((p * (1 - p)).sum(axis=0)) / p.shape[0]  # (rows, classes)
    excess = np.abs(hits.mean(axis=0) - p.mean(axis=0)) - 5 * spread
    assert (excess <= 3 / p.shape[0]).all(), excess.max()


@pytest.mark.parametrize("label", GENERATIVE)
def test_replicated_features_have_the_posterior_predictive_class_means(saved, label):
    result = bc.load_result(saved[label])
    group = result["posterior_predictive"]
    features = group["X"].values  # (replicate, obs, feature), in the data's units
    classes = group["y"].values[group["replicate_chain"].values, group["replicate_draw"].values]  # (replicate, obs)
    posterior = result["posterior"]
    name = "gaussian_mean" if "gaussian_mean" in posterior else "class_mean"
    closed_form = result["point_estimate_posterior_mean"][name].transpose("class", ...).values.reshape(2, -1)
    draws = posterior[name].transpose("chain", "draw", "class", ...).values.reshape(-1, 2, closed_form.shape[1])
    center, scale = standardization_of(result)  # the parameters are in the units the model was fitted in
    closed_form, draws = closed_form * scale + center, draws * scale + center
    for k in range(2):
        chosen = classes == k
        mean = features[chosen].mean(axis=0)
        # the error of a mean over R replicates of n_k rows: the spread of the class mean between draws over R,
        # plus the features' spread within a class over all R n_k values
        within = features[chosen].var(axis=0) / chosen.sum()
        between = draws[:, k].var(axis=0) / features.shape[0]
        np.testing.assert_array_less(np.abs(mean - closed_form[k]), 5 * np.sqrt(within + between))


def test_replicated_codes_of_categorical_and_binary_columns_are_codes(saved):
    result = bc.load_result(saved["naive_bayes penguins exact"])
    replicated = result["posterior_predictive"]["X"]
    island, sex = (replicated.sel(model_feature=name).values for name in ("island", "sex"))
    assert set(np.unique(island)) == {0.0, 1.0, 2.0} and set(np.unique(sex)) == {0.0, 1.0}
    # Gentoo penguins live on Biscoe (code 0) only: so do their replicates, given a replicated Gentoo label
    classes = result["posterior_predictive"]["y"].values[
        replicated["replicate_chain"].values, replicated["replicate_draw"].values
    ]
    observed = result["constant_data"]["X"].sel(feature="island").values[result["observed_data"]["y"].values == 2]
    assert set(np.unique(observed)) == {0.0}
    assert (island[classes == 2] == 0).mean() > 0.95


def test_the_same_seed_gives_the_same_group_and_another_seed_other_labels():
    model = bc.GaussianClassConditional(prior=IW)
    first, again, other = (bc.fit(model, GAUSSIANS, method="exact", sampler=SHORT, random_seed=s) for s in (5, 5, 6))
    xr.testing.assert_identical(first["posterior_predictive"].to_dataset(), again["posterior_predictive"].to_dataset())
    assert first.attrs["posterior_predictive_digest"] == again.attrs["posterior_predictive_digest"]
    assert (first["posterior_predictive"]["y"].values != other["posterior_predictive"]["y"].values).any()


def test_labels_do_not_depend_on_the_tiling_or_the_threads(monkeypatch):
    model = bc.NaiveBayes()
    posterior = model.exact_posterior(GAUSSIANS, draws=50, chains=2, random_seed=0)
    posterior = model.with_coords(posterior, GAUSSIANS)
    _, labels = pp.training_draws(model, posterior, GAUSSIANS.X, GAUSSIANS.y, random_seed=9)
    monkeypatch.setattr(tiles, "TILE_BYTES", 8 * 2 * 100 * 7)  # tiles of 7 rows, across the blocks of 256 rows
    big = bc.load("seed001_gaussians", n=600, random_seed=1)
    _, one_thread = pp.training_draws(model, posterior, big.X, big.y, random_seed=9, workers=1)
    monkeypatch.undo()
    _, whole = pp.training_draws(model, posterior, big.X, big.y, random_seed=9)
    np.testing.assert_array_equal(one_thread, whole)
    assert labels is not None and labels.shape == (2, 50, 120)


def test_feature_replicates_are_capped():
    assert pp.feature_replicates(4000, 333, 4) == pp.MAX_FEATURE_REPLICATES
    assert pp.feature_replicates(4000, 100_000, 30) == 0  # one replicate alone would exceed the value cap
    assert pp.feature_replicates(50, 10, 2) == 50
    assert pp.feature_replicates(4000, 1797, 64) * 1797 * 64 <= pp.MAX_REPLICATED_FEATURE_VALUES


def test_a_point_estimate_has_no_group_and_old_files_load_without_one(saved, tmp_path):
    estimate = bc.fit("logistic", GAUSSIANS, method="map")
    assert "posterior_predictive" not in estimate.children and result_info(estimate).posterior_predictive is None
    for path in sorted(FORMAT1.glob("*.nc")):
        old = bc.load_result(path)
        assert "posterior_predictive" not in old.children and check_result(old).posterior_predictive is None
    # a format 2 file with draws written before the group: no group, no attrs
    result = bc.load_result(saved["gcc shared exact"])
    info = result_info(result)
    del result["posterior_predictive"]
    write_info(result, dataclasses.replace(info, posterior_predictive=None))
    assert "posterior_predictive_digest" not in result.attrs and info.format_version == 2
    bc.save_result(result, tmp_path / "before.nc")
    assert result_info(bc.load_result(tmp_path / "before.nc")).posterior_predictive is None


@pytest.mark.parametrize("label", ["logistic nuts", "naive_bayes exact", "gcc per-class exact", "gp gibbs"])
def test_loo_pit_weights_are_arviz_own_where_arviz_computes_them(saved, label):
    result = bc.load_result(saved[label])
    log_weights, pareto_k = loo_pit_weights(result)
    with_weights = arviz_stats.loo_pit(result, log_weights=log_weights, pareto_k=pareto_k)["y"].values
    np.testing.assert_allclose(with_weights, arviz_stats.loo_pit(result)["y"].values, rtol=0, atol=1e-12)


def test_loo_pit_takes_separated_classes_with_the_weights(tmp_path):
    """gcc on penguins' measurements: rows whose observed class has probability 1 in every draw (flat rows)."""
    measurements = PENGUINS.select_features(["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"])
    model = bc.GaussianClassConditional(prior=IW)  # shared covariance: 6 rows with log P = 0.0 in every draw
    bc.save_result(bc.fit(model, measurements, method="exact", sampler=SHORT, random_seed=0), tmp_path / "gcc.nc")
    result = bc.load_result(tmp_path / "gcc.nc")
    with pytest.raises(ValueError, match="All tail values are the same"):  # arviz_stats' own smoothing
        arviz_stats.loo_pit(result)
    log_weights, pareto_k = loo_pit_weights(result)
    flat = np.ptp(result["log_likelihood"]["y"].values.reshape(-1, measurements.n_obs), axis=0) == 0
    assert flat.any() and (pareto_k["y"].values[flat] == 0).all()
    pit = arviz_stats.loo_pit(result, log_weights=log_weights, pareto_k=pareto_k)["y"].values
    assert np.isfinite(pit).all() and (pit >= 0).all() and (pit <= 1).all()


@pytest.mark.parametrize("label", ["gp gibbs", "gp laplace"])
def test_the_exact_gps_log_likelihood_is_its_likelihood_of_the_latent_draws(saved, label):
    """The exact GP's draws hold the latent at each training row: log P(y_i | z_i), not a second prediction of x_i."""
    result = bc.load_result(saved[label])
    latent = result["posterior"]["latent"].transpose("chain", "draw", "obs").values
    sign = 2.0 * result["observed_data"]["y"].values - 1.0
    expected = -np.logaddexp(0.0, -sign * latent)  # log sigmoid(s z), the logit link
    np.testing.assert_allclose(result["log_likelihood"]["y"].values, expected, rtol=1e-12, atol=1e-12)
    # predicting the training rows again (f* | z at x* = x_i) gives nearly the same: z_i up to the jitter
    X = result["constant_data"]["X"].values
    proba = bc.predict(result, X, return_draws=True)["class_proba_draws"].transpose("chain", "draw", "obs", "class")
    observed = result["observed_data"]["y"].values[np.newaxis, np.newaxis, :, np.newaxis]
    predicted = np.log(np.take_along_axis(proba.values, observed, axis=-1))[..., 0]
    assert np.abs(predicted - expected).max() < 0.1
