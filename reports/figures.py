"""Figures of the HTML reports, each returned as an inline SVG string.

Every public function takes plain inputs (NumPy arrays, xarray Datasets, dicts), draws one
matplotlib figure and returns it through :func:`to_svg`: the ``<svg ...>...</svg>`` element only
(no XML prolog or DOCTYPE), ready to paste into an HTML page, byte-identical for the same inputs
(fixed ``svg.hashsalt``, no date or creator metadata) and with text kept as text
(``svg.fonttype = "none"``), so labels stay searchable and the files small.

Conventions:

* Labels are the variable names as given (the PyMC variable = xarray variable = report label);
  vector elements read ``name[coord, ...]`` as in :func:`bayesclass.reports.comparison.parameter_comparison`.
* The numbers behind a figure (intervals, masks, replicates, panel order) come from small pure
  functions (:func:`boundary_band`, :func:`categorical_replicates`, :func:`check_panels`,
  :func:`capped_posterior`) that the tests check numerically; the drawing functions are thin wrappers.
* Dense layers (rank and trace lines, more than :data:`MAX_VECTOR_POINTS` scatter points) are rasterized
  inside the SVG (an embedded PNG, still byte-deterministic); training points are subsampled to at most
  :data:`MAX_POINTS` (a seeded, fixed choice).
* Nothing here selects a matplotlib backend: figures are either ``matplotlib.figure.Figure`` objects
  (never registered with pyplot) or, for the ArviZ plots, created by ``arviz_plots`` with pyplot's
  interactive mode off and closed by :func:`to_svg`.
* Wrong shapes raise ``ValueError`` naming the argument, the shape received and the shape expected.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from bayesclass._lazy import lazy_import

mpl = lazy_import("matplotlib")
xr = lazy_import("xarray")

__all__ = [
    "MAX_POINTS",
    "boundary_band",
    "boundary_plot",
    "capped_posterior",
    "categorical_replicates",
    "check_panels",
    "forest_plot",
    "generative_check_plot",
    "latent_curve_plot",
    "pareto_k_plot",
    "rank_plot",
    "reliability_plot",
    "score_bars",
    "to_svg",
    "trace_plot",
]

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

_STYLE = {
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


def to_svg(fig) -> str:
    """Render ``fig`` as an inline SVG element and close it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        Any matplotlib figure; a pyplot-managed one (as ArviZ creates) is closed as well.

    Returns
    -------
    str
        The ``<svg ...>...</svg>`` element, without XML prolog or DOCTYPE: text as ``<text>``
        elements (``svg.fonttype = "none"``), ids salted with :data:`SVG_HASH_SALT` and no date or
        creator metadata, so the same figure gives the same bytes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib.figure.Figure, got {type(fig).__name__}")
    buffer = io.StringIO()
    try:
        with mpl.rc_context(_STYLE):
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


# -- MCMC diagnostics (arviz_plots) ----------------------------------------------------------------------


def capped_posterior(posterior, var_names: Sequence[str], *, max_elements: int = 12):
    """The variables ``var_names`` of ``posterior``, each cut to its first ``max_elements`` elements.

    A variable with more than one dimension besides ``chain`` and ``draw`` is flattened (C order) into
    one dimension ``<name>_element`` whose labels join the coordinates with ", " (``covariance[setosa, x1, x2]``,
    as in :func:`~bayesclass.reports.comparison.parameter_comparison`).

    Returns
    -------
    (xarray.Dataset, dict)
        The selection, and ``{name: (shown, total)}`` for every variable that was cut.
    """
    if not isinstance(posterior, xr.Dataset):
        raise ValueError(
            f"posterior must be an xarray.Dataset with dims chain and draw, got {type(posterior).__name__}"
        )
    if not {"chain", "draw"} <= set(posterior.dims):
        raise ValueError(f"posterior must have dims chain and draw; got dims {tuple(posterior.dims)}")
    if isinstance(var_names, str) or not var_names:
        raise ValueError(f"var_names must be a non-empty sequence of variable names, got {var_names!r}")
    missing = [name for name in var_names if name not in posterior.data_vars]
    if missing:
        raise ValueError(f"var_names {missing} are not in posterior; it has {list(posterior.data_vars)}")
    if isinstance(max_elements, bool) or not isinstance(max_elements, int) or max_elements < 1:
        raise ValueError(f"max_elements must be a positive integer, got {max_elements!r}")
    variables, capped = {}, {}
    for name in var_names:
        variable = posterior[name].transpose("chain", "draw", ...)
        dims = [dim for dim in variable.dims if dim not in ("chain", "draw")]
        if len(dims) > 1:
            labels = [
                ", ".join(
                    str(variable[dim].values[i]) if dim in variable.coords else str(i)
                    for dim, i in zip(dims, index, strict=True)
                )
                for index in np.ndindex(*(variable.sizes[dim] for dim in dims))
            ]
            values = variable.values.reshape(variable.sizes["chain"], variable.sizes["draw"], -1)
            element = f"{name}_element"  # one dim per variable: a shared one would align (outer-join) their labels
            variable = xr.DataArray(
                values,
                dims=("chain", "draw", element),
                coords={"chain": variable["chain"], "draw": variable["draw"], element: labels},
            )
            dims = [element]
        if dims and variable.sizes[dims[0]] > max_elements:
            capped[name] = (max_elements, variable.sizes[dims[0]])
            variable = variable.isel({dims[0]: slice(0, max_elements)})
        variables[name] = variable.drop_vars([c for c in variable.coords if c not in variable.dims])
    return xr.Dataset(variables), capped


