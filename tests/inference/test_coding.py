"""Categorical features in the discriminative families: treatment coding, the same at fit and at predict."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from bayesclass import data, inference
from bayesclass.data.coding import treatment_code
from bayesclass.models import LatentGaussianProcess, LogisticRegression, NaiveBayes


@pytest.fixture(scope="module")
def colour_csv(tmp_path_factory):
    """A numeric input and a 3-level text column whose levels shift the log-odds by 0, +1.5 and -1."""
    rng = np.random.default_rng(8)
    n = 300
    size = rng.normal(0, 1, n).round(3)
    colour = rng.choice(["blue", "green", "red"], n)
    shift = np.select([colour == "green", colour == "red"], [1.5, -1.0], 0.0)
    bought = rng.random(n) < 1 / (1 + np.exp(-(0.2 + size + shift)))
    path = tmp_path_factory.mktemp("coding") / "shop.csv"
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["size", "colour", "bought"])
        writer.writerows(zip(size, colour, np.where(bought, "yes", "no"), strict=True))
    return path


def _one_hot(dataset: data.Dataset) -> data.Dataset:
    """The same data with colour written out by hand as green/red indicators (blue the reference)."""
    colour = dataset.X[:, 1]
    X = np.column_stack([dataset.X[:, 0], colour == 1, colour == 2]).astype(float)
    return data.Dataset(
        name="by hand",
        X=X,
        y=dataset.y,
        feature_names=("size", "colour=green", "colour=red"),
        class_names=dataset.class_names,
        feature_kinds=("continuous", "binary", "binary"),
    )


def test_logistic_regression_codes_a_text_column_by_treatment_with_named_coefficients(colour_csv):
    shop = data.load_csv(colour_csv, target="bought")
    assert shop.feature_kinds == ("continuous", "categorical") and shop.category_names["colour"] == (
        "blue",
        "green",
        "red",
    )
    result = inference.fit(LogisticRegression(), shop, method="map", standardize=True)
    estimate = result["point_estimate_map"]
    assert list(estimate["feature"].values) == ["size", "colour=green", "colour=red"]
    by_hand = inference.fit(LogisticRegression(), _one_hot(shop), method="map", standardize=True)
    for name in ("intercept", "weights"):
        np.testing.assert_allclose(estimate[name].values, by_hand["point_estimate_map"][name].values, atol=1e-10)
    # the coefficients estimate the level shifts of the generator: green > 0 > red (relative to blue)
    green, red = estimate["weights"].sel(feature=["colour=green", "colour=red"]).values
    assert green > 0.5 and red < -0.3
    assert json.loads(result.attrs["treatment_coding"]) == {"colour": ["blue", "green", "red"]}
    assert json.loads(result.attrs["feature_names"]) == ["size", "colour"]  # what a user gives at predict
    assert json.loads(result.attrs["standardized_features"]) == ["size"]  # dummies stay 0/1 under standardize=True
    # prediction codes raw rows (level codes) the same way
    np.testing.assert_allclose(
        inference.predict(result, shop.X[:25])["class_proba"].values,
        inference.predict(by_hand, _one_hot(shop).X[:25])["class_proba"].values,
        atol=1e-12,
    )


def test_standardize_all_scales_the_dummies_too(colour_csv):
    shop = data.load_csv(colour_csv, target="bought")
    result = inference.fit(LogisticRegression(), shop, method="map", standardize="all")
    assert json.loads(result.attrs["standardized_features"]) == ["size", "colour=green", "colour=red"]
    by_hand = inference.fit(LogisticRegression(), _one_hot(shop), method="map", standardize="all")
    np.testing.assert_allclose(
        result["point_estimate_map"]["weights"].values, by_hand["point_estimate_map"]["weights"].values, atol=1e-10
    )


def test_a_level_unseen_in_training_is_refused_at_prediction(colour_csv):
    shop = data.load_csv(colour_csv, target="bought")
    result = inference.fit(LogisticRegression(), shop, method="map")
    with pytest.raises(
        ValueError, match=r"categorical column 'colour' has the code 3 in row 1.*\('blue', 'green', 'red'\)"
    ):
        inference.predict(result, np.array([[0.1, 0.0], [0.2, 3.0]]))


def test_naive_bayes_keeps_categorical_columns_native_and_gp_refuses_them(colour_csv):
    shop = data.load_csv(colour_csv, target="bought")
    result = inference.fit(NaiveBayes(), shop, method="map")
    assert "category_proba" in result["point_estimate_map"] and json.loads(result.attrs["treatment_coding"]) == {}
    with pytest.raises(ValueError, match=r"the gp model needs continuous inputs; 'colour' are not"):
        inference.fit(LatentGaussianProcess(), shop, method="map")


def test_treatment_code_of_arrays():
    X = np.array([[0.5, 2.0], [1.5, 0.0], [2.5, 1.0]])
    coded, names, indicator = treatment_code(X, ("x", "c"), {"c": ("a", "b", "c")})
    assert names == ("x", "c=b", "c=c")
    np.testing.assert_array_equal(indicator, [False, True, True])
    np.testing.assert_array_equal(coded, [[0.5, 0, 1], [1.5, 0, 0], [2.5, 1, 0]])
    with pytest.raises(ValueError, match=r"has the code 0.5 in row 0"):
        treatment_code(np.array([[0.5]]), ("c",), {"c": ("a", "b")})
