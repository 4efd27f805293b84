"""Predictive performance: score bars of several estimates, the Pareto k diagnostic of PSIS-LOO."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from bayesclass.reports.figures._svg import ESTIMATE_COLORS, MAX_VECTOR_POINTS, _array, _figure, _style, to_svg

__all__ = ["pareto_k_plot", "score_bars"]


def score_bars(
    scores: Mapping[str, Mapping[str, tuple[float, float | None]]],
    *,
    metrics: Sequence[tuple[str, str]],
) -> str:
    """Scores of several estimates side by side: one panel per metric, one horizontal bar per estimate.

    Parameters
    ----------
    scores : mapping
        Estimate label -> metric key -> ``(value, standard_error)``; the standard error may be ``None``
        (no error bar). A metric missing for an estimate counts as NaN.
    metrics : sequence of (str, str)
        ``(metric key, axis label)`` pairs, one panel each, in order.

    Returns
    -------
    str
        The SVG element. Nothing is dropped: an infinite value (the log loss of an estimate that gives
        an observed class probability 0) is a hatched bar to the end of the axis labelled "inf", a NaN
        value the text "n/a".
    """
    if not isinstance(scores, Mapping) or not scores:
        raise ValueError("scores must be a non-empty mapping: estimate label -> metric -> (value, standard error)")
    if isinstance(metrics, str) or not metrics:
        raise ValueError("metrics must be a non-empty sequence of (metric key, axis label) pairs")
    for pair in metrics:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"metrics must hold (metric key, axis label) pairs; got {pair!r}")
    labels = list(scores)
    table = {}
    for label in labels:
        per_metric = scores[label]
        if not isinstance(per_metric, Mapping):
            raise ValueError(f"scores[{label!r}] must be a mapping metric -> (value, standard error)")
        for key, _ in metrics:
            entry = per_metric.get(key, (math.nan, None))
            if not isinstance(entry, tuple | list) or len(entry) != 2:
                raise ValueError(f"scores[{label!r}][{key!r}] must be a (value, standard error) pair; got {entry!r}")
            value = math.nan if entry[0] is None else float(entry[0])
            error = None if entry[1] is None or not math.isfinite(float(entry[1])) else float(entry[1])
            table[label, key] = (value, error)
    n = len(labels)
    positions = np.arange(n)[::-1]
    with _style():
        fig = _figure(max(3.0, 2.6 * len(metrics)), 0.9 + 0.32 * n)
        axes = fig.subplots(1, len(metrics), sharey=True, squeeze=False)[0]
        for ax, (key, axis_label) in zip(axes, metrics, strict=True):
            entries = [table[label, key] for label in labels]
            finite = [(v, e or 0.0) for v, e in entries if math.isfinite(v)]
            low = min([0.0] + [v - e for v, e in finite])
            high = max([0.0] + [v + e for v, e in finite])
            if high == low:
                high = low + 1.0
            top = high + 0.15 * (high - low)
            bottom = low - (0.15 * (high - low) if low < 0 else 0.0)
            for j, (position, (value, error)) in enumerate(zip(positions, entries, strict=True)):
                color = ESTIMATE_COLORS[j % len(ESTIMATE_COLORS)]
                if math.isfinite(value):
                    ax.barh(position, value, color=color, alpha=0.8, height=0.6)
                    if error is not None:
                        ax.errorbar(value, position, xerr=error, color="black", capsize=3, lw=1)
                elif math.isinf(value):
                    end = top if value > 0 else bottom
                    ax.barh(position, end, color=color, alpha=0.35, height=0.6, hatch="//", edgecolor="black")
                    ax.text(
                        end,
                        position,
                        "inf" if value > 0 else "-inf",
                        ha="right" if value > 0 else "left",
                        va="center",
                        fontweight="bold",
                    )
                else:
                    ax.text(0.0, position, " n/a", ha="left", va="center", color="0.3", style="italic")
            ax.set_xlim(bottom, top)
            ax.set_xlabel(axis_label)
            ax.axvline(0.0, color="0.5", lw=0.8)
            ax.grid(axis="x", color="0.92")
        axes[0].set_yticks(positions, labels)
    return to_svg(fig)


def pareto_k_plot(pareto_k: np.ndarray, *, threshold: float = 0.7) -> str:
    """The Pareto k diagnostic of PSIS-LOO per row, with the threshold line and the rows above it.

    Parameters
    ----------
    pareto_k : numpy.ndarray
        Shape (n,): the k of each row (``LooSummary`` / ``arviz_stats.loo``'s ``pareto_k``).
    threshold : float
        Rows with k above it (ArviZ's 0.7 for any sample size above ~2,000 draws) are drawn in red,
        labelled with their row index when there are at most 10, and counted in the legend.

    Returns
    -------
    str
        The SVG element; more than :data:`MAX_VECTOR_POINTS` points below the threshold are rasterized.
    """
    k = _array(pareto_k, "pareto_k", 1, "(n,): one k per row")
    if k.size == 0:
        raise ValueError("pareto_k must have shape (n,) with n >= 1; got an empty array")
    threshold = float(threshold)
    index = np.arange(k.size)
    above = k > threshold
    with _style():
        fig = _figure(7.0, 2.8)
        ax = fig.add_subplot()
        ax.scatter(
            index[~above],
            k[~above],
            s=8,
            color=ESTIMATE_COLORS[0],
            alpha=0.7,
            lw=0,
            rasterized=bool((~above).sum() > MAX_VECTOR_POINTS),
            label=f"k <= {threshold:g}: {int((~above).sum())} rows",
        )
        ax.scatter(
            index[above],
            k[above],
            s=22,
            color="#d62728",
            marker="x",
            label=f"k > {threshold:g}: {int(above.sum())} rows",
        )
        if 0 < above.sum() <= 10:
            for i in index[above]:
                ax.annotate(str(i), (i, k[i]), textcoords="offset points", xytext=(3, 3), fontsize=7, color="#d62728")
        ax.axhline(threshold, color="#d62728", ls="--", lw=1)
        ax.text(1.0, threshold, f" k = {threshold:g}", transform=ax.get_yaxis_transform(), va="center", color="#d62728")
        ax.set_xlabel("row")
        ax.set_ylabel("Pareto k")
        # above the axes: inside, it covered the labelled rows of high k
        ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, frameon=False)
    return to_svg(fig)
