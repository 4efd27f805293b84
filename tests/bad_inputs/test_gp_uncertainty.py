"""Bad input to the latent GP's uncertainty: a saved ``map`` fit whose Laplace covariance is damaged, and ``--method
laplace`` with settings it does not take.

A result file is untrusted input. Each row of :data:`GP_COVARIANCE_FILE_CASES` damages the
``estimate_covariance_map`` group of a saved GP ``map`` fit (the Laplace Gaussian of its latent values) and runs
``bayesclass predict`` on it in-process: exit code 2 and a one-line error saying what is wrong, never a traceback
and never intervals from a covariance over other parameters (a covariance over the hyperparameters is legal for
the file format but not for the GP, whose probability intervals come from its latents). Each row of
:data:`GP_LAPLACE_CLI_CASES` runs ``bayesclass fit --model gp --method laplace`` with a setting the method does not
take. :data:`GP_INTERVAL_API_CASES` are the approximations ``class_proba_interval_kernel`` refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayesclass.data import seed004_gp
from bayesclass.inference import fit, save
from bayesclass.inference.result import parameters_digest
from bayesclass.models import LatentGaussianProcess
from bayesclass.models.approximation import GaussianApproximation
from tests.bad_inputs.harness import assert_one_line_error, run

GROUP = "estimate_covariance_map"
ROWS = 40


def _over(names: str, labels: list[str]) -> Callable[[xr.DataTree], None]:
    """Replace the covariance by the identity over ``labels``, declared over the parameters ``names``.

    A legal covariance group for the file format (its digest written again, as by a fit that stored it): only the
    GP's own check refuses it.
    """

    def tamper(tree: xr.DataTree) -> None:
        dataset = xr.Dataset(
            {"covariance": (("parameter", "parameter_column"), np.eye(len(labels)))},
            coords={"parameter": labels, "parameter_column": labels},
            attrs={**tree[GROUP].to_dataset().attrs, "names": names},
        )
        tree[GROUP] = xr.DataTree(dataset)
        tree.attrs["parameters_digest"] = parameters_digest(tree)

    return tamper


def _one_latent_short(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset().isel(parameter=slice(0, ROWS - 1), parameter_column=slice(0, ROWS - 1))
    tree[GROUP] = xr.DataTree(dataset)


def _negative_latent_variance(tree: xr.DataTree) -> None:
    dataset = tree[GROUP].to_dataset()
    covariance = dataset["covariance"].values.copy()
    covariance[3, 3] = -0.5
    tree[GROUP] = xr.DataTree(dataset.assign(covariance=(("parameter", "parameter_column"), covariance)))


_LATENTS = [f"latent[{i}]" for i in range(ROWS)]

#: (id, damage to the saved GP map fit, exit code, fragment of the one-line error)
GP_COVARIANCE_FILE_CASES = [
    (
        "covariance over the amplitude",
        _over("amplitude", ["amplitude"]),
        2,
        "must be over latent (its Laplace Gaussian), got one over amplitude",
    ),
    (
        "covariance over the hyperparameters and the latents",
        _over("amplitude,constant,latent", ["amplitude", "constant", *_LATENTS]),
        2,
        "must be over latent (its Laplace Gaussian), got one over amplitude, constant, latent",
    ),
    ("covariance one latent short", _one_latent_short, 2, f"covariance should be a ({ROWS}, {ROWS}) float matrix"),
    ("negative latent variance", _negative_latent_variance, 2, "not symmetric with non-negative variances"),
]

#: (options after ``fit --model gp --data seed004_gp --rows 40 --method laplace``, exit code, message fragment)
GP_LAPLACE_CLI_CASES = [
    (("--tune", "100"), 2, "--tune does nothing with --method laplace"),
    (("--backend", "nutpie"), 2, "--method laplace is not NUTS: drop the backend"),
]


def _approximation(names: tuple[str, ...], labels: tuple[str, ...]) -> GaussianApproximation:
    return GaussianApproximation(
        kind="map", names=names, labels=labels, params=np.zeros(len(labels)), covariance=np.eye(len(labels))
    )


#: (id, approximation given to class_proba_interval_kernel with the exact GP's map estimate, ValueError fragment)
GP_INTERVAL_API_CASES = [
    ("over the lengthscale", _approximation(("lengthscale",), ("lengthscale[x]",)), "got one over lengthscale"),
    ("over the HSGP weights", _approximation(("basis_weight",), ("basis_weight[constant]",)), "over basis_weight"),
    ("over nothing", _approximation((), ()), "must be over latent"),
]


@pytest.fixture(scope="module")
def data():
    return seed004_gp(ROWS, random_seed=4)


@pytest.fixture(scope="module")
def saved(tmp_path_factory, data) -> tuple[Path, Path]:
    """A saved GP map fit (it stores the Laplace covariance of its latents) and a CSV of rows to predict."""
    folder = tmp_path_factory.mktemp("gp_uncertainty")
    result = fit(LatentGaussianProcess(), data, method="map")
    assert GROUP in result.children
    save(result, folder / "map.nc")
    (folder / "rows.csv").write_text("x\n0.1\n0.5\n0.9\n", encoding="utf-8")
    return folder / "map.nc", folder / "rows.csv"


def _predict(run_file: Path, rows: Path, out: Path) -> int:
    return run("predict", "--run", str(run_file), "--data", str(rows), "--out", str(out), "--no-progress")


def test_the_undamaged_file_predicts_with_intervals(saved, tmp_path):
    run_file, rows = saved
    assert _predict(run_file, rows, tmp_path / "p.csv") == 0
    lines = (tmp_path / "p.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0].split(",") == [
        "p_0",
        "p_0_map_low",
        "p_0_map_high",
        "p_1",
        "p_1_map_low",
        "p_1_map_high",
        "predicted",
    ]
    for line in lines[1:]:
        p0, low0, high0, p1, low1, high1 = map(float, line.split(",")[:6])
        assert low1 < high1 and low0 == pytest.approx(1 - high1) and high0 == pytest.approx(1 - low1)


@pytest.mark.parametrize(
    ("damage", "code", "fragment"),
    [case[1:] for case in GP_COVARIANCE_FILE_CASES],
    ids=[case[0] for case in GP_COVARIANCE_FILE_CASES],
)
def test_a_damaged_covariance_is_refused(saved, tmp_path, capsys, damage, code, fragment):
    run_file, rows = saved
    tree = xr.open_datatree(run_file).load()
    damage(tree)
    damaged = tmp_path / "damaged.nc"
    tree.to_netcdf(damaged)
    out = tmp_path / "p.csv"
    assert _predict(damaged, rows, out) == code
    assert_one_line_error(capsys.readouterr().err, fragment)
    assert not out.exists()


@pytest.mark.parametrize(("options", "code", "fragment"), GP_LAPLACE_CLI_CASES)
def test_laplace_refuses_settings_it_does_not_take(tmp_path, capsys, options, code, fragment):
    out = tmp_path / "run.nc"
    argv = ("fit", "--model", "gp", "--data", "seed004_gp", "--rows", "40", "--method", "laplace", *options)
    assert run(*argv, "--out", str(out)) == code
    assert_one_line_error(capsys.readouterr().err, fragment)
    assert not out.exists()


@pytest.mark.parametrize(
    ("approximation", "fragment"),
    [case[1:] for case in GP_INTERVAL_API_CASES],
    ids=[case[0] for case in GP_INTERVAL_API_CASES],
)
def test_interval_kernel_refuses_an_approximation_over_other_parameters(data, approximation, fragment):
    model = LatentGaussianProcess()
    estimate = model.point_estimate(data, "map")
    with pytest.raises(ValueError, match=fragment):
        model.class_proba_interval_kernel(estimate, approximation, 0.89)
