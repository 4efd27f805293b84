"""The stacked predictive (inference.stacking): LOO stacking and pseudo-BMA+ weights from arviz_stats.compare, one
stack result that predict, decisions, scores, report and the CLI take like any result, saved and checked on load."""

from __future__ import annotations

import dataclasses
import warnings

import arviz_stats as azs
import netCDF4
import numpy as np
import pytest
from sklearn.metrics import log_loss

import bayesclass as bc
from bayesclass import data
from bayesclass.inference import SamplerSettings, fit, load, predict, save
from bayesclass.inference.evaluation.heldout import evaluate
from bayesclass.inference.prediction.decisions import LossMatrix
from bayesclass.inference.prediction.predict import predict_log_proba
from bayesclass.inference.result import stack_info, stack_members
from bayesclass.inference.stacking import stack
from bayesclass.models import GaussianClassConditional, LogisticRegression, NaiveBayes
from tests.bad_inputs.harness import assert_one_line_error, run

SETTINGS = SamplerSettings(draws=200, tune=200, chains=2, progressbar=False)
NIW = {"covariance_prior": "inverse_wishart"}


@pytest.fixture(scope="module")
def gaussians():
    return data.seed001_gaussians(120, random_seed=5)


@pytest.fixture(scope="module")
def members(gaussians):
    """Three families fitted on the same rows, with draws of different counts (Laplace keeps 2 x 150) and scalings."""
    return {
        "naive_bayes": fit(NaiveBayes(), gaussians, method="exact", sampler=SETTINGS, random_seed=3),
        "gcc": fit(GaussianClassConditional(prior=NIW), gaussians, method="exact", sampler=SETTINGS, random_seed=4),
        "logistic": fit(
            LogisticRegression(),
            gaussians,
            method="laplace",
            sampler=SamplerSettings(draws=150, chains=2, progressbar=False),
            standardize=True,  # members scale their inputs each their own way
            random_seed=5,
        ),
    }


@pytest.fixture(scope="module")
def stacked(members):
    with warnings.catch_warnings():  # few draws: high Pareto k (test_high_pareto_k_is_said)
        warnings.simplefilter("ignore")
        return stack(members)


def test_high_pareto_k_is_said(members):
    with pytest.warns(UserWarning, match=r"stack weights: PSIS-LOO of '\w+': Pareto k > "):
        stack(members)


@pytest.fixture(scope="module")
def new_rows():
    return data.seed001_gaussians(200, random_seed=11)


@pytest.mark.parametrize(("method", "arviz_method"), [("stacking", "stacking"), ("pseudo_bma_plus", "BB-pseudo-BMA")])
def test_weights_sum_to_one_and_are_arviz_stats_compare_weights(members, method, arviz_method):
    result = stack(members, method=method)
    info = stack_info(result)
    assert info.method == method and info.labels == tuple(members)
    assert sum(info.weights) == pytest.approx(1.0, abs=1e-12)
    assert all(0.0 <= weight <= 1.0 for weight in info.weights)
    with warnings.catch_warnings():  # its Pareto k warning (few draws) is the stack's too, tested elsewhere
        warnings.simplefilter("ignore")
        expected = azs.compare(dict(members), method=arviz_method, round_to="none")["weight"]
    np.testing.assert_allclose(info.weights, [expected[name] for name in members], atol=1e-6)
    np.testing.assert_array_equal(result["stack_weights"]["weight"].values, info.weights)


def test_stacking_and_pseudo_bma_differ(members):
    """Two different rules: the weights are not the same numbers (else one of them is not used)."""
    assert stack_info(stack(members)).weights != stack_info(stack(members, method="pseudo_bma_plus")).weights