def _flat_labeller():
    from arviz_base.labels import BaseLabeller

    class FlatLabeller(BaseLabeller):
        """One-line panel titles ``name[coord]`` (ArviZ's vertical labels overlap in a grid)."""

        def make_label_vert(self, var_name, sel, isel):
            return self.make_label_flat(var_name, sel, isel)

    return FlatLabeller()


def _cap_note(fig, capped: dict) -> None:
    if capped:
        note = "; ".join(f"{name}: first {shown} of {total} elements shown" for name, (shown, total) in capped.items())
        fig.suptitle(note, fontsize=8)


def rank_plot(posterior, var_names: Sequence[str], *, max_elements: int = 12) -> str:
    """Fractional rank Delta-ECDF plots per chain (``arviz_plots.plot_rank``), one panel per element.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain`` and ``draw`` (``result["posterior"].to_dataset()``).
    var_names : sequence of str
        The variables to show, in order.
    max_elements : int
        A vector variable shows its first ``max_elements`` elements only (see :func:`capped_posterior`);
        when any is cut, the figure's title says so ("weights: first 12 of 30 elements shown").

    Returns
    -------
    str
        The SVG element (:func:`to_svg`); the ECDF lines are rasterized inside it.
    """
    return _arviz_plot("plot_rank", "ecdf_lines", posterior, var_names, max_elements=max_elements)


def trace_plot(posterior, var_names: Sequence[str], *, max_elements: int = 12) -> str:
    """Marginal densities and traces per chain (``arviz_plots.plot_trace_dist``), one row per variable.

    The elements of a vector variable share its row (ArviZ's compact layout); like :func:`rank_plot`,
    only the first ``max_elements`` are drawn and the title says when some are left out. Parameters
    and return value as :func:`rank_plot`; the trace lines are rasterized.
    """
    return _arviz_plot("plot_trace_dist", "trace", posterior, var_names, max_elements=max_elements)


def _arviz_plot(plot: str, dense_lines: str, posterior, var_names: Sequence[str], *, max_elements: int) -> str:
    """An arviz_plots figure of the capped posterior (``plot``: its function name), one-line panel titles, the
    ``dense_lines`` visual rasterized, and the cap note in the title."""
    import arviz_plots as azp

    selection, capped = capped_posterior(posterior, var_names, max_elements=max_elements)
    with _style():
        collection = getattr(azp, plot)(
            selection,
            backend="matplotlib",
            labeller=_flat_labeller(),
            visuals={dense_lines: {"rasterized": True}},
            figure_kwargs={"layout": "constrained"},
        )
        fig = collection.get_viz("figure")
        _cap_note(fig, capped)
    return to_svg(fig)


# -- parameters and scores -------------------------------------------------------------------------------


