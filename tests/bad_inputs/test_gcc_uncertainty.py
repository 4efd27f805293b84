"""Bad input to the Gaussian class-conditional estimates' standard errors.

:data:`GCC_APPROXIMATION_CASES`: ``GaussianClassConditional.gaussian_approximation(data, kind)`` with a kind the
model lacks or data whose estimate does not exist raises the point estimate's own clear error (naming the kind,
the class or feature, and the remedy), never a covariance of a singular estimate. :data:`GCC_COVARIANCE_FILE_CASES`:
a saved gcc result whose stored covariance does not fit its estimate is refused by ``bayesclass predict`` in one
line (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayesclass.data import Dataset, seed001_gaussians
from bayesclass.inference import fit, save
from bayesclass.models.base import NoEstimateError
from bayesclass.models.gaussian_class_conditional import GaussianClassConditional, GaussianClassConditionalPrior
from tests.bad_inputs.harness import assert_one_line_error, run

GROUP = "estimate_covariance_mle"


def _data(X: np.ndarray, y: np.ndarray, kinds: tuple[str, ...] | None = None) -> Dataset:
    d = X.shape[1]
    return Dataset(
        name="bad",
        X=X,
        y=y,
        feature_names=tuple(f"f{j}" for j in range(d)),
        class_names=("a", "b"),
        feature_kinds=kinds or ("continuous",) * d,
    )


def _gaussians() -> Dataset:
    return seed001_gaussians(60, random_seed=4)


def _class_with_d_rows() -> Dataset:
    return _data(np.random.default_rng(3).standard_normal((12, 3)), np.array([0] * 9 + [1] * 3))


def _constant_within_every_class() -> Dataset:
    rng = np.random.default_rng(4)
    y = np.arange(40) % 2
    return _data(np.column_stack([rng.standard_normal(40), np.where(y == 0, 1.0, 2.0)]), y)


def _more_features_than_rows() -> Dataset:
    return _data(np.random.default_rng(5).standard_normal((6, 8)), np.repeat([0, 1], 3))


def _collinear_in_a_class() -> Dataset:
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 3))
    X[20:, 2] = X[20:, 0] - X[20:, 1]
    return _data(X, np.repeat([0, 1], 20))


def _binary_feature() -> Dataset:
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.standard_normal(30), rng.integers(0, 2, 30).astype(float)])
    return _data(X, np.arange(30) % 2, ("continuous", "binary"))


def _lkj(covariance: str = "shared") -> GaussianClassConditional:
    return GaussianClassConditional(covariance=covariance)


#: (id, model, data, kind, exception type, fragment of its message)
GCC_APPROXIMATION_CASES = [
    ("kind posterior", _lkj(), _gaussians, "posterior", ValueError, "kind='posterior' is not a point estimate"),
    ("kind None", _lkj(), _gaussians, None, ValueError, "kind=None is not a point estimate"),
    ("posterior_mean under the LKJ prior", _lkj(), _gaussians, "posterior_mean", ValueError,
     "it needs the conjugate prior GaussianClassConditionalPrior(covariance_prior='inverse_wishart')"),
    ("QDA MLE, a class with d rows", _lkj("per-class"), _class_with_d_rows, "mle", NoEstimateError,
     "class 'b' has 3 rows for 3 features"),
    ("QDA LKJ MAP, a class with d rows", _lkj("per-class"), _class_with_d_rows, "map", NoEstimateError,
     "LKJ-prior MAP of covariance['b'] does not exist"),
    ("LDA MLE, a feature constant within every class", _lkj(), _constant_within_every_class, "mle",
     NoEstimateError, "feature 'f1' is constant within every class"),
    ("LDA unbiased, more features than rows", _lkj(), _more_features_than_rows, "unbiased", NoEstimateError,
     "6 rows in 2 classes leave 4 degrees of freedom for 8 features"),
    ("QDA MLE, collinear features in a class", _lkj("per-class"), _collinear_in_a_class, "mle", NoEstimateError,
     "linearly dependent (collinear) within that class"),
    ("a binary feature", _lkj(), _binary_feature, "mle", ValueError, "the gcc model needs continuous features"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("model", "data", "kind", "error", "fragment"),
    [row[1:] for row in GCC_APPROXIMATION_CASES],
    ids=[row[0] for row in GCC_APPROXIMATION_CASES],
)
def test_gaussian_approximation_refuses_what_the_point_estimate_refuses(model, data, kind, error, fragment):
    with pytest.raises(error) as raised:
        model.gaussian_approximation(data(), kind)
    assert fragment in str(raised.value)


def _names_without_covariance(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    dataset.attrs["names"] = "class_prior,class_mean"
    tree[GROUP] = xr.DataTree(dataset)


def _one_copy_of_each_pair(tree: xr.DataTree) -> None:
    """The covariance over the lower triangle only (one copy of each symmetric pair): 9 of 10 parameters."""
    dataset = tree[GROUP].to_dataset()
    keep = [label for label in dataset["parameter"].values if label != "covariance[x1, x2]"]
    tree[GROUP] = xr.DataTree(dataset.sel(parameter=keep, parameter_column=keep))


#: (id, damage to a saved shared-covariance gcc MLE fit, exit code, fragment of the one-line error)
GCC_COVARIANCE_FILE_CASES: list[tuple[str, Callable[[xr.DataTree], None], int, str]] = [
    ("gcc covariance names only the prior and means", _names_without_covariance, 2,
     "covariance should be a (6, 6) float matrix"),
    ("gcc covariance with one copy of each symmetric pair", _one_copy_of_each_pair, 2,
     "covariance should be a (10, 10) float matrix"),
]  # fmt: skip


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("gcc_uncertainty")
    model = GaussianClassConditional(prior=GaussianClassConditionalPrior(covariance_prior="inverse_wishart"))
    result = fit(model, seed001_gaussians(80, random_seed=2), method="mle")
    assert GROUP in result.children
    save(result, folder / "mle.nc")
    (folder / "rows.csv").write_text("x1,x2\n0.1,0.2\n2,1\n", encoding="utf-8")
    return folder / "mle.nc", folder / "rows.csv"


def test_the_undamaged_gcc_file_predicts(saved, tmp_path):
    run_file, rows = saved
    out = tmp_path / "p.csv"
    assert run("predict", "--run", str(run_file), "--data", str(rows), "--out", str(out), "--no-progress") == 0
    assert out.read_text(encoding="utf-8").splitlines()[0].startswith("p_C1")


@pytest.mark.parametrize(
    ("damage", "code", "fragment"),
    [row[1:] for row in GCC_COVARIANCE_FILE_CASES],
    ids=[row[0] for row in GCC_COVARIANCE_FILE_CASES],
)
def test_a_damaged_gcc_covariance_is_refused_in_one_line(saved, tmp_path, capsys, damage, code, fragment):
    run_file, rows = saved
    tree = xr.open_datatree(run_file)
    tree.load()
    tree.close()
    damage(tree)
    tree.to_netcdf(tmp_path / "damaged.nc")
    out = tmp_path / "p.csv"
    assert run("predict", "--run", str(tmp_path / "damaged.nc"), "--data", str(rows), "--out", str(out)) == code
    assert_one_line_error(capsys.readouterr().err, fragment)
    assert not out.exists()
