"""Class probabilities for NEW inputs, from posterior draws and point estimates alike.

Prediction never goes through ``pm.set_data`` + posterior predictive sampling:
the family's ``class_log_proba`` is evaluated on the stored draws with NumPy, so
any number of rows works (the shape pitfalls of pymc#6230 / pymc#7897 cannot
arise) and no model is compiled.

The interval is the equal-tailed interval (ETI) of the per-draw probabilities,
by default of probability 0.89, ArviZ's default, computed by
``arviz_stats.eti``.
"""

from __future__ import annotations

import json
from typing import Any

import arviz_stats as azs
import numpy as np
import scipy.special
import xarray as xr

from bayesclass.data import Dataset
from bayesclass.inference.fit import model_inputs, model_of

__all__ = ["DEFAULT_INTERVAL_PROB", "predict", "predict_log_proba"]

DEFAULT_INTERVAL_PROB = 0.89
#: rows per block so that one block of per-draw probabilities stays near 64 MB
_BLOCK_VALUES = 8_000_000


def predict(
    result: xr.DataTree,
    X: Any,
    *,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    keep_draws: bool = True,
) -> xr.Dataset:
    """Class probabilities of the rows of ``X`` under every estimate stored in ``result``.

    Parameters
    ----------
    result : xarray.DataTree
        Output of :func:`inference.fit` (or :func:`inference.load`).
    X : array-like of shape (n_obs, n_features) or (n_features,), or Dataset
        New inputs in the original (unstandardised) units. A Dataset's labels
        are checked against the fitted classes.
    interval_prob : float
        Probability mass of the equal-tailed interval.
    keep_draws : bool
        Keep the per-draw probabilities (``class_proba_draws``); off, only the
        summaries are kept and memory stays bounded for any number of rows.

    Returns
    -------
    xarray.Dataset
        ``class_proba`` (obs, class): the posterior mean when there are draws,
        else the fitted point estimate; ``class_proba_low`` / ``class_proba_high``
        (ETI bounds) and ``class_proba_draws`` (chain, draw, obs, class) with
        draws; ``class_proba_<kind>`` (``class_proba_map``, ``class_proba_mle`` ...)
        for each stored point estimate; ``predicted`` (obs), the class of highest
        ``class_proba`` ("" for a row whose probabilities are NaN because it is
        impossible under every class, e.g. under a naive Bayes MLE).
    """
    if not 0.0 < float(interval_prob) < 1.0:
        raise ValueError(f"interval_prob must be in (0, 1), e.g. 0.89; got {interval_prob!r}")
    model = model_of(result)
    class_names = json.loads(result.attrs["class_names"])
    if isinstance(X, Dataset):  # check_features checks its feature names and takes its X
        _check_labels(X, class_names)
    values = model_inputs(result, X)

    output: dict[str, xr.DataArray] = {}
    if "posterior" in result:
        posterior = result["posterior"].to_dataset()
        n_draws = posterior.sizes["chain"] * posterior.sizes["draw"]
        block = max(1, _BLOCK_VALUES // (n_draws * len(class_names)))
        pieces = [
            _summarise(model, posterior, values[start : start + block], interval_prob, keep_draws)
            for start in range(0, len(values), block)
        ]
        output.update(xr.concat(pieces, dim="obs").data_vars)
    for group in result.children:
        if group.startswith("point_estimate_"):
            kind = group.removeprefix("point_estimate_")
            output[f"class_proba_{kind}"] = model.class_proba(result[group].to_dataset(), values)
    if "class_proba" not in output:
        output["class_proba"] = output[f"class_proba_{result.attrs['method']}"]
    dataset = xr.Dataset(output).assign_coords({"class": class_names})
    proba = dataset["class_proba"].values
    undefined = np.isnan(proba).any(axis=1)  # rows impossible under every class (see the family's docs)
    predicted = np.asarray(class_names, dtype=object)[np.where(undefined[:, None], 0.0, proba).argmax(axis=1)]
    predicted[undefined] = ""
    dataset["predicted"] = ("obs", predicted)
    dataset.attrs.update(
        interval=f"equal-tailed interval (ETI) of probability {interval_prob:g} over posterior draws",
        point=("posterior mean over draws" if "posterior" in result else f"{result.attrs['method']} plug-in"),
        model=result.attrs["model"],
        method=result.attrs["method"],
    )
    return dataset


def predict_log_proba(result: xr.DataTree, X: Any) -> xr.DataArray:
    """log P(class | x) of the estimate :func:`predict` reports as ``class_proba``, in the log domain.

    With posterior draws it is the log of the posterior mean probability,
    ``logsumexp_s log P(class | x, theta_s) - log S`` over the S draws; otherwise the
    fitted point estimate's ``class_log_proba``. Rows whose probabilities underflow to 0
    keep their finite log values.

    Returns
    -------
    xarray.DataArray
        Dims ``(obs, class)``.
    """
    model = model_of(result)
    values = model_inputs(result, X)
    if "posterior" not in result:
        return model.class_log_proba(result[f"point_estimate_{result.attrs['method']}"].to_dataset(), values)
    posterior = result["posterior"].to_dataset()
    n_draws = posterior.sizes["chain"] * posterior.sizes["draw"]
    block = max(1, _BLOCK_VALUES // (n_draws * len(json.loads(result.attrs["class_names"]))))
    pieces = []
    for start in range(0, len(values), block):
        per_draw = model.class_log_proba(posterior, values[start : start + block]).transpose(
            "chain", "draw", "obs", "class"
        )
        with np.errstate(invalid="ignore"):  # NaN rows (impossible under every class) stay NaN
            pieces.append(scipy.special.logsumexp(per_draw.values, axis=(0, 1)) - np.log(n_draws))
    class_names = json.loads(result.attrs["class_names"])
    return xr.DataArray(np.concatenate(pieces, axis=0), dims=("obs", "class"), coords={"class": class_names})


def _summarise(model, posterior: xr.Dataset, values: np.ndarray, interval_prob: float, keep_draws: bool) -> xr.Dataset:
    draws = model.class_proba(posterior, values)
    bounds = azs.eti(draws, prob=interval_prob, dim=("chain", "draw"))
    summary = {
        "class_proba": draws.mean(("chain", "draw")),
        "class_proba_low": bounds.sel(ci_bound="lower", drop=True),
        "class_proba_high": bounds.sel(ci_bound="upper", drop=True),
    }
    if keep_draws:
        summary["class_proba_draws"] = draws
    return xr.Dataset(summary)


def _check_labels(data: Dataset, class_names: list[str]) -> None:
    present = {data.class_names[code] for code in np.unique(data.y)}
    unseen = sorted(present - set(class_names))
    if unseen:
        raise ValueError(
            f"labels {', '.join(map(repr, unseen))} in {data.name!r} were not seen in training "
            f"(fitted classes: {', '.join(map(repr, class_names))}); drop those rows or refit with them"
        )