def forest_plot(
    rows: Sequence[Mapping],
    *,
    markers: Mapping[str, str],
    interval_label: str = "89% ETI",
    max_rows: int = 40,
) -> str:
    """Posterior mean and interval per parameter, with every point estimate as a marker on the same axis.

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
        for j, (key, label) in enumerate(markers.items()):
            estimate = values(key)
            present = np.isfinite(estimate)
            style = {
                "marker": ESTIMATE_MARKERS[j % len(ESTIMATE_MARKERS)],
                "color": ESTIMATE_COLORS[1 + j % (len(ESTIMATE_COLORS) - 1)],
                "ls": "",
                "mfc": "none",
                "ms": 6,
                "mew": 1.3,
            }
            if present.any():
                ax.plot(estimate[present], positions[present], zorder=4, **style)
            handles.append(Line2D([], [], label=label if present.any() else f"{label} (absent)", **style))
        ax.axvline(0.0, color="0.7", lw=0.8, zorder=0)
        ax.set_yticks(positions, [str(row["parameter"]) for row in shown])
        ax.set_ylim(-0.7, n - 0.3)
        ax.grid(axis="x", color="0.92")
        ax.set_xlabel("value (model units)")
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=min(4, len(handles)), frameon=False)
        if len(rows) > max_rows:
            ax.set_title(f"first {max_rows} of {len(rows)} parameters", loc="right", fontsize=8)
    return to_svg(fig)


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
        ax.legend(loc="upper left", frameon=False)
    return to_svg(fig)


# -- calibration -----------------------------------------------------------------------------------------


def categorical_replicates(proba: np.ndarray, n_replicates: int, *, random_seed: int = 0) -> np.ndarray:
    """Replicated class codes drawn from class probabilities, stratified over replicates.

    Parameters
    ----------
    proba : numpy.ndarray
        ``(n, K)`` plug-in probabilities (every replicate draws from them), or ``(S, n, K)`` per-draw
        probabilities (replicate ``r`` draws from draw ``picks[r]``, ``n_replicates`` draws evenly spaced
        over ``S``, repeated when ``S < n_replicates``, as :func:`bayesclass.inference.posterior_predictive_check`).
    n_replicates : int
        Number of replicates R.
    random_seed : int
        Seed; same seed, same codes.

    Returns
    -------
    numpy.ndarray
        ``(R, n)`` integer codes. Replicate ``r`` of row ``i`` is the class whose cumulative-probability
        interval contains ``u[r, i] = (pi_i(r) + v[r, i]) / R`` (``pi_i`` a random permutation of
        ``0 .. R-1`` per row, ``v`` uniform): each code is exactly categorical with the row's
        probabilities, rows are independent, and for plug-in probabilities the share of replicates in
        class k is within 2/R of ``p_ik`` (1/R for the first and the last class, so for both classes of a
        binary problem: Latin-hypercube sampling). ``arviz_plots.plot_ppc_pava``
        puts that share on its x axis as the forecast, so the stratification keeps the forecast close
        to the probability (plain sampling would move it by up to ~0.1 with R = 100).
    """
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, int) or n_replicates < 1:
        raise ValueError(f"n_replicates must be a positive integer, got {n_replicates!r}")
    proba = np.asarray(proba, dtype=float)
    if proba.ndim == 2:
        per_replicate = np.broadcast_to(proba, (n_replicates, *proba.shape))
    elif proba.ndim == 3:
        picks = np.linspace(0, proba.shape[0] - 1, n_replicates).round().astype(int)
        per_replicate = proba[picks]
    else:
        raise ValueError(f"proba must have shape (n, K) or (draws, n, K); got shape {proba.shape}")
    rng = np.random.default_rng(random_seed)
    n_rows = per_replicate.shape[1]
    strata = rng.permuted(np.broadcast_to(np.arange(n_replicates)[:, np.newaxis], (n_replicates, n_rows)), axis=0)
    uniform = (strata + rng.random((n_replicates, n_rows))) / n_replicates
    cumulative = np.cumsum(per_replicate, axis=-1)[..., :-1]  # the last edge is 1 (up to rounding): left out
    return (uniform[..., np.newaxis] >= cumulative).sum(axis=-1)


def _check_proba(proba: Mapping[str, np.ndarray], n_rows: int, n_classes: int, name: str = "proba") -> dict:
    if not isinstance(proba, Mapping) or not proba:
        raise ValueError(f"{name} must be a non-empty mapping estimate label -> class probabilities")
    checked = {}
    for label, value in proba.items():
        array = np.asarray(value, dtype=float)
        if array.ndim not in (2, 3) or array.shape[-2:] != (n_rows, n_classes):
            raise ValueError(
                f"{name}[{label!r}] must have shape (n, K) or (draws, n, K) with n = len(y) = {n_rows} and "
                f"K = len(class_names) = {n_classes}; got shape {array.shape}"
            )
        if not np.isfinite(array).all() or (array < 0).any() or (array > 1).any():
            raise ValueError(
                f"{name}[{label!r}] must hold probabilities in [0, 1] without NaN (drop the rows an estimate "
                "cannot forecast before plotting)"
            )
        checked[str(label)] = array
    return checked


def reliability_plot(
    proba: Mapping[str, np.ndarray],
    y: np.ndarray,
    *,
    class_names: Sequence[str],
    random_seed: int = 0,
    n_replicates: int = 100,
) -> str:
    """PAV (CORP) reliability diagrams with consistency bands, by ``arviz_plots.plot_ppc_pava``.

    Parameters
    ----------
    proba : mapping of str to numpy.ndarray
        Estimate label -> class probabilities of the rows: ``(draws, n, K)`` per posterior draw, or
        ``(n, K)`` for a point estimate (its plug-in probabilities).
    y : numpy.ndarray
        ``(n,)`` observed class codes into ``class_names``.
    class_names : sequence of str
        The K class names.
    random_seed : int
        Seed of the replicated outcomes.
    n_replicates : int
        Replicated outcome vectors per estimate (:func:`categorical_replicates`): from the plug-in
        probabilities, or one per posterior draw (``n_replicates`` draws evenly spaced).

    Returns
    -------
    str
        The SVG element. Each estimate is one variable of a DataTree whose ``posterior_predictive``
        holds the replicates (chain 1, draw R, obs n) and ``observed_data`` ``y``. Two classes: one panel
        per estimate (columns), the event being the second class, x = the forecast P(class 1) (the
        replicate mean), y = the conditional event probability (CEP), band = ArviZ's ``ci_prob``
        interval of the PAV fits of the replicates. K > 2: ``data_type="categorical"``, one-vs-others
        per class; one row per estimate, one column per class.
    """
    import arviz_plots as azp

    class_names = [str(name) for name in class_names]
    n_classes = len(class_names)
    if n_classes < 2:
        raise ValueError(f"class_names must name at least two classes, got {class_names!r}")
    y_array = np.asarray(y)
    if y_array.ndim != 1:
        raise ValueError(f"y must have shape (n,) (one class code per row); got shape {y_array.shape}")
    codes = _codes(y_array, "y", y_array.shape[0], n_classes)
    proba = _check_proba(proba, codes.size, n_classes)
    posterior_predictive, observed = {}, {}
    for j, (label, array) in enumerate(proba.items()):
        replicates = categorical_replicates(array, n_replicates, random_seed=random_seed + j)
        posterior_predictive[label] = (("chain", "draw", "obs"), replicates[np.newaxis])
        observed[label] = (("obs",), codes)
    tree = xr.DataTree.from_dict(
        {"posterior_predictive": xr.Dataset(posterior_predictive), "observed_data": xr.Dataset(observed)}
    )
    titles = {}
    for label in proba:
        titles[label] = f"{label}: P({class_names[1]})"
        for k, name in enumerate(class_names):
            titles[f"{label} {k} vs others"] = f"{label}: {name} vs others"
    labeller = _TitleLabeller(titles)
    binary = n_classes == 2
    with _style():
        collection = azp.plot_ppc_pava(
            tree,
            var_names=list(proba),
            data_type="binary" if binary else "categorical",
            backend="matplotlib",
            labeller=labeller,
            col_wrap=len(proba) if binary else n_classes,
            figure_kwargs={"layout": "constrained"},
            visuals={"xlabel": {"text": "forecast probability"}, "ylabel": {"text": "CEP (PAV)"}},
        )
        fig = collection.get_viz("figure")
    return to_svg(fig)


class _TitleLabeller:
    """Panel titles looked up by the variable name that ``plot_ppc_pava`` builds."""

    def __new__(cls, titles: Mapping[str, str]):
        from arviz_base.labels import BaseLabeller

        class TitleLabeller(BaseLabeller):
            def make_label_vert(self, var_name, sel, isel):
                return titles.get(var_name, var_name)

            make_label_flat = make_label_vert

        return TitleLabeller()


# -- decision boundaries and latent curves ---------------------------------------------------------------


def _margins(proba: np.ndarray) -> np.ndarray:
    """``p_k - max_{j != k} p_j`` for each class k (..., K): 0 on the boundary of class k's region."""
    ordered = np.sort(proba, axis=-1)
    best, second = ordered[..., -1:], ordered[..., -2:-1]
    return proba - np.where(proba >= best, second, best)


