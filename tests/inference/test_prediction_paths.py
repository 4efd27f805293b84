"""The fast paths of prediction (issue 30 item 5) give the numbers of the plain computation: the interval from two
selections is ``numpy.quantile``'s, blocks of rows change no float, the softmax without each draw's maximum agrees
with scipy's (and falls back where it would not), and naive Bayes probabilities agree with plain NumPy."""

from __future__ import annotations

import json

import arviz_stats as azs
import numpy as np
import pytest
import scipy.special

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings, predict
from bayesclass.inference.prediction import tiles as tiles_module
from bayesclass.inference.prediction.decisions import LossMatrix
from bayesclass.inference.prediction.tiles import draw_interval, draw_summary
from bayesclass.models import NaiveBayes
from bayesclass.models import base as base_module
from bayesclass.models.base import softmax_over_classes


def test_interval_from_two_selections_is_numpy_quantile_for_every_size_and_edge():
    rng = np.random.default_rng(5)
    for n in [*range(1, 30), 99, 1000, 2000, 2001]:
        values = rng.beta(2.0, 5.0, size=(6, 3, n))
        values[1, 1] = 0.3  # every draw tied
        if n > 3:
            values[2, 0, rng.integers(0, n, 2)] = np.nan
            values[3, 1, 0] = np.inf
            values[4, 2, : n // 2] = -np.inf
            values[5, 0] = np.round(values[5, 0], 1)  # many ties
        for prob in (0.89, 0.5, 0.95, 0.1, 0.001, 0.999):
            edges = [(1 - prob) / 2, 1 - (1 - prob) / 2]
            with np.errstate(invalid="ignore"):
                expected = np.quantile(values, edges, axis=-1)
                lower, upper = draw_interval(values, prob)
            np.testing.assert_array_equal(lower, expected[0], err_msg=f"{n} draws, prob {prob}")
            np.testing.assert_array_equal(upper, expected[1], err_msg=f"{n} draws, prob {prob}")
    reordered = values.copy()
    with np.errstate(invalid="ignore"):
        in_place = draw_interval(reordered, 0.89, in_place=True)
        copied = draw_interval(values, 0.89)
    np.testing.assert_array_equal(in_place, copied)
    np.testing.assert_array_equal(np.sort(reordered, axis=-1), np.sort(values, axis=-1))  # the same draws, moved


@pytest.mark.parametrize("block_bytes", [1, 3 * 8 * 2000])
def test_summary_in_blocks_of_rows_is_the_same_floats_as_whole(monkeypatch, block_bytes):
    values = np.random.default_rng(1).dirichlet(np.ones(3), size=(41, 2000)).transpose(0, 2, 1).copy()
    whole = (values.mean(axis=-1), *draw_interval(values, 0.89))
    monkeypatch.setattr(tiles_module, "SUMMARY_BLOCK_BYTES", block_bytes)
    for got, want in zip(draw_summary(values.copy(), 0.89, in_place=True), whole, strict=True):
        np.testing.assert_array_equal(got, want)


def test_softmax_without_the_maximum_agrees_with_scipy_and_recomputes_the_rows_it_cannot_take():
    rng = np.random.default_rng(2)
    log_values = rng.normal(0.0, 5.0, size=(30, 4, 50))
    log_values[3, 1, 7] = 800.0  # overflows without the maximum
    log_values[5] -= 900.0  # every class underflows without the maximum
    log_values[8] = -np.inf  # impossible under every class
    with np.errstate(invalid="ignore"):
        expected = scipy.special.softmax(log_values, axis=1)
    recomputed: list[int] = []
    blocks: list[slice] = []

    def again(rows: np.ndarray) -> np.ndarray:
        recomputed.extend(rows.tolist())
        return log_values[rows].copy()

    got = softmax_over_classes(log_values.copy(), recompute=again, each_block=lambda rows, block: blocks.append(rows))
    assert sorted(recomputed) == [3, 5, 8]
    for row in (3, 5, 8):  # the usual computation, to the last bit
        np.testing.assert_array_equal(got[row], expected[row])
    assert np.isnan(got[8]).all()
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-300)
    assert [(rows.start, rows.stop) for rows in blocks] == [(0, 30)]  # one block of 30 x 4 x 50 floats


def test_softmax_blocks_change_no_float(monkeypatch):
    log_values = np.random.default_rng(3).normal(0.0, 3.0, size=(25, 3, 40))
    whole = softmax_over_classes(log_values.copy())
    monkeypatch.setattr(base_module, "SOFTMAX_BLOCK_BYTES", 3 * 40 * 8 * 2)  # blocks of 2 rows
    blocks: list[tuple[int, int]] = []
    got = softmax_over_classes(log_values.copy(), each_block=lambda rows, block: blocks.append((rows.start, rows.stop)))
    np.testing.assert_array_equal(got, whole)
    assert blocks == [(start, min(start + 2, 25)) for start in range(0, 25, 2)]


@pytest.fixture(scope="module")
def digits_result():
    sampler = SamplerSettings(draws=200, chains=2, progressbar=False)
    return inference.fit(NaiveBayes(), data.load("digits_binary"), method="exact", sampler=sampler, random_seed=3)


def test_naive_bayes_probabilities_agree_with_plain_numpy(digits_result):
    """Posterior mean within 1e-12 and the interval within 1e-13 (relative) of scipy's softmax of the per-draw
    joint written directly (the bench's baseline), however the joint is shifted and blocked."""
    X = digits_result["constant_data"]["X"].values[::5]
    posterior = digits_result["posterior"].to_dataset().stack(sample=("chain", "draw"))
    p = posterior["binary_proba"].transpose("sample", "class", "binary_feature").values
    log_prior = np.log(posterior["class_prior"].transpose("sample", "class").values)
    joint = np.einsum("nf,skf->nks", X, np.log(p) - np.log1p(-p)) + (log_prior + np.log1p(-p).sum(axis=-1)).T
    per_draw = scipy.special.softmax(joint, axis=1)  # (rows, class, draws)
    prediction = predict(digits_result, X)
    np.testing.assert_allclose(prediction["class_proba"].values, per_draw.mean(axis=-1), rtol=0, atol=1e-12)
    interval = azs.eti(per_draw, 0.89, axis=-1)
    np.testing.assert_allclose(prediction["class_proba_low"].values, interval[..., 0], rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(prediction["class_proba_high"].values, interval[..., 1], rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("return_draws", [False, True])
def test_naive_bayes_predictions_do_not_depend_on_the_blocks(digits_result, monkeypatch, return_draws):
    X = digits_result["constant_data"]["X"].values[:37]
    classes = tuple(json.loads(digits_result.attrs["class_names"]))
    costs = 1.0 - np.eye(len(classes))
    costs[0, 8] = 5.0  # an asymmetric loss: expected losses and their intervals are summarised in the same blocks
    loss = LossMatrix(costs.tolist(), classes)
    default = predict(digits_result, X, return_draws=return_draws, loss=loss, workers=1)
    monkeypatch.setattr(base_module, "SOFTMAX_BLOCK_BYTES", 1)  # one row per block
    monkeypatch.setattr(tiles_module, "SUMMARY_BLOCK_BYTES", 1)
    blocked = predict(digits_result, X, return_draws=return_draws, loss=loss, workers=1)
    assert list(blocked.data_vars) == list(default.data_vars)
    for name in default.data_vars:
        np.testing.assert_array_equal(blocked[name].values, default[name].values, err_msg=name)
