"""MCMC convergence figures: rank and trace plots by ``arviz_plots``, one panel per parameter element.

The report shows only the elements worst by r_hat / ESS (chosen from the convergence table by
:mod:`bayesclass.reports.sections`); :func:`element_draws` turns those element labels (``weights[x1, a]``, as the
table names them) into one scalar variable each, so ArviZ draws one small panel per element with one line per chain.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bayesclass._lazy import lazy_import
from bayesclass.reports.figures._svg import _style, to_svg

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = [
    "MAX_PANELS",
    "RANK_ALPHA",
    "RANK_DRAWS",
    "element_draws",
    "element_labels",
    "rank_plot",
    "rank_thinning",
    "trace_plot",
]

#: the most parameter elements one rank or trace figure draws (one panel, or one row, each)
MAX_PANELS = 16
#: the rank plot keeps at most about this many draws per chain (every k-th draw): its multi-chain uniformity test
#: and ECDF lines cost time in proportion to the draws, and 250 per chain show the same departures
RANK_DRAWS = 250
#: the level of the rank plot's multi-chain uniformity test (its marked points) and of its y-range
RANK_ALPHA = 0.01
#: panel titles longer than this many characters are broken after a comma (neighbouring titles ran together)
LABEL_WIDTH = 34


def element_labels(posterior) -> dict[str, tuple[str, dict]]:
    """Every element of ``posterior``'s variables by its label, as the convergence table names them.

    The labels are ArviZ's flat labels (``arviz_base.labels.BaseLabeller``): ``name`` for a scalar,
    ``name[c1, c2]`` with the coordinate values otherwise, the rows of ``arviz_stats.summary``.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain`` and ``draw``.

    Returns
    -------
    dict
        ``{label: (variable name, selection)}`` in the Dataset's order, the selection a ``{dim: value}`` mapping.
    """
    from arviz_base.labels import BaseLabeller
    from arviz_base.sel_utils import xarray_sel_iter

    _check_posterior(posterior)
    labelled = posterior.drop_vars([name for name in posterior.coords if name not in posterior.dims])
    labeller = BaseLabeller()
    return {
        labeller.make_label_flat(name, sel, isel): (name, sel)
        for name, sel, isel in xarray_sel_iter(labelled, skip_dims={"chain", "draw"})
    }


def element_draws(posterior, elements: Sequence[str]):
    """The draws of ``elements``, one scalar variable each, named by its label, in the order given.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain`` and ``draw`` (``result["posterior"].to_dataset()``).
    elements : sequence of str
        Element labels as the convergence table names them (``weights[mean radius]``, see
        :func:`element_labels`); a variable's name stands for all its elements.

    Returns
    -------
    xarray.Dataset
        One ``(chain, draw)`` variable per element.

    Raises
    ------
    ValueError
        If ``posterior`` is not a Dataset with dims ``chain`` and ``draw``, ``elements`` is empty or a string,
        names neither an element nor a variable, or comes to more than :data:`MAX_PANELS` elements.
    """
    _check_posterior(posterior)
    if isinstance(elements, str) or not elements:
        raise ValueError(f"elements must be a non-empty sequence of element labels, got {elements!r}")
    labels = element_labels(posterior)
    chosen: list[str] = []
    for item in elements:
        if item in labels:
            chosen.append(item)
        elif item in posterior.data_vars:
            chosen.extend(label for label, (name, _) in labels.items() if name == item)
        else:
            shown = ", ".join(list(labels)[:6]) + (", ..." if len(labels) > 6 else "")
            raise ValueError(f"elements: {item!r} is neither an element nor a variable of posterior; it has {shown}")
    chosen = list(dict.fromkeys(chosen))
    if len(chosen) > MAX_PANELS:
        raise ValueError(
            f"elements come to {len(chosen)} parameter elements; a figure draws at most {MAX_PANELS}: pass the "
            "worst ones by r_hat / ESS (the convergence table's rows)"
        )
    draws = {}
    for label in chosen:
        name, sel = labels[label]
        variable = posterior[name].sel(sel).transpose("chain", "draw")
        draws[label] = variable.drop_vars([c for c in variable.coords if c not in ("chain", "draw")])
    selection = xr.Dataset(draws)
    # ArviZ's rank plot mistakes the ECDF's dims without chain and draw coordinates (one line per step)
    missing = {dim: range(selection.sizes[dim]) for dim in ("chain", "draw") if dim not in selection.coords}
    return selection.assign_coords(missing)


def rank_thinning(n_draws: int) -> int:
    """The step ``k`` of the draws a rank plot keeps (every k-th), so that about :data:`RANK_DRAWS` per chain remain.

    Parameters
    ----------
    n_draws : int
        Draws per chain.

    Returns
    -------
    int
        1 for at most ``RANK_DRAWS`` draws, else ``ceil(n_draws / RANK_DRAWS)``.
    """
    return max(1, math.ceil(n_draws / RANK_DRAWS))


def rank_plot(posterior, elements: Sequence[str], *, thin: int | None = None, title: str | None = None) -> str:
    """Fractional rank Delta-ECDF plots per chain (``arviz_plots.plot_rank``), one panel per element.

    ArviZ's per-panel p-value annotation is left out (the caption says in words what the lines mean); its
    highlighted points (where a chain's ranks depart from uniform beyond chance) stay.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain`` and ``draw`` (``result["posterior"].to_dataset()``).
    elements : sequence of str
        The elements to show, in order (see :func:`element_draws`), at most :data:`MAX_PANELS`.
    thin : int, optional
        Keep every ``thin``-th draw of each chain; default :func:`rank_thinning` of the draws per chain.
    title : str, optional
        The figure's title (:func:`~bayesclass.reports.figures._svg.to_svg`).

    Returns
    -------
    str
        The SVG element (:func:`to_svg`); the ECDF lines are rasterized inside it.

    Raises
    ------
    ValueError
        As :func:`element_draws`; or ``thin`` is not a positive integer.
    """
    import arviz_plots as azp

    selection, labeller = _plain_names(element_draws(posterior, elements))
    step = rank_thinning(selection.sizes["draw"]) if thin is None else thin
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise ValueError(f"thin must be a positive integer (keep every thin-th draw), got {thin!r}")
    selection = selection.isel(draw=slice(None, None, step))
    columns = min(3, len(selection.data_vars))
    with _style():
        collection = azp.plot_rank(
            selection,
            backend="matplotlib",
            envelope_prob=1 - RANK_ALPHA,
            labeller=labeller,
            visuals={"ecdf_lines": {"rasterized": True}, "title": {"size": 8}},
            col_wrap=columns,
            figure_kwargs={
                "layout": "constrained",
                "figsize": (2.6 * columns, 0.4 + 1.7 * math.ceil(len(selection.data_vars) / columns)),
            },
        )
        fig = collection.get_viz("figure")
        for ax in fig.axes:  # ArviZ's "p=1.00(α=0.01)" annotations: plot_rank 1.3 takes no switch for them
            for text in list(ax.texts):
                text.remove()
    return to_svg(fig, title=title)


def trace_plot(posterior, elements: Sequence[str], *, title: str | None = None) -> str:
    """Marginal densities and traces per chain (``arviz_plots.plot_trace_dist``), one row per element.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain`` and ``draw`` (``result["posterior"].to_dataset()``).
    elements : sequence of str
        The elements to show, in order (see :func:`element_draws`), at most :data:`MAX_PANELS`.
    title : str, optional
        The figure's title (:func:`~bayesclass.reports.figures._svg.to_svg`).

    Returns
    -------
    str
        The SVG element (:func:`to_svg`); the trace lines are rasterized inside it.

    Raises
    ------
    ValueError
        As :func:`element_draws`.
    """
    import arviz_plots as azp

    selection, labeller = _plain_names(element_draws(posterior, elements))
    with _style():
        collection = azp.plot_trace_dist(
            selection,
            backend="matplotlib",
            compact=False,  # one colour per chain (compact: one per element, chains by line style)
            labeller=labeller,
            visuals={"trace": {"rasterized": True, "alpha": 0.7, "linewidth": 0.6}},  # chains show through
            figure_kwargs={"layout": "constrained", "figsize": (7.0, 0.4 + 1.2 * len(selection.data_vars))},
        )
        for name in selection.data_vars:  # the element's name once, under its density: not beside the trace too
            collection.get_target(name, {"column": "trace"}).set_ylabel("")
        fig = collection.get_viz("figure")
    return to_svg(fig, title=title)


def _check_posterior(posterior) -> None:
    if not isinstance(posterior, xr.Dataset):
        raise ValueError(
            f"posterior must be an xarray.Dataset with dims chain and draw, got {type(posterior).__name__}"
        )
    if not {"chain", "draw"} <= set(posterior.dims):
        raise ValueError(f"posterior must have dims chain and draw; got dims {tuple(posterior.dims)}")


def _plain_names(selection):
    """``selection`` with variables ``element_0``, ``element_1``, ... and a labeller that titles them by label.

    ArviZ puts the variables in a DataTree, whose names may not hold "/" (a feature ``od280/od315``).
    """
    from arviz_base.labels import BaseLabeller

    labels = {f"element_{i}": str(label) for i, label in enumerate(selection.data_vars)}

    class ElementLabeller(BaseLabeller):
        """Panel titles: the element's label, broken after a comma where longer than :data:`LABEL_WIDTH`."""

        def make_label_flat(self, var_name, sel, isel):
            label = labels.get(var_name, var_name)
            return textwrap.fill(label, LABEL_WIDTH, break_long_words=False, break_on_hyphens=False)

        def make_label_vert(self, var_name, sel, isel):
            return self.make_label_flat(var_name, sel, isel)

    renamed = selection.rename_vars({label: name for name, label in labels.items()})
    return renamed, ElementLabeller()
