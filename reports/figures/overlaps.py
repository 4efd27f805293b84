"""Overlapping text in a drawn matplotlib figure: legends, titles, labels and tick labels that cover each other.

The report's figures are read as images; a legend over another panel's tick labels or a note over a legend is
text no one can read. :func:`text_overlaps` lists every such pair, by the extents matplotlib computes for the
laid-out figure; the tests run it on every figure a report renders (:func:`~._svg.inspect_figures`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

__all__ = ["Overlap", "text_overlaps"]


@dataclass(frozen=True)
class Overlap:
    """Two things in a figure that cover each other.

    Parameters
    ----------
    first, second : str
        What each is ("legend of axes 0", "title 'first 40 of 45 parameters' of axes 0").
    """

    first: str
    second: str

    def __str__(self) -> str:
        return f"{self.first} overlaps {self.second}"


@dataclass(frozen=True)
class _Item:
    name: str
    owner: str  # "axes 3", or a figure-level item's own name
    bbox: Any  # matplotlib.transforms.Bbox, display pixels


def text_overlaps(fig, *, tolerance: float = 1.0) -> list[Overlap]:
    """Every pair of legends and texts in ``fig`` that overlap, after laying it out.

    Checked, in display pixels after ``fig.draw_without_rendering()``:

    * each legend against the data area of every axes but its own (a legend inside its own axes is where it
      belongs), against every text of the figure (its own axes' title and tick labels included) and against
      the other legends;
    * each text (suptitle, figure texts, axes titles, axis labels, tick labels, annotations) against the texts
      of other axes and of the figure, and against the data area of other axes.

    Texts of one axes are not checked against each other (crowded tick labels of one axis are not reported).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, with its final content (layout is computed here).
    tolerance : float, default 1.0
        Pixels two boxes must overlap by, in width and in height, to count (text boxes that touch do not).

    Returns
    -------
    list of Overlap
        In a fixed order (legends first); empty when nothing overlaps.

    Raises
    ------
    ValueError
        If ``fig`` is not a matplotlib Figure or ``tolerance`` is negative.
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib.figure.Figure, got {type(fig).__name__}")
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not tolerance >= 0:
        raise ValueError(f"tolerance must be a number of pixels >= 0, got {tolerance!r}")
    fig.draw_without_rendering()
    frames, texts, legends = _items(fig)
    found: list[Overlap] = []

    def check(first: _Item, second: _Item) -> None:
        if _overlap(first.bbox, second.bbox, tolerance):
            found.append(Overlap(first.name, second.name))

    for legend in legends:
        for frame in frames:
            if frame.owner != legend.owner:
                check(legend, frame)
        for text in texts:
            check(legend, text)
    for first, second in combinations(legends, 2):
        check(first, second)
    for first, second in combinations(texts, 2):
        if first.owner != second.owner:
            check(first, second)
    for text in texts:
        for frame in frames:
            if frame.owner != text.owner:
                check(text, frame)
    return found


def _overlap(first, second, tolerance: float) -> bool:
    width = min(first.x1, second.x1) - max(first.x0, second.x0)
    height = min(first.y1, second.y1) - max(first.y0, second.y0)
    return width > tolerance and height > tolerance


def _short(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _items(fig) -> tuple[list[_Item], list[_Item], list[_Item]]:
    """The data areas, texts and legends of ``fig`` and of its subfigures, with their pixel extents."""
    frames: list[_Item] = []
    texts: list[_Item] = []
    legends: list[_Item] = []
    figures = [fig, *fig.subfigs]
    for figure in figures:
        labels = []  # the suptitle and super labels are in figure.texts as well
        for attribute, role in (("_suptitle", "suptitle"), ("_supxlabel", "supxlabel"), ("_supylabel", "supylabel")):
            text = getattr(figure, attribute, None)
            labels.append(text)
            if text is not None and _shown(text):
                texts.append(_Item(f"{role} {_short(text.get_text())}", role, text.get_window_extent()))
        for i, text in enumerate(figure.texts):
            if _shown(text) and not any(text is label for label in labels):
                name = f"figure text {_short(text.get_text())}"
                texts.append(_Item(name, f"figure text {i}", text.get_window_extent()))
        for i, legend in enumerate(figure.legends):
            if legend.get_visible():
                legends.append(_Item(f"figure legend {i}", f"figure legend {i}", legend.get_window_extent()))
    for index, ax in enumerate(fig.get_axes()):
        if not ax.get_visible():
            continue
        owner = f"axes {index}"
        if ax.axison:
            frames.append(_Item(f"data area of {owner}", owner, ax.get_window_extent()))
        for role, text in _axes_texts(ax):
            if _shown(text):
                texts.append(_Item(f"{role} {_short(text.get_text())} of {owner}", owner, text.get_window_extent()))
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            legends.append(_Item(f"legend of {owner}", owner, legend.get_window_extent()))
    return frames, texts, legends


def _axes_texts(ax) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = [
        ("title", ax.title),
        ("left title", ax._left_title),
        ("right title", ax._right_title),
    ]
    if ax.axison:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not axis.get_visible():
                continue
            found.append((f"{name} label", axis.label))
            # the ticks drawn (within the view limits): a private helper of Axis.draw, as stable as matplotlib 3
            for tick in axis._update_ticks():
                found.extend((f"{name} tick label", label) for label in (tick.label1, tick.label2))
    found.extend(("text", text) for text in ax.texts)
    return found


def _shown(text) -> bool:
    return text is not None and text.get_visible() and bool(text.get_text().strip())
