"""The convergence table of a latent GP (issue 40): its hyperparameters, and one row per latent block.

A latent GP's ``latent`` has one element per training row (HSGP: ``basis_weight``, one per basis function); the
table a person reads keeps the hyperparameters' rows and condenses each block to one row of its worst values, how
many of its elements fail and which is worst. The numbers of that row are checked against arviz_stats' own
``rhat``/``ess`` of the block, computed here; the verdict is the full table's, and a failing element of the block
still fails it.
"""

from __future__ import annotations

import math
import warnings

import arviz_stats as azs
import numpy as np
import pytest

from bayesclass import data
from bayesclass.data.constraints import InvalidValueError
from bayesclass.inference import MAX_R_HAT, MIN_ESS, SamplerSettings, diagnose, fit
from bayesclass.models import LatentGaussianProcess

SAMPLER = SamplerSettings(draws=200, chains=2, progressbar=False)
HYPERPARAMETER_ROWS = ["lengthscale[x]", "amplitude", "constant"]


@pytest.fixture(scope="module")
def gp_fit():
    """The exact latent GP by Gibbs on 60 rows of seed 004: 3 hyperparameter elements and 60 latent values."""
    return fit(LatentGaussianProcess(), data.load("seed004_gp", n=60), sampler=SAMPLER, random_seed=1)


def _block_statistics(result, name: str):
    """Per element of the block ``name``: arviz_stats' r_hat, bulk and tail ESS and MCSE of the mean, and labels."""
    block = result["posterior"].to_dataset()[[name]]
    (dim,) = [dim for dim in block[name].dims if dim not in ("chain", "draw")]
    labels = [f"{name}[{value}]" for value in block[dim].values]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        values = [
            azs.rhat(block)[name].values,
            azs.ess(block, method="bulk")[name].values,
            azs.ess(block, method="tail")[name].values,
            azs.mcse(block, method="mean")[name].values,
        ]
    return (*values, labels)


def _check_block_row(report, result, name: str) -> None:
    """The block's row holds the worst values, the failing counts and the worst elements of its elements."""
    r_hat, bulk, tail, mcse, labels = _block_statistics(result, name)
    row = report.table.loc[f"{name} ({len(labels)} elements)"]
    np.testing.assert_allclose(
        [row["r_hat"], row["ess_bulk"], row["ess_tail"], row["mcse_mean"]],
        [np.max(r_hat), np.min(bulk), np.min(tail), np.max(mcse)],
        rtol=1e-12,
    )
    assert row["elements"] == len(labels)
    assert row["r_hat_failing"] == int(np.sum(~(r_hat <= MAX_R_HAT)))
    assert row["ess_failing"] == int(np.sum(~((bulk >= MIN_ESS) & (tail >= MIN_ESS))))
    assert row["worst_element"] == labels[int(np.argmax(r_hat))]
    assert row["lowest_ess_element"] == labels[int(np.argmin(np.minimum(bulk, tail)))]
    assert all(math.isnan(row[column]) for column in ("mean", "sd", "eti89_lb", "eti89_ub"))  # no mean of a block


def test_the_table_shows_the_hyperparameters_and_one_row_of_worst_values_per_block(gp_fit):
    report, full = diagnose(gp_fit), diagnose(gp_fit, full=True)
    assert list(report.table.index) == [*HYPERPARAMETER_ROWS, "latent (60 elements)"]
    # the hyperparameters' rows are the full table's, with their own failing flags
    hyperparameters = report.table.loc[HYPERPARAMETER_ROWS]
    np.testing.assert_array_equal(hyperparameters[full.table.columns], full.table.loc[HYPERPARAMETER_ROWS])
    assert (hyperparameters["elements"] == 1).all() and (hyperparameters["worst_element"] == "").all()
    np.testing.assert_array_equal(hyperparameters["r_hat_failing"], ~(hyperparameters["r_hat"] <= MAX_R_HAT))
    _check_block_row(report, gp_fit, "latent")


def test_full_lists_every_element_and_the_verdict_is_the_same(gp_fit):
    report, full = diagnose(gp_fit), diagnose(gp_fit, full=True)
    assert list(full.table.index) == [*HYPERPARAMETER_ROWS, *(f"latent[{i}]" for i in range(60))]
    assert full.table is full.element_table
    np.testing.assert_array_equal(report.element_table, full.table)
    for field in ("passed", "failures", "failed_checks", "advice", "notes", "unavailable", "applies"):
        assert getattr(report, field) == getattr(full, field), field
    worst = ("max_r_hat", "min_ess_bulk", "min_ess_tail", "max_mcse_mean")
    np.testing.assert_array_equal([getattr(report, f) for f in worst], [getattr(full, f) for f in worst])
    # and the worst values over the whole table are the condensed table's worst values
    assert report.max_r_hat == report.table["r_hat"].max() and report.min_ess_tail == report.table["ess_tail"].min()


@pytest.mark.parametrize("how", ["shifted chain", "frozen element"])
def test_one_failing_latent_element_fails_the_verdict_and_is_named(gp_fit, how):
    """A block's element that fails (r_hat far above 1.01, or undefined) fails the verdict as before and is the
    block's worst element: condensing hides no failure."""
    result = gp_fit.copy(deep=True)
    posterior = result["posterior"].to_dataset()
    latent = posterior["latent"].copy()
    if how == "shifted chain":
        latent[1, :, 17] += 50.0
    else:
        latent[:, :, 17] = 0.25
    result["posterior"] = posterior.assign(latent=latent)
    with np.errstate(all="ignore"):
        report, full = diagnose(result), diagnose(result, full=True)
    assert not report.passed and "r_hat" in report.failed_checks and report.failures == full.failures
    row = report.table.loc["latent (60 elements)"]
    assert row["worst_element"] == "latent[17]"
    assert row["r_hat_failing"] >= 1
    if how == "frozen element":
        assert math.isnan(row["r_hat"]) and math.isnan(report.max_r_hat)
        assert "1 of 63 parameter elements (latent[17]) take one value" in str(report.unavailable[0])
    else:
        assert row["r_hat"] == report.max_r_hat > 1.5
    _check_block_row(report, result, "latent")


def test_the_hsgp_basis_weights_are_one_row_too():
    result = fit(
        LatentGaussianProcess(approximation="hsgp"), data.load("seed004_gp", n=60), sampler=SAMPLER, random_seed=1
    )
    report = diagnose(result)
    n_basis = result["posterior"].sizes["basis"]
    assert list(report.table.index) == [*HYPERPARAMETER_ROWS, f"basis_weight ({n_basis} elements)"]
    _check_block_row(report, result, "basis_weight")


def test_a_family_without_latent_blocks_shows_every_element():
    """Naive Bayes declares no summary parameters: nothing to condense, the table is the full one."""
    result = fit("naive_bayes", data.load("seed001_gaussians", n=40), method="exact", sampler=SAMPLER, random_seed=1)
    report = diagnose(result)
    assert report.table is report.element_table
    assert len(report.table) == sum(v.size // 400 for v in result["posterior"].to_dataset().values())


@pytest.mark.parametrize("value", ["yes", 1, None, "False"])
def test_full_must_be_true_or_false(gp_fit, value):
    with pytest.raises(InvalidValueError, match=f"^full must be True or False, got {value!r}$"):
        diagnose(gp_fit, full=value)
