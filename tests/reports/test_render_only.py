"""Reports render only: no module of reports/ fits, samples, predicts or draws random numbers, and what they
render (the evaluation data of inference) is plain: picklable, no result DataTree inside."""

from __future__ import annotations

import ast
import dataclasses
import pickle
from pathlib import Path

import numpy as np
import pytest

import bayesclass.reports
from bayesclass import data, inference
from bayesclass.inference.evaluation import report_data as rd
from bayesclass.inference.evaluation.report_evaluation import evaluate_comparison, evaluate_for_report
from bayesclass.inference.prediction.decisions import LossMatrix
from bayesclass.models import GaussianClassConditional, GaussianClassConditionalPrior

REPORTS = Path(bayesclass.reports.__file__).parent
#: what reports may not import: the engines (fitting, sampling), prediction, criticism (checks that draw)
FORBIDDEN_MODULES = (
    "bayesclass.inference.engines",
    "bayesclass.inference.prediction",
    "bayesclass.inference.criticism",
    "bayesclass.inference.evaluation.heldout",
    "bayesclass.inference.evaluation.report_evaluation",
    "bayesclass.inference.evaluation.report_plots",
    "bayesclass.inference.evaluation.scores",
    "bayesclass.models",
    "random",
)
#: calls that fit, predict or draw random numbers
FORBIDDEN_CALLS = {"fit", "predict", "diagnose", "loo", "evaluate", "posterior_predictive_check", "default_rng"}
#: the figure modules draw (the one seeded replicate draw of a reliability diagram lives there); checked elsewhere
FIGURES = {"figures.py", "figures"}


def _report_modules() -> list[Path]:
    return [
        path
        for path in sorted(REPORTS.rglob("*.py"))
        if not ({path.name, *path.relative_to(REPORTS).parts[:1]} & FIGURES)
    ]


def _imports(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return names


@pytest.mark.parametrize("path", _report_modules(), ids=lambda path: path.name)
def test_report_modules_import_nothing_that_fits_samples_or_predicts(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = _imports(tree)
    bad = [name for name in imported if any(name == m or name.startswith(f"{m}.") for m in FORBIDDEN_MODULES)]
    assert not bad, f"{path.name} imports {bad}"
    assert "bayesclass" not in imported, f"{path.name} imports the top-level package (an upward import)"
    called = {
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not called & FORBIDDEN_CALLS, f"{path.name} calls {called & FORBIDDEN_CALLS}"
    assert ".attrs" not in path.read_text(encoding="utf-8"), f"{path.name} reads attrs (use result_info)"


def test_report_modules_never_branch_on_a_family_name():
    for path in _report_modules():
        text = path.read_text(encoding="utf-8")
        for family in ("logistic", "naive_bayes", "gcc", "gp"):
            assert f'== "{family}"' not in text and f"== '{family}'" not in text, (path.name, family)


def _plain(value, where: str) -> None:
    """Recursively: no DataTree anywhere in ``value``."""
    import xarray as xr

    assert not isinstance(value, xr.DataTree), where
    if dataclasses.is_dataclass(value):
        for item in dataclasses.fields(value):
            _plain(getattr(value, item.name), f"{where}.{item.name}")
    elif isinstance(value, dict):
        for key, item in value.items():
            _plain(item, f"{where}[{key!r}]")
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            _plain(item, f"{where}[{index}]")


@pytest.fixture(scope="module")
def gcc_evaluation():
    dataset = data.seed001_gaussians(80, random_seed=3)
    train, validation, _ = data.train_validation_test_split(dataset, random_seed=0)
    model = GaussianClassConditional(
        covariance="shared", prior=GaussianClassConditionalPrior(covariance_prior="inverse_wishart")
    )
    result = inference.fit(model, train, method="exact", random_seed=1)
    loss = LossMatrix([[0, 1], [3, 0]], train.class_names)
    return result, evaluate_for_report(result, loss=loss, baselines=("knn",))


def test_the_evaluation_data_is_plain_and_picklable(gcc_evaluation):
    result, evaluation = gcc_evaluation
    assert isinstance(evaluation, rd.ReportData)
    _plain(evaluation, "evaluation")
    again = pickle.loads(pickle.dumps(evaluation))
    (run,) = again.runs
    assert run.heldout and run.heldout[0].split == "validation"  # reproduced from the typed origin
    assert run.decisions is not None and run.generative is not None and run.convergence is not None
    assert isinstance(run.boundary, rd.Boundary) and run.boundary.numeric
    assert run.boundary.derived is not None and run.boundary.derived.title.startswith("Linear discriminants")
    np.testing.assert_array_equal(run.heldout[0].table.values, evaluation.runs[0].heldout[0].table.values)
    comparison = evaluate_comparison(result)
    _plain(comparison, "comparison")
    pickle.loads(pickle.dumps(comparison))


def test_the_page_renders_from_the_data_alone(gcc_evaluation, monkeypatch):
    """Rendering calls no model, predictor or sampler: the page comes from the pickled data."""
    from bayesclass.inference.prediction import predict as prediction
    from bayesclass.reports.html import render_report

    _, evaluation = gcc_evaluation
    restored = pickle.loads(pickle.dumps(evaluation))

    def refuse(*args, **kwargs):
        raise AssertionError("rendering predicted")

    monkeypatch.setattr(prediction, "predict", refuse)
    page = render_report(restored)
    assert "Decision boundary" in page and "Decisions" in page and "Held-out scores on validation" in page
