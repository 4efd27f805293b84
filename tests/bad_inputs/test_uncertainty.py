"""Bad input to the point estimates' uncertainty: a result file whose stored covariance is damaged, bad ``alpha``.

A result file is untrusted input. Each row of :data:`COVARIANCE_FILE_CASES` damages the ``estimate_covariance_mle``
group of a saved MLE fit (or adds one without its estimate) and runs ``bayesclass predict`` on it in-process:
the command refuses the file with exit code 2 and a one-line error naming the group and what is wrong, never
a traceback and never intervals from a covariance that does not fit the estimate. :data:`ALPHA_CASES` are the
``alpha`` values ``GaussianApproximation.conf_int`` refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayesclass.data import Dataset
from bayesclass.inference import fit, save
from bayesclass.models.logistic import LogisticRegression
from tests.bad_inputs.harness import assert_one_line_error, run

GROUP = "estimate_covariance_mle"


def _scaled(factor_row: int, value: float) -> Callable[[xr.DataTree], None]:
    def tamper(tree: xr.DataTree) -> None:
        covariance = tree[GROUP]["covariance"].values.copy()
        covariance[factor_row, 0] = value
        tree[GROUP] = xr.DataTree(
            tree[GROUP].to_dataset().assign(covariance=(("parameter", "parameter_column"), covariance))
        )

    return tamper


def _negative_variance(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    covariance = dataset["covariance"].values.copy()
    covariance[1, 1] = -1.0
    tree[GROUP] = xr.DataTree(dataset.assign(covariance=(("parameter", "parameter_column"), covariance)))


def _one_parameter_short(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset().isel(parameter=slice(0, 3), parameter_column=slice(0, 3))
    tree[GROUP] = xr.DataTree(dataset)


def _relabelled(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    labels = ["intercept", "weights[a]", "weights[b]", "weights[c]"]
    tree[GROUP] = xr.DataTree(dataset.assign_coords(parameter=labels, parameter_column=labels))


def _without_estimate(tree: xr.DataTree) -> None:
    tree["estimate_covariance_map"] = xr.DataTree(tree[GROUP].to_dataset())


def _unknown_parameter(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    dataset.attrs["names"] = "intercept,slopes"
    tree[GROUP] = xr.DataTree(dataset)


def _no_names(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    del dataset.attrs["names"]
    tree[GROUP] = xr.DataTree(dataset)


def _no_covariance(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    tree[GROUP] = xr.DataTree(dataset.rename({"covariance": "variance"}))


def _integers(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    tree[GROUP] = xr.DataTree(dataset.assign(covariance=dataset["covariance"].astype(int)))


#: (id, damage to the saved result, exit code, fragment of the one-line error)
COVARIANCE_FILE_CASES = [
    ("covariance NaN", _scaled(2, np.nan), 2, "estimate_covariance_mle: covariance holds NaN or inf"),
    ("covariance inf", _scaled(2, np.inf), 2, "estimate_covariance_mle: covariance holds NaN or inf"),
    ("covariance not symmetric", _scaled(3, 7.5), 2, "covariance is not symmetric with non-negative variances"),
    ("negative variance", _negative_variance, 2, "covariance is not symmetric with non-negative variances"),
    ("covariance one parameter short", _one_parameter_short, 2, "covariance should be a (4, 4) float matrix"),
    ("covariance of other parameters", _relabelled, 2, "covariance labels differ from the point estimate's"),
    ("covariance without its estimate", _without_estimate, 2, "estimate_covariance_map has no point_estimate_map"),
    ("covariance names a parameter the estimate lacks", _unknown_parameter, 2, "attr names 'intercept,slopes'"),
    ("covariance without names", _no_names, 2, "attr names (the parameters the covariance is over) is missing"),
    ("covariance group without its variable", _no_covariance, 2, "estimate_covariance_mle: has no covariance"),
    ("covariance of integers", _integers, 2, "covariance should be a (4, 4) float matrix"),
]

#: (id, alpha given to conf_int, fragment of the ValueError)
ALPHA_CASES = [
    ("alpha 0", 0.0, "alpha must be a number in (0, 1)"),
    ("alpha 1", 1.0, "alpha must be a number in (0, 1)"),
    ("alpha above 1", 5.0, "got 5.0"),
    ("alpha True", True, "got True"),
    ("alpha text", "0.05", "got '0.05'"),
    ("alpha NaN", float("nan"), "got nan"),
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, Path]:
    """A saved MLE fit (it stores its covariance) and a CSV of rows to predict."""
    folder = tmp_path_factory.mktemp("uncertainty")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X @ [1.0, -0.5, 0.25] + rng.logistic(size=60) > 0).astype(int)
    data = Dataset(
        name="noisy",
        X=X,
        y=y,
        feature_names=("a1", "a2", "a3"),
        class_names=("no", "yes"),
        feature_kinds=("continuous",) * 3,
    )
    result = fit(LogisticRegression(), data, method="mle")
    assert GROUP in result.children
    save(result, folder / "mle.nc")
    (folder / "rows.csv").write_text("a1,a2,a3\n0.1,0.2,0.3\n-1,0,1\n", encoding="utf-8")
    return folder / "mle.nc", folder / "rows.csv"


def test_the_undamaged_file_predicts_with_intervals(saved, tmp_path):
    run_file, rows = saved
    assert (
        run("predict", "--run", str(run_file), "--data", str(rows), "--out", str(tmp_path / "p.csv"), "--no-progress")
        == 0
    )
    header = (tmp_path / "p.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == ["p_no", "p_no_mle_low", "p_no_mle_high", "p_yes", "p_yes_mle_low", "p_yes_mle_high", "predicted"]


@pytest.mark.parametrize(
    ("damage", "code", "fragment"),
    [row[1:] for row in COVARIANCE_FILE_CASES],
    ids=[row[0] for row in COVARIANCE_FILE_CASES],
)
def test_a_damaged_covariance_is_refused_in_one_line(saved, tmp_path, capsys, damage, code, fragment):
    run_file, rows = saved
    tree = xr.open_datatree(run_file)
    tree.load()
    tree.close()
    damage(tree)
    tree.to_netcdf(tmp_path / "damaged.nc")
    out = tmp_path / "p.csv"
    assert run("predict", "--run", str(tmp_path / "damaged.nc"), "--data", str(rows), "--out", str(out)) == code
    error = capsys.readouterr().err
    assert_one_line_error(error, fragment)
    assert not out.exists()


@pytest.mark.parametrize(("alpha", "fragment"), [row[1:] for row in ALPHA_CASES], ids=[row[0] for row in ALPHA_CASES])
def test_conf_int_refuses_alpha_outside_the_open_unit_interval(saved, alpha, fragment):
    from bayesclass.inference import load
    from bayesclass.inference.result import gaussian_approximation

    approximation = gaussian_approximation(load(saved[0]), "mle")
    with pytest.raises(ValueError, match="alpha") as error:
        approximation.conf_int(alpha)
    assert fragment in str(error.value)
