"""The posterior beside every point estimate, parameter by parameter: what reports and ``compare`` tabulate.

Computed from a fitted result so the posterior, the MAP and the MLE are compared like for like: the same
parameter names, the family's derived quantities (``model.derived_quantities``) computed per draw and for
each estimate alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.evaluation.report_data import ParameterPanel
from bayesclass.inference.prediction.predict import DEFAULT_INTERVAL_PROB
from bayesclass.inference.result import ResultInfo, gaussian_approximation, model_of, result_info

if TYPE_CHECKING:
    import arviz_stats as azs
    import xarray as xr
else:
    azs = lazy_import("arviz_stats")
    xr = lazy_import("xarray")

__all__ = [
    "MAX_FOREST_PARAMETERS",
    "derived_names",
    "forest_rows",
    "parameter_comparison",
    "parameter_panels",
    "point_estimate_kinds",
]

#: the forest plot draws every parameter of a model with at most this many; of more, this many furthest from 0
MAX_FOREST_PARAMETERS = 60

#: a variable whose elements are over inputs of at most this many different units is drawn as one panel per
#: unit; over more, as one panel standardised by the posterior (or, without draws, still one panel per unit)
MAX_UNIT_PANELS = 3


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
    ``hdi_low``, ``hdi_high`` (the highest-density interval of the same probability, ``arviz_stats.hdi``),
    ``variable`` (the model variable: the parameter's kind), ``features`` (the model inputs the element is over: its
    coordinates along the dims named ``feature`` or ``*_feature``) and one key per point estimate kind of the family
    (``map``, ``mle``, ...; ``None`` where an estimate is absent), each with ``<kind>_se``, ``<kind>_low`` and
    ``<kind>_high``: its standard error and Wald interval of probability ``interval_prob`` where the result stores
    its covariance (:func:`~bayesclass.inference.result.gaussian_approximation`; ``None`` elsewhere, e.g. for
    derived quantities). The family's derived quantities (``model.derived_quantities``, e.g. the linear
    discriminants ``w_k, w_k0`` of a shared-covariance Gaussian model) follow the parameters, computed per draw for
    the posterior columns.

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
            row["variable"] = str(name)
            row["features"] = tuple(
                str(variable[dim].values[i]) for dim, i in selection.items() if _is_feature_dim(str(dim))
            )
            for column in ("mean", "sd", "low", "high", "hdi_low", "hdi_high", *kinds):
                present = column in sources and name in sources[column]
                row[column] = float(sources[column][name].isel(selection)) if present else None
            for kind in kinds:
                values = wald.get(kind, {}).get(str(row["parameter"]))
                for position, suffix in enumerate(("se", "low", "high")):
                    row[f"{kind}_{suffix}"] = None if values is None else values[position]
            rows.append(row)
    return rows


def _is_feature_dim(dim: str) -> bool:
    """Whether a parameter dim runs over model inputs (``feature``, ``other_feature``, ``continuous_feature``)."""
    return dim == "feature" or dim.endswith("_feature")


def _input_unit(name: str, info: ResultInfo) -> str:
    """The unit of one model input: ``"sd"`` (standardised), ``"0/1"`` (a coded level) or the input's own name."""
    if name in info.standardized_features:
        return "sd"
    kinds = dict(zip(info.data.feature_names, info.data.feature_kinds, strict=True))
    if kinds.get(name) in ("continuous", "count"):
        return name  # its own unit, which only its name can tell (bill_length_mm, body_mass_g)
    return "0/1"  # a binary or categorical column's code, or a treatment-coded level (island=Dream)


def _unit_text(unit: tuple[str, ...]) -> str:
    """The axis label of the elements over inputs of ``unit`` (one entry per feature dim of the variable)."""
    if not unit:
        return "value"
    if set(unit) == {"sd"}:
        return "value, in standardised input units (each input's sd = 1)"
    if set(unit) == {"0/1"}:
        return "value, over 0/1-coded inputs"
    parts = {"sd": "standardised input (sd = 1)", "0/1": "0/1-coded input"}
    return f"value, on the scale of {' x '.join(parts.get(part, part) for part in unit)}"


def _unit_short(unit: tuple[str, ...]) -> str:
    """A short name of ``unit`` for a panel's title ("standardised inputs", "input body_mass_g")."""
    parts = {"sd": "standardised inputs", "0/1": "0/1-coded inputs"}
    return " x ".join(parts.get(part, f"input {part}") for part in dict.fromkeys(unit)) or "no input"


