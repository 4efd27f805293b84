"""The report's convergence table names every row by its own parameter element (issue 25).

arviz_stats 1.3.3 ``summary`` of a Dataset mixing the dims ``(class)`` and ``(feature, class)`` (a multiclass
logistic regression: ``intercept[class]``, ``weights[feature, class]``) attaches one variable's rows to another's
labels; the page then contradicts its own posterior table. Each row of the rendered convergence table must show
the posterior mean of the element its label names, computed here element by element.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation import report_evaluation
from bayesclass.inference.result import result_info
from bayesclass.reports.sections import Table, convergence_section


@pytest.fixture(scope="module")
def iris_logistic():
    """A multiclass logistic fit: 3 classes x 4 features, every class with its own weights."""
    sampler = SamplerSettings(draws=100, tune=100, chains=2, progressbar=False)
    return inference.fit("logistic", data.load("iris"), method="nuts", sampler=sampler, standardize=True, random_seed=0)


def test_every_row_of_the_convergence_table_shows_its_own_element(iris_logistic):
    posterior = iris_logistic["posterior"].to_dataset()
    assert set(posterior["weights"].dims) == {"chain", "draw", "feature", "class"}
    assert set(posterior["intercept"].dims) == {"chain", "draw", "class"}
    convergence = report_evaluation.convergence(iris_logistic, result_info(iris_logistic))
    # the section reads only the run's convergence data and its method
    summary = SimpleNamespace(method="nuts", method_description="NUTS", family="logistic", data_name="iris")
    run = SimpleNamespace(convergence=convergence, summary=summary)
    section = convergence_section(run)
    (table,) = [block for block in section.blocks if isinstance(block, Table) and block.header[0] == "parameter"]
    assert table.header[1] == "mean"
    shown = {row[0]: row[1] for row in table.rows}
    expected = {}
    for klass in posterior["class"].values:
        expected[f"intercept[{klass}]"] = float(posterior["intercept"].sel({"class": klass}).mean())
        for feature in posterior["feature"].values:
            element = posterior["weights"].sel({"class": klass, "feature": feature})
            expected[f"weights[{feature}, {klass}]"] = float(element.mean())
    # at most 20 rows are shown (the worst); each is one of the elements, with that element's mean
    assert shown and set(shown) <= set(expected)
    for label, mean in shown.items():
        assert float(mean) == pytest.approx(expected[label], rel=1e-3, abs=1e-4), label
    # the full table behind the section: every element, in order, with its own mean
    full = convergence.table
    assert sorted(full.index) == sorted(expected)
    np.testing.assert_allclose([full.loc[label, "mean"] for label in expected], list(expected.values()), rtol=1e-9)


# -- a latent GP (issue 40): its hyperparameters, one row per latent block, a forest of hyperparameters ------------


@pytest.fixture(scope="module")
def gp_fit():
    """The exact latent GP by Gibbs on 60 rows of seed 004: 3 hyperparameter elements and 60 latent values."""
    sampler = SamplerSettings(draws=200, chains=2, progressbar=False)
    return inference.fit("gp", data.load("seed004_gp", n=60), sampler=sampler, random_seed=1)


def test_the_convergence_table_of_a_latent_gp_shows_its_hyperparameters_and_the_latent_block(gp_fit):
    convergence = report_evaluation.convergence(gp_fit, result_info(gp_fit))
    summary = SimpleNamespace(method="gibbs", method_description="Gibbs", family="gp", data_name="seed004_gp")
    section = convergence_section(SimpleNamespace(convergence=convergence, summary=summary))
    (table,) = [block for block in section.blocks if isinstance(block, Table) and block.header[0] == "parameter"]
    full = inference.diagnose(gp_fit, full=True).table
    assert [row[0] for row in table.rows] == ["lengthscale[x]", "amplitude", "constant", "latent (60 elements)"]
    latent = full.loc[[f"latent[{i}]" for i in range(60)]]
    block_row = table.rows[-1]
    assert block_row[1:3] == ("-", "-")  # no mean or sd of a block
    assert block_row[3] == f"{latent['r_hat'].max():.4f}"
    assert block_row[4:6] == (f"{latent['ess_bulk'].min():.4g}", f"{latent['ess_tail'].min():.4g}")
    assert table.rows[1][3] == f"{full.loc['amplitude', 'r_hat']:.4f}"
    failing = int((latent["r_hat"] > 1.01).sum())
    low = int(((latent["ess_bulk"] < 400) | (latent["ess_tail"] < 400)).sum())
    assert f"{failing} with r_hat > 1.01 or n/a (largest at {latent['r_hat'].idxmax()})" in table.note
    smallest = latent[["ess_bulk", "ess_tail"]].min(axis=1).idxmin()
    assert f"{low} with bulk or tail ESS < 400 or n/a (smallest at {smallest})" in table.note
    assert table.note.startswith(f"63 parameter elements: {int((full['r_hat'] > 1.01).sum())} with r_hat > 1.01")
    assert table.note.endswith("Every element's row: diagnose with full=True.")
    assert table.caption.endswith("the elements of lengthscale, amplitude, constant, then one row per latent block")


def test_the_forest_of_a_latent_gp_draws_its_hyperparameters(gp_fit):
    estimates = report_evaluation.estimates(gp_fit, result_info(gp_fit), interval_prob=0.89)
    drawn = [row["parameter"] for panel in estimates.panels for row in panel.rows]
    assert sorted(drawn) == ["amplitude", "constant", "lengthscale[x]"] and estimates.forest_left_out == 0
    assert [row["parameter"] for row in estimates.rows] == ["lengthscale[x]", "amplitude", "constant"]
