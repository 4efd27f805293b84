"""Parameter estimates: the forest plot of posterior intervals with the point estimates and their Wald bars.

One panel per parameter group (:class:`~bayesclass.inference.evaluation.report_data.ParameterPanel`: a model
variable in one unit, or standardised where its elements' units differ, as computed by
:func:`~bayesclass.inference.evaluation.parameters.parameter_panels`), each with its own x axis and the unit in
its label, so a variance of 3e5 g^2 no longer squeezes a class probability of 0.2 to a point. The legend is one
figure-level legend above the panels (it cannot overlap an axis), the title above it.

Why matplotlib and not ``arviz_plots.plot_forest``: ``plot_forest`` (arviz_plots 1.x) computes its intervals
and point estimate from the draws of ONE DataTree group on ONE shared x axis (its "forest" column), and its
``model`` dimension compares several posteriors' draws, not a posterior with point estimates that have no draws.
Our rows carry MAP/MLE values and their Wald intervals (from the stored covariance), derived quantities
computed per estimate, a standardised scale where units differ, and results with no posterior at all (a MAP fit):
overlaying these on its PlotCollection means re-deriving its private y positions per label and one call (one
figure) per panel, so the plot is drawn here, with the report's style (:mod:`._svg`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bayesclass.inference.evaluation.parameters import MAX_FOREST_PARAMETERS
from bayesclass.reports.figures._svg import ESTIMATE_COLORS, ESTIMATE_MARKERS, _figure, _style, to_svg

__all__ = ["MAX_PANEL_ROWS", "forest_plot"]

#: a panel draws at most this many rows (its first); the report's panels hold at most this many rows in all
#: (:func:`~bayesclass.inference.evaluation.parameters.forest_rows` chose them), so it cuts none of theirs
MAX_PANEL_ROWS = MAX_FOREST_PARAMETERS
#: height of one row and the room of a panel's title and x label, in inches
_ROW_HEIGHT, _PANEL_ROOM = 0.2, 0.75
#: the title's lines are wrapped at this many characters (the figure's 7 inches hold about 90 in bold 10 pt)
_TITLE_CHARACTERS = 80


def _panels(panels: Sequence[Any]) -> list[tuple[str, str, list[Mapping]]]:
    """``(title, axis label, rows)`` per panel; a plain sequence of rows is one panel in the model's units."""
    if isinstance(panels, Mapping) or not isinstance(panels, Sequence) or len(panels) == 0:
        raise ValueError("rows must be a non-empty sequence of dicts (parameter_comparison(result)) or of panels")
    if all(isinstance(row, Mapping) for row in panels):
        out = [("", "value (model units)", list(panels))]
    else:
        out = []
        for i, panel in enumerate(panels):
            rows = getattr(panel, "rows", None)
            if not isinstance(rows, Sequence) or isinstance(rows, Mapping) or len(rows) == 0:
                raise ValueError(f"panels[{i}] must be a ParameterPanel with non-empty rows; got {panel!r}")
            out.append((str(panel.title), str(panel.axis_label), list(rows)))
    for title, _, rows in out:
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping) or not {"parameter", "mean", "low", "high"} <= set(row):
                where = f"panel {title!r} " if title else ""
                raise ValueError(
                    f"{where}rows[{i}] must be a mapping with keys parameter, mean, low, high; got {row!r}"
                )
    return out


def _values(rows: Sequence[Mapping], key: str) -> np.ndarray:
    return np.array([np.nan if row.get(key) is None else float(row[key]) for row in rows])


def _marker_style(j: int) -> dict[str, Any]:
    """The Line2D properties of the ``j``-th point estimate's marker (of several types)."""
    return {
        "marker": ESTIMATE_MARKERS[j % len(ESTIMATE_MARKERS)],
        "color": ESTIMATE_COLORS[1 + j % (len(ESTIMATE_COLORS) - 1)],
        "ls": "",
        "mfc": "none",
        "ms": 6,
        "mew": 1.3,
    }


def _tick_label(row: Mapping, titled: bool) -> str:
    """The row's label; under a panel titled with its variable, its element only ("Adelie, bill_length_mm")."""
    label, variable = str(row["parameter"]), row.get("variable")
    if titled and isinstance(variable, str) and label.startswith(f"{variable}[") and label.endswith("]"):
        return label[len(variable) + 1 : -1]
    return label


def _draw_panel(ax, rows: Sequence[Mapping], markers: Mapping[str, str], with_wald: list[str], titled: bool) -> None:
    """One panel: the posterior's interval and mean per row, each estimate's marker and Wald bar below it."""
    n = len(rows)
    positions = np.arange(n)[::-1].astype(float)
    mean, low, high = _values(rows, "mean"), _values(rows, "low"), _values(rows, "high")
    has_interval = np.isfinite(low) & np.isfinite(high)
    ax.hlines(positions[has_interval], low[has_interval], high[has_interval], color=ESTIMATE_COLORS[0], lw=2)
    ax.plot(mean, positions, "o", color=ESTIMATE_COLORS[0], ms=5, zorder=3)
    for j, key in enumerate(markers):
        style = _marker_style(j)
        where = positions
        if key in with_wald:  # its Wald bar below the posterior's interval, its marker on it
            where = positions - 0.3 * (with_wald.index(key) + 1) / len(with_wald)
            wald_low, wald_high = _values(rows, f"{key}_low"), _values(rows, f"{key}_high")
            bar = np.isfinite(wald_low) & np.isfinite(wald_high)
            ax.hlines(where[bar], wald_low[bar], wald_high[bar], color=style["color"], lw=1.4)
        estimate = _values(rows, key)
        present = np.isfinite(estimate)
        if present.any():
            ax.plot(estimate[present], where[present], zorder=4, **style)
    low_x, high_x = ax.get_xlim()
    if low_x < 0.0 < high_x:  # zero where it is in range, never stretching the axis to reach it
        ax.axvline(0.0, color="0.7", lw=0.8, zorder=0)
    ax.set_yticks(positions, [_tick_label(row, titled) for row in rows])
    ax.set_ylim(-0.7 if not with_wald else -0.85, n - 0.3)
    ax.grid(axis="x", color="0.92")


