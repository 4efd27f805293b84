"""Tests of inference.fit and inference.predict: result layout and provenance, reproducibility,
prediction shapes and invariants, standardisation, and clear errors for bad inputs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.special
import xarray as xr

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings, fit, predict
from bayesclass.inference.engines.fit import standardization_of
from bayesclass.models import LogisticPrior, LogisticRegression, SeparationError
from tests.conftest import FAST_SAMPLER, NUTS_SEED

ROOT_ATTRS = {
    "model",
    "model_hyperparameters",
    "method",
    "sampler_settings",
    "random_seed",
    "data_fingerprint",
    "data_provenance",
    "class_names",
    "feature_names",
    "package_versions",
    "compile_seconds",
    "sampling_seconds",
    "compile_cache_hit",
    "mle_status",
}


# --------------------------------------------------------------------------- the result


def test_nuts_result_has_every_group_and_attr(nuts_gaussians, gaussians_small):
    result = nuts_gaussians
    assert {
        "posterior",
        "sample_stats",
        "point_estimate_map",
        "point_estimate_mle",
        "observed_data",
        "constant_data",
    } <= set(result.children)
    assert ROOT_ATTRS <= set(result.attrs)
    posterior = result["posterior"].to_dataset()
    assert posterior["weights"].dims == ("chain", "draw", "feature")
    assert posterior.sizes["chain"] == 2 and posterior.sizes["draw"] == 1000
    assert list(posterior["feature"].values) == ["x1", "x2"]
    assert list(posterior["class"].values) == ["C1", "C2"]
    assert "diverging" in result["sample_stats"]
    np.testing.assert_array_equal(result["observed_data"]["y"].values, gaussians_small.y)
    np.testing.assert_array_equal(result["constant_data"]["X"].values, gaussians_small.X)

    attrs = result.attrs
    assert attrs["model"] == "logistic" and attrs["method"] == "nuts"
    assert json.loads(attrs["model_hyperparameters"])["parametrization"] == "whitened"
    settings = json.loads(attrs["sampler_settings"])
    assert (settings["draws"], settings["tune"], settings["chains"], settings["backend"]) == (1000, 500, 2, "auto")
    assert attrs["sampler_backend"] == "blackjax"  # logistic's default backend, recorded as run
    assert attrs["random_seed"] == NUTS_SEED
    assert attrs["data_fingerprint"] == gaussians_small.fingerprint()
    assert "seed001_gaussians(n=200, random_seed=1)" in attrs["data_provenance"]
    assert json.loads(attrs["class_names"]) == ["C1", "C2"]
    assert json.loads(attrs["feature_names"]) == ["x1", "x2"]
    assert {"pymc", "nutpie", "arviz", "numpy"} <= set(json.loads(attrs["package_versions"]))
    assert attrs["compile_seconds"] >= 0 and attrs["sampling_seconds"] > 0
    assert attrs["mle_status"] == "exists"
    # the stored point estimates are the model's own
    expected = LogisticRegression().point_estimate(gaussians_small, "map")
    xr.testing.assert_allclose(
        result["point_estimate_map"].to_dataset()[["intercept", "weights"]], expected[["intercept", "weights"]]
    )


def test_model_is_rebuilt_from_the_provenance_attrs(nuts_gaussians_centered):
    assert inference.model_of(nuts_gaussians_centered) == LogisticRegression(parametrization="centered")


def test_point_estimate_result_layout(map_gaussians):
    assert set(map_gaussians.children) == {
        "point_estimate_map",
        "estimate_covariance_map",  # the MAP's Laplace covariance (issue 27)
        "observed_data",
        "constant_data",
    }
    assert map_gaussians.attrs["method"] == "map"
    assert map_gaussians.attrs["mle_status"] == "not computed"
    assert map_gaussians.attrs["sampler_settings"] == "{}"


def test_nuts_fit_of_separable_data_explains_the_missing_mle(nuts_breast_cancer):
    assert "point_estimate_mle" not in nuts_breast_cancer.children
    assert "point_estimate_map" in nuts_breast_cancer.children
    status = nuts_breast_cancer.attrs["mle_status"]
    assert "MLE does not exist" in status and "separable" in status and "breast_cancer" in status
    # and prediction works without it
    prediction = predict(nuts_breast_cancer, data.load("breast_cancer").X[:5])
    assert "class_proba_mle" not in prediction and "class_proba_map" in prediction


def test_mle_fit_of_separable_data_raises():
    with pytest.raises(SeparationError, match="MLE does not exist"):
        fit("logistic", data.seed000_separable(100, random_seed=0), method="mle")


def test_same_seed_same_draws_different_seed_different_draws(gaussians_small, nuts_gaussians):
    first = fit(LogisticRegression(), gaussians_small, sampler=FAST_SAMPLER, random_seed=7)
    again = fit(LogisticRegression(), gaussians_small, sampler=FAST_SAMPLER, random_seed=7)
    other = fit(LogisticRegression(), gaussians_small, sampler=FAST_SAMPLER, random_seed=8)
    assert again.attrs["compile_cache_hit"] == other.attrs["compile_cache_hit"] == 1  # compiled by `first`
    for name in ("intercept", "weights"):
        np.testing.assert_array_equal(first["posterior"][name].values, again["posterior"][name].values)
        assert not np.allclose(first["posterior"][name].values, other["posterior"][name].values)
    # the chains start apart and differ from each other
    weights = first["posterior"]["weights"].values
    assert not np.allclose(weights[0], weights[1])


def test_unseeded_fit_records_the_seed_it_drew(gaussians_small):
    result = fit(LogisticRegression(), gaussians_small, method="map")
    assert isinstance(result.attrs["random_seed"], int) and result.attrs["random_seed"] >= 0


# --------------------------------------------------------------------------- predict


def test_predict_one_row_given_as_1d(nuts_gaussians):
    prediction = predict(nuts_gaussians, np.array([2.0, 1.0]), return_draws=True)
    assert prediction["class_proba"].dims == ("obs", "class")
    assert prediction["class_proba"].shape == (1, 2)
    assert prediction["class_proba_draws"].shape == (2, 1000, 1, 2)
    np.testing.assert_allclose(prediction["class_proba"].sum("class").values, 1.0, rtol=1e-12)
    assert prediction["predicted"].values.tolist() == ["C1"]  # at the C1 mean the true P(C1) is about 0.86


def test_predict_many_rows(nuts_gaussians):
    X = data.seed001_gaussians(10_000, random_seed=99).X
    prediction = predict(nuts_gaussians, X)
    assert "class_proba_draws" not in prediction
    for name in ("class_proba", "class_proba_low", "class_proba_high", "class_proba_map", "class_proba_mle"):
        assert prediction[name].shape == (10_000, 2), name
    np.testing.assert_allclose(prediction["class_proba"].sum("class").values, 1.0, rtol=1e-12)
    np.testing.assert_allclose(prediction["class_proba_map"].sum("class").values, 1.0, rtol=1e-12)
    low, mean, high = (prediction[name].values for name in ("class_proba_low", "class_proba", "class_proba_high"))
    assert np.all((low <= mean) & (mean <= high))
    assert np.all((0 <= low) & (high <= 1))
    # blockwise evaluation over rows gives what one block gives
    head = predict(nuts_gaussians, X[:50])
    np.testing.assert_allclose(head["class_proba"].values, prediction["class_proba"].values[:50], rtol=1e-12)
    np.testing.assert_allclose(head["class_proba_low"].values, prediction["class_proba_low"].values[:50], rtol=1e-12)


def test_prediction_summaries_are_those_of_the_draws(nuts_gaussians, gaussians_small):
    X = gaussians_small.X[:40]
    prediction = predict(nuts_gaussians, X, interval_prob=0.8, return_draws=True)
    draws = prediction["class_proba_draws"]
    assert draws.dims == ("chain", "draw", "obs", "class")
    np.testing.assert_allclose(draws.sum("class").values, 1.0, rtol=1e-12)
    np.testing.assert_allclose(prediction["class_proba"].values, draws.mean(("chain", "draw")).values, rtol=1e-12)
    # per-draw probabilities are the inverse link of the sampled coefficients
    posterior = nuts_gaussians["posterior"].to_dataset()
    eta = posterior["intercept"].values[..., None] + np.einsum("cdf,of->cdo", posterior["weights"].values, X)
    np.testing.assert_allclose(draws.sel({"class": "C2"}).values, scipy.special.expit(eta), rtol=1e-10)
    # an 80% ETI holds about 80% of the draws of each probability
    low, high = prediction["class_proba_low"], prediction["class_proba_high"]
    inside = ((draws >= low) & (draws <= high)).mean(("chain", "draw"))
    assert np.all(np.abs(inside.values - 0.8) < 0.01)
    # a wider interval contains a narrower one
    wide = predict(nuts_gaussians, X, interval_prob=0.95)
    assert np.all(wide["class_proba_low"].values <= low.values) and np.all(
        wide["class_proba_high"].values >= high.values
    )


def test_map_and_mle_probabilities_sit_beside_the_posterior_mean(nuts_gaussians, gaussians_small):
    X = gaussians_small.X
    prediction = predict(nuts_gaussians, X)
    model = LogisticRegression()
    for kind in ("map", "mle"):
        expected = model.class_proba(nuts_gaussians[f"point_estimate_{kind}"].to_dataset(), X)
        np.testing.assert_allclose(prediction[f"class_proba_{kind}"].values, expected.values, rtol=1e-12)
    # with n=200 the three estimates are close but not identical
    difference = np.abs(prediction["class_proba"] - prediction["class_proba_map"]).max()
    assert 0 < float(difference) < 0.05


def test_predicted_is_the_argmax_class(nuts_iris, iris):
    prediction = predict(nuts_iris, iris.X)
    classes = np.asarray(iris.class_names)
    np.testing.assert_array_equal(
        prediction["predicted"].values, classes[prediction["class_proba"].argmax("class").values]
    )
    assert list(prediction["class"].values) == list(iris.class_names)
    np.testing.assert_allclose(prediction["class_proba"].sum("class").values, 1.0, rtol=1e-12)
    assert np.mean(prediction["predicted"].values == classes[iris.y]) > 0.9


def test_point_estimate_fit_predicts_with_its_plug_in(map_gaussians, gaussians_small):
    prediction = predict(map_gaussians, gaussians_small.X)
    assert set(prediction.data_vars) == {
        "class_proba",
        "class_proba_map",
        "class_proba_map_low",  # its delta-method interval (issue 27)
        "class_proba_map_high",
        "predicted",
    }
    xr.testing.assert_equal(prediction["class_proba"], prediction["class_proba_map"])


@pytest.mark.parametrize("name", ["wine", "breast_cancer"])
def test_standardize_in_fit_equals_fitting_standardized_data(name):
    raw = data.load(name)
    standardized = raw.standardized()
    inside = fit("logistic", raw, method="map", standardize=True)
    outside = fit("logistic", standardized, method="map", standardize=False)
    center, scale = standardization_of(inside)
    np.testing.assert_allclose(center, raw.X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(scale, raw.X.std(axis=0), rtol=1e-12)
    # predictions on original units through the stored transform == predictions on standardized units
    np.testing.assert_allclose(
        predict(inside, raw.X)["class_proba"].values,
        predict(outside, standardized.X)["class_proba"].values,
        rtol=0,
        atol=1e-10,
    )
    # the raw-unit fit is a different model (the prior acts on other scales); the default is the standardised one
    raw_fit = fit("logistic", raw, method="map", standardize=False)
    default = fit("logistic", raw, method="map")
    xr.testing.assert_equal(default["point_estimate_map"].to_dataset(), inside["point_estimate_map"].to_dataset())
    assert not np.allclose(
        raw_fit["point_estimate_map"]["weights"].values, inside["point_estimate_map"]["weights"].values
    )


def test_a_constant_feature_is_centred_not_scaled_with_a_warning(gaussians_small):
    """A constant column is legal and uninformative: centred to 0 (not scaled), warned of, and the MAP's
    probabilities are those of the fit without it (its weight stays at the prior's mode, 0)."""
    X = np.column_stack([gaussians_small.X, np.full(gaussians_small.n_obs, 7.5)])
    constant = dataclasses.replace(
        gaussians_small, X=X, feature_names=("x1", "x2", "one"), feature_kinds=("continuous",) * 3
    )
    with pytest.warns(UserWarning, match=r"constant feature\(s\) 'one' in the training data: centred, not scaled"):
        result = fit("logistic", constant, method="map")
    center, scale = standardization_of(result)
    assert center[2] == 7.5 and scale[2] == 1.0
    without = fit("logistic", gaussians_small, method="map")
    np.testing.assert_allclose(
        predict(result, X[:20])["class_proba"].values,
        predict(without, gaussians_small.X[:20])["class_proba"].values,
        atol=1e-8,
    )


@pytest.mark.slow
def test_pymc_backend_fallback_samples_the_same_posterior(gaussians_small, nuts_gaussians):
    settings = SamplerSettings(draws=300, tune=300, chains=2, backend="pymc", progressbar=False)
    result = fit(LogisticRegression(), gaussians_small, sampler=settings, standardize=False, random_seed=3)
    posterior = result["posterior"].to_dataset()  # in the reference's (raw) units
    assert posterior["weights"].shape == (2, 300, 2)
    assert result.attrs["compile_cache_hit"] == 0
    assert json.loads(result.attrs["sampler_settings"])["backend"] == "pymc"
    reference = nuts_gaussians["posterior"].to_dataset()
    for name in ("intercept", "weights"):
        sd = reference[name].std(("chain", "draw"))
        difference = np.abs(posterior[name].mean(("chain", "draw")) - reference[name].mean(("chain", "draw")))
        assert (difference < 0.3 * sd).all()  # MCSE of the 600-draw mean is < 0.1 sd


# --------------------------------------------------------------------------- bad inputs


def test_nan_or_inf_in_training_features_is_rejected(gaussians_small):
    for bad, shown in ((np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "-inf")):
        X = gaussians_small.X.copy()
        X[3, 1] = bad
        with pytest.raises(ValueError, match=rf"X contains {shown} at row 3, column 'x2'"):
            dataclasses.replace(gaussians_small, X=X)


def test_predict_rejects_nan_features(map_gaussians):
    X = np.array([[1.0, 2.0], [np.nan, 0.0]])
    with pytest.raises(ValueError, match=r"NaN at row 1, column 'x1'.*before predicting"):
        predict(map_gaussians, X)


def test_predict_rejects_wrong_number_of_features(map_gaussians):
    with pytest.raises(ValueError, match=r"X has 3 columns but the model was fitted on 2 features \('x1', 'x2'\)"):
        predict(map_gaussians, np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"1-D with 3 values.*2 features"):
        predict(map_gaussians, np.zeros(3))


def test_predict_rejects_labels_unseen_in_training(map_gaussians, gaussians_small):
    extra = dataclasses.replace(
        gaussians_small,
        y=np.where(np.arange(gaussians_small.n_obs) < 5, 2, gaussians_small.y),
        class_names=("C1", "C2", "C3"),
        true_class_proba=None,  # the generator's two-class truth does not apply
    )
    with pytest.raises(ValueError, match=r"labels 'C3'.*not seen in training"):
        predict(map_gaussians, extra)
    # a Dataset of known labels is accepted
    assert predict(map_gaussians, gaussians_small)["class_proba"].shape == (gaussians_small.n_obs, 2)


def test_predict_rejects_a_dataset_with_other_columns(map_gaussians, gaussians_small):
    renamed = dataclasses.replace(gaussians_small, feature_names=("height", "weight"))
    with pytest.raises(ValueError, match=r"features \('height', 'weight'\).*fitted on \('x1', 'x2'\)"):
        predict(map_gaussians, renamed)


def test_predict_rejects_bad_interval_prob(map_gaussians):
    for bad in (0.0, 1.0, 89):
        with pytest.raises(ValueError, match=rf"interval_prob must be in \(0, 1\).*{bad}"):
            predict(map_gaussians, np.zeros(2), interval_prob=bad)


def test_fit_rejects_single_class(gaussians_small):
    with pytest.raises(ValueError, match="single class"):
        fit("logistic", gaussians_small.subset(gaussians_small.y == 1), method="map")


def test_fit_rejects_unknown_method(gaussians_small):
    expected = r"method='vb' is not available for the 'logistic' model; choose one of 'nuts', 'laplace', 'mle', 'map'"
    with pytest.raises(ValueError, match=expected):
        fit("logistic", gaussians_small, method="vb")


def test_fit_rejects_unknown_model(gaussians_small):
    with pytest.raises(ValueError, match=r"unknown model 'svm'.*'logistic'"):
        fit("svm", gaussians_small, method="map")


def test_fit_rejects_bad_seed_and_data(gaussians_small):
    with pytest.raises(ValueError, match=r"random_seed must be an integer in 0\.\.4294967295, got -1"):
        fit("logistic", gaussians_small, method="map", random_seed=-1)
    with pytest.raises(
        ValueError, match=r"random_seed must be an integer in 0\.\.4294967295, got 1180591620717411303424"
    ):
        fit("logistic", gaussians_small, method="map", random_seed=2**70)
    with pytest.raises(ValueError, match=r"random_seed must be an integer in 0\.\.4294967295, got True"):
        fit("logistic", gaussians_small, method="map", random_seed=True)
    with pytest.raises(TypeError, match="data must be a bayesclass.data.Dataset"):
        fit("logistic", gaussians_small.X, method="map")


def test_fit_rejects_multiclass_probit(iris):
    with pytest.raises(ValueError, match=r"probit.*logit"):
        fit(LogisticRegression(link="probit"), iris, method="map")


@pytest.mark.parametrize(
    ("arguments", "pattern"),
    [
        ({"draws": 0}, r"draws must be an integer >= 1 or None, got 0; None takes the family.s default"),
        ({"chains": 0}, r"chains must be an integer >= 1, got 0"),
        ({"tune": -1}, r"tune must be an integer >= 0 or None, got -1; None takes the family.s default"),
        ({"draws": 10.5}, r"draws must be an integer >= 1 or None, got 10.5; None takes the family.s default"),
        ({"target_accept": 1.5}, r"target_accept must be a number in \(0, 1\).*1.5"),
        ({"target_accept": 0.0}, r"target_accept must be a number in \(0, 1\).*0.0"),
        ({"backend": "stan"}, r"backend must be 'auto', 'blackjax', 'nutpie' or 'pymc', got 'stan'"),
        ({"blas_threads": 0}, r"blas_threads must be an integer >= 1 or None.*got 0"),
        ({"blas_threads": True}, r"blas_threads must be an integer >= 1 or None.*got True"),
    ],
)
def test_sampler_settings_are_validated(arguments, pattern):
    with pytest.raises(ValueError, match=pattern):
        SamplerSettings(**arguments)


def test_flat_intercept_prior_survives_fit_and_matches_sklearn_map(breast_cancer_std, flat_intercept_model):
    """The flat (improper) intercept survives the whole fit route: MAP stored == sklearn's C=1 fit."""
    from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression

    result = fit(flat_intercept_model, breast_cancer_std, method="map")
    reference = SklearnLogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(
        breast_cancer_std.X, breast_cancer_std.y
    )
    np.testing.assert_allclose(
        predict(result, breast_cancer_std.X)["class_proba"].values,
        reference.predict_proba(breast_cancer_std.X),
        atol=1e-5,
    )
    assert json.loads(result.attrs["model_hyperparameters"])["prior"]["intercept_sigma"] == float("inf")
    assert inference.model_of(result).prior == LogisticPrior(intercept_sigma=float("inf"))


# -- standardize="all": dummy columns scaled like the other inputs -------------------------------------------


@pytest.fixture(scope="module")
def dummies_csv(tmp_path_factory):
    """A logistic-regression CSV with one continuous input and two 0/1 dummies (as the UCI German credit data)."""
    import csv

    rng = np.random.default_rng(3)
    n = 300
    age, smoker, owner = rng.normal(40, 10, n).round(2), rng.integers(0, 2, n), rng.integers(0, 2, n)
    bad = rng.random(n) < 1 / (1 + np.exp(-(-1 + 0.05 * (age - 40) + 1.2 * smoker - 0.8 * owner)))
    path = tmp_path_factory.mktemp("dummies") / "credit.csv"
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["age", "smoker", "owner", "default"])
        writer.writerows(zip(age, smoker, owner, np.where(bad, "bad", "good"), strict=True))
    return path


