"""The shared machinery of the report figures.

Style, :func:`to_svg`, colours and markers, input checks, subsampling and intervals.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import

if TYPE_CHECKING:
    import matplotlib as mpl
    from matplotlib.typing import RcKeyType
else:
    mpl = lazy_import("matplotlib")

__all__ = ["MAX_POINTS", "MAX_VECTOR_POINTS", "SVG_HASH_SALT", "figure_title", "inspect_figures", "to_svg"]

#: the salt of matplotlib's SVG element ids: fixed, so the same figure gives the same bytes. The ids are
#: hashes of the salt and the element's content, so two figures inlined in one page share an id only for
#: identical content (e.g. the same clip rectangle), which is harmless.
SVG_HASH_SALT = "bayesclass"
#: at most this many training points are drawn (a seeded subsample of the rows)
MAX_POINTS = 2000
#: scatter layers with more points than this are rasterized inside the SVG
MAX_VECTOR_POINTS = 2000
#: the colours of the estimates (posterior first) and of the classes
ESTIMATE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
CLASS_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
CLASS_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
ESTIMATE_MARKERS = ("D", "s", "^", "v", "P", "X", "*", "h")

_STYLE: dict[RcKeyType, Any] = {
    "text.parse_math": False,  # user text (feature, class names) is text, never a $...$ formula
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",
    "svg.hashsalt": SVG_HASH_SALT,
    "svg.image_inline": True,
    "path.simplify": True,
}


@contextmanager
def _style():
    """The report style, with pyplot's interactive mode off (ArviZ figures are pyplot figures)."""
    import matplotlib.pyplot as plt

    with mpl.rc_context(_STYLE), plt.ioff():
        yield


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


#: the title :func:`to_svg` gives a figure drawn inside :func:`figure_title` (None: none)
_TITLE: ContextVar[str | None] = ContextVar("bayesclass_figure_title", default=None)
#: the callbacks :func:`to_svg` hands every figure to before rendering it (:func:`inspect_figures`)
_INSPECTORS: list[Callable[[Any], None]] = []


@contextmanager
def figure_title(title: str) -> Iterator[None]:
    """Title every figure rendered by :func:`to_svg` inside the block ``title`` ("logistic on iris — rank plots").

    The figure functions of :mod:`bayesclass.reports.figures` end in :func:`to_svg`; a caller that knows the
    model and the data titles their figures with this block instead of threading a keyword through each.

    Parameters
    ----------
    title : str
        The title, a non-empty string.

    Raises
    ------
    ValueError
        If ``title`` is not a non-empty string.
    """
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"title must be a non-empty string, got {title!r}")
    token = _TITLE.set(title)
    try:
        yield
    finally:
        _TITLE.reset(token)


@contextmanager
def inspect_figures(callback: Callable[[Any], None]) -> Iterator[None]:
    """Hand every figure :func:`to_svg` renders inside the block to ``callback`` first (tests: overlap checks).

    Parameters
    ----------
    callback : callable
        Called with each matplotlib Figure, titled, before it is rendered and closed.
    """
    if not callable(callback):
        raise ValueError(f"callback must be callable, got {type(callback).__name__}")
    _INSPECTORS.append(callback)
    try:
        yield
    finally:
        _INSPECTORS.remove(callback)


def _set_title(fig, title: str) -> None:
    """``title`` as the figure's suptitle, above any note the figure already carries there."""
    existing = fig._suptitle.get_text() if fig._suptitle is not None else ""
    size = 10 if not existing else 9
    # broken into lines that fit the figure's width (about 0.55 em per character)
    title = textwrap.fill(title, max(20, int(fig.get_figwidth() * 72 / (0.55 * size))), break_long_words=False)
    fig.suptitle(f"{title}\n{existing}" if existing else title, fontsize=size)


#: the widest figure the page shows at its own size (its text column is 1100 CSS px = 11.46 in at 96 px per inch)
MAX_WIDTH_INCHES = 11.0


def _fit_page_width(fig) -> None:
    """Narrow a figure wider than :data:`MAX_WIDTH_INCHES` to that width (its height and text kept)."""
    width, height = fig.get_size_inches()
    if width > MAX_WIDTH_INCHES:
        fig.set_size_inches(MAX_WIDTH_INCHES, height)


def to_svg(fig, *, title: str | None = None) -> str:
    """Render ``fig`` as an inline SVG element and close it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        Any matplotlib figure; a pyplot-managed one (as ArviZ creates) is closed as well.
    title : str, optional
        The figure's title (a suptitle, above any note already there); default the one of the enclosing
        :func:`figure_title` block, if any.

    Returns
    -------
    str
        The ``<svg ...>...</svg>`` element, without XML prolog or DOCTYPE: text as ``<text>``
        elements (``svg.fonttype = "none"``), ids salted with :data:`SVG_HASH_SALT` and no date or
        creator metadata, so the same figure gives the same bytes. A figure wider than
        :data:`MAX_WIDTH_INCHES` is narrowed to it first, so that the page never shrinks its text.
    """
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib.figure.Figure, got {type(fig).__name__}")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        raise ValueError(f"title must be a non-empty string or None, got {title!r}")
    buffer = io.StringIO()
    try:
        with mpl.rc_context(_STYLE):
            _fit_page_width(fig)
            title = title if title is not None else _TITLE.get()
            if title is not None:
                _set_title(fig, title)
            for inspect in tuple(_INSPECTORS):
                inspect(fig)
            # tight: legends placed outside the axes (above a forest plot) are not clipped
            fig.savefig(
                buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight", pad_inches=0.05
            )
    finally:
        plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :].rstrip() + "\n"


# -- checks ---------------------------------------------------------------------------------------------


def _array(value, name: str, ndim: int | tuple[int, ...], shape_text: str) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if array.ndim not in allowed:
        raise ValueError(f"{name} must have shape {shape_text}; got shape {array.shape}")
    return array


def _codes(y, name: str, n_rows: int, n_classes: int) -> np.ndarray:
    codes = np.asarray(y)
    if codes.ndim != 1 or codes.shape[0] != n_rows:
        raise ValueError(f"{name} must have shape ({n_rows},) (one class code per row); got shape {codes.shape}")
    if not np.issubdtype(codes.dtype, np.integer) or (codes.size and (codes.min() < 0 or codes.max() >= n_classes)):
        raise ValueError(f"{name} must hold integer class codes 0 .. {n_classes - 1} (into class_names)")
    return codes.astype(int)


def _subsample(n: int, limit: int = MAX_POINTS) -> np.ndarray:
    """Row indices of at most ``limit`` rows: all when ``n <= limit``, else a fixed seeded choice, sorted."""
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, size=limit, replace=False))


def _interval(draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed interval of probability ``prob`` over the first axis (type-7 quantiles, ArviZ's ETI)."""
    if not 0 < prob < 1:
        raise ValueError(f"interval_prob must be in (0, 1), e.g. 0.89; got {prob!r}")
    low, high = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    return low, high