def _legend_handles(panels: list, markers: Mapping[str, str], labels: tuple[str, str], with_wald: list[str]):
    from matplotlib.lines import Line2D

    rows = [row for _, _, shown in panels for row in shown]
    handles = []
    if (np.isfinite(_values(rows, "low")) & np.isfinite(_values(rows, "high"))).any():
        handles.append(Line2D([], [], color=ESTIMATE_COLORS[0], lw=2, label=f"posterior {labels[0]}"))
    if np.isfinite(_values(rows, "mean")).any():
        handles.append(Line2D([], [], color=ESTIMATE_COLORS[0], marker="o", ls="", label="posterior mean"))
    for j, (key, label) in enumerate(markers.items()):
        style = _marker_style(j)
        if key in with_wald:
            handles.append(Line2D([], [], color=style["color"], lw=1.4, label=f"{label} {labels[1]}"))
        present = np.isfinite(_values(rows, key)).any()
        handles.append(Line2D([], [], label=label if present else f"{label} (absent)", **style))
    return handles


def forest_plot(
    panels: Sequence[Any],
    *,
    markers: Mapping[str, str],
    interval_label: str = "89% ETI",
    wald_label: str = "89% Wald",
    max_rows: int = MAX_PANEL_ROWS,
    title: str | None = None,
) -> str:
    """Posterior mean and interval per parameter, with every point estimate as a marker, one panel per group.

    A point estimate whose rows carry its Wald interval (``<key>_low``, ``<key>_high``) gets its bar, in its
    colour, just below the posterior's interval, with its marker on it; the others' markers sit on the
    posterior's line. Each panel has its own x axis, labelled with its unit; the legend sits above the panels,
    outside every axis, and ``title`` above it.

    Parameters
    ----------
    panels : sequence of ParameterPanel, or sequence of mapping
        :attr:`~bayesclass.inference.evaluation.report_data.Estimates.panels` (each with ``title``,
        ``axis_label`` and ``rows``), or plain rows of
        :func:`~bayesclass.inference.evaluation.parameters.parameter_comparison`, drawn as one panel in the
        model's units. A row has ``parameter`` (the label), ``mean``, ``low``, ``high`` (``None`` without a
        posterior) and one key per point-estimate kind (float, or ``None`` where that estimate is absent: no
        marker is drawn).
    markers : mapping of str to str
        Point-estimate key -> legend label, e.g. ``{"map": "MAP", "mle": "MLE"}``; each key gets its own
        marker shape and colour. A key missing from the rows (an MLE that does not exist) counts as
        ``None`` in every row: no marker, and the legend reads "MLE (absent)".
    interval_label : str
        Legend label of the interval lines.
    wald_label : str
        Legend label of the Wald bars, after the estimate's label ("MAP 89% Wald").
    max_rows : int, default MAX_PANEL_ROWS
        Each panel draws its first ``max_rows`` rows only (the figure says nothing of the rest: the caption
        does, where no text can collide with the legend).
    title : str, optional
        The figure's title (model and data), drawn above the legend.

    Returns
    -------
    str
        The SVG element, 7 inches wide; it grows by 0.2 inch per row.
    """
    return to_svg(
        _forest_figure(
            panels,
            markers=markers,
            labels=(interval_label, wald_label),
            max_rows=max_rows,
            title=title,
        )
    )


def _forest_figure(
    panels: Sequence[Any], *, markers: Mapping[str, str], labels: tuple[str, str], max_rows: int, title: str | None
):
    """The matplotlib figure of :func:`forest_plot` (``labels``: the interval's and the Wald bars' labels)."""
    groups = _panels(panels)
    if not isinstance(markers, Mapping):
        raise ValueError(f"markers must be a mapping point-estimate key -> legend label, got {markers!r}")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ValueError(f"max_rows must be a positive integer, got {max_rows!r}")
    if title is not None and not isinstance(title, str):
        raise ValueError(f"title must be a string (the model and data) or None, got {title!r}")
    shown = [(name, label, rows[:max_rows]) for name, label, rows in groups]
    all_rows = [row for _, _, rows in shown for row in rows]
    with_wald = [key for key in markers if np.isfinite(_values(all_rows, f"{key}_low")).any()]
    heights = [_ROW_HEIGHT * len(rows) + _PANEL_ROOM for _, _, rows in shown]
    with _style():
        title_lines = len(textwrap.wrap(title, _TITLE_CHARACTERS)) if title else 0
        fig = _figure(7.0, sum(heights) + 0.5 + 0.2 * title_lines)
        if title:  # wrapped: a long data name must not widen the figure past the page
            fig.suptitle(textwrap.fill(title, _TITLE_CHARACTERS), fontsize=10, fontweight="bold")
        # the panels and their legend in a subfigure: constrained layout gives the figure's title and an
        # "outside" legend of the same figure the same place, so they would overlap
        body = fig.subfigures(1, 1)
        axes = body.subplots(len(shown), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
        for ax, (name, label, rows) in zip(axes, shown, strict=True):
            _draw_panel(ax, rows, markers, with_wald, titled=bool(name))
            ax.set_xlabel(label)
            if name:
                ax.set_title(name, loc="left", fontweight="bold")
        handles = _legend_handles(shown, markers, labels, with_wald)
        body.legend(handles=handles, loc="outside upper center", ncols=min(4, len(handles)), frameon=False)
    return fig
