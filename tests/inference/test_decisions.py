"""Decisions under a loss matrix (inference.decisions): the seed's binary threshold rule, 0-1 loss = the most
probable class, scale invariance, deterministic ties, the CSV format and its errors."""

from __future__ import annotations

import numpy as np
import pytest

from bayesclass.inference.prediction.decisions import LossMatrix, decide, expected_loss

RNG = np.random.default_rng(0)


def _proba(n: int, K: int) -> np.ndarray:
    return RNG.dirichlet(np.ones(K), size=n)


@pytest.mark.parametrize(("false_positive", "false_negative"), [(1.0, 1.0), (1.0, 10.0), (5.0, 0.5), (0.0, 3.0)])
def test_binary_decisions_are_the_seeds_threshold_rule(false_positive, false_negative):
    """Predict class 1 iff P(1|x) > L01 / (L01 + L10) (seed 004, "Predicting to Minimize Expected Loss")."""
    loss = LossMatrix([[0.0, false_positive], [false_negative, 0.0]], ("no", "yes"))
    p1 = RNG.uniform(size=2000)
    p1 = p1[np.abs(p1 - loss.threshold()) > 1e-12]  # away from the threshold, where rounding decides
    proba = np.column_stack([1 - p1, p1])
    np.testing.assert_array_equal(decide(expected_loss(proba, loss.values)), (p1 > loss.threshold()).astype(int))


@pytest.mark.parametrize(("false_positive", "false_negative"), [(1.0, 1.0), (0.0, 3.0), (2.0, 2.0)])
def test_at_the_threshold_the_tie_goes_to_the_first_class(false_positive, false_negative):
    """Thresholds where both expected losses are equal in floating point (0.5, 0): the first class."""
    loss = LossMatrix([[0.0, false_positive], [false_negative, 0.0]], ("no", "yes"))
    p1 = loss.threshold()
    assert decide(expected_loss(np.array([[1 - p1, p1]]), loss.values))[0] == 0


def test_zero_one_loss_decides_the_most_probable_class():
    proba = _proba(500, 4)
    losses = expected_loss(proba, LossMatrix.zero_one(("a", "b", "c", "d")).values)
    np.testing.assert_allclose(losses, 1 - proba, atol=1e-15)
    np.testing.assert_array_equal(decide(losses), proba.argmax(axis=1))


def test_decisions_do_not_change_when_the_loss_is_scaled():
    proba = _proba(1000, 3)
    loss = RNG.uniform(size=(3, 3)) * (1 - np.eye(3))
    reference = decide(expected_loss(proba, loss))
    for factor in (1e-6, 0.5, 7.0, 1e6):
        np.testing.assert_array_equal(decide(expected_loss(proba, factor * loss)), reference)


def test_expected_loss_broadcasts_over_draws_and_its_mean_is_the_loss_of_the_mean():
    draws = RNG.dirichlet(np.ones(3), size=(4, 50, 7))  # chain, draw, row, class
    loss = RNG.uniform(size=(3, 3))
    per_draw = expected_loss(draws, loss)
    assert per_draw.shape == (4, 50, 7, 3)
    np.testing.assert_allclose(per_draw.mean(axis=(0, 1)), expected_loss(draws.mean(axis=(0, 1)), loss), atol=1e-14)


def test_ties_go_to_the_first_class_and_nan_rows_get_no_decision():
    losses = np.array([[1.0, 1.0, 2.0], [3.0, 0.5, 0.5], [np.nan, 0.0, 1.0]])
    np.testing.assert_array_equal(decide(losses), [0, 1, -1])


def test_aligned_reorders_by_the_fitted_classes_and_names_mismatches():
    loss = LossMatrix([[0, 1, 2], [3, 0, 4], [5, 6, 0]], ("a", "b", "c"))
    np.testing.assert_array_equal(loss.aligned(["c", "a", "b"]), [[0, 5, 6], [2, 0, 1], [4, 3, 0]])
    with pytest.raises(ValueError, match=r"unknown class\(es\) \['c'\]; no row/column for \['d'\]"):
        loss.aligned(["a", "b", "d"])


def test_the_csv_format_reads_rows_in_any_order(tmp_path):
    path = tmp_path / "loss.csv"
    path.write_text("true/predicted,benign,malignant\nmalignant,10,0\nbenign,0,1\n")
    loss = LossMatrix.from_csv(path)
    assert loss.class_names == ("benign", "malignant")
    np.testing.assert_array_equal(loss.values, [[0, 1], [10, 0]])
    assert loss.threshold() == pytest.approx(1 / 11)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x,a,b\na,0,1\nb,1\n", r"line 3: 1 losses for 2 predicted classes"),
        ("x,a,b\na,0,1\nc,1,0\n", r"the rows name the true classes \['a', 'c'\] and the header the predicted"),
        ("x,a,b\na,0,-1\nb,1,0\n", r"entry \[true 'a', predicted 'b'\] is -1.0; losses must be finite and non-neg"),
        ("x,a,b\na,0,inf\nb,1,0\n", r"entry \[true 'a', predicted 'b'\] is inf; losses must be finite"),
        ("x,a,b\na,0,one\nb,1,0\n", r"entry \[true 'a', predicted 'b'\] is 'one', not a number"),
        ("x,a\na,0\n", r"is not a loss-matrix CSV \(its first line is .x,a.\); expected a header of the predicted"),
    ],
)
def test_bad_loss_matrix_files_are_one_clear_error(tmp_path, text, message):
    path = tmp_path / "loss.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        LossMatrix.from_csv(path)