def _standardised(row: Mapping[str, Any], kinds: tuple[str, ...]) -> dict[str, Any]:
    """``row`` as ``(value - posterior mean) / posterior sd``, every column alike (SEs divided by the sd)."""
    mean, sd = float(row["mean"]), float(row["sd"])  # a standardised panel's rows all have both, sd > 0
    bounds = tuple(f"{kind}_{side}" for kind in kinds for side in ("low", "high"))
    out = dict(row, mean=0.0, sd=1.0)
    for key in ("low", "high", "hdi_low", "hdi_high", *kinds, *bounds):
        if row.get(key) is not None:
            out[key] = (float(row[key]) - mean) / sd
    for kind in kinds:
        if row.get(f"{kind}_se") is not None:
            out[f"{kind}_se"] = float(row[f"{kind}_se"]) / sd
    return out


def parameter_panels(result: xr.DataTree, rows: Sequence[Mapping[str, Any]]) -> tuple[ParameterPanel, ...]:
    """The forest plot's panels: ``rows`` grouped by model variable (the parameter's kind) and unit.

    A variable's elements are in the units of the model inputs they are over (the dims named ``feature`` or
    ``*_feature``; a class prior or an intercept is over none): ``sd`` for a standardised input, ``0/1`` for a
    coded level, the input's own unit (which its name carries, ``body_mass_g``) otherwise. A variable whose
    elements share one unit is one panel in that unit. One over at most :data:`MAX_UNIT_PANELS` units is one
    panel per unit; over more (unstandardised inputs of different units: a Gaussian model's means in mm and
    g), one panel of ``(value - posterior mean) / posterior sd`` for every element and estimate alike, so that
    no element collapses to a point beside one of large units; without posterior draws, one panel per unit.

    Parameters
    ----------
    result : xarray.DataTree
        The fitted result ``rows`` come from.
    rows : sequence of dict
        Its :func:`parameter_comparison` rows.

    Returns
    -------
    tuple of ParameterPanel
        In the order of the variables in ``rows``.
    """
    info = result_info(result)
    kinds = tuple(point_estimate_kinds(result))
    by_variable: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_variable.setdefault(str(row.get("variable", row["parameter"])), []).append(row)
    panels = []
    for name, members in by_variable.items():
        units: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
        for row in members:
            unit = tuple(_input_unit(str(feature), info) for feature in row.get("features", ()))
            units.setdefault(unit, []).append(row)
        has_sd = all(isinstance(row.get("sd"), float) and row["sd"] > 0 for row in members)
        if len(units) <= MAX_UNIT_PANELS or not has_sd:
            for unit, unit_rows in units.items():
                title = name if len(units) == 1 else f"{name}, {_unit_short(unit)}"
                panels.append(ParameterPanel(title, _unit_text(unit), False, tuple(dict(row) for row in unit_rows)))
        else:
            label = "(value - posterior mean) / posterior sd: its inputs are in different units"
            panels.append(ParameterPanel(name, label, True, tuple(_standardised(row, kinds) for row in members)))
    return tuple(panels)


def forest_rows(
    rows: Sequence[Mapping[str, Any]], kinds: Sequence[str] = (), *, limit: int = MAX_FOREST_PARAMETERS
) -> tuple[tuple[Mapping[str, Any], ...], int]:
    """The rows the forest plot draws: all of at most ``limit``; of more, the ``limit`` furthest from 0.

    Distance from 0 is scale-free, so that rows of different units compete alike: ``|posterior mean| / posterior
    sd`` where the row has a posterior (how many sds from 0), else ``|estimate| / its SE`` of the first point
    estimate kind with a value (its Wald z), else ``|estimate|``. Those drawn keep their order.

    Parameters
    ----------
    rows : sequence of dict
        :func:`parameter_comparison` rows.
    kinds : sequence of str, default ()
        The point estimate kinds, for rows without a posterior.
    limit : int, default MAX_FOREST_PARAMETERS
        The most rows drawn.

    Returns
    -------
    (tuple of dict, int)
        The rows drawn and how many are left out.
    """
    if len(rows) <= limit:
        return tuple(rows), 0
    distance = np.array([_distance_from_zero(row, kinds) for row in rows])
    keep = np.sort(np.argsort(-distance, kind="stable")[:limit])
    return tuple(rows[i] for i in keep), len(rows) - limit


def _distance_from_zero(row: Mapping[str, Any], kinds: Sequence[str]) -> float:
    """``|value| / scale`` of a row (:func:`forest_rows`); 0 where it has no value."""
    for center, scale in (("mean", "sd"), *((kind, f"{kind}_se") for kind in kinds)):
        value = row.get(center)
        if value is None or not np.isfinite(value):
            continue
        spread = row.get(scale)
        return abs(float(value)) / float(spread) if spread is not None and spread > 0 else abs(float(value))
    return 0.0
