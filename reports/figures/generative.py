"""Posterior predictive checks of generative models: replicated vs observed feature statistics."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.reports.figures._svg import ESTIMATE_COLORS, _figure, _style, to_svg

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["check_panels", "generative_check_plot"]


def check_panels(check, *, max_panels: int = 12) -> list[dict]:
    """The panels of :func:`generative_check_plot`, most extreme p-value first.

    Parameters
    ----------
    check : xarray.Dataset
        Output of :func:`bayesclass.inference.posterior_predictive_check`.
    max_panels : int
        At most this many panels are returned.

    Returns
    -------
    list of dict
        Keys ``statistic``, ``class``, ``element`` (the feature, or the categorical level),
        ``observed`` (float), ``replicated`` ((R,) array), ``p_value`` and ``total`` (the number of
        panels before the cut). Every (statistic, class, element) with a non-NaN p-value is a
        candidate; they are sorted by ``min(p, 1 - p)`` ascending (ties: statistic, class, element in
        storage order) and the first ``max_panels`` kept.
    """
    if not isinstance(check, xr.Dataset):
        raise ValueError(f"check must be the xarray.Dataset of posterior_predictive_check, got {type(check).__name__}")
    statistics = [
        name.removeprefix("p_value_")
        for name in check.data_vars
        if isinstance(name, str) and name.startswith("p_value_")  # variable names are Hashable to xarray
    ]
    if not statistics:
        raise ValueError("check has no p_value_<stat> variables: pass posterior_predictive_check(result)")
    if isinstance(max_panels, bool) or not isinstance(max_panels, int) or max_panels < 1:
        raise ValueError(f"max_panels must be a positive integer, got {max_panels!r}")
    candidates: list[dict[str, Any]] = []  # one panel each: names, numbers and the replicates
    for statistic in statistics:
        p_value = check[f"p_value_{statistic}"]
        observed = check[f"observed_{statistic}"]
        replicated = check[f"replicated_{statistic}"].transpose("replicate", *p_value.dims)
        if p_value.ndim != 2 or replicated.shape[1:] != p_value.shape or observed.shape != p_value.shape:
            raise ValueError(
                f"check[{statistic!r}] must have observed/p_value (class, element) and replicated "
                f"(replicate, class, element); got {observed.shape}, {replicated.shape}"
            )
        class_dim, element_dim = p_value.dims
        classes = [str(v) for v in check[class_dim].values] if class_dim in check.coords else None
        elements = [str(v) for v in check[element_dim].values] if element_dim in check.coords else None
        for i, j in np.ndindex(p_value.shape):
            p = float(p_value.values[i, j])
            if math.isnan(p):
                continue
            candidates.append(
                {
                    "statistic": statistic,
                    "class": classes[i] if classes else str(i),
                    "element": elements[j] if elements else str(j),
                    "observed": float(observed.values[i, j]),
                    "replicated": np.asarray(replicated.values[:, i, j], dtype=float),
                    "p_value": p,
                }
            )
    order = sorted(
        range(len(candidates)), key=lambda n: (min(candidates[n]["p_value"], 1 - candidates[n]["p_value"]), n)
    )
    return [{**candidates[n], "total": len(candidates)} for n in order[:max_panels]]


def generative_check_plot(check, *, max_panels: int = 12) -> str:
    """Posterior predictive check of the features: replicated statistic vs the observed one, per panel.

    Parameters
    ----------
    check : xarray.Dataset
        Output of :func:`bayesclass.inference.posterior_predictive_check` (a naive Bayes or Gaussian
        class-conditional fit).
    max_panels : int
        With more (statistic, class, feature) triples than this, the ``max_panels`` with the most
        extreme p-values (``min(p, 1 - p)`` smallest) are shown, in that order (:func:`check_panels`),
        and the figure's title says "12 of 57 statistics shown, most extreme p-values first".

    Returns
    -------
    str
        The SVG element: per panel a histogram of the replicated statistic, the observed value as a red
        line, title ``feature:`` over ``statistic | class`` and the mid-p value.
    """
    panels = check_panels(check, max_panels=max_panels)
    n = len(panels)
    columns = min(4, n)
    rows = math.ceil(n / columns)
    with _style():
        fig = _figure(2.3 * columns, 0.4 + 1.8 * rows)
        axes = fig.subplots(rows, columns, squeeze=False).ravel()
        for ax, panel in zip(axes, panels, strict=False):
            values = panel["replicated"]
            finite = values[np.isfinite(values)]
            if finite.size:
                span = finite.max() - finite.min()
                edges = 20 if span > 0 else np.array([-0.5, 0.5]) * max(abs(finite[0]) * 0.1, 1e-3) + finite[0]
                ax.hist(finite, bins=edges, color=ESTIMATE_COLORS[0], alpha=0.6)
            if math.isfinite(panel["observed"]):
                ax.axvline(panel["observed"], color="#d62728", lw=1.6)
            # two lines: in one, long feature names ran into the neighbouring panel's title
            ax.set_title(f"{panel['element']}:\n{panel['statistic']} | {panel['class']}", fontsize=8)
            ax.text(0.98, 0.95, f"p = {panel['p_value']:.3f}", transform=ax.transAxes, ha="right", va="top", fontsize=8)
            ax.set_yticks([])
        for ax in axes[n:]:
            ax.set_axis_off()
        total = panels[0]["total"] if panels else 0
        note = f"{n} of {total} statistics shown, most extreme p-values first" if total > n else f"{n} statistics"
        fig.suptitle(f"replicated (histogram) vs observed (red line); {note}", fontsize=8)
    return to_svg(fig)