def boundary_band(proba_draws: np.ndarray, *, interval_prob: float = 0.89) -> np.ndarray:
    """Where on the grid the posterior is unsure of the decision: the credible band of the boundary.

    Parameters
    ----------
    proba_draws : numpy.ndarray
        ``(S, ny, nx, K)`` P(class | x) per posterior draw on a grid.
    interval_prob : float
        Probability of the interval.

    Returns
    -------
    numpy.ndarray
        ``(ny, nx)`` bool. Two classes: True where the equal-tailed ``interval_prob`` interval of
        P(class 1) over draws contains 0.5. K > 2: True where the draws' most probable class differs
        from the posterior mean's in more than ``1 - interval_prob`` of the draws. All draws equal: all
        False (except grid points exactly on a 0.5 boundary, two classes).
    """
    draws = _array(proba_draws, "proba_draws", 4, "(draws, ny, nx, K)")
    if draws.shape[-1] < 2:
        raise ValueError(f"proba_draws must have K >= 2 classes on its last axis; got shape {draws.shape}")
    if draws.shape[-1] == 2:
        low, high = _interval(draws[..., 1], interval_prob)
        return (low <= 0.5) & (high >= 0.5)
    if not 0 < interval_prob < 1:
        raise ValueError(f"interval_prob must be in (0, 1), e.g. 0.89; got {interval_prob!r}")
    mean_class = draws.mean(axis=0).argmax(axis=-1)
    disagreement = (draws.argmax(axis=-1) != mean_class).mean(axis=0)
    return disagreement > 1 - interval_prob


