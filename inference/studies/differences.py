"""Is the posterior better than each plug-in, and at which training size? Computed from a study's tidy table.

Every cell of a study scores its posterior and each point estimate's plug-in on the same test rows after the same
fit, so a difference posterior - plug-in is paired cell by cell. :func:`posterior_differences` summarises those
differences per data set, model, metric, plug-in and training size; the study report draws them, lists them and
words its conclusion from them. Nothing here draws or formats.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.evaluation.conclusions import difference_verdict
from bayesclass.inference.studies.stack_summary import TIE, comparable_rows

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = ["DIFFERENCE_COLUMNS", "DIFFERENCE_METRICS", "posterior_differences"]

#: the metrics compared (lower is better for each)
DIFFERENCE_METRICS = ("log_loss", "brier", "kl_to_truth")
#: the columns of :func:`posterior_differences`
DIFFERENCE_COLUMNS = [
    "dataset", "model", "metric", "estimate", "kind", "size", "cells", "compared", "infinite", "mean", "low", "high",
    "se", "posterior_better", "verdict",
]  # fmt: skip


def posterior_differences(ok):
    """The posterior minus each plug-in, paired by cell, per data set, model, metric, plug-in and training size.

    Parameters
    ----------
    ok : pandas.DataFrame
        The rows of a study's tidy table (:func:`bayesclass.inference.studies.runner.load`); those of failed cells
        and of cells that failed the convergence verdict are left out
        (:func:`~bayesclass.inference.studies.stack_summary.comparable_rows`).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, model, metric, estimate, size) where the posterior and the plug-in ``estimate`` (of
        ``kind``: a point estimate kind, or ``"baseline"``) are scored in the same cells: ``cells`` paired, ``compared``
        those where both scores are numbers (a plug-in without probabilities has NaN), ``infinite`` those where the
        difference is infinite (an observed class given probability 0), ``mean``, ``low`` and ``high`` of the
        differences posterior - plug-in over the cells (``-inf`` where the plug-in's score is infinite and the
        posterior's is not), ``se`` the standard error of the mean (NaN with one cell or an infinite difference),
        ``posterior_better`` the cells where the posterior's score is lower, and ``verdict``: ``"posterior better"`` /
        ``"plug-in better"`` where the mean is below / above 0 by a real difference
        (:func:`~bayesclass.inference.evaluation.conclusions.difference_verdict`: more than twice its standard error
        AND more than the metric's practical threshold; an infinite mean by its sign), ``"negligible difference"``
        beyond twice the standard error but within the threshold, ``"equal"`` where every difference is 0 (up to
        :data:`~bayesclass.inference.studies.stack_summary.TIE`), ``"one cell"`` with a single cell, else ``"no clear
        difference"``. Rows are sorted by data set, model, metric, plug-in and size.
    """
    rows = []
    ok = comparable_rows(ok)
    for (dataset, model, metric), subset in ok[ok["metric"].isin(DIFFERENCE_METRICS)].groupby(
        ["dataset", "model", "metric"], sort=True
    ):
        posterior = subset[subset["kind"] == "posterior"].set_index("key")["value"]
        if posterior.empty:
            continue
        for estimate, plugin in subset[subset["kind"] != "posterior"].groupby("estimate", sort=True):
            paired = plugin.set_index("key")[["value", "size"]].join(posterior.rename("posterior"), how="inner")
            paired["difference"] = paired["posterior"] - paired["value"]
            kind = str(plugin["kind"].iloc[0])
            for size, at_size in paired.groupby("size", sort=True):
                differences = at_size["difference"].to_numpy(float)
                rows.append([dataset, model, metric, estimate, kind, *_row(int(size), differences, metric)])
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)


def _row(size: int, differences: np.ndarray, metric: str) -> list:
    defined = differences[~np.isnan(differences)]
    cells, compared, infinite = differences.size, defined.size, int(np.isinf(differences).sum())
    if compared == 0:
        return [size, cells, 0, 0, *([math.nan] * 4), 0, "not compared"]
    mean, low, high = float(defined.mean()), float(defined.min()), float(defined.max())
    finite = np.isfinite(defined).all()
    se = float(defined.std(ddof=1) / math.sqrt(compared)) if compared > 1 and finite else math.nan
    better = int((defined < -TIE).sum())
    if np.all(np.abs(defined) <= TIE):
        verdict = "equal"
    elif not math.isfinite(mean):
        verdict = "posterior better" if mean < 0 else "plug-in better"
    elif compared == 1:
        verdict = "one cell"
    else:
        judged = difference_verdict(mean, se, score=metric)
        if judged == "real":
            verdict = "posterior better" if mean < 0 else "plug-in better"
        else:
            verdict = "negligible difference" if judged == "negligible" else "no clear difference"
    return [size, cells, compared, infinite, mean, low, high, se, better, verdict]
