"""Posterior predictive checks of generative models: does synthetic data look like the real data?

Seed 001 §B.1 ("Philosophy of Probabilistic Generative Models"): *if we generate
synthetic data from our model and it resembles the real data we are trying to
classify, then we can have some confidence that our model of the data is good.*

:func:`posterior_predictive_check` replicates the training features under
posterior draws, keeping the real labels (so every replicate has the real class
sizes), and compares per class and feature the mean, standard deviation and
skewness of the real features with their replicated distribution. The
posterior predictive p-value ``P(T_rep >= T_obs)`` near 0 or 1 flags a statistic
the model cannot reproduce (a Gaussian class model, for instance, replicates
skewness near 0 whatever the data's skewness).
"""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

from bayesclass.inference.fit import model_inputs, model_of
from bayesclass.models import REGISTRY
from bayesclass.models.base import GenerativeClassifierModel

__all__ = ["PPC_STATISTICS", "PPC_STATISTICS_BY_KIND", "posterior_predictive_check"]

#: the statistics of continuous features, per class and feature
PPC_STATISTICS = ("mean", "sd", "skewness")
#: the statistics compared for each feature kind, per class: a binary feature's ``mean`` is its
#: frequency of 1; a count feature's ``dispersion`` is its variance-to-mean ratio (1 for Poisson-like
#: counts; a multinomial with fixed row totals replicates less, so over-dispersed words stand out);
#: ``level_frequency`` is the share of each level of a categorical feature (dims class, category_level)
PPC_STATISTICS_BY_KIND = {
    "continuous": PPC_STATISTICS,
    "binary": ("mean",),
    "count": ("mean", "dispersion"),
    "categorical": ("level_frequency",),
}


def _class_moments(x: np.ndarray, onehot: np.ndarray) -> dict[str, np.ndarray]:
    """Mean, sd (ddof 0), skewness and variance/mean per class of x (..., obs, feature); onehot (obs, class)
    -> (..., class, feature)."""
    counts = onehot.sum(axis=0)[:, np.newaxis]
    mean = np.swapaxes(np.swapaxes(x, -1, -2) @ onehot, -1, -2) / counts
    centred = x - mean[..., np.argmax(onehot, axis=1), :]
    second = np.swapaxes(np.swapaxes(centred**2, -1, -2) @ onehot, -1, -2) / counts
    third = np.swapaxes(np.swapaxes(centred**3, -1, -2) @ onehot, -1, -2) / counts
    with np.errstate(invalid="ignore", divide="ignore"):
        skewness = third / second**1.5
        dispersion = second / mean
    return {"mean": mean, "sd": np.sqrt(second), "skewness": skewness, "dispersion": dispersion}


def _level_frequencies(x: np.ndarray, onehot: np.ndarray, params: xr.Dataset, feature_names: list[str]) -> np.ndarray:
    """Share of each categorical level per class: x (..., obs, feature) -> (..., class, category_level)."""
    columns = [feature_names.index(str(name)) for name in params["category_feature"].values]
    indicator = (x[..., columns] == params["category_code"].values).astype(float)  # (..., obs, level)
    return np.swapaxes(np.swapaxes(indicator, -1, -2) @ onehot, -1, -2) / onehot.sum(axis=0)[:, np.newaxis]


