"""Held-out evaluation of every estimate in a result, and of the seeds' classical baselines, by one path.

The posterior (mean probabilities, with their interval), every stored point estimate (MAP, MLE,
posterior mean ... each as its plug-in probabilities; an exact predictive where the family has
one) and every requested baseline (:mod:`bayesclass.models.baselines`, fitted on the result's own
training rows in the model's inputs) give class probabilities, or, for the baselines that have
none, decisions; :func:`bayesclass.inference.evaluation.scores.score_table` scores them all alike, and a loss
matrix (:mod:`bayesclass.inference.prediction.decisions`) decides them all alike.

The held-out rows go through :func:`bayesclass.inference.engines.fit.model_inputs`, the same treatment
coding and standardisation as in training, for the model and the baselines. Where the data carry
their true class probabilities (generated data, ``Dataset.true_class_proba``) the table adds the
KL divergence to the truth and the coverage of the truth by the posterior interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.evaluation.report_data import ESTIMATE_NAMES
from bayesclass.inference.evaluation.scores import score_table
from bayesclass.inference.prediction.decisions import LossMatrix, decide, expected_loss
from bayesclass.inference.prediction.predict import DEFAULT_INTERVAL_PROB, predict
from bayesclass.inference.result import data_result, is_stack, model_of, result_info, stack_info
from bayesclass.models.baselines import BASELINES, FittedBaseline, get_baseline

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = [
    "ESTIMATE_NAMES",
    "Estimates",
    "estimate_label",
    "estimate_labels",
    "evaluate",
    "fit_baselines",
    "heldout_estimates",
    "left_out_baselines",
    "result_codes",
    "score_estimates",
]


def estimate_label(kind: str, *, predictive: bool = False) -> str:
    """``"MAP plug-in"``, ``"exact predictive (Student-t)"`` ...: the score-table row name of a point-estimate kind.

    Parameters
    ----------
    kind : str
        A point estimate kind (``"map"``, ``"mle"``, ...; a kind without a stem in :data:`ESTIMATE_NAMES` names
        itself).
    predictive : bool, default False
        Whether the kind is an exact predictive (named as it is) rather than a plug-in.

    Returns
    -------
    str
        The row name.
    """
    label = ESTIMATE_NAMES.get(kind, kind)
    return label if predictive else f"{label} plug-in"


@dataclass(frozen=True)
class Estimates:
    """Class probabilities (or decisions) of every estimate on some rows, in the result's class order.

    Parameters
    ----------
    proba : dict
        Label -> (n, K) probabilities, or None for a baseline that only decides.
    decisions : dict
        Label -> (n,) class codes, for the estimates without probabilities.
    intervals : dict
        Label -> (low, high), each (n, K): the posterior's equal-tailed interval, and each point estimate's
        Wald (delta-method) interval where it stores a Gaussian approximation.
    y : numpy.ndarray
        The rows' labels as codes of the result's classes.
    class_names : tuple of str
        The result's classes, in the order of the probability columns and codes.
    true_proba : numpy.ndarray or None
        The data's true P(class | x) in the result's class order, where known.
    """

    proba: dict[str, np.ndarray | None]
    decisions: dict[str, np.ndarray]
    intervals: dict[str, tuple[np.ndarray, np.ndarray]]
    y: np.ndarray
    class_names: tuple[str, ...]
    true_proba: np.ndarray | None


def result_codes(result, data: Dataset) -> tuple[np.ndarray, np.ndarray | None]:
    """``data``'s labels (and true probabilities) re-coded in ``result``'s class order.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    data : Dataset
        Rows whose labels are among the result's classes.

    Returns
    -------
    codes : numpy.ndarray of shape (n_obs,)
        The labels as codes of the result's classes.
    truth : numpy.ndarray of shape (n_obs, n_classes) or None
        The data's true P(class | x) in the result's class order; None where unknown (or where the data have
        classes the result lacks).

    Raises
    ------
    ValueError
        A label is not among the result's classes (the message names them).
    """
    class_names = list(result_info(data_result(result)).class_names)
    unknown = sorted(set(data.class_names[code] for code in np.unique(data.y)) - set(class_names))
    if unknown:
        raise ValueError(
            f"labels {unknown} of {data.name!r} were not among the fitted classes {class_names}; score rows of the "
            "fitted classes only"
        )
    position = {name: index for index, name in enumerate(class_names)}
    recode = np.array([position.get(name, -1) for name in data.class_names])
    truth = None
    if data.true_class_proba is not None:
        extra = [name for name in data.class_names if name not in position]
        if not extra:
            truth = np.zeros((data.n_obs, len(class_names)))
            truth[:, recode] = data.true_class_proba
    return recode[data.y], truth


def fit_baselines(result, names: Sequence[str], *, random_seed: int = 0) -> dict[str, FittedBaseline]:
    """The baselines ``names`` fitted on ``result``'s training rows, in the model's inputs, with its classes.

    The inputs have the model's coding and standardisation.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    names : sequence of str
        Names in :data:`bayesclass.models.baselines.BASELINES`.
    random_seed : int, default 0
        Seed of the randomised baselines.

    Returns
    -------
    dict of str to FittedBaseline
        The fitted baselines by name; one that cannot classify the result's number of classes is left out
        (:func:`left_out_baselines`).

    Raises
    ------
    ValueError
        An unknown baseline name.
    """
    unknown = [name for name in names if name not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; choose among {sorted(BASELINES)}")
    result = data_result(result)  # a stack: its first member's inputs (the members share the training rows)
    class_names = result_info(result).class_names
    X = model_inputs(result, result["constant_data"]["X"].values)
    y = result["observed_data"]["y"].values
    fitted = {}
    for name in names:
        baseline = get_baseline(name)
        if baseline.max_classes is not None and len(class_names) > baseline.max_classes:
            continue  # e.g. Fisher's two-class discriminant on three classes: not applicable (see left_out_baselines)
        fitted[name] = baseline.fit(X, y, class_names=class_names, random_seed=random_seed)
    return fitted


def left_out_baselines(result, names: Sequence[str]) -> list[str]:
    """The baselines among ``names`` that cannot classify ``result``'s number of classes (e.g. two-class ones).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    names : sequence of str
        Baseline names (unknown ones are ignored).

    Returns
    -------
    list of str
        The names left out, in the order given.
    """
    n_classes = len(result_info(data_result(result)).class_names)
    return [
        name
        for name in names
        if name in BASELINES and (limit := BASELINES[name].max_classes) is not None and n_classes > limit
    ]


def estimate_labels(result) -> dict[str, str]:
    """The score-table labels of ``result``'s own estimates: the posterior's, then each point estimate's.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.

    Returns
    -------
    dict of str to str
        ``"posterior"`` (where the result has draws) or a point estimate kind -> its row name (``"posterior"``,
        ``"MAP plug-in"``, ``"exact predictive (Student-t)"`` ...), in the order of the score table.
    """
    if is_stack(result):  # the mixture, then each member's posterior (bayesclass.inference.stacking)
        info = stack_info(result)
        return {
            "posterior": f"stack ({info.method})",
            **{f"member_{index}": f"member: {label}" for index, label in enumerate(info.labels)},
        }
    predictives = model_of(result).predictive_kinds()
    labels = {"posterior": "posterior"} if "posterior" in result.children else {}
    for group in result.children:
        if group.startswith("point_estimate_"):
            kind = group.removeprefix("point_estimate_")
            labels[kind] = estimate_label(kind, predictive=kind in predictives)
    return labels


def heldout_estimates(
    result,
    data: Dataset,
    *,
    baselines: dict[str, FittedBaseline] | None = None,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
) -> Estimates:
    """Probabilities of every estimate of ``result`` (and of the fitted ``baselines``) on ``data``'s rows.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    data : Dataset
        Held-out rows with labels of the fitted classes.
    baselines : dict of str to FittedBaseline, optional
        Baselines fitted by :func:`fit_baselines`.
    interval_prob : float, default DEFAULT_INTERVAL_PROB
        Probability mass of the posterior's equal-tailed interval.

    Returns
    -------
    Estimates
        The probabilities (or decisions) of the posterior, every stored point estimate and every baseline.
    """
    y, truth = result_codes(result, data)
    prediction = predict(result, data, interval_prob=interval_prob)
    proba: dict[str, np.ndarray | None] = {}
    intervals: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for kind, label in estimate_labels(result).items():
        if kind == "posterior":
            proba[label] = prediction["class_proba"].values
            intervals[label] = (prediction["class_proba_low"].values, prediction["class_proba_high"].values)
        else:
            proba[label] = prediction[f"class_proba_{kind}"].values
            if f"class_proba_{kind}_low" in prediction:  # a point estimate with a Gaussian approximation
                bounds = (prediction[f"class_proba_{kind}_low"], prediction[f"class_proba_{kind}_high"])
                intervals[label] = (bounds[0].values, bounds[1].values)
    decisions: dict[str, np.ndarray] = {}
    if baselines:
        inputs = model_inputs(data_result(result), data)
        for fitted in baselines.values():
            label = f"baseline: {fitted.baseline.label}"
            proba[label] = fitted.class_proba(inputs)
            if proba[label] is None:
                decisions[label] = fitted.predict(inputs)
    return Estimates(
        proba=proba,
        decisions=decisions,
        intervals=intervals,
        y=y,
        class_names=result_info(data_result(result)).class_names,
        true_proba=truth,
    )


def evaluate(
    result,
    data: Dataset,
    *,
    baselines: Sequence[str] = (),
    loss: LossMatrix | None = None,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    ece_bins: int = 10,
    random_seed: int = 0,
):
    """Score every estimate of ``result`` and the named ``baselines`` on the held-out ``data``.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    data : Dataset
        Held-out rows with labels of the fitted classes.
    baselines : sequence of str
        Names in :data:`bayesclass.models.baselines.BASELINES` (a two-class baseline is left out on more classes).
    loss : LossMatrix, optional
        Adds ``mean_loss``: the average loss ``L[y_i, d_i]`` of each estimate's Bayes decisions ``d_i`` (its
        own decisions for a baseline without probabilities).
    interval_prob, ece_bins, random_seed
        The posterior interval, the calibration bins, the seed of the randomised baselines.

    Returns
    -------
    pandas.DataFrame
        :func:`bayesclass.inference.evaluation.scores.score_table`: one row per estimate, one column per metric.
    """
    fitted = fit_baselines(result, baselines, random_seed=random_seed) if baselines else None
    estimates = heldout_estimates(result, data, baselines=fitted, interval_prob=interval_prob)
    return score_estimates(result, estimates, baselines=baselines, loss=loss, ece_bins=ece_bins)


def score_estimates(
    result,
    estimates: Estimates,
    *,
    baselines: Sequence[str] = (),
    loss: LossMatrix | None = None,
    ece_bins: int = 10,
):
    """:func:`evaluate`'s table from estimates already predicted (:func:`heldout_estimates`).

    For callers that also use the estimates themselves (the HTML report: standard errors, decisions).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    estimates : Estimates
        The estimates on the held-out rows.
    baselines : sequence of str
        The baseline names asked for (those that cannot classify the result's classes are noted in ``attrs``).
    loss : LossMatrix, optional
        Adds ``mean_loss``: the average loss ``L[y_i, d_i]`` of each estimate's Bayes decisions.
    ece_bins : int, default 10
        Bins of the expected calibration error.

    Returns
    -------
    pandas.DataFrame
        :func:`bayesclass.inference.evaluation.scores.score_table`: one row per estimate, one column per metric.
    """
    table = score_table(
        estimates.proba,
        estimates.y,
        decisions=estimates.decisions or None,
        class_names=estimates.class_names,
        true_proba=estimates.true_proba,
        intervals=(estimates.intervals or None) if estimates.true_proba is not None else None,  # coverage of the truth
        ece_bins=ece_bins,
    )
    skipped = left_out_baselines(result, baselines)
    if skipped:
        table.attrs["left_out_baselines"] = (
            f"{', '.join(skipped)}: {len(estimates.class_names)} classes, more than these baselines classify"
        )
    if loss is not None:
        matrix = loss.aligned(estimates.class_names)
        table["mean_loss"] = [
            _mean_loss(matrix, estimates.y, estimates.proba.get(label), estimates.decisions.get(label))
            for label in table.index
        ]
        table.attrs.setdefault("descriptions", {})["mean_loss"] = (
            "mean loss L[true, decision] of the Bayes decisions under the loss matrix"
        )
    return table


def _mean_loss(matrix: np.ndarray, y: np.ndarray, proba: np.ndarray | None, decisions: np.ndarray | None) -> float:
    chosen = decide(expected_loss(proba, matrix)) if proba is not None else decisions
    if chosen is None:
        return float("nan")
    undecided = chosen < 0
    losses = matrix[y, np.where(undecided, 0, chosen)]
    return float("nan") if undecided.any() else float(losses.mean())
