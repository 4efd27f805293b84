"""One evaluation path (inference.evaluation): every estimate and every baseline is predicted, scored and
decided by the same functions, on the model's own inputs."""

from __future__ import annotations

import numpy as np
import pytest

from bayesclass import data
from bayesclass.data import Dataset, train_validation_test_split
from bayesclass.inference import SamplerSettings, fit, predict
from bayesclass.inference.evaluation.heldout import evaluate, fit_baselines, heldout_estimates
from bayesclass.inference.evaluation.scores import score_probabilities
from bayesclass.inference.prediction.decisions import LossMatrix
from bayesclass.models import LogisticRegression
from bayesclass.models.baselines import get_baseline

SETTINGS = SamplerSettings(draws=300, tune=300, chains=2, progressbar=False)


@pytest.fixture(scope="module")
def split():
    return train_validation_test_split(data.seed001_gaussians(300, random_seed=4), random_seed=1)


@pytest.fixture(scope="module")
def logistic_fit(split):
    train, _, _ = split
    return fit(LogisticRegression(), train, sampler=SETTINGS, standardize=True, random_seed=2)


def test_every_estimate_is_scored_from_its_own_predicted_probabilities(logistic_fit, split):
    _, _, test = split
    table = evaluate(logistic_fit, test)
    prediction = predict(logistic_fit, test)
    expected = {
        "posterior": prediction["class_proba"].values,
        "MAP plug-in": prediction["class_proba_map"].values,
        "MLE plug-in": prediction["class_proba_mle"].values,
    }
    assert set(table.index) == set(expected)
    for label, proba in expected.items():
        scores = score_probabilities(proba, test.y, true_proba=test.true_class_proba)
        for metric in ("log_loss", "brier", "accuracy", "balanced_accuracy", "ece", "kl_to_truth"):
            assert table.loc[label, metric] == pytest.approx(scores[metric], abs=1e-14), (label, metric)
    interval = (prediction["class_proba_low"].values, prediction["class_proba_high"].values)
    coverage = score_probabilities(expected["posterior"], test.y, true_proba=test.true_class_proba, interval=interval)
    assert table.loc["posterior", "truth_coverage"] == pytest.approx(coverage["truth_coverage"])
    for kind, label in (("map", "MAP plug-in"), ("mle", "MLE plug-in")):  # Wald (delta-method) intervals
        interval = (prediction[f"class_proba_{kind}_low"].values, prediction[f"class_proba_{kind}_high"].values)
        coverage = score_probabilities(expected[label], test.y, true_proba=test.true_class_proba, interval=interval)
        assert table.loc[label, "truth_coverage"] == pytest.approx(coverage["truth_coverage"])


def test_baselines_are_fitted_on_the_models_inputs_and_scored_alike(logistic_fit, split):
    train, _, test = split
    fitted = fit_baselines(logistic_fit, ["knn", "least_squares"], random_seed=0)
    center, scale = train.X.mean(axis=0), train.X.std(axis=0)  # the fit standardised the inputs
    direct = get_baseline("knn").fit((train.X - center) / scale, train.y, class_names=train.class_names)
    np.testing.assert_allclose(
        fitted["knn"].class_proba((test.X - center) / scale), direct.class_proba((test.X - center) / scale)
    )
    table = evaluate(logistic_fit, test, baselines=["knn", "least_squares"])
    knn = direct.class_proba((test.X - center) / scale)
    assert table.loc["baseline: k nearest neighbours (seed 000 eq 9.3)", "brier"] == pytest.approx(
        score_probabilities(knn, test.y)["brier"]
    )
    least_squares = table.loc["baseline: least squares (seed 000 eq 9.1)"]
    assert np.isnan(least_squares["log_loss"]) and 0 < least_squares["accuracy"] <= 1  # decisions only


