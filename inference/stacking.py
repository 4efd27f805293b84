"""The stacked predictive: several fitted results on the same rows, mixed by LOO stacking or pseudo-BMA+ weights.

:func:`stack` takes two or more results fitted on the same training rows and classes (any families and methods
with posterior draws and a ``log_likelihood`` group), computes their weights with ``arviz_stats.compare``
(through :func:`bayesclass.inference.criticism.loo.compare`: PSIS-LOO of every member, then the weights that
maximise the leave-one-out log score of the mixture, Yao, Vehtari, Simpson and Gelman 2018, or pseudo-BMA+), and
returns ONE result DataTree that embeds its members (groups ``member_0``, ``member_1`` ...; each a whole result,
checked as one when read back) and their weights (group ``stack_weights``). Its records are read and checked by
:mod:`bayesclass.inference.result` (:func:`~bayesclass.inference.result.check_stack`).

A stack is predicted, decided, scored and reported by the same functions as any result: its
:func:`stack_kernel` is a :class:`~bayesclass.models.base.ClassProbaKernel` over the pooled draws of its members,
member m's draws each weighing ``w_m / S_m``. Hence

- ``class_proba`` is the weighted mixture ``sum_m w_m P_m(class | x)`` of the members' posterior mean
  probabilities (exactly, up to rounding);
- its interval is the equal-tailed interval of the mixture of the members' per-draw probabilities (the
  quantiles of the weighted pooled draws, ``numpy.quantile(..., weights=..., method="inverted_cdf")``): the spread
  of P(class | x, theta) when theta comes from member m with probability w_m;
- expected losses and decisions are those of the mixture; each member's own posterior mean is reported beside it
  as ``class_proba_member_<i>`` (:func:`member_kernels`).
"""

from __future__ import annotations

import datetime
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data.dataset import check_features
from bayesclass.inference.criticism.loo import WEIGHT_METHODS, compare
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.prediction.draws import select_draws
from bayesclass.inference.result import (
    STACK_WEIGHTS_GROUP,
    StackInfo,
    check_stack,
    is_stack,
    require_stackable,
    result_info,
    stack_info,
    stack_members,
    write_stack_info,
)
from bayesclass.models.base import ClassProbaKernel

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["member_kernels", "stack", "stack_inputs", "stack_kernel", "stack_weights"]


def _labelled(results: Any) -> dict[str, Any]:
    """``results`` (a mapping label -> result, or a sequence) as label -> result, labels ``<model> (<method>)``."""
    if isinstance(results, xr.DataTree):  # a DataTree is a mapping of its groups: never read as one
        raise TypeError(
            "results must be a list of result DataTrees or a dict label -> result, got one result; stack two or more"
        )
    if isinstance(results, Mapping):
        runs = {str(label): result for label, result in results.items()}
    elif isinstance(results, Sequence) and not isinstance(results, str):
        runs = {}
        for index, result in enumerate(results):
            if not isinstance(result, xr.DataTree):
                raise TypeError(
                    f"results[{index}] is a {type(result).__name__}, not a result DataTree (bayesclass.fit)"
                )
            info = result_info(result) if not is_stack(result) else None
            base = f"{info.model.name} ({info.method})" if info is not None else "stack"
            label, n = base, 2
            while label in runs:
                label, n = f"{base} #{n}", n + 1
            runs[label] = result
    else:
        raise TypeError(f"results must be a list of result DataTrees or a dict label -> result, got {type(results)}")
    if len(runs) < 2:
        raise ValueError(f"a stack needs two or more results, got {len(runs)}")
    for label, result in runs.items():
        if not isinstance(result, xr.DataTree):
            raise TypeError(f"result {label!r} is a {type(result).__name__}, not a result DataTree (bayesclass.fit)")
        if is_stack(result):
            raise ValueError(f"result {label!r} is a stack; stack the fitted results themselves")
    require_stackable(runs)  # classes, columns and rows before any LOO is computed
    return runs


