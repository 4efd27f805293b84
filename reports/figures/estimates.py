"""Parameter estimates: the forest plot of posterior intervals with the point estimates and their Wald bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bayesclass.reports.figures._svg import ESTIMATE_COLORS, ESTIMATE_MARKERS, _figure, _style, to_svg

__all__ = ["forest_plot"]


def forest_plot(
    rows: Sequence[Mapping],
    *,
    markers: Mapping[str, str],
    interval_label: str = "89% ETI",
    wald_label: str = "89% Wald",
    max_rows: int = 40,
) -> str:
    """Posterior mean and interval per parameter, with every point estimate as a marker on the same axis.

    A point estimate whose rows carry its Wald interval (``<key>_low``, ``<key>_high``) gets its bar, in its
    colour, just below the posterior's interval, with its marker on it; the others' markers sit on the
    posterior's line.

    Parameters
    ----------
    rows : sequence of mapping
        As :func:`bayesclass.reports.comparison.parameter_comparison` returns them: ``parameter`` (the
        label), ``mean``, ``low``, ``high`` (``None`` without a posterior) and one key per point-estimate
        kind (float, or ``None`` where that estimate is absent: no marker is drawn).
    markers : mapping of str to str
        Point-estimate key -> legend label, e.g. ``{"map": "MAP", "mle": "MLE"}``; each key gets its own
        marker shape and colour. A key missing from the rows (an MLE that does not exist) counts as
        ``None`` in every row: no marker, and the legend reads "MLE (absent)".
    interval_label : str
        Legend label of the interval lines.
    wald_label : str
        Legend label of the Wald bars, after the estimate's label ("MAP 89% Wald").
    max_rows : int
        Only the first ``max_rows`` rows are drawn; the title then says "first 40 of 62 parameters".

    Returns
    -------
    str
        The SVG element; the figure grows by 0.22 inch per row.
    """
    from matplotlib.lines import Line2D

    if isinstance(rows, Mapping) or not isinstance(rows, Sequence) or len(rows) == 0:
        raise ValueError("rows must be a non-empty sequence of dicts (parameter_comparison(result))")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or not {"parameter", "mean", "low", "high"} <= set(row):
            raise ValueError(f"rows[{i}] must be a mapping with keys parameter, mean, low, high; got {row!r}")
    if not isinstance(markers, Mapping):
        raise ValueError(f"markers must be a mapping point-estimate key -> legend label, got {markers!r}")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ValueError(f"max_rows must be a positive integer, got {max_rows!r}")
    shown = list(rows[:max_rows])
    n = len(shown)
    positions = np.arange(n)[::-1]

    def values(key: str) -> np.ndarray:
        return np.array([np.nan if row.get(key) is None else float(row[key]) for row in shown])

    with _style():
        fig = _figure(7.0, 1.2 + 0.22 * n)
        ax = fig.add_subplot()
        handles = []
        mean, low, high = values("mean"), values("low"), values("high")
        has_interval = np.isfinite(low) & np.isfinite(high)
        if has_interval.any():
            ax.hlines(positions[has_interval], low[has_interval], high[has_interval], color=ESTIMATE_COLORS[0], lw=2)
            handles.append(Line2D([], [], color=ESTIMATE_COLORS[0], lw=2, label=f"posterior {interval_label}"))
        if np.isfinite(mean).any():
            ax.plot(mean, positions, "o", color=ESTIMATE_COLORS[0], ms=5, zorder=3)
            handles.append(Line2D([], [], color=ESTIMATE_COLORS[0], marker="o", ls="", label="posterior mean"))
        with_wald = [key for key in markers if np.isfinite(values(f"{key}_low")).any()]
        for j, (key, label) in enumerate(markers.items()):
            estimate = values(key)
            present = np.isfinite(estimate)
            color = ESTIMATE_COLORS[1 + j % (len(ESTIMATE_COLORS) - 1)]
            style: dict[str, Any] = {  # Line2D properties, of several types
                "marker": ESTIMATE_MARKERS[j % len(ESTIMATE_MARKERS)],
                "color": color,
                "ls": "",
                "mfc": "none",
                "ms": 6,
                "mew": 1.3,
            }
            where = positions.astype(float)
            if key in with_wald:  # its Wald bar below the posterior's interval, its marker on it
                where = positions - 0.3 * (with_wald.index(key) + 1) / len(with_wald)
                wald_low, wald_high = values(f"{key}_low"), values(f"{key}_high")
                bar = np.isfinite(wald_low) & np.isfinite(wald_high)
                ax.hlines(where[bar], wald_low[bar], wald_high[bar], color=color, lw=1.4)
                handles.append(Line2D([], [], color=color, lw=1.4, label=f"{label} {wald_label}"))
            if present.any():
                ax.plot(estimate[present], where[present], zorder=4, **style)
            handles.append(Line2D([], [], label=label if present.any() else f"{label} (absent)", **style))
        ax.axvline(0.0, color="0.7", lw=0.8, zorder=0)
        ax.set_yticks(positions, [str(row["parameter"]) for row in shown])
        ax.set_ylim(-0.7 if not with_wald else -0.85, n - 0.3)
        ax.grid(axis="x", color="0.92")
        ax.set_xlabel("value (model units)")
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=min(4, len(handles)), frameon=False)
        if len(rows) > max_rows:
            ax.set_title(f"first {max_rows} of {len(rows)} parameters", loc="right", fontsize=8)
    return to_svg(fig)
