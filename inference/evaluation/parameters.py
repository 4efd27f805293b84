"""The posterior beside every point estimate, parameter by parameter: what reports and ``compare`` tabulate.

Computed from a fitted result so the posterior, the MAP and the MLE are compared like for like: the same
parameter names, the family's derived quantities (``model.derived_quantities``) computed per draw and for
each estimate alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.prediction.predict import DEFAULT_INTERVAL_PROB
from bayesclass.inference.result import gaussian_approximation, model_of

if TYPE_CHECKING:
    import arviz_stats as azs
    import xarray as xr
else:
    azs = lazy_import("arviz_stats")
    xr = lazy_import("xarray")

__all__ = ["derived_names", "parameter_comparison", "point_estimate_kinds"]


def point_estimate_kinds(result: xr.DataTree) -> list[str]:
    """The kinds of the ``point_estimate_<kind>`` groups stored in ``result``, in storage order.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.

    Returns
    -------
    list of str
        The kinds (``"map"``, ``"mle"``, ...).
    """
    return [name.removeprefix("point_estimate_") for name in result.children if name.startswith("point_estimate_")]


def derived_names(result: xr.DataTree) -> set[str]:
    """The names of the family's derived quantities for ``result``'s parameters (empty when it derives none).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.

    Returns
    -------
    set of str
        The derived quantities' names (``model.derived_quantities``).
    """
    kinds = point_estimate_kinds(result)
    group = "posterior" if "posterior" in result.children else (f"point_estimate_{kinds[0]}" if kinds else None)
    if group is None:
        return set()
    return {str(name) for name in model_of(result).derived_quantities(result[group].to_dataset()).data_vars}


def parameter_comparison(
    result: xr.DataTree, *, interval_prob: float = DEFAULT_INTERVAL_PROB
) -> list[dict[str, object]]:
    """One row per parameter element: posterior mean, sd, ETI and HDI beside every stored point estimate.

    The parameters are those of ``model.summary_parameter_names`` (all when None).

    Rows are dicts with keys ``parameter``, ``mean``, ``sd``, ``low``, ``high`` (the equal-tailed interval),
    ``hdi_low``, ``hdi_high`` (the highest-density interval of the same probability, ``arviz_stats.hdi``)
    and one key per point estimate kind of the family (``map``, ``mle``, ...;
    ``None`` where an estimate is absent), each with ``<kind>_se``, ``<kind>_low`` and ``<kind>_high``: its
    standard error and Wald interval of probability ``interval_prob`` where the result stores its covariance
    (:func:`~bayesclass.inference.result.gaussian_approximation`; ``None`` elsewhere, e.g. for derived
    quantities). The family's derived quantities
    (``model.derived_quantities``, e.g. the linear discriminants ``w_k, w_k0`` of a
    shared-covariance Gaussian model) follow the parameters, computed per draw
    for the posterior columns.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    interval_prob : float, default DEFAULT_INTERVAL_PROB
        Probability mass of the posterior's equal-tailed and highest-density intervals and of the point
        estimates' Wald intervals.

    Returns
    -------
    list of dict
        One row per parameter element, as described above.
    """
    model = model_of(result)

    def with_derived(params: xr.Dataset) -> xr.Dataset:
        return params.merge(model.derived_quantities(params))

    sources: dict[str, xr.Dataset] = {}
    if "posterior" in result:
        posterior = with_derived(result["posterior"].to_dataset())
        bounds = azs.eti(posterior, prob=interval_prob, dim=("chain", "draw"))
        densest = azs.hdi(posterior, prob=interval_prob, dim=("chain", "draw"))
        sources.update(
            mean=posterior.mean(("chain", "draw")),
            sd=posterior.std(("chain", "draw"), ddof=1),
            low=bounds.sel(ci_bound="lower", drop=True),
            high=bounds.sel(ci_bound="upper", drop=True),
            hdi_low=densest.sel(ci_bound="lower", drop=True),
            hdi_high=densest.sel(ci_bound="upper", drop=True),
        )
    kinds = point_estimate_kinds(result)
    wald: dict[str, dict[str, tuple[float, float, float]]] = {}  # kind -> label -> (se, low, high)
    for kind in kinds:
        sources[kind] = with_derived(result[f"point_estimate_{kind}"].to_dataset())
        approximation = gaussian_approximation(result, kind)
        if approximation is not None:
            bounds = approximation.conf_int(1.0 - interval_prob)
            wald[kind] = {
                label: (float(se), float(low), float(high))
                for label, se, (low, high) in zip(approximation.labels, approximation.bse, bounds, strict=True)
            }
    reference = next(iter(sources.values()))
    shown = model.summary_parameter_names  # None: every parameter (a latent GP shows its hyperparameters only)
    derived = set(model.derived_quantities(reference).data_vars) if shown is not None else set()
    rows = []
    for name, variable in reference.data_vars.items():
        if shown is not None and name not in shown and name not in derived:
            continue
        for index in np.ndindex(variable.shape):
            selection = dict(zip(variable.dims, index, strict=True))
            labels = [str(variable[dim].values[i]) for dim, i in selection.items()]
            row: dict[str, object] = {"parameter": f"{name}[{', '.join(labels)}]" if labels else name}
            for column in ("mean", "sd", "low", "high", "hdi_low", "hdi_high", *kinds):
                present = column in sources and name in sources[column]
                row[column] = float(sources[column][name].isel(selection)) if present else None
            for kind in kinds:
                values = wald.get(kind, {}).get(str(row["parameter"]))
                for position, suffix in enumerate(("se", "low", "high")):
                    row[f"{kind}_{suffix}"] = None if values is None else values[position]
            rows.append(row)
    return rows
