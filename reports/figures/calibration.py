"""Calibration: PAV reliability diagrams of replicated class codes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import import_arviz_base, lazy_import
from bayesclass.inference.evaluation.report_plots import CALIBRATION_DRAWS
from bayesclass.reports.figures._svg import _codes, _style, to_svg

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["categorical_replicates", "reliability_plot"]


def categorical_replicates(proba: np.ndarray, n_replicates: int, *, random_seed: int = 0) -> np.ndarray:
    """Replicated class codes drawn from class probabilities, stratified over replicates.

    Parameters
    ----------
    proba : numpy.ndarray
        ``(n, K)`` plug-in probabilities (every replicate draws from them), or ``(S, n, K)`` per-draw
        probabilities (replicate ``r`` draws from draw ``picks[r]``, ``n_replicates`` draws evenly spaced
        over ``S``, repeated when ``S < n_replicates``, as :func:`bayesclass.inference.posterior_predictive_check`).
    n_replicates : int
        Number of replicates R.
    random_seed : int
        Seed; same seed, same codes.

    Returns
    -------
    numpy.ndarray
        ``(R, n)`` integer codes. Replicate ``r`` of row ``i`` is the class whose cumulative-probability
        interval contains ``u[r, i] = (pi_i(r) + v[r, i]) / R`` (``pi_i`` a random permutation of
        ``0 .. R-1`` per row, ``v`` uniform): each code is exactly categorical with the row's
        probabilities, rows are independent, and for plug-in probabilities the share of replicates in
        class k is within 2/R of ``p_ik`` (1/R for the first and the last class, so for both classes of a
        binary problem: Latin-hypercube sampling). ``arviz_plots.plot_ppc_pava``
        puts that share on its x axis as the forecast, so the stratification keeps the forecast close
        to the probability (plain sampling would move it by up to ~0.1 with R = 100).
    """
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, int) or n_replicates < 1:
        raise ValueError(f"n_replicates must be a positive integer, got {n_replicates!r}")
    proba = np.asarray(proba, dtype=float)
    if proba.ndim == 2:
        per_replicate = np.broadcast_to(proba, (n_replicates, *proba.shape))
    elif proba.ndim == 3:
        picks = np.linspace(0, proba.shape[0] - 1, n_replicates).round().astype(int)
        per_replicate = proba[picks]
    else:
        raise ValueError(f"proba must have shape (n, K) or (draws, n, K); got shape {proba.shape}")
    rng = np.random.default_rng(random_seed)
    n_rows = per_replicate.shape[1]
    strata = rng.permuted(np.broadcast_to(np.arange(n_replicates)[:, np.newaxis], (n_replicates, n_rows)), axis=0)
    uniform = (strata + rng.random((n_replicates, n_rows))) / n_replicates
    cumulative = np.cumsum(per_replicate, axis=-1)[..., :-1]  # the last edge is 1 (up to rounding): left out
    return (uniform[..., np.newaxis] >= cumulative).sum(axis=-1)


def _check_proba(proba: Mapping[str, np.ndarray], n_rows: int, n_classes: int, name: str = "proba") -> dict:
    if not isinstance(proba, Mapping) or not proba:
        raise ValueError(f"{name} must be a non-empty mapping estimate label -> class probabilities")
    checked = {}
    for label, value in proba.items():
        array = np.asarray(value, dtype=float)
        if array.ndim not in (2, 3) or array.shape[-2:] != (n_rows, n_classes):
            raise ValueError(
                f"{name}[{label!r}] must have shape (n, K) or (draws, n, K) with n = len(y) = {n_rows} and "
                f"K = len(class_names) = {n_classes}; got shape {array.shape}"
            )
        if not np.isfinite(array).all() or (array < 0).any() or (array > 1).any():
            raise ValueError(
                f"{name}[{label!r}] must hold probabilities in [0, 1] without NaN (drop the rows an estimate "
                "cannot forecast before plotting)"
            )
        checked[str(label)] = array
    return checked


#: panels per row of a two-class diagram (one per estimate); K classes: one row per estimate, a panel per class
PANELS_PER_ROW = 3
#: inches per panel (width, height): tall enough to read the curve against the diagonal
PANEL_SIZE = (3.6, 2.5)


def reliability_plot(
    proba: Mapping[str, np.ndarray],
    y: np.ndarray,
    *,
    class_names: Sequence[str],
    random_seed: int = 0,
    n_replicates: int = CALIBRATION_DRAWS,
    classes: Sequence[int] | None = None,
) -> str:
    """PAV (CORP) reliability diagrams with consistency bands, by ``arviz_plots.plot_ppc_pava``.

    Parameters
    ----------
    proba : mapping of str to numpy.ndarray
        Estimate label -> class probabilities of the rows: ``(draws, n, K)`` per posterior draw, or
        ``(n, K)`` for a point estimate (its plug-in probabilities).
    y : numpy.ndarray
        ``(n,)`` observed class codes into ``class_names``.
    class_names : sequence of str
        The K class names.
    random_seed : int
        Seed of the replicated outcomes.
    n_replicates : int, default CALIBRATION_DRAWS (100)
        Replicated outcome vectors per estimate (:func:`categorical_replicates`): from the plug-in
        probabilities, or one per posterior draw (``n_replicates`` draws evenly spaced; the report predicts
        exactly that many).
    classes : sequence of int, optional
        More than two classes: the codes whose one-vs-others diagrams are drawn, in this order (the report's
        record picks them, :func:`~bayesclass.inference.evaluation.report_data.calibration_classes`, so that a
        10-class fit's figure stays within arviz_plots' 40 panels); all by default.

    Returns
    -------
    str
        The SVG element. Each estimate is one variable of a DataTree whose ``posterior_predictive``
        holds the replicates (chain 1, draw R, obs n) and ``observed_data`` ``y``. Two classes: one panel
        per estimate (columns), the event being the second class, x = the forecast P(class 1) (the
        replicate mean), y = the conditional event probability (CEP), band = ArviZ's ``ci_prob``
        interval of the PAV fits of the replicates. K > 2: one-vs-others per class of ``classes`` (the fit of
        ``data_type="categorical"``, class by class: replicates and labels equal to the class, a binary
        diagram); one row per estimate, one column per class.

    Raises
    ------
    ValueError
        Bad shapes or probabilities, fewer than two classes, or a class of ``classes`` that is not a code.
    """
    import_arviz_base()  # without jax (its docstring): a point estimate's report imports ArviZ first here
    import arviz_plots as azp

    class_names = [str(name) for name in class_names]
    n_classes = len(class_names)
    if n_classes < 2:
        raise ValueError(f"class_names must name at least two classes, got {class_names!r}")
    y_array = np.asarray(y)
    if y_array.ndim != 1:
        raise ValueError(f"y must have shape (n,) (one class code per row); got shape {y_array.shape}")
    codes = _codes(y_array, "y", y_array.shape[0], n_classes)
    proba = _check_proba(proba, codes.size, n_classes)
    binary = n_classes == 2
    shown = (1,) if binary else tuple(range(n_classes)) if classes is None else tuple(classes)
    if (
        not shown
        or any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) for k in shown)
        or not set(shown) <= set(range(n_classes))
    ):
        raise ValueError(f"classes must be class codes in 0..{n_classes - 1}; got {classes!r}")
    posterior_predictive, observed, titles = {}, {}, {}
    for j, (label, array) in enumerate(proba.items()):
        replicates = categorical_replicates(array, n_replicates, random_seed=random_seed + j)
        for k in shown:  # a handful of panels: the figure's variables, one per estimate and class
            name = label if binary else f"{label} {k} vs others"
            posterior_predictive[name] = (("chain", "draw", "obs"), (replicates[np.newaxis] == k).astype(np.int64))
            observed[name] = (("obs",), (codes == k).astype(np.int64))
            titles[name] = f"{label}: P({class_names[1]})" if binary else f"{label}: {class_names[k]} vs others"
    tree = xr.DataTree.from_dict(
        {"posterior_predictive": xr.Dataset(posterior_predictive), "observed_data": xr.Dataset(observed)}
    )
    labeller = _TitleLabeller(titles)
    columns = min(len(proba), PANELS_PER_ROW) if binary else len(shown)
    rows = -(-len(proba) // columns) if binary else len(proba)
    size = (min(PANEL_SIZE[0] * columns, 11.0), PANEL_SIZE[1] * rows + 0.4)  # the page's width at most
    with _style():
        collection = azp.plot_ppc_pava(
            tree,
            var_names=list(titles),
            data_type="binary",
            backend="matplotlib",
            labeller=labeller,
            col_wrap=columns,
            figure_kwargs={"layout": "constrained", "figsize": size},
            visuals={"xlabel": {"text": "forecast probability"}, "ylabel": {"text": "CEP (PAV)"}},
        )
        fig = collection.get_viz("figure")
    return to_svg(fig)


class _TitleLabeller:
    """Panel titles looked up by the variable name that ``plot_ppc_pava`` builds."""

    def __new__(cls, titles: Mapping[str, str]):
        from arviz_base.labels import BaseLabeller

        class TitleLabeller(BaseLabeller):
            def make_label_vert(self, var_name, sel, isel):
                return titles.get(var_name, var_name)

            make_label_flat = make_label_vert

        return TitleLabeller()
