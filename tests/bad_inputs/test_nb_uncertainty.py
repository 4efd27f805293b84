"""Bad input to the naive Bayes standard errors (issue 27): estimates that do not exist, kinds it does not offer,
and saved naive Bayes results whose stored covariance is damaged.

:data:`NB_APPROXIMATION_CASES` call ``NaiveBayes.gaussian_approximation`` directly: an estimate that does not exist
raises the same :class:`~bayesclass.models.base.NoEstimateError` as ``point_estimate`` (naming the parameter and
the fix), never a covariance of NaN or a division by zero. :data:`NB_COVARIANCE_FILE_CASES` damage the
``estimate_covariance_mle`` group of a saved naive Bayes fit on the transport table, whose MLE has probabilities of
exactly 0 and 1 (rows and columns of zeros in its covariance), and run ``bayesclass predict`` on it in-process:
exit code 2 and a one-line error naming the group, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayesclass.data import Dataset, load
from bayesclass.inference import fit, save
from bayesclass.models.base import NoEstimateError
from bayesclass.models.naive_bayes import NaiveBayes, NaiveBayesPrior
from tests.bad_inputs.harness import assert_one_line_error, run

GROUP = "estimate_covariance_mle"


def _data(X, y, kinds) -> Dataset:
    X = np.asarray(X, dtype=float)
    return Dataset(
        name="tiny",
        X=X,
        y=np.asarray(y),
        feature_names=tuple(f"x{j}" for j in range(X.shape[1])),
        class_names=("a", "b"),
        feature_kinds=tuple(kinds),
    )


def _one_row_class() -> Dataset:
    return _data([[0.1], [0.5], [0.9], [2.0]], [0, 0, 0, 1], ["continuous"])


def _constant_in_class() -> Dataset:
    return _data([[1.0], [1.0], [0.2], [0.7]], [0, 0, 1, 1], ["continuous"])


def _class_without_counts() -> Dataset:
    return _data([[0, 0], [0, 0], [3, 1], [0, 2]], [0, 0, 1, 1], ["count", "count"])


def _unseen_level() -> Dataset:
    return _data([[0], [1], [2], [0]], [0, 0, 1, 1], ["categorical"])


def _binary() -> Dataset:
    return _data([[0], [0], [1], [0]], [0, 0, 1, 1], ["binary"])


#: (id, prior, data, kind, exception type, fragment of its message)
NB_APPROXIMATION_CASES = [
    (
        "MLE: a class of one row",
        NaiveBayesPrior(),
        _one_row_class,
        "mle",
        NoEstimateError,
        "the MLE of gaussian_variance['b', 'x0'] does not exist",
    ),
    (
        "MLE: a feature constant within a class",
        NaiveBayesPrior(),
        _constant_in_class,
        "mle",
        NoEstimateError,
        "the feature is constant within the class",
    ),
    (
        "MLE: a class without counts",
        NaiveBayesPrior(),
        _class_without_counts,
        "mle",
        NoEstimateError,
        "the MLE of count_proba for class 'a' does not exist",
    ),
    (
        "MAP: a level unseen under a concentration below 1",
        NaiveBayesPrior(category_concentration=0.5),
        _unseen_level,
        "map",
        NoEstimateError,
        "the MAP of category_proba['a', 'x0=2'] does not exist",
    ),
    (
        "MAP: a Beta prior below 1",
        NaiveBayesPrior(binary_alpha=0.5),
        _binary,
        "map",
        NoEstimateError,
        "the MAP of binary_proba['a', 'x0'] does not exist",
    ),
    (
        "kind the family does not offer",
        NaiveBayesPrior(),
        _binary,
        "posterior_predictive",
        ValueError,
        "kind='posterior_predictive' is not a point estimate of this 'naive_bayes' model",
    ),
    ("kind not a string", NaiveBayesPrior(), _binary, 3, ValueError, "kind=3 is not a point estimate"),
    ("data a name", NaiveBayesPrior(), lambda: "transport", "mle", TypeError, "data must be a bayesclass.data.Dataset"),
]


@pytest.mark.parametrize(
    ("prior", "data", "kind", "error", "fragment"),
    [case[1:] for case in NB_APPROXIMATION_CASES],
    ids=[case[0] for case in NB_APPROXIMATION_CASES],
)
def test_approximation_of_an_estimate_that_does_not_exist_is_refused(prior, data, kind, error, fragment):
    with pytest.raises(error, match=None) as caught:
        NaiveBayes(prior=prior).gaussian_approximation(data(), kind)
    assert fragment in str(caught.value)


def _boundary_index(tree: xr.DataTree, value: float) -> int:
    """The flattened index of the first MLE element equal to ``value`` (0 or 1: a zero row of the covariance)."""
    labels = [str(label) for label in tree[GROUP]["parameter"].values]
    estimate = tree["point_estimate_mle"].to_dataset()
    flat = np.concatenate([estimate[label.split("[")[0]].values.ravel() for label in dict.fromkeys(
        label.split("[")[0] for label in labels
    )])  # fmt: skip
    return int(np.flatnonzero(flat == value)[0])


def _set(value: float, at: float) -> Callable[[xr.DataTree], None]:
    def tamper(tree: xr.DataTree) -> None:
        dataset = tree[GROUP].to_dataset()
        covariance = dataset["covariance"].values.copy()
        index = _boundary_index(tree, at)
        covariance[index, index] = value
        tree[GROUP] = xr.DataTree(dataset.assign(covariance=(("parameter", "parameter_column"), covariance)))

    return tamper


def _classes_swapped(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    labels = [str(label).replace("car", "CAR").replace("bike", "car").replace("CAR", "bike") for label in
              dataset["parameter"].values]  # fmt: skip
    tree[GROUP] = xr.DataTree(dataset.assign_coords(parameter=labels, parameter_column=labels))


def _without_gaussian_names(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    dataset.attrs["names"] = "class_prior,binary_proba"
    tree[GROUP] = xr.DataTree(dataset)


def _block_off_diagonal_asymmetric(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    covariance = dataset["covariance"].values.copy()
    covariance[0, -1] = 0.5  # class_prior vs gaussian_variance, on one side only
    tree[GROUP] = xr.DataTree(dataset.assign(covariance=(("parameter", "parameter_column"), covariance)))


def _support(low: float, columns: int = 2) -> Callable[[xr.DataTree], None]:
    def tamper(tree: xr.DataTree) -> None:
        dataset = tree[GROUP].to_dataset()
        support = np.full((dataset.sizes["parameter"], columns), low)
        tree[GROUP] = xr.DataTree(dataset.drop_vars("support").assign(support=(("parameter", "side"), support)))

    return tamper


#: (id, damage to the saved naive Bayes result, exit code, fragment of the one-line error)
NB_COVARIANCE_FILE_CASES = [
    ("NaN at a boundary probability", _set(np.nan, 0.0), 2, "estimate_covariance_mle: covariance holds NaN or inf"),
    ("inf at a probability of 1", _set(np.inf, 1.0), 2, "estimate_covariance_mle: covariance holds NaN or inf"),
    ("negative variance at a boundary", _set(-1e-3, 0.0), 2, "covariance is not symmetric with non-negative"),
    ("classes relabelled", _classes_swapped, 2, "covariance labels differ from the point estimate's parameters"),
    ("names without the Gaussian block", _without_gaussian_names, 2, "covariance should be a ("),
    ("asymmetric across blocks", _block_off_diagonal_asymmetric, 2, "covariance is not symmetric"),
    ("support above the estimates", _support(2.0), 2, "support (low, high) should hold each estimate; it is NaN"),
    ("support NaN", _support(np.nan), 2, "support (low, high) should hold each estimate; it is NaN or excludes"),
    (
        "support of three columns",
        _support(0.0, 3),
        2,
        "support should be a (20, 2) array of bounds (low, high), got shape (20, 3)",
    ),
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[xr.DataTree, Path]:
    """The MLE fit of the transport table (probabilities 0 and 1 in its estimate) and a CSV of rows to predict."""
    folder = tmp_path_factory.mktemp("nb_uncertainty")
    result = fit(NaiveBayes(), load("transport"), method="mle")
    assert GROUP in result.children
    (folder / "rows.csv").write_text(
        "Distance,Raining,Flat Tire\n1,yes,no\n10,no,no\n", encoding="utf-8"
    )  # fmt: skip
    return result, folder / "rows.csv"


def test_the_undamaged_boundary_file_predicts(saved, tmp_path):
    result, rows = saved
    save(result, tmp_path / "mle.nc")
    out = tmp_path / "p.csv"
    assert (
        run("predict", "--run", str(tmp_path / "mle.nc"), "--data", str(rows), "--out", str(out), "--no-progress") == 0
    )
    assert out.read_text(encoding="utf-8").splitlines()[0].startswith("p_bike")


@pytest.mark.parametrize(
    ("damage", "code", "fragment"),
    [case[1:] for case in NB_COVARIANCE_FILE_CASES],
    ids=[case[0] for case in NB_COVARIANCE_FILE_CASES],
)
def test_damaged_naive_bayes_covariance_is_refused(saved, tmp_path, capsys, damage, code, fragment):
    result, rows = saved
    tree = result.copy(deep=True)
    damage(tree)
    save(tree, tmp_path / "damaged.nc")
    out = tmp_path / "p.csv"
    argv = ("predict", "--run", str(tmp_path / "damaged.nc"), "--data", str(rows), "--out", str(out), "--no-progress")
    assert run(*argv) == code
    error = capsys.readouterr().err
    assert_one_line_error(error, fragment)
    assert len(error.strip().splitlines()) == 1
    assert not out.exists()