def boundary_plot(
    grid: tuple[np.ndarray, np.ndarray],
    proba_draws: np.ndarray,
    *,
    point_proba: Mapping[str, np.ndarray],
    X: np.ndarray,
    y: np.ndarray,
    class_names: Sequence[str],
    feature_names: tuple[str, str],
    interval_prob: float = 0.89,
) -> str:
    """Decision boundary of two features: posterior mean, its credible band and the point estimates'.

    Parameters
    ----------
    grid : (numpy.ndarray, numpy.ndarray)
        ``(x values (nx,), y values (ny,))``, increasing: the grid of the first and second feature.
    proba_draws : numpy.ndarray
        ``(S, ny, nx, K)`` P(class | x) per posterior draw at ``(x[j], y[i])`` (row-major: y first).
    point_proba : mapping of str to numpy.ndarray
        Estimate label -> ``(ny, nx, K)`` plug-in probabilities; each boundary is a dashed contour with
        a legend entry (may be empty).
    X : numpy.ndarray
        ``(n, 2)`` training points (at most :data:`MAX_POINTS` drawn, a fixed seeded subsample).
    y : numpy.ndarray
        ``(n,)`` class codes into ``class_names``.
    class_names : sequence of str
        The K class names.
    feature_names : (str, str)
        Axis labels.
    interval_prob : float
        Probability of the band (:func:`boundary_band`).

    Returns
    -------
    str
        The SVG element. Two classes: filled contours of the posterior mean P(class 1), its 0.5 contour
        (solid black) and the hatched band. K > 2: regions coloured by the mean's most probable class,
        the class-switch lines solid black, the band hatched.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if not isinstance(grid, tuple | list) or len(grid) != 2:
        raise ValueError("grid must be a pair (x values (nx,), y values (ny,))")
    gx = _array(grid[0], "grid[0]", 1, "(nx,)")
    gy = _array(grid[1], "grid[1]", 1, "(ny,)")
    class_names = [str(name) for name in class_names]
    n_classes = len(class_names)
    draws = _array(proba_draws, "proba_draws", 4, "(draws, ny, nx, K)")
    expected = (gy.size, gx.size, n_classes)
    if draws.shape[1:] != expected:
        raise ValueError(
            f"proba_draws must have shape (draws, ny, nx, K) = (S, {', '.join(map(str, expected))}); got {draws.shape}"
        )
    for label, value in point_proba.items():
        if np.shape(value) != expected:
            raise ValueError(f"point_proba[{label!r}] must have shape (ny, nx, K) = {expected}; got {np.shape(value)}")
    points = _array(X, "X", 2, "(n, 2)")
    if points.shape[1] != 2:
        raise ValueError(f"X must have shape (n, 2); got shape {points.shape}")
    codes = _codes(y, "y", points.shape[0], n_classes)
    if len(feature_names) != 2:
        raise ValueError(f"feature_names must name the two features, got {feature_names!r}")
    band = boundary_band(draws, interval_prob=interval_prob)
    mean = draws.mean(axis=0)
    with _style():
        fig = _figure(6.0, 4.6)
        ax = fig.add_subplot()
        handles = []
        if n_classes == 2:
            from matplotlib.colors import LinearSegmentedColormap

            shades = LinearSegmentedColormap.from_list("classes", [CLASS_COLORS[0], "white", CLASS_COLORS[1]])
            filled = ax.contourf(gx, gy, mean[..., 1], levels=np.linspace(0, 1, 11), cmap=shades, alpha=0.5)
            fig.colorbar(filled, ax=ax, label=f"posterior mean P({class_names[1]})")
        else:
            from matplotlib.colors import ListedColormap

            regions = mean.argmax(axis=-1)
            colors = ListedColormap([CLASS_COLORS[k % len(CLASS_COLORS)] for k in range(n_classes)])
            ax.contourf(gx, gy, regions, levels=np.arange(n_classes + 1) - 0.5, cmap=colors, alpha=0.25)
        margins = _margins(mean)
        for k in range(1 if n_classes == 2 else 0, n_classes):
            ax.contour(gx, gy, margins[..., k], levels=[0.0], colors="black", linewidths=1.6)
        handles.append(Line2D([], [], color="black", lw=1.6, label="posterior mean boundary"))
        if band.any():
            ax.contourf(gx, gy, band.astype(float), levels=[0.5, 1.5], colors="none", hatches=["////"])
        handles.append(Patch(facecolor="none", edgecolor="0.3", hatch="////", label=f"{interval_prob:.0%} band"))
        for j, (label, value) in enumerate(point_proba.items()):
            color = ESTIMATE_COLORS[1 + j % (len(ESTIMATE_COLORS) - 1)]
            point_margins = _margins(np.asarray(value, dtype=float))
            for k in range(1 if n_classes == 2 else 0, n_classes):
                ax.contour(gx, gy, point_margins[..., k], levels=[0.0], colors=color, linewidths=1.4, linestyles="--")
            handles.append(Line2D([], [], color=color, lw=1.4, ls="--", label=f"{label} boundary"))
        shown = _subsample(points.shape[0])
        for k, name in enumerate(class_names):
            rows = shown[codes[shown] == k]
            ax.scatter(
                points[rows, 0],
                points[rows, 1],
                s=10,
                marker=CLASS_MARKERS[k % len(CLASS_MARKERS)],
                color=CLASS_COLORS[k % len(CLASS_COLORS)],
                edgecolor="white",
                linewidths=0.3,
                label=name,
            )
            handles.append(
                Line2D(
                    [],
                    [],
                    marker=CLASS_MARKERS[k % len(CLASS_MARKERS)],
                    color=CLASS_COLORS[k % len(CLASS_COLORS)],
                    ls="",
                    label=name,
                )
            )
        ax.set_xlim(gx.min(), gx.max())
        ax.set_ylim(gy.min(), gy.max())
        ax.set_xlabel(feature_names[0])
        ax.set_ylabel(feature_names[1])
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=3, frameon=False)
    return to_svg(fig)


def _class1(value, name: str, n: int, allow_draws: bool) -> np.ndarray:
    """P(class 1) from ``(..., m)`` or ``(..., m, 2)`` probabilities."""
    array = np.asarray(value, dtype=float)
    leading = 1 if allow_draws else 0
    if array.ndim == leading + 2 and array.shape[-1] == 2:
        array = array[..., 1]
    shape = "(draws, m) or (draws, m, 2)" if allow_draws else "(m,) or (m, 2)"
    if array.ndim != leading + 1 or array.shape[-1] != n:
        raise ValueError(f"{name} must have shape {shape} with m = {n} (len(x)); got shape {np.shape(value)}")
    return array


def latent_curve_plot(
    x: np.ndarray,
    latent_draws: np.ndarray,
    proba_draws: np.ndarray,
    *,
    X: np.ndarray,
    y: np.ndarray,
    feature_name: str,
    class_names: Sequence[str],
    true_latent: np.ndarray | None = None,
    true_points: tuple[np.ndarray, np.ndarray] | None = None,
    point_latent: Mapping[str, np.ndarray] | None = None,
    point_proba: Mapping[str, np.ndarray] | None = None,
    interval_prob: float = 0.89,
) -> str:
    """Latent function and class probability of a one-input binary classifier (the GP on 1-D data).

    Parameters
    ----------
    x : numpy.ndarray
        ``(m,)`` increasing input values of the curve.
    latent_draws : numpy.ndarray
        ``(S, m)`` latent f(x) per posterior draw.
    proba_draws : numpy.ndarray
        ``(S, m)`` P(class 1 | x) per draw, or ``(S, m, 2)`` class probabilities.
    X : numpy.ndarray
        ``(n,)`` or ``(n, 1)`` training inputs (at most :data:`MAX_POINTS` drawn).
    y : numpy.ndarray
        ``(n,)`` class codes 0/1.
    feature_name : str
        The x-axis label.
    class_names : sequence of str
        The two class names.
    true_latent : numpy.ndarray, optional
        ``(m,)`` the generating latent function (synthetic data), drawn in black.
    true_points : tuple of two numpy.ndarray, optional
        ``(x, latent)``, each ``(k,)``: the generating latent known at some inputs only (e.g. the training
        inputs of generated data), drawn as black dots.
    point_latent, point_proba : mapping of str to numpy.ndarray, optional
        Estimate label -> ``(m,)`` latent / ``(m,)`` or ``(m, 2)`` probabilities, dashed.
    interval_prob : float
        Probability of the equal-tailed bands.

    Returns
    -------
    str
        The SVG element: top panel the latent (posterior mean and band), bottom panel P(class 1 | x)
        with the training points as jittered rugs at 0 and 1.
    """
    xs = _array(x, "x", 1, "(m,)")
    m = xs.size
    latent = _array(latent_draws, "latent_draws", 2, "(draws, m)")
    if latent.shape[1] != m:
        raise ValueError(f"latent_draws must have shape (draws, m) with m = {m} (len(x)); got {latent.shape}")
    proba = _class1(proba_draws, "proba_draws", m, True)
    class_names = [str(name) for name in class_names]
    if len(class_names) != 2:
        raise ValueError(f"class_names must name two classes, got {class_names!r}")
    inputs = np.asarray(X, dtype=float)
    if inputs.ndim == 2 and inputs.shape[1] == 1:
        inputs = inputs[:, 0]
    if inputs.ndim != 1:
        raise ValueError(f"X must have shape (n,) or (n, 1); got shape {np.shape(X)}")
    codes = _codes(y, "y", inputs.size, 2)
    point_latent = {str(k): _array(v, f"point_latent[{k!r}]", 1, "(m,)") for k, v in (point_latent or {}).items()}
    for label, value in point_latent.items():
        if value.size != m:
            raise ValueError(f"point_latent[{label!r}] must have shape ({m},); got {value.shape}")
    point_proba = {str(k): _class1(v, f"point_proba[{k!r}]", m, False) for k, v in (point_proba or {}).items()}
    if true_latent is not None:
        true_latent = _array(true_latent, "true_latent", 1, "(m,)")
        if true_latent.size != m:
            raise ValueError(f"true_latent must have shape ({m},); got {true_latent.shape}")
    if true_points is not None:
        true_x = _array(true_points[0], "true_points[0]", 1, "(k,)")
        true_values = _array(true_points[1], "true_points[1]", 1, "(k,)")
        if true_x.size != true_values.size:
            raise ValueError(f"true_points: x has {true_x.size} values, latent {true_values.size}; give one each")
    interval_name = f"{interval_prob:.0%} ETI"
    with _style():
        fig = _figure(6.5, 5.0)
        top, bottom = fig.subplots(2, 1, sharex=True)
        for ax, draws, ylabel in ((top, latent, "latent f"), (bottom, proba, f"P({class_names[1]} | x)")):
            low, high = _interval(draws, interval_prob)
            ax.fill_between(
                xs, low, high, color=ESTIMATE_COLORS[0], alpha=0.25, lw=0, label=f"posterior {interval_name}"
            )
            ax.plot(xs, draws.mean(axis=0), color=ESTIMATE_COLORS[0], lw=1.8, label="posterior mean")
            ax.set_ylabel(ylabel)
        if true_latent is not None:
            top.plot(xs, true_latent, color="black", lw=1.2, label="true latent")
        if true_points is not None:
            top.scatter(true_x, true_values, s=9, color="black", zorder=4, label="true latent (training inputs)")
        for j, label in enumerate(dict.fromkeys([*point_latent, *point_proba])):
            color = ESTIMATE_COLORS[1 + j % (len(ESTIMATE_COLORS) - 1)]
            if label in point_latent:
                top.plot(xs, point_latent[label], color=color, ls="--", lw=1.4, label=label)
            if label in point_proba:
                bottom.plot(xs, point_proba[label], color=color, ls="--", lw=1.4, label=label)
        shown = _subsample(inputs.size)
        jitter = np.random.default_rng(0).uniform(-0.03, 0.03, shown.size)
        for k, name in enumerate(class_names):
            rows = codes[shown] == k
            bottom.scatter(
                inputs[shown][rows],
                k + jitter[rows],
                s=6,
                marker="|",
                color=CLASS_COLORS[k],
                alpha=0.6,
                label=f"{name} (training)",
                rasterized=bool(shown.size > MAX_VECTOR_POINTS),
            )
        bottom.set_ylim(-0.08, 1.08)
        bottom.set_xlabel(feature_name)
        top.legend(loc="best", frameon=False)
        bottom.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return to_svg(fig)


# -- generative checks -----------------------------------------------------------------------------------


def check_panels(check, *, max_panels: int = 12) -> list[dict]:
    """The panels of :func:`generative_check_plot`, most extreme p-value first.

    Parameters
    ----------
    check : xarray.Dataset
        Output of :func:`bayesclass.inference.posterior_predictive_check`.
    max_panels : int
        At most this many panels are returned.

    Returns
    -------
    list of dict
        Keys ``statistic``, ``class``, ``element`` (the feature, or the categorical level),
        ``observed`` (float), ``replicated`` ((R,) array), ``p_value`` and ``total`` (the number of
        panels before the cut). Every (statistic, class, element) with a non-NaN p-value is a
        candidate; they are sorted by ``min(p, 1 - p)`` ascending (ties: statistic, class, element in
        storage order) and the first ``max_panels`` kept.
    """
    if not isinstance(check, xr.Dataset):
        raise ValueError(f"check must be the xarray.Dataset of posterior_predictive_check, got {type(check).__name__}")
    statistics = [name.removeprefix("p_value_") for name in check.data_vars if name.startswith("p_value_")]
    if not statistics:
        raise ValueError("check has no p_value_<stat> variables: pass posterior_predictive_check(result)")
    if isinstance(max_panels, bool) or not isinstance(max_panels, int) or max_panels < 1:
        raise ValueError(f"max_panels must be a positive integer, got {max_panels!r}")
    candidates = []
    for statistic in statistics:
        p_value = check[f"p_value_{statistic}"]
        observed = check[f"observed_{statistic}"]
        replicated = check[f"replicated_{statistic}"].transpose("replicate", *p_value.dims)
        if p_value.ndim != 2 or replicated.shape[1:] != p_value.shape or observed.shape != p_value.shape:
            raise ValueError(
                f"check[{statistic!r}] must have observed/p_value (class, element) and replicated "
                f"(replicate, class, element); got {observed.shape}, {replicated.shape}"
            )
        class_dim, element_dim = p_value.dims
        classes = [str(v) for v in check[class_dim].values] if class_dim in check.coords else None
        elements = [str(v) for v in check[element_dim].values] if element_dim in check.coords else None
        for i, j in np.ndindex(p_value.shape):
            p = float(p_value.values[i, j])
            if math.isnan(p):
                continue
            candidates.append(
                {
                    "statistic": statistic,
                    "class": classes[i] if classes else str(i),
                    "element": elements[j] if elements else str(j),
                    "observed": float(observed.values[i, j]),
                    "replicated": np.asarray(replicated.values[:, i, j], dtype=float),
                    "p_value": p,
                }
            )
    order = sorted(
        range(len(candidates)), key=lambda n: (min(candidates[n]["p_value"], 1 - candidates[n]["p_value"]), n)
    )
    return [{**candidates[n], "total": len(candidates)} for n in order[:max_panels]]


def generative_check_plot(check, *, max_panels: int = 12) -> str:
    """Posterior predictive check of the features: replicated statistic vs the observed one, per panel.

    Parameters
    ----------
    check : xarray.Dataset
        Output of :func:`bayesclass.inference.posterior_predictive_check` (a naive Bayes or Gaussian
        class-conditional fit).
    max_panels : int
        With more (statistic, class, feature) triples than this, the ``max_panels`` with the most
        extreme p-values (``min(p, 1 - p)`` smallest) are shown, in that order (:func:`check_panels`),
        and the figure's title says "12 of 57 statistics shown, most extreme p-values first".

    Returns
    -------
    str
        The SVG element: per panel a histogram of the replicated statistic, the observed value as a red
        line, title ``feature: statistic | class`` and the mid-p value.
    """
    panels = check_panels(check, max_panels=max_panels)
    n = len(panels)
    columns = min(4, n)
    rows = math.ceil(n / columns)
    with _style():
        fig = _figure(2.3 * columns, 0.4 + 1.8 * rows)
        axes = fig.subplots(rows, columns, squeeze=False).ravel()
        for ax, panel in zip(axes, panels, strict=False):
            values = panel["replicated"]
            finite = values[np.isfinite(values)]
            if finite.size:
                span = finite.max() - finite.min()
                edges = 20 if span > 0 else np.array([-0.5, 0.5]) * max(abs(finite[0]) * 0.1, 1e-3) + finite[0]
                ax.hist(finite, bins=edges, color=ESTIMATE_COLORS[0], alpha=0.6)
            if math.isfinite(panel["observed"]):
                ax.axvline(panel["observed"], color="#d62728", lw=1.6)
            ax.set_title(f"{panel['element']}: {panel['statistic']} | {panel['class']}", fontsize=8)
            ax.text(0.98, 0.95, f"p = {panel['p_value']:.3f}", transform=ax.transAxes, ha="right", va="top", fontsize=8)
            ax.set_yticks([])
        for ax in axes[n:]:
            ax.set_axis_off()
        total = panels[0]["total"] if panels else 0
        note = f"{n} of {total} statistics shown, most extreme p-values first" if total > n else f"{n} statistics"
        fig.suptitle(f"replicated (histogram) vs observed (red line); {note}", fontsize=8)
    return to_svg(fig)


# -- studies ----------------------------------------------------------------------------------------------------


def learning_curve_plot(
    panels: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]],
    *,
    reference: float | None = None,
    log_x: bool = True,
    colors: Mapping[str, str] | None = None,
) -> str:
    """Curves over training sizes, one panel per title: each line ``(x, mean, low, high)`` with a band.

    Parameters
    ----------
    panels : mapping
        Panel title -> line label -> four ``(k,)`` arrays: the training sizes, the mean over repeats and the band
        (e.g. the smallest and largest repeat). An infinite mean (a log loss ``inf`` of a plug-in that gives an
        observed class probability 0) is drawn as a triangle at the top of the panel, labelled ``inf`` (``-inf``: at
        the bottom, e.g. a difference to such a plug-in); NaN points are left out.
    reference : float, optional
        A horizontal line (e.g. 0 for paired differences).
    log_x : bool
        Training sizes on a log axis.
    colors : mapping, optional
        Line label -> matplotlib colour, to keep one colour per estimate across figures (default: the colour
        cycle in order of first appearance).
    """
    if not isinstance(panels, Mapping) or not panels:
        raise ValueError(f"panels must be a non-empty mapping of panel title -> lines, got {type(panels).__name__}")
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    with _style():
        fig = _figure(4.2 * columns, 3.2 * rows)
        axes = np.atleast_1d(fig.subplots(rows, columns, squeeze=False)).ravel()
        labels = list(dict.fromkeys(label for lines in panels.values() for label in lines))
        cycle = {label: f"C{index % 10}" for index, label in enumerate(labels)}
        colors = {label: (colors or {}).get(label, cycle[label]) for label in labels}  # one colour per line
        for ax, (title, lines) in zip(axes, panels.items(), strict=False):
            finite_values, infinite_points, sizes = [], [], set()
            for label, (x, mean, low, high) in lines.items():
                x, mean, low, high = (np.asarray(v, dtype=float) for v in (x, mean, low, high))
                if not x.shape == mean.shape == low.shape == high.shape or x.ndim != 1:
                    raise ValueError(f"panels[{title!r}][{label!r}]: x, mean, low, high must be 1-d of one length")
                color = colors[label]
                sizes.update(x.tolist())
                finite = np.isfinite(mean)
                ax.plot(x[finite], mean[finite], marker="o", ms=3, color=color, label=label)
                band = np.isfinite(low) & np.isfinite(high)
                ax.fill_between(x[band], low[band], high[band], color=color, alpha=0.15, lw=0)
                finite_values.extend(high[band].tolist() + mean[finite].tolist())
                infinite_points.extend((value, color, 1) for value in x[np.isposinf(mean)])
                infinite_points.extend((value, color, -1) for value in x[np.isneginf(mean)])
            if reference is not None:
                ax.axhline(reference, color="0.3", lw=0.8, ls="--")
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
            ax.set_title(str(title))
            ax.set_xlabel("training rows")
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=colors[label], marker="o", ms=3) for label in labels]
        fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(handles)), frameon=False)
        return to_svg(fig)
