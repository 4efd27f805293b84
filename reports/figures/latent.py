"""The latent function and class probability of a one-input binary classifier (the GP on 1-D data)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bayesclass.reports.figures._svg import (
    CLASS_COLORS,
    ESTIMATE_COLORS,
    MAX_VECTOR_POINTS,
    _array,
    _codes,
    _figure,
    _interval,
    _style,
    _subsample,
    to_svg,
)

__all__ = ["latent_curve_plot"]


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
    overlays = _overlays(m, point_latent, point_proba, true_latent, true_points)
    point_latent, point_proba, true_latent, true_points = overlays
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
            top.scatter(*true_points, s=9, color="black", zorder=4, label="true latent (training inputs)")
        for j, label in enumerate(dict.fromkeys([*point_latent, *point_proba])):
            color = ESTIMATE_COLORS[1 + j % (len(ESTIMATE_COLORS) - 1)]
            if label in point_latent:
                top.plot(xs, point_latent[label], color=color, ls="--", lw=1.4, label=label)
            if label in point_proba:
                bottom.plot(xs, point_proba[label], color=color, ls="--", lw=1.4, label=label)
        _training_rugs(bottom, inputs, codes, class_names)
        bottom.set_ylim(-0.08, 1.08)
        bottom.set_xlabel(feature_name)
        top.legend(loc="best", frameon=False)
        bottom.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return to_svg(fig)


def _overlays(m: int, point_latent, point_proba, true_latent, true_points) -> tuple:
    """The checked optional curves of :func:`latent_curve_plot`.

    ``(point_latent, point_proba, true_latent, true_points)``: the mappings as dicts with str keys,
    ``true_points`` as ``(x, latent)`` arrays or ``None``.
    """
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
        true_points = (true_x, true_values)
    return point_latent, point_proba, true_latent, true_points


def _training_rugs(ax, inputs: np.ndarray, codes: np.ndarray, class_names: list[str]) -> None:
    """The (subsampled) training inputs of each class as a jittered rug at its code (0 or 1) on ``ax``."""
    shown = _subsample(inputs.size)
    jitter = np.random.default_rng(0).uniform(-0.03, 0.03, shown.size)
    for k, name in enumerate(class_names):
        rows = codes[shown] == k
        ax.scatter(
            inputs[shown][rows],
            k + jitter[rows],
            s=6,
            marker="|",
            color=CLASS_COLORS[k],
            alpha=0.6,
            label=f"{name} (training)",
            rasterized=bool(shown.size > MAX_VECTOR_POINTS),
        )
