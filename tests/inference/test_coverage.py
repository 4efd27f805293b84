"""Interval coverage of a known truth: near nominal for a well-specified model, 0 for an interval that misses,
"not available" (NaN) without an interval, the true coefficients compared in the model's units."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from scipy.special import logit

from bayesclass.data import load, logistic_known_weights, seed001_gaussians, seed004_gp, true_log_odds
from bayesclass.inference.engines.fit import fit
from bayesclass.inference.evaluation.coverage import (
    coverage_level,
    coverage_metric,
    coverage_summary,
    covered_share,
    interval_coverage,
    true_coefficients,
)
from bayesclass.models import get_model


@pytest.mark.parametrize("generator", [logistic_known_weights, seed001_gaussians])
def test_the_true_log_odds_are_those_of_the_true_probabilities(generator) -> None:
    data = generator(300, random_seed=4)
    coefficients = true_log_odds(data)
    assert coefficients is not None
    np.testing.assert_allclose(logit(data.true_class_proba[:, 1]), coefficients[0] + data.X @ coefficients[1:],
                               rtol=1e-10, atol=1e-10)  # fmt: skip
    assert true_log_odds(seed004_gp(50, random_seed=1)) is None  # a latent curve: not linear
    assert true_log_odds(load("iris")) is None


def test_the_true_coefficients_are_converted_to_the_models_standardised_inputs() -> None:
    train = logistic_known_weights(200, random_seed=3)
    test = logistic_known_weights(100, random_seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = fit(get_model("logistic"), train, method="mle", standardize=False)
        scaled = fit(get_model("logistic"), train, method="mle", standardize=True)
    names, values = true_coefficients(raw, test)
    assert names == ("intercept", "weights")
    np.testing.assert_allclose(values, [-0.5, 0.75, -2.0])
    mean, sd = train.X.mean(axis=0), train.X.std(axis=0)
    _, standardised = true_coefficients(scaled, test)
    weights = np.array([0.75, -2.0])
    np.testing.assert_allclose(standardised, [-0.5 + weights @ mean, *(weights * sd)], rtol=1e-6)
    # the same fit in either units: the same coverage of the same truth
    np.testing.assert_allclose(interval_coverage(raw, test).to_numpy(), interval_coverage(scaled, test).to_numpy(),
                               atol=0.02)  # fmt: skip
    assert true_coefficients(fit(get_model("logistic", link="probit"), train, method="mle"), test) is None


def test_a_well_specified_logit_model_covers_near_nominal() -> None:
    """40 independent fits at n = 200 of the model that generated the data: mean coverage near 89% and 95%.

    Each fit's coverage of the test rows (and of its 3 coefficients) is one dependent block; the tolerance is
    three binomial standard errors of one trial per fit. A wrong unit conversion gives parameter coverage
    near 0, a Wald interval of one standard error about 68%: both fail.
    """
    test = logistic_known_weights(100, random_seed=1000)
    tables = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(40):
            train = logistic_known_weights(200, random_seed=seed)
            result = fit(get_model("logistic"), train, method="laplace", standardize=True, random_seed=seed)
            tables.append(interval_coverage(result, test))
    mean = pd.concat(tables).groupby(level=0).mean()
    assert set(mean.index) == {"posterior", "MLE plug-in", "MAP plug-in"}
    for column in mean.columns:
        level, _ = coverage_level(column)
        tolerance = 3 * np.sqrt(level * (1 - level) / 40)
        assert np.all(np.abs(mean[column] - level) < tolerance), (column, mean[column].to_dict())


def test_an_interval_that_misses_everything_gives_zero_and_none_gives_nan() -> None:
    truth = np.array([[0.2, 0.8], [0.6, 0.4]])
    assert covered_share(truth, truth + 0.01, truth + 0.1) == 0.0
    assert covered_share(truth, truth - 0.1, truth - 0.01) == 0.0
    assert covered_share(truth, truth, truth) == 1.0  # the bounds are inclusive
    assert covered_share(truth, np.array([[0.0, 0.0], [0.0, 0.5]]), np.ones((2, 2))) == 0.75
    assert np.isnan(covered_share(truth, np.full((2, 2), np.nan), np.ones((2, 2))))


def test_point_estimates_without_a_gaussian_approximation_are_not_available() -> None:
    """Naive Bayes: the MLE and MAP have Wald intervals; the posterior mean and unbiased estimate have none."""
    data = seed001_gaussians(400, random_seed=2)
    train, test = data.subset(np.arange(100)), data.subset(np.arange(100, 400))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit(get_model("naive_bayes"), train, method="exact", random_seed=1)
    table = interval_coverage(result, test)
    assert list(table.columns) == ["coverage_89", "coverage_95"]  # its parameters are not log-odds coefficients
    assert 0.0 < table.loc["posterior", "coverage_95"] <= 1.0
    with_intervals = table.loc[["MLE plug-in", "MAP plug-in"]]
    assert ((with_intervals > 0.0) & (with_intervals <= 1.0)).all().all()
    others = table.drop(index=["posterior", "MLE plug-in", "MAP plug-in"])
    assert len(others) >= 2 and others.isna().all().all()  # not 0, not an error


def test_data_without_a_known_truth_has_no_coverage() -> None:
    data = load("breast_cancer")
    train, test = data.subset(np.arange(60)), data.subset(np.arange(60, 160))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit(get_model("logistic"), train, method="map", standardize=True)
    assert interval_coverage(result, test) is None


def test_the_summary_gives_verdicts_from_the_numbers() -> None:
    rows = []
    for repeat, (posterior, mle) in enumerate([(0.95, 0.70), (0.96, 0.72), (0.94, 0.71), (0.95, 0.69)]):
        for estimate, value in (("posterior", posterior), ("MLE plug-in", mle), ("MAP plug-in", float("nan"))):
            rows.append({"dataset": "d", "model": "m", "estimate": estimate, "metric": coverage_metric(0.95),
                         "size": 20, "value": value, "key": f"k{repeat}"})  # fmt: skip
    summary = coverage_summary(pd.DataFrame(rows)).set_index("estimate")
    assert summary.loc["posterior", ["cells", "total"]].tolist() == [4, 4]
    # an MLE that does not exist in two cells has no rows there: measured in 2 of the 4 cells
    absent = [row for row in rows if not (row["estimate"] == "MLE plug-in" and row["key"] in ("k0", "k1"))]
    partial = coverage_summary(pd.DataFrame(absent)).set_index("estimate")
    assert partial.loc["MLE plug-in", ["cells", "total"]].tolist() == [2, 4]
    assert partial.loc["MLE plug-in", "mean"] == pytest.approx(0.70)
    assert summary.loc["posterior", "verdict"] == "near nominal"
    assert summary.loc["MLE plug-in", "verdict"] == "under-covers"
    assert summary.loc["MLE plug-in", "difference"] == pytest.approx(0.705 - 0.95)
    assert summary.loc["MAP plug-in", "verdict"] == "not available" and summary.loc["MAP plug-in", "cells"] == 0
    values = np.array([0.95, 0.96, 0.94, 0.95])
    assert summary.loc["posterior", "se"] == pytest.approx(scipy.stats.sem(values))  # the cells' own, no floor
    assert coverage_level("parameter_coverage_89") == (0.89, True) and coverage_level("log_loss") is None


def _cells(values: list[float], level: float) -> pd.DataFrame:
    return pd.DataFrame(
        {"dataset": "d", "model": "m", "estimate": "MLE plug-in", "metric": coverage_metric(level), "size": 50,
         "value": value, "key": f"k{i}"}
        for i, value in enumerate(values)
    )  # fmt: skip


@pytest.mark.parametrize(
    ("level", "high", "low", "n_high"),
    [(0.89, 1.0, 0.8, 127), (0.95, 1.0, 0.9, 146)],  # the issue's 92.7% at 89% and 97.3% at 95%, 200 cells
)
def test_the_issues_over_coverage_is_not_near_nominal(level, high, low, n_high):
    values = [high] * n_high + [low] * (200 - n_high)
    row = coverage_summary(_cells(values, level)).iloc[0]
    assert row["mean"] == pytest.approx({0.89: 0.927, 0.95: 0.973}[level], abs=5e-4)
    assert row["se"] == pytest.approx(scipy.stats.sem(values), rel=1e-12)
    assert (row["interval_low"], row["interval_high"]) == pytest.approx(
        (row["mean"] - 2 * row["se"], row["mean"] + 2 * row["se"])
    )
    assert row["difference"] > 4 * row["se"]  # over 4 of its own standard errors high
    assert row["verdict"] == "over-covers"
    # the old floor, the nominal level's binomial error of one trial per cell, called it near nominal
    assert row["difference"] < 2 * np.sqrt(level * (1 - level) / 200)


@pytest.mark.parametrize(("cells", "n_test", "verdict"), [(4, None, "near nominal"), (200, None, "over-covers"),
                                                     (4, 120, "over-covers"), (2, 10, "near nominal")])  # fmt: skip
def test_identical_cells_are_judged_by_the_exact_binomial_interval(cells, n_test, verdict):
    """No spread to estimate a standard error from: the Clopper-Pearson interval of the cells' test rows as trials
    (of the cells themselves where the table has no n_test)."""
    table = _cells([1.0] * cells, 0.95)
    if n_test is not None:
        table = table.assign(n_test=n_test)
    row = coverage_summary(table).iloc[0]
    trials = cells * (n_test or 1)
    exact = scipy.stats.binomtest(trials, trials).proportion_ci(confidence_level=0.95)
    assert (row["interval_low"], row["interval_high"]) == pytest.approx((exact.low, exact.high), rel=1e-12)
    assert row["verdict"] == verdict == ("near nominal" if exact.low <= 0.95 else "over-covers")


def test_identical_cells_of_coefficient_coverage_are_trials_of_their_own():
    """A parameter coverage is a share of coefficients, not of test rows: n_test does not count its trials."""
    table = _cells([1.0] * 4, 0.95).assign(metric=coverage_metric(0.95, parameter=True), n_test=120)
    row = coverage_summary(table).iloc[0]
    exact = scipy.stats.binomtest(4, 4).proportion_ci(confidence_level=0.95)
    assert row["interval_low"] == pytest.approx(exact.low, rel=1e-12) and row["verdict"] == "near nominal"