def test_a_loss_matrix_decides_every_estimate_and_zero_one_loss_is_the_error_rate(logistic_fit, split):
    _, _, test = split
    zero_one = evaluate(logistic_fit, test, baselines=["perceptron"], loss=LossMatrix.zero_one(test.class_names))
    np.testing.assert_allclose(zero_one["mean_loss"], 1 - zero_one["accuracy"], atol=1e-12)
    costly = LossMatrix([[0.0, 1.0], [20.0, 0.0]], test.class_names)  # missing C2 costs 20
    table = evaluate(logistic_fit, test, loss=costly)
    proba = predict(logistic_fit, test)["class_proba"].values
    decisions = (proba[:, 1] > costly.threshold()).astype(int)
    assert table.loc["posterior", "mean_loss"] == pytest.approx(costly.values[test.y, decisions].mean())
    assert table.loc["posterior", "mean_loss"] <= zero_one.loc["posterior", "mean_loss"] * 20


def test_held_out_labels_are_matched_by_name_not_by_code(logistic_fit, split):
    _, _, test = split
    flipped = Dataset(
        name="flipped",
        X=test.X,
        y=1 - test.y,
        feature_names=test.feature_names,
        class_names=tuple(reversed(test.class_names)),
        feature_kinds=test.feature_kinds,
        true_class_proba=test.true_class_proba[:, ::-1],
    )
    np.testing.assert_allclose(evaluate(logistic_fit, flipped), evaluate(logistic_fit, test), atol=1e-14)
    estimates = heldout_estimates(logistic_fit, flipped)
    np.testing.assert_array_equal(estimates.y, test.y)


def test_unknown_held_out_classes_and_unknown_baselines_are_clear_errors(logistic_fit, split):
    _, _, test = split
    other = Dataset(
        name="other",
        X=test.X,
        y=np.zeros(test.n_obs, dtype=int),
        feature_names=test.feature_names,
        class_names=("C3",),
        feature_kinds=test.feature_kinds,
    )
    with pytest.raises(ValueError, match=r"labels \['C3'\] of 'other' were not among the fitted classes"):
        evaluate(logistic_fit, other)
    with pytest.raises(ValueError, match=r"unknown baseline\(s\) \['svm'\]"):
        evaluate(logistic_fit, test, baselines=["svm"])
    with pytest.raises(ValueError, match=r"unknown class\(es\) \['x'\]"):
        evaluate(logistic_fit, test, loss=LossMatrix([[0, 1], [1, 0]], ("C1", "x")))


def test_two_class_baselines_are_left_out_on_three_classes():
    wine = data.load("wine")
    result = fit("gcc", wine, method="map")
    assert set(fit_baselines(result, ["fisher", "perceptron", "tree"], random_seed=0)) == {"tree"}


def test_left_out_baselines_are_named_in_the_table():
    from bayesclass.inference.evaluation.heldout import left_out_baselines

    wine = data.load("wine")
    train, _, test = train_validation_test_split(wine, random_seed=0)
    result = fit("gcc", train, method="map")
    assert left_out_baselines(result, ["fisher", "knn", "perceptron"]) == ["fisher", "perceptron"]
    table = evaluate(result, test, baselines=["fisher", "knn"])
    assert "fisher: 3 classes" in table.attrs["left_out_baselines"]
    assert any(label.startswith("baseline: k nearest") for label in table.index)


def test_calibration_predicts_the_draws_the_reliability_diagrams_use(nuts_gaussians, gaussians_small):
    """The report's calibration predicts CALIBRATION_DRAWS evenly spaced draws (2 x 1000 draws -> 100), the
    number of replicated outcome vectors the reliability diagrams draw (one per draw): none predicted unused."""
    import inspect

    from bayesclass.inference.evaluation.report_evaluation import calibration
    from bayesclass.inference.evaluation.report_plots import CALIBRATION_DRAWS
    from bayesclass.inference.result import result_info
    from bayesclass.reports.figures import reliability_plot

    assert nuts_gaussians["posterior"].sizes["chain"] * nuts_gaussians["posterior"].sizes["draw"] > CALIBRATION_DRAWS
    found = calibration(nuts_gaussians, result_info(nuts_gaussians), gaussians_small, which="training", random_seed=0)
    assert found.proba["posterior"].shape == (CALIBRATION_DRAWS, gaussians_small.n_obs, 2)
    assert inspect.signature(reliability_plot).parameters["n_replicates"].default == CALIBRATION_DRAWS == 100