def posterior_predictive_check(result: xr.DataTree, *, n_replicates: int = 200, random_seed: int = 0) -> xr.Dataset:
    """Compare the training features with features replicated from the fitted generative model.

    Parameters
    ----------
    result : xarray.DataTree
        Output of :func:`bayesclass.inference.fit` for a generative family
        (:class:`~bayesclass.models.base.GenerativeClassifierModel`: naive Bayes, gcc).
        With a posterior, each replicate uses one posterior draw (evenly spaced over
        chains and draws); without, every replicate uses the fitted point estimate.
    n_replicates : int
        Number of replicated data sets.
    random_seed : int
        Seed of the replicated features.

    Returns
    -------
    xarray.Dataset
        For each statistic of :data:`PPC_STATISTICS_BY_KIND` that applies to a feature of
        the data: ``observed_<stat>`` (class, feature), ``replicated_<stat>`` (replicate,
        class, feature) and ``p_value_<stat>`` = the mid-p value
        ``P(T_rep > T_obs) + P(T_rep = T_obs) / 2`` over replicates (equal to ``P(T_rep >= T_obs)``
        for continuous statistics; the mid-p keeps discrete statistics with many ties, such as a
        frequency of 0, from being flagged for the tie alone), NaN for features of a kind the statistic does not
        apply to;
        ``level_frequency`` has dims (class, category_level) instead. The variable
        ``feature_kind`` (feature) says which kind each column was modelled as.
        Statistics are in the units the model was fitted in (standardised units when
        the fit standardised the features).
    """
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, (int, np.integer)) or n_replicates < 1:
        raise ValueError(f"n_replicates must be a positive integer, e.g. 200; got {n_replicates!r}")
    model = model_of(result)
    if not isinstance(model, GenerativeClassifierModel):
        generative = sorted(name for name, family in REGISTRY.items() if issubclass(family, GenerativeClassifierModel))
        raise ValueError(
            f"the {model.name!r} model cannot generate features; posterior predictive checks of the features "
            f"need a generative family: {', '.join(map(repr, generative))}"
        )
    X = model_inputs(result, result["constant_data"]["X"].values)
    y = result["observed_data"]["y"].values
    class_names = json.loads(result.attrs["class_names"])
    if "posterior" in result:
        stacked = result["posterior"].to_dataset().stack(sample=("chain", "draw"))
        picks = np.linspace(0, stacked.sizes["sample"] - 1, n_replicates).round().astype(int)
        params = stacked.isel(sample=picks).drop_vars(["sample", "chain", "draw"]).rename(sample="replicate")
    else:
        estimate = result[f"point_estimate_{result.attrs['method']}"].to_dataset()
        params = estimate.expand_dims(replicate=n_replicates)
    replicated = model.sample_features(params, y, random_seed=random_seed, reference=X)
    replicated = replicated.transpose("replicate", "obs", "feature").values
    onehot = np.eye(len(class_names))[y]
    feature_names = json.loads(result.attrs["feature_names"])
    kinds = np.array(model.feature_kinds_of(params))
    observed = _class_moments(X, onehot)
    simulated = _class_moments(replicated, onehot)
    variables: dict[str, tuple[tuple[str, ...], np.ndarray]] = {"feature_kind": (("feature",), kinds.astype(str))}

    def add(statistic: str, dims: tuple[str, ...], real: np.ndarray, replicates: np.ndarray) -> None:
        variables[f"observed_{statistic}"] = (dims, real)
        variables[f"replicated_{statistic}"] = (("replicate", *dims), replicates)
        with np.errstate(invalid="ignore"):
            mid = (replicates > real).mean(axis=0) + 0.5 * (replicates == real).mean(axis=0)
            p_value = np.where(np.isnan(real), np.nan, mid)
        variables[f"p_value_{statistic}"] = (dims, p_value)

    for statistic in dict.fromkeys(stat for stats in PPC_STATISTICS_BY_KIND.values() for stat in stats):
        applies = np.array([statistic in PPC_STATISTICS_BY_KIND[kind] for kind in kinds])
        if statistic == "level_frequency" or not applies.any():
            continue
        mask = np.where(applies, 1.0, np.nan)  # NaN where the statistic does not fit the kind
        add(statistic, ("class", "feature"), observed[statistic] * mask, simulated[statistic] * mask)
    coords: dict[str, object] = {"class": class_names, "feature": feature_names}
    if "categorical" in kinds:
        add(
            "level_frequency",
            ("class", "category_level"),
            _level_frequencies(X, onehot, params, feature_names),
            _level_frequencies(replicated, onehot, params, feature_names),
        )
        coords["category_level"] = params["category_level"].values
    return xr.Dataset(
        variables,
        coords=coords,
        attrs={
            "description": "posterior predictive check: p_value = P(T_rep > T_obs) + P(T_rep = T_obs)/2 "
            "over replicated training features with the real labels (seed 001 §B.1)",
            "n_replicates": int(n_replicates),
            "random_seed": int(random_seed),
            "source": "posterior draws" if "posterior" in result else f"{result.attrs['method']} point estimate",
        },
    )
