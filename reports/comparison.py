"""Bayesian-vs-point-estimate comparison: parameters side by side, and held-out scores.

Everything is computed from a fitted result (``inference.fit``) so the posterior,
the MAP and the MLE are compared like for like: the same ``class_log_proba``
turns each into class probabilities.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import arviz_stats as azs
import numpy as np
import xarray as xr
from sklearn.metrics import accuracy_score, log_loss

from data import Dataset
from inference import DEFAULT_INTERVAL_PROB, diagnose, predict

__all__ = ["HeldOutScores", "format_comparison", "heldout_scores", "parameter_comparison"]

_ESTIMATES = {"class_proba": "posterior mean", "class_proba_map": "MAP plug-in", "class_proba_mle": "MLE plug-in"}


def parameter_comparison(result: xr.DataTree, *, interval_prob: float = DEFAULT_INTERVAL_PROB) -> list[dict[str, object]]:
    """One row per parameter element: posterior mean, sd and ETI beside the MAP and the MLE.

    Rows are dicts with keys ``parameter``, ``mean``, ``sd``, ``low``, ``high``,
    ``map``, ``mle`` (``None`` where an estimate is absent).
    """
    sources: dict[str, xr.Dataset] = {}
    if "posterior" in result:
        posterior = result["posterior"].to_dataset()
        bounds = azs.eti(posterior, prob=interval_prob, dim=("chain", "draw"))
        sources.update(
            mean=posterior.mean(("chain", "draw")),
            sd=posterior.std(("chain", "draw"), ddof=1),
            low=bounds.sel(ci_bound="lower", drop=True),
            high=bounds.sel(ci_bound="upper", drop=True),
        )
    for kind in ("map", "mle"):
        if f"point_estimate_{kind}" in result:
            sources[kind] = result[f"point_estimate_{kind}"].to_dataset()
    reference = next(iter(sources.values()))
    rows = []
    for name, variable in reference.data_vars.items():
        for index in np.ndindex(variable.shape):
            selection = dict(zip(variable.dims, index, strict=True))
            labels = [str(variable[dim].values[i]) for dim, i in selection.items()]
            row: dict[str, object] = {"parameter": f"{name}[{', '.join(labels)}]" if labels else name}
            for column in ("mean", "sd", "low", "high", "map", "mle"):
                row[column] = float(sources[column][name].isel(selection)) if column in sources else None
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
    for variable, label in _ESTIMATES.items():
        if variable not in prediction or (variable == "class_proba" and "posterior" not in result):
            continue
        proba = prediction[variable].values
        onehot = np.eye(len(labels))[heldout.y]
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
        f"seed {attrs['random_seed']}, standardized features: {'yes' if attrs['standardize'] else 'no'}",
    ]
    if "posterior" in result:
        lines.append(
            f"NUTS: compile {attrs['compile_seconds']:.1f} s (cache hit: {'yes' if attrs['compile_cache_hit'] else 'no'}), "
            f"sampling {attrs['sampling_seconds']:.1f} s, settings {attrs['sampler_settings']}"
        )
        lines.append(str(diagnose(result)))
    lines.append(f"MLE: {attrs.get('mle_status', 'not computed')}")
    rows = parameter_comparison(result, interval_prob=interval_prob)
    interval = f"{interval_prob:.0%} ETI"
    lines.append("")
    lines.append(f"{'parameter':<38} {'post. mean':>10} {'post. sd':>9} {interval:>21} {'MAP':>10} {'MLE':>10}")

    def number(value: object, width: int) -> str:
        return f"{value:>{width}.4g}" if value is not None else f"{'-':>{width}}"

    for row in rows[:max_rows]:
        band = f"[{row['low']:.3g}, {row['high']:.3g}]" if row["low"] is not None else "-"
        lines.append(
            f"{row['parameter'][:38]:<38} {number(row['mean'], 10)} {number(row['sd'], 9)} {band:>21} "
            f"{number(row['map'], 10)} {number(row['mle'], 10)}"
        )
    if len(rows) > max_rows:
        lines.append(f"... {len(rows) - max_rows} more parameters (see the saved result)")
    for split, data in (heldout or {}).items():
        lines.append("")
        lines.append(f"held-out {split} ({data.n_obs} rows): {'estimate':<16} {'log loss':>9} {'accuracy':>9} {'Brier':>7}")
        for score in heldout_scores(result, data):
            lines.append(
                f"{'':<{len(split) + 19}}{score.estimate:<16} {score.log_loss:>9.4f} {score.accuracy:>9.3f} {score.brier:>7.4f}"
            )
    return "\n".join(lines)
