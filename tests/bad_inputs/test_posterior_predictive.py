"""Bad input: a saved result whose ``posterior_predictive`` group does not fit it is refused in one line.

:data:`POSTERIOR_PREDICTIVE_FILE_CASES`: a short exact fit of the Gaussian class-conditional model (replicated
labels and features), saved, then damaged as a file edited by hand or by another tool could be; ``bayesclass
diagnose --run`` must end with exit 2 and a one-line error naming what is wrong (never a traceback, never a
LOO-PIT computed from labels outside the classes).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import bayesclass as bc
from tests.bad_inputs.harness import assert_one_line_error, run

GROUP = "posterior_predictive"


def _edit(change: Callable[[xr.Dataset], xr.Dataset]) -> Callable[[xr.DataTree], None]:
    def damage(tree: xr.DataTree) -> None:
        tree[GROUP] = xr.DataTree(change(tree[GROUP].to_dataset()))

    return damage


def _label_outside_the_classes(group: xr.Dataset) -> xr.Dataset:
    labels = group["y"].values.copy()
    labels[0, 0, 0] = 7
    return group.assign(y=(group["y"].dims, labels))


def _nan_label(group: xr.Dataset) -> xr.Dataset:
    labels = group["y"].values.astype(float)
    labels[1, 3, 5] = np.nan
    return group.assign(y=(group["y"].dims, labels))


def _a_row_short(group: xr.Dataset) -> xr.Dataset:
    return group.isel(obs=slice(1, None))


def _draws_transposed(group: xr.Dataset) -> xr.Dataset:
    return group.assign(y=group["y"].transpose("obs", "chain", "draw"))


def _nan_feature(group: xr.Dataset) -> xr.Dataset:
    values = group["X"].values.copy()
    values[2, 4, 1] = np.nan
    return group.assign(X=(group["X"].dims, values))


def _another_valid_label(group: xr.Dataset) -> xr.Dataset:
    labels = group["y"].values.copy()
    labels[0, 0, 0] = 1 - labels[0, 0, 0]
    return group.assign(y=(group["y"].dims, labels))


def _without_group(tree: xr.DataTree) -> None:
    del tree[GROUP]


def _without_record(tree: xr.DataTree) -> None:
    del tree.attrs["posterior_predictive"]


def _record_with_an_unknown_key(tree: xr.DataTree) -> None:
    record = json.loads(tree.attrs["posterior_predictive"])
    tree.attrs["posterior_predictive"] = json.dumps({**record, "thin": 2})


#: (id, damage to a saved gcc exact fit, exit code, fragment of the one-line error)
POSTERIOR_PREDICTIVE_FILE_CASES: list[tuple[str, Callable[[xr.DataTree], None], int, str]] = [
    ("a replicated label outside the classes", _edit(_label_outside_the_classes), 2,
     "group posterior_predictive y must hold class codes 0..1 (attr class_names), like observed_data y; it holds "
     "dtype int8 from 0 to 7"),
    ("a NaN replicated label", _edit(_nan_label), 2,
     "group posterior_predictive y must hold class codes 0..1 (attr class_names), like observed_data y; it holds "
     "dtype float64 from 0.0 to 1.0, NaN among them"),
    ("one training row fewer", _edit(_a_row_short), 2,
     "group posterior_predictive y has sizes {'chain': 2, 'draw': 30, 'obs': 59}; it needs {'chain': 2, 'draw': "
     "30, 'obs': 60}"),
    ("labels stored (obs, chain, draw)", _edit(_draws_transposed), 2,
     "group posterior_predictive y has sizes {'obs': 60, 'chain': 2, 'draw': 30}; it needs"),
    ("a NaN replicated feature", _edit(_nan_feature), 2,
     "group posterior_predictive X holds values that are not finite numbers"),
    ("one label changed to another class", _edit(_another_valid_label), 2,
     "group posterior_predictive does not match its SHA-256 (attr posterior_predictive_digest)"),
    ("the group deleted, its record kept", _without_group, 2,
     "attr posterior_predictive records a group posterior_predictive that is missing"),
    ("the record deleted, the group kept", _without_record, 2,
     "group posterior_predictive has no attr posterior_predictive (its seed and caps) beside it"),
    ("a record with an unknown key", _record_with_an_unknown_key, 2,
     "attr posterior_predictive: it should hold exactly the keys random_seed, feature_replicates"),
]  # fmt: skip


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    model = bc.GaussianClassConditional(prior=bc.GaussianClassConditionalPrior(covariance_prior="inverse_wishart"))
    data = bc.load("seed001_gaussians", n=60, random_seed=2)
    sampler = bc.SamplerSettings(draws=30, chains=2, progressbar=False)
    path = tmp_path_factory.mktemp("posterior_predictive") / "exact.nc"
    bc.save_result(bc.fit(model, data, method="exact", sampler=sampler, random_seed=0), path)
    return path


def test_the_undamaged_file_is_diagnosed(saved, capsys):
    assert run("diagnose", "--run", str(saved)) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("damage", "code", "fragment"),
    [row[1:] for row in POSTERIOR_PREDICTIVE_FILE_CASES],
    ids=[row[0] for row in POSTERIOR_PREDICTIVE_FILE_CASES],
)
def test_a_damaged_posterior_predictive_group_is_refused_in_one_line(saved, tmp_path, capsys, damage, code, fragment):
    tree = xr.open_datatree(saved)
    tree.load()
    tree.close()
    damage(tree)
    tree.to_netcdf(tmp_path / "damaged.nc")
    assert run("diagnose", "--run", str(tmp_path / "damaged.nc")) == code
    assert_one_line_error(capsys.readouterr().err, fragment)
