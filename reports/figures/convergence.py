"""MCMC convergence figures: rank and trace plots by ``arviz_plots``, of a capped posterior."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.reports.figures._svg import _style, to_svg

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["capped_posterior", "rank_plot", "trace_plot"]


def capped_posterior(posterior, var_names: Sequence[str], *, max_elements: int = 12):
    """The variables ``var_names`` of ``posterior``, each cut to its first ``max_elements`` elements.

    A variable with more than one dimension besides ``chain`` and ``draw`` is flattened (C order) into
    one dimension ``<name>_element`` whose labels join the coordinates with ", " (``covariance[setosa, x1, x2]``,
    as in :func:`~bayesclass.inference.evaluation.parameters.parameter_comparison`).

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain`` and ``draw`` (``result["posterior"].to_dataset()``).
    var_names : sequence of str
        The variables to keep, in order.
    max_elements : int, default 12
        The most elements kept of each variable (its first ones).

    Returns
    -------
    (xarray.Dataset, dict)
        The selection, and ``{name: (shown, total)}`` for every variable that was cut.

    Raises
    ------
    ValueError
        If ``posterior`` is not a Dataset with dims ``chain`` and ``draw``, ``var_names`` is empty, a string
        or names a missing variable, or ``max_elements`` is not a positive integer.
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
    only the first ``max_elements`` are drawn and the title says when some are left out.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain`` and ``draw`` (``result["posterior"].to_dataset()``).
    var_names : sequence of str
        The variables to show, in order.
    max_elements : int, default 12
        A vector variable shows its first ``max_elements`` elements only (see :func:`capped_posterior`);
        when any is cut, the figure's title says so.

    Returns
    -------
    str
        The SVG element (:func:`to_svg`); the trace lines are rasterized inside it.
    """
    return _arviz_plot("plot_trace_dist", "trace", posterior, var_names, max_elements=max_elements)


def _arviz_plot(plot: str, dense_lines: str, posterior, var_names: Sequence[str], *, max_elements: int) -> str:
    """An arviz_plots figure of the capped posterior (``plot``: its function name).

    One-line panel titles, the ``dense_lines`` visual rasterized, and the cap note in the title.
    """
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