def test_class_proba_is_the_weighted_mixture_of_the_members_predictions(stacked, members, new_rows):
    weights = stack_info(stacked).weights
    prediction = predict(stacked, new_rows)
    mixture = sum(
        w * predict(m, new_rows)["class_proba"].values for w, m in zip(weights, members.values(), strict=True)
    )
    np.testing.assert_allclose(prediction["class_proba"].values, mixture, rtol=1e-12, atol=1e-15)
    for index, member in enumerate(members.values()):  # each member's posterior mean beside the mixture
        np.testing.assert_allclose(
            prediction[f"class_proba_member_{index}"].values,
            predict(member, new_rows)["class_proba"].values,
            rtol=1e-12,
        )
    np.testing.assert_allclose(predict_log_proba(stacked, new_rows).values, np.log(mixture), rtol=1e-10)
    assert list(prediction["predicted"].values) == [
        stacked_class for stacked_class in np.asarray(["C1", "C2"])[mixture.argmax(axis=1)]
    ]


def test_the_interval_is_the_weighted_quantiles_of_the_pooled_member_draws(stacked, members, new_rows):
    weights = stack_info(stacked).weights
    draws, draw_weights = [], []
    for weight, member in zip(weights, members.values(), strict=True):
        values = predict(member, new_rows, return_draws=True)["class_proba_draws"].values  # (chain, draw, obs, class)
        values = values.reshape(-1, *values.shape[2:])
        draws.append(values)
        draw_weights.append(np.full(len(values), weight / len(values)))
    pooled, pooled_weights = np.concatenate(draws), np.concatenate(draw_weights)
    low, high = np.quantile(pooled, [0.055, 0.945], axis=0, weights=pooled_weights, method="inverted_cdf")
    prediction = predict(stacked, new_rows)
    np.testing.assert_allclose(prediction["class_proba_low"].values, low, rtol=1e-12)
    np.testing.assert_allclose(prediction["class_proba_high"].values, high, rtol=1e-12)
    assert (low <= prediction["class_proba"].values).all() and (prediction["class_proba"].values <= high).all()


def test_decisions_minimise_the_mixture_expected_loss(stacked, new_rows):
    matrix = np.array([[0.0, 1.0], [6.0, 0.0]])
    prediction = predict(stacked, new_rows, loss=LossMatrix(matrix, ("C1", "C2")))
    expected = prediction["class_proba"].values @ matrix
    np.testing.assert_allclose(prediction["expected_loss"].values, expected, rtol=1e-12)
    assert list(prediction["decision"].values) == list(np.asarray(["C1", "C2"])[expected.argmin(axis=1)])
    assert (prediction["expected_loss_low"].values <= expected + 1e-12).all()
    # a loss that makes a false C1 costly moves some decisions away from the most probable class
    assert (prediction["decision"].values != prediction["predicted"].values).any()


def test_scores_and_report_take_a_stack(stacked, new_rows):
    table = evaluate(stacked, new_rows)
    assert list(table.index)[:1] == ["stack (stacking)"]
    assert {"member: naive_bayes", "member: gcc", "member: logistic"} <= set(table.index)
    mixture = predict(stacked, new_rows)["class_proba"].values
    assert table.loc["stack (stacking)", "log_loss"] == pytest.approx(log_loss(new_rows.y, mixture), rel=1e-12)
    page = bc.report(stacked, new_rows, loss=LossMatrix(np.array([[0.0, 1.0], [6.0, 0.0]]), ("C1", "C2")))
    assert "stack (stacking)" in page and "weight" in page and "Decisions" in page


def test_save_load_round_trip(stacked, new_rows, tmp_path):
    path = save(stacked, tmp_path / "stack.nc")
    loaded = load(path)
    assert stack_info(loaded) == stack_info(stacked)
    assert list(stack_members(loaded)) == list(stack_members(stacked))
    np.testing.assert_array_equal(
        predict(loaded, new_rows)["class_proba"].values, predict(stacked, new_rows)["class_proba"].values
    )


