"""The grids and curves of a report's input figure, predicted over evenly thinned posterior draws.

Two numeric features: P(class | x) over a grid (the other features held at their training median, or mode),
per draw and for each point estimate. One input of a latent-function family (:attr:`latent_curve`): the latent
f and P(class 1 | x) along the input, per draw, and the generator's true latent where the data carry it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.evaluation import report_data as rd
from bayesclass.inference.evaluation.parameters import point_estimate_kinds
from bayesclass.inference.prediction.predict import predict
from bayesclass.inference.result import ResultInfo

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["CALIBRATION_DRAWS", "FIGURE_DRAWS", "GRID_POINTS", "boundary", "latent_curve", "thinned"]

#: the draws a report predicts with (evenly thinned): figures and bands, not the scores (those use every draw)
FIGURE_DRAWS = 200
#: the posterior draws the reliability diagrams predict with (evenly thinned): one per replicated outcome vector of
#: their consistency bands (``reports.figures.reliability_plot``'s ``n_replicates``), so no draw is predicted unused
CALIBRATION_DRAWS = 100
#: grid points per axis of the decision-boundary grid
GRID_POINTS = 60
#: points along the input of the latent curve
CURVE_POINTS = 200


def thinned(result, max_draws: int = FIGURE_DRAWS):
    """``result`` with at most ``max_draws`` evenly spaced posterior draws (for figures: bands over draws).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    max_draws : int, default FIGURE_DRAWS
        The most draws kept, over all chains.

    Returns
    -------
    xarray.DataTree
        ``result`` itself where it has no more draws (or none), else a copy with every ``step``-th draw of each
        chain.
    """
    if "posterior" not in result.children:
        return result
    posterior = result["posterior"].to_dataset()
    total = posterior.sizes["chain"] * posterior.sizes["draw"]
    if total <= max_draws:
        return result
    step = math.ceil(total / max_draws)
    out = result.copy()
    out["posterior"] = xr.DataTree(posterior.isel(draw=slice(None, None, step)))
    return out


def boundary(result, info: ResultInfo, features: tuple[str, str]) -> rd.Boundary:
    """P(class | x) over a grid of the two ``features``, per thinned draw and for each point estimate.

    With the training points; not drawn unless both features are numeric.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    info : ResultInfo
        Its :func:`result_info`.
    features : tuple of (str, str)
        Names of two fitted features.

    Returns
    -------
    Boundary
        The grid, its probabilities and the training points (``numeric`` False and nothing else where a feature
        is not numeric).
    """
    feature_names = list(info.feature_names)
    kinds = list(info.data.feature_kinds)
    columns = [feature_names.index(name) for name in features]
    column_kinds = (kinds[columns[0]], kinds[columns[1]])
    if any(kind not in ("continuous", "count") for kind in column_kinds):
        return rd.Boundary(features=features, kinds=column_kinds, numeric=False)
    X = result["constant_data"]["X"].values
    y = result["observed_data"]["y"].values
    axes = []
    for j in columns:
        low, high = float(X[:, j].min()), float(X[:, j].max())
        pad = 0.05 * (high - low or 1.0)
        axes.append(np.linspace(low - pad, high + pad, GRID_POINTS))
    mesh = np.meshgrid(axes[0], axes[1])
    grid = np.tile(_typical_row(X, kinds), (GRID_POINTS * GRID_POINTS, 1))
    grid[:, columns[0]] = mesh[0].ravel()
    grid[:, columns[1]] = mesh[1].ravel()
    figure_result = thinned(result)
    prediction = predict(figure_result, grid, return_draws="posterior" in figure_result.children, draws="all")
    shape = (GRID_POINTS, GRID_POINTS, prediction.sizes["class"])
    if "class_proba_draws" in prediction:
        draws = prediction["class_proba_draws"].transpose("chain", "draw", "obs", "class").values
        proba_draws = draws.reshape(-1, *shape)
    else:
        proba_draws = prediction["class_proba"].transpose("obs", "class").values.reshape(1, *shape)
    point = {
        kind: prediction[f"class_proba_{kind}"].transpose("obs", "class").values.reshape(shape)
        for kind in point_estimate_kinds(result)
    }
    return rd.Boundary(
        features=features,
        kinds=column_kinds,
        numeric=True,
        axes=(axes[0], axes[1]),
        proba_draws=proba_draws,
        point_proba=point,
        X=X[:, columns],
        y=y,
        class_names=info.class_names,
        held_fixed=tuple(name for j, name in enumerate(feature_names) if j not in columns),
    )


def _typical_row(X: np.ndarray, kinds: Sequence[str]) -> np.ndarray:
    """The training median of each numeric column, the most frequent value of each categorical or binary one."""
    row = np.median(X, axis=0)
    for j, kind in enumerate(kinds):
        if kind in ("categorical", "binary"):
            values, counts = np.unique(X[:, j], return_counts=True)
            row[j] = values[np.argmax(counts)]
    return row


def latent_curve(result, info: ResultInfo, *, random_seed: int = 0) -> rd.LatentCurve:
    """Latent f and P(class 1 | x) along the one input, per thinned draw and for each point estimate.

    The latent is the conditional mean plus its spread: one draw of f* per posterior draw.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    info : ResultInfo
        Its :func:`result_info`.
    random_seed : int, default 0
        Seed of the draws of f*.

    Returns
    -------
    LatentCurve
        The curves, the training points and, where the data carry it, the true latent.
    """
    model = info.model
    X = result["constant_data"]["X"].values
    y = result["observed_data"]["y"].values
    low, high = float(X.min()), float(X.max())
    pad = 0.05 * (high - low or 1.0)
    x = np.linspace(low - pad, high + pad, CURVE_POINTS)
    inputs = model_inputs(result, x[:, np.newaxis])
    figure_result = thinned(result)
    latent_draws = proba_draws = None
    if "posterior" in figure_result.children:
        posterior = figure_result["posterior"].to_dataset()
        moments = model.latent_predictive(posterior, inputs)
        mean = moments["latent_mean"].transpose(..., "obs").values.reshape(-1, x.size)
        sd = np.sqrt(moments["latent_variance"].transpose(..., "obs").values.reshape(-1, x.size))
        latent_draws = mean + sd * np.random.default_rng(random_seed).standard_normal(mean.shape)
        prediction = predict(figure_result, x[:, np.newaxis], return_draws=True, draws="all")  # already thinned
        proba_draws = prediction["class_proba_draws"].isel({"class": 1}).transpose("chain", "draw", "obs").values
        proba_draws = proba_draws.reshape(-1, x.size)
    else:
        prediction = predict(figure_result, x[:, np.newaxis])
    point_latent, point_proba = {}, {}
    for kind in point_estimate_kinds(result):
        params = result[f"point_estimate_{kind}"].to_dataset()
        point_latent[kind] = model.latent_predictive(params, inputs)["latent_mean"].values.ravel()
        point_proba[kind] = prediction[f"class_proba_{kind}"].isel({"class": 1}).values
    true_latent = None
    if "true_class_proba" in result["constant_data"]:
        true_latent = model.latent_from_proba(result["constant_data"]["true_class_proba"].isel({"class": 1}).values)
    if (
        latent_draws is None or proba_draws is None
    ):  # a point estimate only (the Laplace fit): its curve stands for the posterior's
        first = next(iter(point_latent))
        latent_draws, proba_draws = point_latent[first][np.newaxis], point_proba[first][np.newaxis]
    return rd.LatentCurve(
        x=x,
        latent_draws=latent_draws,
        proba_draws=proba_draws,
        X=X[:, 0],
        y=y,
        true_latent=true_latent,
        point_latent=point_latent,
        point_proba=point_proba,
        feature_name=info.feature_names[0] if info.feature_names else "x",
        class_names=info.class_names,
    )
