"""Study figures: learning curves over training sizes."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from bayesclass.reports.figures._svg import _figure, _style, to_svg

__all__ = ["learning_curve_plot"]


def learning_curve_plot(
    panels: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]],
    *,
    reference: float | Mapping[str, float] | None = None,
    log_x: bool = True,
    colors: Mapping[str, str] | None = None,
    y_range: tuple[float, float] | None = None,
    columns: int | None = None,
    title: str | None = None,
) -> str:
    """Curves over training sizes, one panel per title: each line ``(x, mean, low, high)`` with a band.

    Parameters
    ----------
    panels : mapping
        Panel title -> line label -> four ``(k,)`` arrays: the training sizes, the mean over repeats and the band
        (e.g. the smallest and largest repeat). An infinite mean (a log loss ``inf`` of a plug-in that gives an
        observed class probability 0) is drawn as a triangle at the top of the panel, labelled ``inf`` (``-inf``: at
        the bottom, e.g. a difference to such a plug-in); NaN points are left out.
    reference : float or mapping of str to float, optional
        A horizontal line (e.g. 0 for paired differences), on every panel, or per panel title (e.g. the nominal
        level of a coverage panel; a panel not named has none).
    log_x : bool
        Training sizes on a log axis.
    colors : mapping, optional
        Line label -> matplotlib colour, to keep one colour per estimate across figures (default: the colour
        cycle in order of first appearance).
    y_range : tuple of (float, float), optional
        The lower and upper limits of every panel's y axis (e.g. shares from 0 to 1, so that panels compare);
        default: each panel's own data.
    columns : int, optional
        Panels per row (default: up to 3), e.g. 2 for a 2 x 2 grid of two truths at two levels.
    title : str, optional
        The figure's title above its panels (e.g. the model and data it shows).

    Returns
    -------
    str
        The SVG element (:func:`to_svg`), a legend of the lines below the panels.

    Raises
    ------
    ValueError
        If ``panels`` is empty or not a mapping, a line's four arrays are not 1-d of one length, or ``columns``
        is not a whole number >= 1.
    """
    if not isinstance(panels, Mapping) or not panels:
        raise ValueError(f"panels must be a non-empty mapping of panel title -> lines, got {type(panels).__name__}")
    if columns is not None and (isinstance(columns, bool) or not isinstance(columns, int) or columns < 1):
        raise ValueError(f"columns must be a whole number >= 1 of panels per row, e.g. 2; got {columns!r}")
    columns = min(columns or 3, len(panels))
    rows = math.ceil(len(panels) / columns)
    with _style():
        fig = _figure(3.6 * columns, 3.0 * rows + (0.3 if title else 0.0))
        axes = np.atleast_1d(fig.subplots(rows, columns, squeeze=False)).ravel()
        labels = list(dict.fromkeys(label for lines in panels.values() for label in lines))
        cycle = {label: f"C{index % 10}" for index, label in enumerate(labels)}
        colors = {label: (colors or {}).get(label, cycle[label]) for label in labels}  # one colour per line
        for ax, (panel_title, lines) in zip(axes, panels.items(), strict=False):
            finite_values: list[float] = []
            infinite_points: list[tuple[float, str, int]] = []  # (training size, colour, sign of the infinity)
            sizes: set[float] = set()
            for label, (x, mean, low, high) in lines.items():
                x, mean, low, high = (np.asarray(v, dtype=float) for v in (x, mean, low, high))
                if not x.shape == mean.shape == low.shape == high.shape or x.ndim != 1:
                    raise ValueError(
                        f"panels[{panel_title!r}][{label!r}]: x, mean, low, high must be 1-d of one length"
                    )
                color = colors[label]
                sizes.update(x.tolist())
                finite = np.isfinite(mean)
                ax.plot(x[finite], mean[finite], marker="o", ms=3, color=color, label=label)
                band = np.isfinite(low) & np.isfinite(high)
                ax.fill_between(x[band], low[band], high[band], color=color, alpha=0.15, lw=0)
                finite_values.extend(high[band].tolist() + mean[finite].tolist())
                infinite_points.extend((value, color, 1) for value in x[np.isposinf(mean)])
                infinite_points.extend((value, color, -1) for value in x[np.isneginf(mean)])
            level = reference.get(panel_title) if isinstance(reference, Mapping) else reference
            if level is not None:
                ax.axhline(level, color="0.3", lw=0.8, ls="--")
                if isinstance(reference, Mapping):  # a level of its own per panel: say which
                    ax.text(0.99, level, f"nominal {level:.0%}", transform=ax.get_yaxis_transform(), ha="right",
                            va="bottom", fontsize=7, color="0.3")  # fmt: skip
            if infinite_points:  # +inf at the top of the panel, -inf at its bottom, labelled
                top = max(finite_values) if finite_values else 1.0
                bottom = min(finite_values) if finite_values else 0.0
                span = (top - bottom) or 1.0
                for value, color, sign in infinite_points:
                    level = top + 0.08 * span if sign > 0 else bottom - 0.08 * span
                    ax.scatter([value], [level], marker="^" if sign > 0 else "v", color=color, s=30)
                    ax.annotate("inf" if sign > 0 else "-inf", (value, level), textcoords="offset points",
                                xytext=(0, 5 if sign > 0 else -10), ha="center", fontsize=7, color=color)  # fmt: skip
            if log_x:
                ax.set_xscale("log")
                ax.set_xticks(sorted(sizes), [f"{value:g}" for value in sorted(sizes)])
                ax.minorticks_off()
            if y_range is not None:
                ax.set_ylim(*y_range)
            ax.set_title(str(panel_title))
            ax.set_xlabel("training rows")
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=colors[label], marker="o", ms=3) for label in labels]
        fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(handles)), frameon=False)
        return to_svg(fig, title=title or None)