def test_a_stack_refuses_members_of_other_rows_or_classes(members, gaussians):
    other_rows = fit(NaiveBayes(), data.seed001_gaussians(120, random_seed=6), method="exact", sampler=SETTINGS)
    with pytest.raises(ValueError, match="different rows or labels"):
        stack({"a": members["naive_bayes"], "b": other_rows})
    renamed = dataclasses.replace(gaussians, class_names=("first", "second"), true_class_proba=None)
    other_classes = fit(NaiveBayes(), renamed, method="exact", sampler=SETTINGS)
    with pytest.raises(ValueError, match="have other classes"):
        stack({"a": members["naive_bayes"], "b": other_classes})
    point = fit(NaiveBayes(), gaussians, method="map")
    with pytest.raises(ValueError, match="point estimate"):
        stack({"a": members["naive_bayes"], "b": point})
    with pytest.raises(ValueError, match="two or more"):
        stack([members["gcc"]])
    with pytest.raises(ValueError, match="method must be one of stacking, pseudo_bma_plus"):
        stack(members, method="bma")


@pytest.mark.parametrize(
    ("weights", "fragment"),
    [
        ([0.5, 0.25, 0.25], "stack_digest"),  # legal-looking weights, not the ones computed: tampered
        ([1.5, -0.25, -0.25], "every weight must be in [0, 1]"),
        ([0.5, 0.5, 0.5], "sums to 1.5, not 1"),
        ([np.nan, 0.5, 0.5], "every weight must be in [0, 1]"),
    ],
)
def test_a_tampered_weight_is_refused_on_load(stacked, tmp_path, weights, fragment):
    path = save(stacked, tmp_path / "stack.nc")
    with netCDF4.Dataset(path, "a") as dataset:
        dataset["stack_weights"]["weight"][:] = weights
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[").replace("]", r"\]")) as error:
        load(path)
    assert "\n" not in str(error.value)


def test_cli_stack_predict_decide_report(members, tmp_path, capsys):
    paths = []
    for name, member in members.items():
        paths.append(str(save(member, tmp_path / f"{name}.nc")))
    out = tmp_path / "stack.nc"
    assert run("stack", *paths, "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "by stacking weights" in printed and "weight" in printed and out.exists()
    loss = tmp_path / "loss.csv"
    loss.write_text(",C1,C2\nC1,0,1\nC2,6,0\n")
    csv = tmp_path / "p.csv"
    argv = ("predict", "--run", str(out), "--data", "seed001_gaussians", "--out", str(csv), "--loss-matrix", str(loss))
    assert run(*argv) == 0
    header = csv.read_text().splitlines()[0].split(",")
    assert {"p_C1", "p_C1_low", "p_C1_high", "p_C1_member_0", "decision", "expected_loss_C2"} <= set(header)
    page = tmp_path / "r.html"
    assert run("report", "--run", str(out), "--data", "seed001_gaussians", "--out", str(page)) == 0
    assert "stack (stacking)" in page.read_text()
    assert run("stack", *paths[:2], "--method", "pseudo_bma_plus", "--out", str(tmp_path / "bma.nc")) == 0
    assert "pseudo_bma_plus" in capsys.readouterr().out
    assert run("predict", "--run", str(out), "--data", "seed001_gaussians", "--out", str(csv), "--draws-out",
               str(tmp_path / "d.nc")) == 2  # fmt: skip
    assert_one_line_error(capsys.readouterr().err, "--draws-out")


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_interval_is_numpys_weighted_quantile(seed):
    """The vectorised weighted quantile equals numpy's (method inverted_cdf), with ties, zero weights and NaN rows."""
    from bayesclass.inference.prediction.tiles import draw_interval

    rng = np.random.default_rng(seed)
    values = rng.random((50, 3, 120))
    values[:10] = np.round(values[:10], 1)  # many ties
    values[10:12] = 1.0  # saturated: every draw the same
    values[12, 1, 7] = np.nan
    weights = np.concatenate([np.zeros(20), np.full(60, 0.7 / 60), np.full(40, 0.3 / 40)])
    low, high = draw_interval(values, 0.89, weights=weights)
    expected = np.quantile(values, [0.055, 0.945], axis=-1, weights=weights, method="inverted_cdf")
    np.testing.assert_array_equal(low, expected[0])
    np.testing.assert_array_equal(high, expected[1])
    assert np.isnan(low[12, 1]) and np.isnan(high[12, 1])
