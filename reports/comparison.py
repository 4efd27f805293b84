"""Bayesian-vs-point-estimate comparison: parameters side by side, and held-out scores.

Everything is computed from a fitted result (``inference.fit``) so the posterior,
the MAP and the MLE are compared like for like: the same ``class_log_proba``
turns each into class probabilities.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import arviz_stats as azs
import numpy as np
import xarray as xr
from sklearn.metrics import accuracy_score, log_loss

from bayesclass.data import Dataset
from bayesclass.inference import DEFAULT_INTERVAL_PROB, diagnose, model_of, predict

__all__ = [
    "ESTIMATE_LABELS",
    "HeldOutScores",
    "format_comparison",
    "heldout_scores",
    "parameter_comparison",
    "point_estimate_kinds",
]

#: how each point estimate kind is labelled in reports
ESTIMATE_LABELS = {
    "map": "MAP",
    "mle": "MLE",
    "posterior_mean": "post. mean",
    "unbiased": "MLE (unbiased var.)",
    "posterior_predictive": "exact predictive (Student-t)",
}


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


@dataclass(frozen=True)
class HeldOutScores:
    """Scores of one estimate's probabilities on held-out rows."""

    estimate: str
    log_loss: float
    accuracy: float
    brier: float


def heldout_scores(result: xr.DataTree, heldout: Dataset) -> list[HeldOutScores]:
    """Log loss, accuracy and multiclass Brier score of every stored estimate on ``heldout``."""
    prediction = predict(result, heldout, keep_draws=False)
    labels = np.arange(len(json.loads(result.attrs["class_names"])))
    scores = []
    predictives = model_of(result).predictive_kinds()  # exact predictives, not plug-ins (the contract says which)
    estimates = {"class_proba": "posterior (draws)"} if "posterior" in result else {}
    estimates |= {
        f"class_proba_{kind}": _label(kind) if kind in predictives else f"{_label(kind)} plug-in"
        for kind in point_estimate_kinds(result)
    }
    for variable, label in estimates.items():
        proba = prediction[variable].values
        onehot = np.eye(len(labels))[heldout.y]
        undefined = int(np.isnan(proba).any(axis=1).sum())
        if undefined:  # rows impossible under every class (e.g. a naive Bayes MLE): no score is defined
            scores.append(HeldOutScores(f"{label} ({undefined} rows undefined)", math.nan, math.nan, math.nan))
            continue
        scores.append(
            HeldOutScores(
                estimate=label,
                log_loss=float(log_loss(heldout.y, proba, labels=labels)),
                accuracy=float(accuracy_score(heldout.y, proba.argmax(axis=1))),
                brier=float(np.mean(np.sum((proba - onehot) ** 2, axis=1))),
            )
        )
    return scores


def format_comparison(
    result: xr.DataTree,
    heldout: dict[str, Dataset] | None = None,
    *,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    max_rows: int = 40,
) -> str:
    """The plain-text comparison printed by ``bayesclass compare``."""
    attrs = result.attrs
    lines = [
        f"model {attrs['model']} {attrs['model_hyperparameters']}",
        f"data {attrs['data_name']} (fingerprint {attrs['data_fingerprint'][:12]}), method {attrs['method']}, "
        f"seed {attrs['random_seed']}, standardized features: {_standardized(attrs)}",
    ]
    if "sample_stats" in result:
        lines.append(
            f"NUTS: compile {attrs['compile_seconds']:.1f} s (cache hit: "
            f"{'yes' if attrs['compile_cache_hit'] else 'no'}), "
            f"sampling {attrs['sampling_seconds']:.1f} s, settings {attrs['sampler_settings']}"
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
        lines.append("")
        lines.append(
            f"held-out {split} ({data.n_obs} rows): {'estimate':<34} {'log loss':>9} {'accuracy':>9} {'Brier':>7}"
        )
        for score in heldout_scores(result, data):
            lines.append(
                f"{'':<{len(split) + 19}}{score.estimate:<34} {score.log_loss:>9.4f} {score.accuracy:>9.3f} "
                f"{score.brier:>7.4f}"
            )
    return "\n".join(lines)