def stack_weights(results: Any, *, method: str = "stacking"):
    """The LOO comparison of ``results`` with their ``method`` weights (``arviz_stats.compare``).

    Parameters
    ----------
    results : sequence of xarray.DataTree, or mapping of label to DataTree
        Two or more results with posterior draws and a ``log_likelihood`` group, fitted on the same rows.
    method : {"stacking", "pseudo_bma_plus"}, default "stacking"
        LOO stacking (Yao et al. 2018) or pseudo-BMA+ (Bayesian-bootstrap pseudo-BMA).

    Returns
    -------
    pandas.DataFrame
        :func:`bayesclass.inference.criticism.loo.compare`'s table (one row per member, best first), ``weight``
        holding the ``method`` weights.
    """
    if method not in WEIGHT_METHODS:
        raise ValueError(f"method must be one of {', '.join(WEIGHT_METHODS)}, got {method!r}")
    return compare(_labelled(results), method=method)


def stack(results: Any, *, method: str = "stacking") -> xr.DataTree:
    """One result mixing ``results`` by their LOO ``method`` weights, embedding every member.

    Parameters
    ----------
    results : sequence of xarray.DataTree, or mapping of label to DataTree
        Two or more results fitted on the same training rows and classes (any families), each with posterior
        draws and a ``log_likelihood`` group (NUTS, Gibbs, exact or Laplace draws). Labels default to
        ``"<model> (<method>)"``, numbered where they repeat.
    method : {"stacking", "pseudo_bma_plus"}, default "stacking"
        How the weights are computed (:func:`stack_weights`).

    Returns
    -------
    xarray.DataTree
        The stack: groups ``member_0`` ... (the members, whole), ``stack_weights`` (``weight``, ``elpd_loo``,
        ``elpd_se`` by ``member``) and the root attrs of :class:`~bayesclass.inference.result.StackInfo`, with a
        digest over its weights and members' parameters. Save it with :func:`bayesclass.save_result`.

    Warns
    -----
    UserWarning
        One per member whose PSIS-LOO raised notes (Pareto k above ArviZ's threshold: its leave-one-out densities,
        and hence the weights, are less reliable).

    Raises
    ------
    TypeError
        ``results`` is not a sequence or mapping of result DataTrees.
    ValueError
        Fewer than two results, a point estimate, a result without ``log_likelihood``, results fitted on other
        rows, classes or columns, or an unknown ``method`` (the message names the result and what differs).
    """
    runs = _labelled(results)
    table = stack_weights(runs, method=method)
    labels = tuple(runs)
    for label in labels:  # high Pareto k and the like: the weights rest on these members' LOO
        if table.loc[label, "warning"]:
            warnings.warn(
                f"stack weights: PSIS-LOO of {label!r}: {table.loc[label, 'warning']}", UserWarning, stacklevel=2
            )
    weights = np.array([float(table.loc[label, "weight"]) for label in labels])
    weights = np.clip(weights, 0.0, None)
    weights = weights / weights.sum()  # arviz's optimiser returns weights summing to 1 up to its tolerance
    info = StackInfo(
        method=method,
        labels=labels,
        weights=tuple(float(weight) for weight in weights),
        elpd_loo=tuple(float(table.loc[label, "elpd"]) for label in labels),
        elpd_se=tuple(float(table.loc[label, "se"]) for label in labels),
        created_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    )
    tree = xr.DataTree()
    for index, result in enumerate(runs.values()):
        tree[f"member_{index}"] = result.copy()
    tree[STACK_WEIGHTS_GROUP] = xr.DataTree(
        xr.Dataset(
            {
                "weight": ("member", weights),
                "elpd_loo": ("member", list(info.elpd_loo)),
                "elpd_se": ("member", list(info.elpd_se)),
            },
            coords={"member": list(labels)},
        )
    )
    write_stack_info(tree, info)
    check_stack(tree)  # its members were checked: this checks that they agree with one another
    return tree


