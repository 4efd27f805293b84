"""Bayesian-vs-point-estimate comparison: parameters side by side, and held-out scores.

Everything is computed from a fitted result (``inference.fit``) so the posterior,
the MAP and the MLE are compared like for like: the same ``class_log_proba``
turns each into class probabilities.
"""

from __future__ import annotations

import json
import math

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.inference import DEFAULT_INTERVAL_PROB, diagnose, model_of
from bayesclass.inference.evaluation.heldout import ESTIMATE_LABELS, evaluate
from bayesclass.inference.prediction.decisions import LossMatrix

azs = lazy_import("arviz_stats")
xr = lazy_import("xarray")

__all__ = [
    "ESTIMATE_LABELS",
    "format_comparison",
    "format_scores",
    "parameter_comparison",
    "point_estimate_kinds",
    "zero_probability_notes",
]


def point_estimate_kinds(result: xr.DataTree) -> list[str]:
    """The kinds of the ``point_estimate_<kind>`` groups stored in ``result``, in storage order."""
    return [name.removeprefix("point_estimate_") for name in result.children if name.startswith("point_estimate_")]


def _standardized(attrs) -> str:
    """Which columns the fit standardised (results written before the record existed: yes/no)."""
    if "standardized_features" not in attrs:
        return "yes" if attrs["standardize"] else "no"
    names = json.loads(attrs["standardized_features"])
    return ", ".join(names) if names else "none"


def _label(kind: str) -> str:
    return ESTIMATE_LABELS.get(kind, kind)


#: (column, header, format) of the score table as ``compare`` prints it; truth columns only where known
SCORE_COLUMNS = (
    ("log_loss", "log loss", ".4f"),
    ("brier", "Brier", ".4f"),
    ("accuracy", "accuracy", ".3f"),
    ("balanced_accuracy", "bal. acc.", ".3f"),
    ("ece", "ECE", ".3f"),
    ("calibration_mcb", "MCB", ".4f"),
    ("kl_to_truth", "KL truth", ".4f"),
    ("truth_coverage", "coverage", ".2f"),
    ("mean_loss", "mean loss", ".4f"),
)


def format_scores(table, *, title: str) -> list[str]:
    """Lines of a score table (:func:`bayesclass.inference.evaluation.scores.score_table`): one row per estimate; ``-``
    where a metric does not apply (a baseline without probabilities), ``inf`` kept, and a note per estimate
    whose log loss is infinite."""
    columns = [(name, header, spec) for name, header, spec in SCORE_COLUMNS if name in table.columns]
    columns = [column for column in columns if not table[column[0]].isna().all()]
    width = max(34, *(len(str(label)) for label in table.index))
    lines = [f"{title}:", f"  {'estimate':<{width}} " + " ".join(f"{header:>9}" for _, header, _ in columns)]
    for label, row in table.iterrows():
        cells = []
        for name, _, spec in columns:
            value = row[name]
            cells.append(
                f"{'-':>9}" if math.isnan(value) else f"{'inf':>9}" if math.isinf(value) else f"{value:>9{spec}}"
            )
        lines.append(f"  {str(label):<{width}} " + " ".join(cells))
    lines.extend(f"  {note}" for note in zero_probability_notes(table))
    if table.attrs.get("left_out_baselines"):
        lines.append(f"  baselines left out: {table.attrs['left_out_baselines']}")
    lines.append(
        f"  ({table.attrs.get('descriptions', {}).get('ece', 'ECE: top-label calibration error')}; MCB: miscalibration "
        "of the CORP decomposition of the Brier score; '-': the estimate gives no probabilities)"
    )
    return lines


def zero_probability_notes(table) -> list[str]:
    """One line per estimate of a score table whose log loss is infinite (rows giving the observed class
    probability 0) or that leaves rows undefined (probability 0 under every class)."""
    notes = []
    for label, row in table.iterrows():
        if row.get("n_zero_probability", 0) > 0:
            notes.append(
                f"{label}: log loss inf, {int(row['n_zero_probability'])} of {int(row['n_rows'])} rows give the "
                "observed class probability 0"
            )
        if row.get("n_undefined", 0) > 0:
            notes.append(f"{label}: {int(row['n_undefined'])} rows undefined (probability 0 under every class)")
    return notes


