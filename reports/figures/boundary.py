"""Decision boundaries of two features: the posterior mean's, its credible band and the point estimates'."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayesclass.reports.figures._svg import (
    CLASS_COLORS,
    CLASS_MARKERS,
    ESTIMATE_COLORS,
    _array,
    _codes,
    _figure,
    _interval,
    _style,
    _subsample,
    to_svg,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist

__all__ = ["boundary_band", "boundary_plot"]


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

    gx, gy, draws, points, codes, class_names = _boundary_inputs(
        grid, proba_draws, point_proba, X, y, class_names, feature_names
    )
    n_classes = len(class_names)
    band = boundary_band(draws, interval_prob=interval_prob)
    mean = draws.mean(axis=0)
    with _style():
        fig = _figure(6.0, 4.6)
        ax = fig.add_subplot()
        handles: list[Artist] = []  # legend handles: lines and the band's patch
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
        handles.extend(_training_points(ax, points, codes, class_names))
        ax.set_xlim(gx.min(), gx.max())
        ax.set_ylim(gy.min(), gy.max())
        ax.set_xlabel(feature_names[0])
        ax.set_ylabel(feature_names[1])
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=3, frameon=False)
    return to_svg(fig)


def _boundary_inputs(grid, proba_draws, point_proba, X, y, class_names, feature_names) -> tuple:
    """The checked inputs of :func:`boundary_plot`: ``(gx, gy, draws, points, codes, class_names)``."""
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
    return gx, gy, draws, points, codes, class_names


def _training_points(ax, points: np.ndarray, codes: np.ndarray, class_names: Sequence[str]) -> list:
    """Scatter the (subsampled) training points of each class on ``ax``; returns one legend handle per class."""
    from matplotlib.lines import Line2D

    handles = []
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
    return handles
