"""Does stacking beat the best single family, and at which training size? Computed from a study's tidy table.

A study model with ``family = "stack"`` (:mod:`bayesclass.inference.studies.spec`) records in each cell the held-out
scores of the stack (kind ``"stack"``) and of each member's posterior (kind ``"member"``), all fitted on the cell's
training rows, and each member's weight (metric ``stack_weight``). :func:`stack_summary` compares, per data set,
stack and training size, the stack with the *best single family at that size*: the member whose mean score over
the repeats is best there, paired cell by cell (same training rows, same test rows). :func:`stack_weight_summary`
averages the weights. The study report renders both; nothing here draws or formats.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.evaluation.conclusions import difference_verdict

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = [
    "LOWER_IS_BETTER", "STACK_SUMMARY_COLUMNS", "TIE", "comparable_rows", "stack_summary", "stack_weight_summary",
]  # fmt: skip

#: the metrics a stack is compared by (lower is better for each)
LOWER_IS_BETTER = ("log_loss", "brier", "kl_to_truth")
#: a paired difference this small is rounding (a stack whose best member has weight 1 equals it): counted as 0
TIE = 1e-9
#: the columns of :func:`stack_summary`
STACK_SUMMARY_COLUMNS = [
    "dataset", "model", "size", "metric", "stack", "stack_mean", "best_member", "best_member_mean", "cells",
    "difference_mean", "difference_low", "difference_high", "difference_se", "stack_better", "verdict",
]  # fmt: skip


def comparable_rows(table):
    """The rows of ``table`` whose cell finished and did not fail the convergence verdict: what a study compares.

    A cell whose MCMC draws failed the verdict (``converged`` False: r_hat, ESS, divergences ... of
    :func:`bayesclass.inference.criticism.diagnostics.diagnose`) scores a posterior that may not be the posterior:
    it is left out of every comparison (paired differences, stack vs best family, interval coverage), and the
    study page counts it. Cells without a verdict (exact draws: ``converged`` None) are kept.

    Parameters
    ----------
    table : pandas.DataFrame
        A study's tidy table (:func:`bayesclass.inference.studies.runner.load`), or some of its rows.

    Returns
    -------
    pandas.DataFrame
        The rows with ``status`` "ok" (where the column is present) whose ``converged`` is not False.
    """
    kept = np.ones(len(table), dtype=bool)
    if "converged" in table:
        kept &= ~table["converged"].eq(False).to_numpy()
    if "status" in table:
        kept &= table["status"].eq("ok").to_numpy()
    return table[kept]


def stack_summary(table, *, metric: str = "log_loss"):
    """The stack against the best single family per data set, stack model and training size.

    Parameters
    ----------
    table : pandas.DataFrame
        A study's tidy table (:func:`bayesclass.inference.studies.runner.load`); rows of failed cells, and of cells
        that failed the convergence verdict (:func:`comparable_rows`), are ignored.
    metric : {"log_loss", "brier", "kl_to_truth"}, default "log_loss"
        The held-out metric compared (lower is better).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, model, size) with a stack: ``stack`` (its estimate label) and ``stack_mean``, the
        best member at that size (``best_member``: lowest mean over the cells; ties: the first by label) and
        ``best_member_mean``; over the ``cells`` where both are scored, the paired difference stack - best member
        (``difference_mean``, its smallest and largest cell, ``difference_se`` the standard error of the mean,
        NaN with one cell), ``stack_better`` the cells where the stack's score is lower, and ``verdict``:
        ``"stack better"`` / ``"best member better"`` where the mean difference is below / above 0 by a real
        difference (:func:`~bayesclass.inference.evaluation.conclusions.difference_verdict`: beyond twice its
        standard error, by its size alone with one cell, and beyond the metric's practical threshold),
        ``"negligible difference"`` beyond the noise but not the threshold, ``"equal"`` where every difference is
        0 (up to :data:`TIE`: the stack put weight 1 on that member), else ``"no clear difference"``. Empty (with these
        columns) where the study has no stack.

    Raises
    ------
    ValueError
        ``metric`` not among :data:`LOWER_IS_BETTER`, or ``table`` without the tidy table's columns.
    """
    if metric not in LOWER_IS_BETTER:
        raise ValueError(f"metric must be one of {', '.join(LOWER_IS_BETTER)} (lower is better), got {metric!r}")
    needed = {"dataset", "model", "size", "key", "estimate", "kind", "metric", "value", "status"}
    missing = sorted(needed - set(getattr(table, "columns", ())))
    if missing:
        raise ValueError(f"table must be a study's tidy table (bayesclass.study.load); it lacks the columns {missing}")
    table = comparable_rows(table)
    wanted = table[(table["metric"] == metric) & table["kind"].isin(["stack", "member"])]
    rows = []
    for (dataset, model, size), group in wanted.groupby(["dataset", "model", "size"], sort=True):
        stacks = group[group["kind"] == "stack"]
        for stack_label, stack_rows in stacks.groupby("estimate", sort=True):
            members = group[(group["kind"] == "member") & group["key"].isin(stack_rows["key"])]
            if members.empty:
                continue
            means = members.groupby("estimate", sort=True)["value"].agg(_mean)
            best = str(min(means.index, key=lambda label: (_order(means[label]), label)))
            stack_values = stack_rows.set_index("key")["value"]
            paired = members[members["estimate"] == best].set_index("key")["value"].rename("member")
            joined = pd.concat([stack_values.rename("stack"), paired], axis=1, join="inner").dropna()
            difference = (joined["stack"] - joined["member"]).to_numpy(dtype=float)
            rows.append(
                {
                    "dataset": dataset,
                    "model": model,
                    "size": int(size),
                    "metric": metric,
                    "stack": str(stack_label),
                    "stack_mean": _mean(stack_rows["value"]),
                    "best_member": best,
                    "best_member_mean": float(means[best]),
                    "cells": int(difference.size),
                    **_paired(difference, metric),
                }
            )
    return pd.DataFrame(rows, columns=STACK_SUMMARY_COLUMNS)


def stack_weight_summary(table):
    """Each member's weight in its stack per data set, stack model and training size, over the cells.

    Parameters
    ----------
    table : pandas.DataFrame
        A study's tidy table (:func:`bayesclass.inference.studies.runner.load`).

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset``, ``model``, ``size``, ``estimate`` (the member's row label), ``cells``, ``mean``,
        ``low``, ``high`` (smallest and largest cell); empty where the study has no stack.
    """
    columns = ["dataset", "model", "size", "estimate", "cells", "mean", "low", "high"]
    if "metric" not in getattr(table, "columns", ()):
        return pd.DataFrame(columns=columns)
    weights = table[(table["status"] == "ok") & (table["metric"] == "stack_weight")].dropna(subset=["value"])
    rows = [
        {
            "dataset": dataset,
            "model": model,
            "size": int(size),
            "estimate": estimate,
            "cells": int(group["key"].nunique()),
            "mean": float(group["value"].mean()),
            "low": float(group["value"].min()),
            "high": float(group["value"].max()),
        }
        for (dataset, model, size, estimate), group in weights.groupby(["dataset", "model", "size", "estimate"])
    ]
    return pd.DataFrame(rows, columns=columns)


def _mean(values) -> float:
    """The mean over cells, NaN left out; an infinite cell makes it infinite (kept, never dropped)."""
    array = np.asarray(values, dtype=float)
    array = array[~np.isnan(array)]
    return float(array.mean()) if array.size else math.nan


def _order(value: float) -> float:
    """A mean as a sort key: NaN (never scored) after every number, infinity included."""
    return math.inf if math.isnan(value) else value


def _paired(difference: np.ndarray, metric: str) -> dict:
    """Mean, range, standard error, wins and verdict of the paired differences stack - best member."""
    if difference.size == 0:
        nan = math.nan
        return dict.fromkeys(("difference_mean", "difference_low", "difference_high", "difference_se"), nan) | {
            "stack_better": 0,
            "verdict": "not compared",
        }
    difference = np.where(np.abs(difference) <= TIE, 0.0, difference)  # rounding: a member of weight 1 ties
    finite = bool(np.isfinite(difference).all())
    mean = float(difference.mean()) if finite else float(np.sum(difference))  # +-inf where a cell is infinite
    se = float(difference.std(ddof=1) / math.sqrt(difference.size)) if difference.size > 1 and finite else math.nan
    judged = difference_verdict(mean, 0.0 if math.isnan(se) else se, score=metric)  # one cell: its sign and size
    if not np.any(difference):
        verdict = "equal"  # the stack is its best member (weight 1) in every cell
    elif judged == "real":
        verdict = "stack better" if mean < 0 else "best member better"
    else:
        verdict = {"negligible": "negligible difference", "within noise": "no clear difference"}[judged]
    return {
        "difference_mean": mean,
        "difference_low": float(difference.min()),
        "difference_high": float(difference.max()),
        "difference_se": se,
        "stack_better": int((difference < 0).sum()),
        "verdict": verdict,
    }
