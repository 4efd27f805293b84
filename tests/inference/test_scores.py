"""Scores of class probabilities (inference.scores): agreement with scikit-learn where it has the metric,
log loss inf exactly when an observed class has probability 0, the CORP identity, ECE of calibrated and
miscalibrated forecasts, KL and coverage against a known truth, the labelled table, permutation invariance,
undefined rows, clear errors, and the naive Bayes MLE on held-out digits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import accuracy_score, balanced_accuracy_score, brier_score_loss, log_loss

from bayesclass.inference.evaluation.scores import (
    COUNTS,
    METRICS,
    TRUTH_METRICS,
    calibration_curve,
    score_decisions,
    score_probabilities,
    score_table,
)

# scoring itself warns about nothing (no divide-by-zero from -log 0, no scikit-learn label warnings)
pytestmark = pytest.mark.filterwarnings("error")

RNG = np.random.default_rng(20240613)


def _proba(n: int, K: int, concentration: float = 1.0) -> np.ndarray:
    return RNG.dirichlet(np.full(K, concentration), size=n)


def _labels(proba: np.ndarray) -> np.ndarray:
    """Labels drawn from the probabilities themselves (a calibrated forecast)."""
    cumulative = proba.cumsum(axis=1)
    return (RNG.uniform(size=(proba.shape[0], 1)) > cumulative).sum(axis=1).clip(max=proba.shape[1] - 1)


@pytest.fixture(params=[2, 3, 5], ids=lambda K: f"K={K}")
def scored(request):
    K = request.param
    proba = _proba(400, K)
    return proba, _labels(proba)


# --- agreement with scikit-learn -------------------------------------------------------------------------------


def test_accuracy_balanced_accuracy_and_log_loss_agree_with_scikit_learn(scored):
    proba, y = scored
    K = proba.shape[1]
    scores = score_probabilities(proba, y)
    assert scores["accuracy"] == pytest.approx(accuracy_score(y, proba.argmax(axis=1)), abs=1e-15)
    assert scores["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, proba.argmax(axis=1)), abs=1e-15)
    # strictly positive probabilities (Dirichlet draws): scikit-learn's clipping does not bite
    assert scores["log_loss"] == pytest.approx(log_loss(y, proba, labels=np.arange(K)), abs=1e-12)
    assert scores["n_rows"] == 400 and scores["n_zero_probability"] == 0 and scores["n_undefined"] == 0


def test_brier_is_the_multiclass_sum_and_twice_the_binary_score(scored):
    proba, y = scored
    K = proba.shape[1]
    brier = score_probabilities(proba, y)["brier"]
    onehot = np.eye(K)[y]
    assert brier == pytest.approx(np.mean(np.sum((proba - onehot) ** 2, axis=1)), abs=1e-14)
    assert brier == pytest.approx(brier_score_loss(y, proba, labels=np.arange(K), scale_by_half=False), abs=1e-15)
    if K == 2:  # scikit-learn's binary Brier score mean (p1 - y)^2 is half of it
        assert brier == pytest.approx(2 * brier_score_loss(y, proba[:, 1]), abs=1e-14)


def test_score_decisions_agree_with_scikit_learn_and_count_missing_decisions_as_wrong():
    y = RNG.integers(0, 4, size=300)
    decisions = np.where(RNG.uniform(size=300) < 0.6, y, RNG.integers(0, 4, size=300))
    scores = score_decisions(decisions, y, n_classes=4)
    assert scores == {
        "accuracy": pytest.approx(accuracy_score(y, decisions), abs=1e-15),
        "balanced_accuracy": pytest.approx(balanced_accuracy_score(y, decisions), abs=1e-15),
        "n_rows": 300,
        "n_undefined": 0,
    }
    none = decisions.copy()
    none[:30] = -1  # no decision
    failed = score_decisions(none, y, n_classes=4)
    assert failed["n_undefined"] == 30
    assert failed["accuracy"] == pytest.approx(np.mean(none == y), abs=1e-15)
    recalls = [np.mean(none[y == k] == k) for k in range(4)]
    assert failed["balanced_accuracy"] == pytest.approx(np.mean(recalls), abs=1e-15)
    excluded = score_decisions(none, y, n_classes=4, undefined_rows="excluded")
    assert excluded["accuracy"] == pytest.approx(accuracy_score(y[30:], none[30:]), abs=1e-15)
    assert excluded["n_rows"] == 300 and excluded["n_undefined"] == 30


# --- log loss inf exactly when an observed class has probability 0 ----------------------------------------------


def test_log_loss_is_inf_exactly_when_an_observed_class_has_probability_zero():
    proba = np.array([[0.0, 0.3, 0.7], [0.5, 0.5, 0.0], [0.2, 0.0, 0.8], [1.0, 0.0, 0.0]])
    y = np.array([1, 0, 2, 0])  # the zeros are all on classes not observed
    finite = score_probabilities(proba, y)
    assert finite["n_zero_probability"] == 0
    assert finite["log_loss"] == pytest.approx(-np.mean(np.log([0.3, 0.5, 0.8, 1.0])), abs=1e-15)

    impossible = y.copy()
    impossible[[0, 3]] = [0, 1]  # observed classes of probability 0 in two rows
    scores = score_probabilities(proba, impossible)
    assert scores["log_loss"] == math.inf
    assert scores["n_zero_probability"] == 2
    # scikit-learn clips to machine epsilon and would report a finite number for the same forecasts
    assert math.isfinite(log_loss(impossible, proba, labels=[0, 1, 2]))
    assert math.isfinite(scores["brier"]) and math.isfinite(scores["calibration_mcb"])


# --- CORP ------------------------------------------------------------------------------------------------------


def test_corp_components_decompose_the_brier_score(scored):
    proba, y = scored
    # miscalibrated (sharpened) forecasts, so that every component is clearly positive
    sharpened = proba**2 / (proba**2).sum(axis=1, keepdims=True)
    for forecast in (proba, sharpened):
        scores = score_probabilities(forecast, y)
        mcb, dsc, unc = (scores[f"calibration_{c}"] for c in ("mcb", "dsc", "unc"))
        assert mcb - dsc + unc == pytest.approx(scores["brier"], abs=1e-12)
        assert mcb >= 0 and dsc >= 0
    assert score_probabilities(sharpened, y)["calibration_mcb"] > 0.01


def test_binary_corp_is_twice_the_calibration_curve_of_class_one():
    p = RNG.beta(0.7, 0.7, size=500)
    y = (RNG.uniform(size=500) < p**1.5).astype(int)
    curve = calibration_curve(p, y)
    assert curve.mean_score == pytest.approx(brier_score_loss(y, p), abs=1e-15)
    assert curve.mcb - curve.dsc + curve.unc == pytest.approx(curve.mean_score, abs=1e-12)
    assert curve.mcb > 0 and curve.dsc > 0 and curve.unc == pytest.approx(y.mean() * (1 - y.mean()), abs=1e-15)
    scores = score_probabilities(np.column_stack([1 - p, p]), y)
    for component in ("mcb", "dsc", "unc"):
        assert scores[f"calibration_{component}"] == pytest.approx(2 * getattr(curve, component), abs=1e-12)


def test_calibration_curve_is_the_pav_fit_at_each_distinct_forecast():
    p = RNG.choice([0.1, 0.3, 0.5, 0.8], size=400)  # ties: one recalibrated value per forecast
    y = (RNG.uniform(size=400) < 0.6).astype(bool)
    curve = calibration_curve(p, y)
    np.testing.assert_array_equal(curve.forecast, [0.1, 0.3, 0.5, 0.8])
    assert curve.count.sum() == 400
    fit = IsotonicRegression(y_min=0, y_max=1).fit(p, y.astype(float))
    np.testing.assert_allclose(curve.recalibrated, fit.predict(curve.forecast), atol=1e-15)
    assert np.all(np.diff(curve.recalibrated) >= 0)


def test_a_forecast_equal_to_its_own_pav_recalibration_has_no_miscalibration():
    raw = RNG.uniform(size=2000)
    y = (RNG.uniform(size=2000) < raw**2).astype(int)
    recalibrated = IsotonicRegression(y_min=0, y_max=1).fit_transform(raw, y.astype(float))
    curve = calibration_curve(recalibrated, y)
    assert curve.mcb == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(curve.recalibrated, curve.forecast, atol=1e-12)
    assert curve.dsc == pytest.approx(curve.unc - curve.mean_score, abs=1e-12)
    assert calibration_curve(raw, y).mcb > 0.01


# --- ECE -------------------------------------------------------------------------------------------------------


def test_ece_is_small_for_calibrated_and_large_for_miscalibrated_forecasts():
    p = RNG.uniform(size=200_000)
    y = (RNG.uniform(size=p.size) < p).astype(int)
    calibrated = score_probabilities(np.column_stack([1 - p, p]), y)["ece"]
    miscalibrated = score_probabilities(np.column_stack([1 - p**3, p**3]), y)["ece"]
    assert calibrated < 0.01
    assert miscalibrated > 0.15


def test_ece_uses_the_stated_equal_width_bins_of_the_top_label_confidence():
    # confidences 0.5, 0.55 (bin [0.5, 0.75) of 4 bins), 0.8, 1.0 (bin [0.75, 1]); the first two rows right
    proba = np.array([[0.5, 0.5], [0.45, 0.55], [0.8, 0.2], [0.0, 1.0]])
    y = np.array([0, 1, 1, 1])
    expected = (2 * abs(1.0 - 0.525) + 2 * abs(0.5 - 0.9)) / 4
    assert score_probabilities(proba, y, ece_bins=4)["ece"] == pytest.approx(expected, abs=1e-15)
    # one bin: |accuracy - mean confidence|
    assert score_probabilities(proba, y, ece_bins=1)["ece"] == pytest.approx(abs(0.75 - 0.7125), abs=1e-15)


# --- truth: KL and coverage ------------------------------------------------------------------------------------


def test_kl_to_truth_is_zero_at_the_truth_positive_elsewhere_and_inf_where_a_true_class_is_impossible():
    truth = _proba(300, 3)
    y = _labels(truth)
    assert score_probabilities(truth, y, true_proba=truth)["kl_to_truth"] == 0.0
    other = _proba(300, 3)
    kl = score_probabilities(other, y, true_proba=truth)["kl_to_truth"]
    expected = np.mean(np.sum(truth * np.log(truth / other), axis=1))
    assert kl > 0 and kl == pytest.approx(expected, rel=1e-12)
    zeroed = truth.copy()
    zeroed[0] = [0.0, 0.5, 0.5]  # a class of true probability > 0 given 0
    zeroed_y = y.copy()
    zeroed_y[0] = 1
    assert score_probabilities(zeroed, zeroed_y, true_proba=truth)["kl_to_truth"] == math.inf


def test_coverage_of_the_truth_by_an_interval():
    truth = _proba(200, 3)
    y = _labels(truth)
    everything = (np.zeros_like(truth), np.ones_like(truth))
    assert score_probabilities(truth, y, true_proba=truth, interval=everything)["truth_coverage"] == 1.0
    away = np.where(truth > 0.5, 0.1, 0.9)  # zero-width intervals away from the truth
    assert score_probabilities(truth, y, true_proba=truth, interval=(away, away))["truth_coverage"] == 0.0
    low, high = np.clip(truth - 0.01, 0, 1), np.clip(truth + 0.01, 0, 1)
    low[:100], high[:100] = truth[:100] + 1e-6, truth[:100] + 2e-6  # the first half of the rows misses the truth
    covered = score_probabilities(truth, y, true_proba=truth, interval=(low, high))["truth_coverage"]
    assert covered == 0.5
    assert set(score_probabilities(truth, y)) == set(METRICS) - set(TRUTH_METRICS) | set(COUNTS)


# --- invariance ------------------------------------------------------------------------------------------------


def test_permuting_rows_changes_no_score(scored):
    proba, y = scored
    truth = _proba(proba.shape[0], proba.shape[1])
    interval = (np.clip(proba - 0.1, 0, 1), np.clip(proba + 0.1, 0, 1))
    proba = proba.copy()
    proba[5] = np.nan
    order = RNG.permutation(proba.shape[0])
    for undefined_rows in ("failed", "excluded"):
        options = {"true_proba": truth, "interval": interval, "undefined_rows": undefined_rows}
        permuted = {
            "true_proba": truth[order],
            "interval": (interval[0][order], interval[1][order]),
            "undefined_rows": undefined_rows,
        }
        before = score_probabilities(proba, y, **options)
        after = score_probabilities(proba[order], y[order], **permuted)
        assert list(before) == list(after)
        for name, value in before.items():
            assert after[name] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), name


# --- undefined rows --------------------------------------------------------------------------------------------


def test_undefined_rows_are_counted_and_scored_as_failed_or_excluded():
    proba = _proba(200, 3)
    y = _labels(proba)
    proba[[3, 7, 11]] = np.nan
    failed = score_probabilities(proba, y)
    assert failed["n_undefined"] == 3 and failed["n_rows"] == 200
    assert failed["log_loss"] == math.inf and failed["n_zero_probability"] == 0
    decided = np.where(np.isnan(proba[:, 0]), -1, np.nan_to_num(proba).argmax(axis=1))
    assert failed["accuracy"] == pytest.approx(np.mean(decided == y), abs=1e-15)
    for name in ("brier", "ece", "calibration_mcb", "calibration_dsc", "calibration_unc"):
        assert math.isnan(failed[name]), name

    excluded = score_probabilities(proba, y, undefined_rows="excluded")
    keep = ~np.isnan(proba[:, 0])
    subset = score_probabilities(proba[keep], y[keep])
    assert excluded == subset | {"n_rows": 200, "n_undefined": 3}
    assert math.isfinite(excluded["log_loss"])

    nothing = score_probabilities(np.full((4, 2), np.nan), np.array([0, 1, 0, 1]), undefined_rows="excluded")
    assert all(math.isnan(nothing[name]) for name in METRICS if name in nothing)
    assert nothing["n_undefined"] == 4


# --- the labelled table ----------------------------------------------------------------------------------------


def test_score_table_one_row_per_estimate_keeping_inf_and_nan_where_a_metric_does_not_apply():
    truth = _proba(150, 3)
    y = _labels(truth)
    impossible = truth.copy()
    impossible[0] = np.eye(3)[(y[0] + 1) % 3]  # the observed class of row 0 gets probability 0
    posterior = _proba(150, 3, concentration=5.0)
    table = score_table(
        {"posterior": posterior, "mle": impossible, "baseline: perceptron": None},
        y,
        decisions={"baseline: perceptron": truth.argmax(axis=1), "baseline: knn": np.full(150, -1)},
        class_names=("a", "b", "c"),
        true_proba=truth,
        intervals={"posterior": (np.zeros((150, 3)), np.ones((150, 3)))},
    )
    assert list(table.index) == ["posterior", "mle", "baseline: perceptron", "baseline: knn"]
    assert table.index.name == "estimate"
    assert list(table.columns) == list(METRICS) + list(COUNTS)
    assert table.loc["mle", "log_loss"] == math.inf and table.loc["mle", "n_zero_probability"] == 1
    assert table.loc["posterior", "truth_coverage"] == 1.0
    assert math.isnan(table.loc["mle", "truth_coverage"])  # a point estimate has no interval
    for metric in ("log_loss", "brier", "ece", "kl_to_truth", "n_zero_probability"):
        assert math.isnan(table.loc["baseline: perceptron", metric]), metric
    assert table.loc["baseline: perceptron", "accuracy"] == pytest.approx(np.mean(truth.argmax(axis=1) == y))
    assert table.loc["baseline: knn", "accuracy"] == 0.0 and table.loc["baseline: knn", "n_undefined"] == 150
    row = score_probabilities(posterior, y, true_proba=truth, interval=(np.zeros((150, 3)), np.ones((150, 3))))
    assert table.loc["posterior"].to_dict() == pytest.approx(row)
    assert table.attrs["ece_bins"] == 10 and table.attrs["class_names"] == ("a", "b", "c")
    assert "10 equal-width bins" in table.attrs["metric_descriptions"]["ece"]
    # without a truth the truth columns are absent
    plain = score_table({"posterior": posterior}, y, class_names=("a", "b", "c"))
    assert list(plain.columns) == [m for m in METRICS if m not in TRUTH_METRICS] + list(COUNTS)


def test_score_table_matches_labelled_classes_by_name_and_takes_labels():
    import xarray as xr

    proba = _proba(100, 3)
    y = _labels(proba)
    names = ("setosa", "versicolor", "virginica")
    shuffled = xr.DataArray(
        proba[:, [2, 0, 1]], dims=("obs", "class"), coords={"class": list(np.array(names)[[2, 0, 1]])}
    )
    by_name = score_table({"map": shuffled.T}, np.array(names)[y], class_names=names)
    by_position = score_table({"map": proba}, y, class_names=names)
    assert by_name.equals(by_position)
    wrong = xr.DataArray(proba, dims=("obs", "class"), coords={"class": ["setosa", "versicolor", "virginca"]})
    with pytest.raises(ValueError, match=r"estimate 'map': proba has the classes .*missing \['virginica'\]"):
        score_table({"map": wrong}, y, class_names=names)


# --- bad input -------------------------------------------------------------------------------------------------

GOOD = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
GOOD_Y = np.array([1, 0, 1])


@pytest.mark.parametrize(
    ("proba", "y", "options", "message"),
    [
        (GOOD * 0.9, GOOD_Y, {}, r"proba row 0 sums to 0\.9.*not 1 \(tolerance 1e-09\).*normalised"),
        (np.log(GOOD), GOOD_Y, {}, r"proba\[0, 0\] = -1\.6.*not a probability.*log probabilities"),
        (GOOD[:, 1], GOOD_Y, {}, r"proba must have shape \(n_rows, n_classes\), got shape \(3,\).*column_stack"),
        (GOOD, GOOD_Y, {"n_classes": 3}, r"proba has 2 columns but there are 3 classes.*one column per class"),
        (GOOD, np.array([1, 0, 2]), {}, r"y contains the code 2, outside 0\.\.1"),
        (GOOD, np.array([1, 0, -1]), {}, r"y contains the code -1"),
        (GOOD, GOOD_Y.astype(float), {}, r"y must be integer class codes 0\.\.1, got dtype float64"),
        (GOOD, GOOD_Y[:2], {}, r"y has 2 rows but proba has 3"),
        (np.array([[0.2, np.nan], [0.6, 0.4]]), GOOD_Y[:2], {}, r"proba row 0 is partly NaN"),
        (np.array([[np.inf, 0.0], [0.6, 0.4]]), GOOD_Y[:2], {}, r"proba\[0, 0\] = inf is not a probability"),
        (np.empty((0, 2)), np.empty(0, dtype=int), {}, r"proba has no rows"),
        (GOOD, GOOD_Y, {"true_proba": GOOD[:2]}, r"true_proba has 2 rows but there are 3 held-out rows"),
        (GOOD, GOOD_Y, {"true_proba": np.ones((3, 3)) / 3}, r"true_proba has 3 columns but there are 2 classes"),
        (GOOD, GOOD_Y, {"true_proba": np.full((3, 2), np.nan)}, r"true_proba row 0 is NaN"),
        (GOOD, GOOD_Y, {"interval": (GOOD, GOOD)}, r"interval was given without true_proba"),
        (GOOD, GOOD_Y, {"true_proba": GOOD, "interval": (GOOD + 0.1, GOOD)}, r"interval low\[0, 0\] = 0\.3.* exceeds"),
        (GOOD, GOOD_Y, {"true_proba": GOOD, "interval": (GOOD[:2], GOOD[:2])}, r"interval\[0\] has shape \(2, 2\)"),
        (GOOD, GOOD_Y, {"ece_bins": 0}, r"ece_bins must be a positive integer, got 0"),
        (GOOD, GOOD_Y, {"undefined_rows": "drop"}, r"undefined_rows='drop' is not one of 'failed', 'excluded'"),
        (GOOD, GOOD_Y, {"n_classes": 1}, r"n_classes must be an integer >= 2, got 1"),
    ],
)
def test_bad_input_is_a_clear_error(proba, y, options, message):
    with pytest.raises(ValueError, match=message):
        score_probabilities(proba, y, **options)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: score_decisions(np.array([0, 2, 1]), GOOD_Y, n_classes=2), r"decisions contains the code 2"),
        (lambda: score_decisions(np.array([0.0, 1.0, 1.0]), GOOD_Y, n_classes=2), r"decisions must be integer"),
        (lambda: score_decisions(np.array([0, 1]), GOOD_Y, n_classes=2), r"y has 3 rows but proba has 2"),
        (lambda: calibration_curve(np.array([0.2, 1.2]), np.array([0, 1])), r"proba_positive\[1\] = 1\.2"),
        (lambda: calibration_curve(np.array([0.2, 0.4]), np.array([0, 2])), r"y_binary must hold 0/1"),
        (lambda: calibration_curve(np.array([0.2, 0.4]), np.array([0])), r"y_binary has shape \(1,\)"),
        (
            lambda: score_table({"mle": None}, GOOD_Y, class_names=("a", "b")),
            r"estimate 'mle': has neither probabilities nor decisions",
        ),
        (
            lambda: score_table({"map": GOOD}, GOOD_Y, decisions={"map": GOOD_Y}, class_names=("a", "b")),
            r"estimate 'map': has both probabilities and decisions",
        ),
        (
            lambda: score_table({"map": GOOD}, GOOD_Y, class_names=("a", "b", "c")),
            r"estimate 'map': proba has 2 columns but there are 3 classes",
        ),
        (
            lambda: score_table({"map": GOOD}, np.array(["a", "b", "z"]), class_names=("a", "b")),
            r"y holds the label\(s\) \['z'\] not in class_names",
        ),
        (
            lambda: score_table({"map": GOOD}, GOOD_Y, class_names=("a", "b"), intervals={"map": (GOOD, GOOD)}),
            r"intervals were given for \['map'\] without true_proba",
        ),
        (
            lambda: score_table(
                {"map": GOOD}, GOOD_Y, class_names=("a", "b"), true_proba=GOOD, intervals={"mpa": (GOOD, GOOD)}
            ),
            r"intervals has an entry for 'mpa', which is not an estimate with probabilities",
        ),
        (
            lambda: score_table({"map": GOOD}, GOOD_Y, class_names=("a", "b"), true_proba=GOOD[:2]),
            r"^true_proba has 2 rows but there are 3 held-out rows",
        ),
        (lambda: score_table({}, GOOD_Y, class_names=("a", "b")), r"no estimates"),
        (lambda: score_table({"map": GOOD}, GOOD_Y, class_names=("a", "a")), r"two or more distinct names"),
    ],
)
def test_bad_input_elsewhere_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- real data: the naive Bayes MLE on held-out digits ---------------------------------------------------------


def test_naive_bayes_mle_scores_log_loss_inf_on_held_out_digits_while_the_posterior_mean_is_finite():
    from bayesclass.data import load, train_validation_test_split
    from bayesclass.models import NaiveBayes

    train, _, test = train_validation_test_split(load("digits_binary"), random_seed=0)
    model = NaiveBayes()
    with pytest.warns(RuntimeWarning, match="probability 0 under every class"):  # the MLE's own warning
        mle = model.class_proba(model.point_estimate(train, "mle"), test.X)
    posterior_mean = model.class_proba(model.point_estimate(train, "posterior_mean"), test.X)

    scores = score_probabilities(mle.values, test.y)
    assert scores["log_loss"] == math.inf
    assert scores["n_zero_probability"] > 0
    smoothed = score_probabilities(posterior_mean.values, test.y)
    assert math.isfinite(smoothed["log_loss"]) and smoothed["n_zero_probability"] == 0
    assert smoothed["n_undefined"] == 0 and smoothed["accuracy"] > 0.8

    # the labelled table takes the DataArrays as they come (classes matched by name) and keeps the inf
    table = score_table({"posterior_mean": posterior_mean, "mle": mle}, test.y, class_names=test.class_names)
    assert table.loc["mle", "log_loss"] == math.inf
    assert table.loc["mle", "n_zero_probability"] == scores["n_zero_probability"]
    assert table.loc["mle", "n_undefined"] == scores["n_undefined"]
    assert table.loc["posterior_mean", "log_loss"] == pytest.approx(smoothed["log_loss"], rel=1e-15)


def test_kl_to_the_true_seed001_posterior_shrinks_as_the_lda_mle_sees_more_rows():
    """Seed 001 §B.1: P(C1 | x) = sigmoid(x1 - x2 + ln(0.7 / 0.3)) (equal covariances, |mu_1| = |mu_2|)."""
    from bayesclass.data import seed001_gaussians
    from bayesclass.models import GaussianClassConditional

    test = seed001_gaussians(2000, random_seed=99)
    p1 = 1 / (1 + np.exp(-(test.X @ np.array([1.0, -1.0]) + np.log(0.7 / 0.3))))
    truth = np.column_stack([p1, 1 - p1])
    lda = GaussianClassConditional(covariance="shared")
    estimates = {"truth": truth} | {
        f"mle n={n}": lda.class_proba(lda.point_estimate(seed001_gaussians(n, random_seed=n), "mle"), test.X)
        for n in (30, 300, 5000)
    }
    table = score_table(estimates, test.y, class_names=test.class_names, true_proba=truth)
    kl = table["kl_to_truth"]
    assert kl["truth"] == 0.0
    assert 0 < kl["mle n=5000"] < kl["mle n=300"] < kl["mle n=30"]
    assert table["truth_coverage"].isna().all()  # no intervals given
