"""``bayesclass.report`` and ``bayesclass.format_comparison``: the evaluation step, then the renderer.

Reports only render (:mod:`bayesclass.reports`); what they show is computed once by
:func:`bayesclass.inference.evaluation.report_evaluation.evaluate_for_report` (and ``evaluate_comparison``).
These two functions compose the steps for the analyst and the CLI.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from bayesclass.data import Dataset
from bayesclass.inference.evaluation.report_evaluation import evaluate_comparison, evaluate_for_report
from bayesclass.inference.prediction.decisions import LossMatrix
from bayesclass.inference.prediction.predict import DEFAULT_INTERVAL_PROB

__all__ = ["format_comparison", "report"]


def report(
    results,
    data: Dataset | Mapping[str, Dataset] | None = None,
    *,
    loss: LossMatrix | None = None,
    features: Sequence[str] | None = None,
    baselines: Sequence[str] = (),
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    random_seed: int = 0,
    title: str | None = None,
    extra_warnings: Sequence[str] = (),
) -> str:
    """The HTML report of one or several fitted results.

    Parameters
    ----------
    results : xarray.DataTree, sequence of them, or mapping of label to DataTree
        Results of :func:`bayesclass.fit` (or :func:`bayesclass.load_result`). Labels default to
        ``"<model> (<method>)"``, numbered where they repeat.
    data : Dataset or mapping of split name to Dataset, optional
        Held-out rows to score (labels of the fitted classes). Without them: the validation rows when a run was
        fitted on the training part of :func:`bayesclass.train_validation_test_split` of a built-in data set (the
        split is reproduced from the result's recorded origin and checked against its fingerprint); otherwise the
        page says that no held-out scores exist and shows PSIS-LOO.
    loss : LossMatrix, optional
        Adds the Decisions section and each estimate's mean loss.
    features : sequence of two str, optional
        The two features of the decision-boundary plot (default: the data's two features when it has two).
    baselines : sequence of str
        The seeds' classical classifiers to score beside the estimates (:data:`bayesclass.models.baselines.BASELINES`).
    interval_prob : float
        Probability of every equal-tailed interval on the page (default 0.89).
    random_seed : int
        Seed of the replicated data (calibration bands, generative checks) and randomised baselines.
    title : str, optional
        The page title (default: the runs' models and data).
    extra_warnings : sequence of str
        Warnings raised before the report (e.g. by the fit that ``bayesclass compare`` just ran) to list verbatim.

    Returns
    -------
    str
        The page.

    Raises
    ------
    ValueError
        A result whose attrs do not pass :func:`bayesclass.inference.result.check_result` (altered or damaged file),
        held-out data of other classes, bad ``features``, ``interval_prob`` outside (0, 1).
    """
    from bayesclass import __version__
    from bayesclass.reports.html import render_report

    started = time.perf_counter()
    evaluation = evaluate_for_report(
        results,
        data,
        loss=loss,
        features=features,
        baselines=baselines,
        interval_prob=interval_prob,
        random_seed=random_seed,
        bayesclass_version=__version__,
    )
    return render_report(evaluation, title=title, extra_warnings=extra_warnings, started=started)


def format_comparison(
    result,
    heldout: Mapping[str, Dataset] | None = None,
    *,
    baselines: Sequence[str] = (),
    loss: LossMatrix | None = None,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    max_rows: int = 40,
    random_seed: int = 0,
) -> str:
    """The plain-text comparison printed by ``bayesclass compare``.

    Parameters side by side, then for each held-out split the scores of every estimate and baseline
    (:func:`bayesclass.inference.evaluation.heldout.evaluate`).
    """
    from bayesclass.reports.comparison import format_comparison as render

    data = evaluate_comparison(
        result, heldout, baselines=baselines, loss=loss, interval_prob=interval_prob, random_seed=random_seed
    )
    return render(data, max_rows=max_rows)