def parameter_comparison(
    result: xr.DataTree, *, interval_prob: float = DEFAULT_INTERVAL_PROB
) -> list[dict[str, object]]:
    """One row per parameter element: posterior mean, sd and ETI beside every stored point estimate.

    The parameters are those of ``model.summary_parameter_names`` (all when None).

    Rows are dicts with keys ``parameter``, ``mean``, ``sd``, ``low``, ``high``
    and one key per point estimate kind of the family (``map``, ``mle``, ...;
    ``None`` where an estimate is absent). The family's derived quantities
    (``model.derived_quantities``, e.g. the linear discriminants ``w_k, w_k0`` of a
    shared-covariance Gaussian model) follow the parameters, computed per draw
    for the posterior columns.
    """
    model = model_of(result)

    def with_derived(params: xr.Dataset) -> xr.Dataset:
        return params.merge(model.derived_quantities(params))

    sources: dict[str, xr.Dataset] = {}
    if "posterior" in result:
        posterior = with_derived(result["posterior"].to_dataset())
        bounds = azs.eti(posterior, prob=interval_prob, dim=("chain", "draw"))
        sources.update(
            mean=posterior.mean(("chain", "draw")),
            sd=posterior.std(("chain", "draw"), ddof=1),
            low=bounds.sel(ci_bound="lower", drop=True),
            high=bounds.sel(ci_bound="upper", drop=True),
        )
    kinds = point_estimate_kinds(result)
    for kind in kinds:
        sources[kind] = with_derived(result[f"point_estimate_{kind}"].to_dataset())
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
            for column in ("mean", "sd", "low", "high", *kinds):
                present = column in sources and name in sources[column]
                row[column] = float(sources[column][name].isel(selection)) if present else None
            rows.append(row)
    return rows


def format_comparison(
    result: xr.DataTree,
    heldout: dict[str, Dataset] | None = None,
    *,
    baselines: tuple[str, ...] = (),
    loss: LossMatrix | None = None,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    max_rows: int = 40,
) -> str:
    """The plain-text comparison printed by ``bayesclass compare``: parameters side by side, then for each
    held-out split the scores of every estimate and baseline
    (:func:`bayesclass.inference.evaluation.heldout.evaluate`)."""
    attrs = result.attrs
    lines = [
        f"model {attrs['model']} {attrs['model_hyperparameters']}",
        f"data {attrs['data_name']} (fingerprint {attrs['data_fingerprint'][:12]}), method {attrs['method']}, "
        f"seed {attrs['random_seed']}, standardized features: {_standardized(attrs)}",
    ]
    if "sample_stats" in result and "compile_seconds" in attrs:
        lines.append(
            f"NUTS: compile {attrs['compile_seconds']:.1f} s (cache hit: "
            f"{'yes' if attrs['compile_cache_hit'] else 'no'}), "
            f"sampling {attrs['sampling_seconds']:.1f} s, settings {attrs['sampler_settings']}"
        )
    elif "sample_stats" in result:
        lines.append(
            f"{attrs['method']}: sampling {attrs['sampling_seconds']:.1f} s (nothing compiled), settings "
            f"{attrs['sampler_settings']}"
        )
    elif "posterior" in result:
        lines.append(f"exact conjugate draws: {attrs['sampling_seconds']:.3f} s, settings {attrs['sampler_settings']}")
    if "posterior" in result:
        lines.append(str(diagnose(result)))
    status = json.loads(attrs.get("point_estimate_status", "{}"))
    for kind, reason in status.items():
        if reason != "exists":
            lines.append(f"{_label(kind)}: {reason}")
    kinds = point_estimate_kinds(result)
    rows = parameter_comparison(result, interval_prob=interval_prob)
    interval = f"{interval_prob:.0%} ETI"
    lines.append("")
    lines.append(
        f"{'parameter':<38} {'post. mean':>10} {'post. sd':>9} {interval:>21} "
        + " ".join(f"{_label(kind)[:10]:>10}" for kind in kinds)
    )

    def number(value: object, width: int) -> str:
        return f"{value:>{width}.4g}" if value is not None else f"{'-':>{width}}"

    for row in rows[:max_rows]:
        band = f"[{row['low']:.3g}, {row['high']:.3g}]" if row["low"] is not None else "-"
        lines.append(
            f"{row['parameter'][:38]:<38} {number(row['mean'], 10)} {number(row['sd'], 9)} {band:>21} "
            + " ".join(number(row[kind], 10) for kind in kinds)
        )
    if len(rows) > max_rows:
        lines.append(f"... {len(rows) - max_rows} more parameters (see the saved result)")
    for split, data in (heldout or {}).items():
        table = evaluate(result, data, baselines=baselines, loss=loss, interval_prob=interval_prob)
        lines.append("")
        lines.extend(format_scores(table, title=f"held-out {split} ({data.n_obs} rows)"))
    return "\n".join(lines)