def stack_inputs(result: xr.DataTree, X: Any) -> np.ndarray:
    """New rows checked against a stack's columns, in their own units (each member codes and scales them itself).

    Parameters
    ----------
    result : xarray.DataTree
        A stack.
    X : array-like or Dataset
        New rows with the members' columns.

    Returns
    -------
    numpy.ndarray of shape (n_obs, n_features)
    """
    record = result_info(result["member_0"]).data
    return check_features(
        X,
        n_features=len(record.feature_names),
        feature_names=record.feature_names,
        category_names=record.category_names,
    )


def _member_kernel(member: xr.DataTree) -> ClassProbaKernel:
    """One member's posterior kernel on rows in the data's units (its coding and standardisation applied inside)."""
    info = result_info(member)
    posterior, _ = select_draws(member["posterior"].to_dataset(), thin=info.model.predicts_from_effective_draws)
    kernel = info.model.class_proba_kernel(posterior)
    last = threading.local()  # the stack's kernel and this member's own ask for the same tile: computed once

    def evaluate(X: np.ndarray, log: bool) -> np.ndarray:
        cached = getattr(last, "call", None)
        if cached is not None and cached[0] is X and cached[1] == log:
            return cached[2]
        values = kernel(model_inputs(member, X, info=info), log=log)
        last.call = (X, log, values)
        return values

    def check(X: np.ndarray, first_row: int) -> None:
        kernel.check(model_inputs(member, X, info=info), first_row)

    return ClassProbaKernel(
        evaluate=evaluate,
        class_names=kernel.class_names,
        feature_names=info.feature_names,
        leading_dims=kernel.leading_dims,
        leading_shape=kernel.leading_shape,
        leading_coords=kernel.leading_coords,
        check=check,
        setup_rows=kernel.setup_rows,
    )


def member_kernels(result: xr.DataTree) -> dict[str, ClassProbaKernel]:
    """Each member's posterior kernel on rows in the data's units, by ``member_<i>``.

    Parameters
    ----------
    result : xarray.DataTree
        A stack.

    Returns
    -------
    dict of str to ClassProbaKernel
    """
    return {f"member_{index}": _member_kernel(member) for index, member in enumerate(stack_members(result).values())}


def stack_kernel(result: xr.DataTree, members: Mapping[str, ClassProbaKernel] | None = None) -> ClassProbaKernel:
    """The stack's kernel: its members' draws pooled, member m's each weighing ``w_m / S_m`` (module docstring).

    Parameters
    ----------
    result : xarray.DataTree
        A stack.
    members : mapping of str to ClassProbaKernel, optional
        :func:`member_kernels` of ``result`` where already built.

    Returns
    -------
    ClassProbaKernel
        Over rows in the data's units, with dim ``stack_draw`` (the draws of every member of positive weight,
        member by member) and ``draw_weights``.
    """
    info = stack_info(result)
    weighted = [  # a member of weight 0 changes neither the mixture nor its quantiles: left out
        (kernel, weight)
        for kernel, weight in zip((members or member_kernels(result)).values(), info.weights, strict=True)
        if weight > 0
    ]
    kernels = [kernel for kernel, _ in weighted]
    weights = np.concatenate([np.full(kernel.n_draws, weight / kernel.n_draws) for kernel, weight in weighted])

    def evaluate(X: np.ndarray, log: bool) -> np.ndarray:
        return np.concatenate([kernel(X, log=log) for kernel in kernels], axis=-1)

    def check(X: np.ndarray, first_row: int) -> None:
        for kernel in kernels:
            kernel.check(X, first_row)

    return ClassProbaKernel(
        evaluate=evaluate,
        class_names=kernels[0].class_names,
        feature_names=kernels[0].feature_names,
        leading_dims=("stack_draw",),
        leading_shape=(int(weights.size),),
        check=check,
        setup_rows=max(kernel.setup_rows for kernel in kernels),
        draw_weights=weights,
    )