def test_a_missing_file_and_a_wrong_shape_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"cannot read loss matrix file .*nothing.csv"):
        LossMatrix.from_csv(tmp_path / "nothing.csv")
    with pytest.raises(ValueError, match=r"shape \(2, 3\); it must be 2 x 2"):
        LossMatrix([[0, 1, 2], [1, 0, 2]], ("a", "b"))


# --------------------------------------------------------------------------- predict(..., loss=...) and the CLI


@pytest.fixture(scope="module")
def nuts_result():
    from bayesclass import data
    from bayesclass.inference import SamplerSettings, fit

    gaussians = data.seed001_gaussians(150, random_seed=3)
    sampler = SamplerSettings(draws=300, tune=300, chains=2, progressbar=False)
    return fit("logistic", gaussians, sampler=sampler, random_seed=5)


def test_predict_decides_under_a_loss_matrix_with_posterior_intervals(nuts_result):
    from bayesclass import data
    from bayesclass.inference import predict

    X = data.seed001_gaussians(400, random_seed=8).X
    loss = LossMatrix([[0.0, 1.0], [4.0, 0.0]], ("C1", "C2"))
    prediction = predict(nuts_result, X, loss=loss, return_draws=True)
    proba = prediction["class_proba"].values
    np.testing.assert_allclose(prediction["expected_loss"].values, proba @ loss.values, atol=1e-12)
    expected = np.where(proba[:, 1] > loss.threshold(), "C2", "C1")
    away = np.abs(proba[:, 1] - loss.threshold()) > 1e-9
    np.testing.assert_array_equal(prediction["decision"].values[away], expected[away])
    per_draw = np.einsum("cdik,kj->cdij", prediction["class_proba_draws"].values, loss.values)
    np.testing.assert_allclose(
        prediction["expected_loss_low"].values, np.quantile(per_draw, 0.055, axis=(0, 1)), atol=1e-12
    )
    assert (prediction["expected_loss_low"] <= prediction["expected_loss"]).all()
    assert (prediction["expected_loss"] <= prediction["expected_loss_high"]).all()
    zero_one = predict(nuts_result, X, loss=LossMatrix.zero_one(("C1", "C2")))
    np.testing.assert_array_equal(zero_one["decision"].values, zero_one["predicted"].values)


def test_predict_with_a_loss_for_other_classes_is_a_clear_error(nuts_result):
    from bayesclass.inference import predict

    with pytest.raises(ValueError, match=r"the loss matrix is for the classes \['C1', 'C3'\]"):
        predict(nuts_result, np.zeros((2, 2)), loss=LossMatrix([[0, 1], [1, 0]], ("C1", "C3")))


def test_the_predict_command_writes_decisions_and_refuses_bad_loss_files(nuts_result, tmp_path):
    import csv
    import subprocess
    import sys

    from bayesclass.inference import save

    save(nuts_result, tmp_path / "run.nc")
    (tmp_path / "loss.csv").write_text("true/predicted,C1,C2\nC2,4,0\nC1,0,1\n")
    (tmp_path / "wrong.csv").write_text("true/predicted,C1,C9\nC1,0,1\nC9,1,0\n")
    (tmp_path / "negative.csv").write_text("true/predicted,C1,C2\nC1,0,-1\nC2,1,0\n")
    base = [sys.executable, "-m", "bayesclass.cli", "predict", "--run", "run.nc", "--data", "seed001_gaussians"]
    done = subprocess.run(
        [*base, "--loss-matrix", "loss.csv", "--out", "p.csv", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "p.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert {"decision", "expected_loss_C1", "expected_loss_C2", "expected_loss_C2_low"} <= set(rows[0])
    for row in rows[:50]:
        p2 = float(row["p_C2"])
        if abs(p2 - 0.2) > 1e-9:  # threshold 1 / (1 + 4)
            assert row["decision"] == ("C2" if p2 > 0.2 else "C1")
        assert float(row["expected_loss_C1"]) == pytest.approx(4 * p2, abs=1e-9)
    for bad, message in (("wrong.csv", "loss matrix is for the classes"), ("negative.csv", "non-negative")):
        refused = subprocess.run(
            [*base, "--loss-matrix", bad, "--out", "q.csv", "--no-progress"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert refused.returncode == 2 and message in refused.stderr and refused.stderr.count("\n") == 1
        assert not (tmp_path / "q.csv").exists()