def test_standardize_all_scales_binary_columns_as_declared_continuous_ones(dummies_csv):
    inferred = data.load_csv(dummies_csv, target="default")
    declared = data.load_csv(
        dummies_csv, target="default", feature_kinds={"smoker": "continuous", "owner": "continuous"}
    )
    everything = inference.fit("logistic", inferred, method="map", standardize="all")
    continuous_only = inference.fit("logistic", inferred, method="map", standardize=True)
    as_declared = inference.fit("logistic", declared, method="map", standardize=True)
    for name in ("intercept", "weights"):
        np.testing.assert_allclose(
            everything["point_estimate_map"][name].values,
            as_declared["point_estimate_map"][name].values,
            rtol=0,
            atol=1e-10,
        )
    assert (
        abs(
            float(everything["point_estimate_map"]["intercept"])
            - float(continuous_only["point_estimate_map"]["intercept"])
        )
        > 0.1
    )
    assert json.loads(everything.attrs["standardized_features"]) == ["age", "smoker", "owner"]
    assert json.loads(continuous_only.attrs["standardized_features"]) == ["age"]
    assert (everything.attrs["standardize_mode"], continuous_only.attrs["standardize_mode"]) == ("all", "continuous")
    # prediction applies the same transform to the raw 0/1 inputs
    np.testing.assert_allclose(
        inference.predict(everything, inferred.X[:20])["class_proba"].values,
        inference.predict(as_declared, declared.X[:20])["class_proba"].values,
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize("value", ["yes", "continuous", 1.0, None])
def test_standardize_refuses_other_values(gaussians_small, value):
    with pytest.raises(ValueError, match=r"standardize must be False, True \(continuous columns\) or 'all'"):
        inference.fit("logistic", gaussians_small, method="map", standardize=value)


def test_fit_codes_a_dataframe_with_the_table_options_as_from_frame_does():
    """``fit(model, frame, target=, features=, feature_kinds=, missing=)`` fits exactly the Dataset that
    ``Dataset.from_frame`` makes with the same options (same model inputs, same MAP to 1e-12)."""
    import pandas as pd

    from bayesclass import LogisticRegression, result_info
    from bayesclass.data import Dataset

    frame = pd.read_csv(Path(data.__file__).parent / "files" / "penguins.csv")
    options = {"target": "species", "features": "island,year,bill_depth_mm", "missing": "drop"}
    kinds = {"year": "categorical"}
    direct = fit(LogisticRegression(), frame, **options, feature_kinds=kinds, method="map")
    coded = Dataset.from_frame(frame, **options, feature_kinds=kinds)
    by_hand = fit(LogisticRegression(), coded, method="map")
    info = result_info(direct)
    assert info.model_feature_names == result_info(by_hand).model_feature_names
    assert info.model_feature_names[:2] == ("island=Dream", "island=Torgersen")
    assert "year=2008" in info.model_feature_names and "year=2009" in info.model_feature_names
    assert info.data.missing.dropped_rows == int(
        frame[["species", "island", "year", "bill_depth_mm"]].isna().any(axis=1).sum()
    )
    np.testing.assert_allclose(
        direct["point_estimate_map"]["weights"].values, by_hand["point_estimate_map"]["weights"].values, rtol=1e-12
    )
    with pytest.raises(ValueError, match=r"max_levels= applies to a DataFrame"):
        fit(LogisticRegression(), coded, max_levels=5, method="map")
