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
