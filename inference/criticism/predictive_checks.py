r"""Posterior predictive checks of generative models (does synthetic data look like the real data?).

Seed 001 §B.1 ("Philosophy of Probabilistic Generative Models"): *if we generate
synthetic data from our model and it resembles the real data we are trying to
classify, then we can have some confidence that our model of the data is good.*

:func:`posterior_predictive_check` replicates the training features under
posterior draws, keeping the real labels (so every replicate has the real class
sizes), and compares per class and feature statistics that fit the feature's kind
(:data:`PPC_STATISTICS_BY_KIND`) with their replicated distribution:

* continuous: mean, standard deviation and skewness (a Gaussian class model replicates
  skewness near 0 whatever the data's skewness, and one shared covariance cannot
  replicate class spreads that differ);
* binary: the frequency of 1 (``mean``);
* categorical: the frequency of each level (``level_frequency``);
* count: the mean count and the variance-to-mean ratio (``dispersion``). A multinomial
  bag of words that keeps each row's total :math:`T` replicates a word of probability
  :math:`\phi` with ratio about :math:`1 - \phi + \phi \operatorname{Var}(T) / \operatorname{E}(T)`,
  so words whose rate varies from row to row (bursty, over-dispersed counts) stand out
  above it, and bounded counts (pixel intensities that saturate) below it.

The posterior predictive (mid-)p-value ``P(T_rep > T_obs) + P(T_rep = T_obs) / 2``
near 0 or 1 flags a statistic the model cannot reproduce.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data.arguments import spelled
from bayesclass.inference._memory import largest_fitting, require_memory
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.result import result_info
from bayesclass.models import REGISTRY
from bayesclass.models.base import GenerativeClassifierModel

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["PPC_STATISTICS", "PPC_STATISTICS_BY_KIND", "posterior_predictive_check"]

#: the statistics of continuous features, per class and feature
PPC_STATISTICS = ("mean", "sd", "skewness")
#: the statistics compared for each feature kind, per class: a binary feature's ``mean`` is its
#: frequency of 1; a count feature's ``dispersion`` is its variance-to-mean ratio (1 for Poisson counts;
#: what a multinomial with each row's total replicates is in the module docstring);
#: ``level_frequency`` is the share of each level of a categorical feature (dims class, category_level)
PPC_STATISTICS_BY_KIND = {
    "continuous": PPC_STATISTICS,
    "binary": ("mean",),
    "count": ("mean", "dispersion"),
    "categorical": ("level_frequency",),
}


def _class_statistics(x: np.ndarray, class_codes: np.ndarray, n_classes: int, statistics: tuple[str, ...]) -> dict:
    """The ``statistics`` of every class and column of ``x``, (..., obs, feature) -> (..., class, feature).

    The statistics are among mean, sd (ddof 0), skewness and variance-to-mean ``dispersion``; only the
    moments they need are computed.

    Means and dispersions are ratios of per-class sums (of x and x^2), which are exact for 0/1 and count
    data whatever the summation order, so an observed frequency and a replicated one of the same count are
    equal (a tie, which the mid-p value counts half) and not a rounding error apart.
    """
    onehot = np.eye(n_classes)[class_codes]  # (obs, class)
    counts = onehot.sum(axis=0)[:, np.newaxis]  # (class, 1)
    sums = onehot.T @ x
    values = {"mean": sums / counts}
    with np.errstate(invalid="ignore", divide="ignore"):
        if "dispersion" in statistics:  # var / mean = (N sum x^2 - (sum x)^2) / (N sum x)
            values["dispersion"] = (counts * (onehot.T @ (x * x)) - sums**2) / (counts * sums)
        if {"sd", "skewness"} & set(statistics):
            centred = x - values["mean"][..., class_codes, :]
            squared = centred * centred
            second = (onehot.T @ squared) / counts
            values["sd"] = np.sqrt(second)
            if "skewness" in statistics:
                values["skewness"] = (onehot.T @ (squared * centred)) / counts / second**1.5
    return {statistic: values[statistic] for statistic in statistics}


def _level_frequencies(x: np.ndarray, onehot: np.ndarray, params: xr.Dataset, feature_names: list[str]) -> np.ndarray:
    """Share of each categorical level per class: x (..., obs, feature) -> (..., class, category_level)."""
    columns = [feature_names.index(str(name)) for name in params["category_feature"].values]
    indicator = (x[..., columns] == params["category_code"].values).astype(float)  # (..., obs, level)
    return np.swapaxes(np.swapaxes(indicator, -1, -2) @ onehot, -1, -2) / onehot.sum(axis=0)[:, np.newaxis]


def _replicate_parameters(result: xr.DataTree, method: str, n_replicates: int) -> xr.Dataset:
    """The parameters of each replicate (dim ``replicate``): evenly spaced posterior draws, or the point estimate."""
    if "posterior" in result:
        stacked = result["posterior"].to_dataset().stack(sample=("chain", "draw"))
        picks = np.linspace(0, stacked.sizes["sample"] - 1, n_replicates).round().astype(int)
        return stacked.isel(sample=picks).drop_vars(["sample", "chain", "draw"]).rename(sample="replicate")
    estimate = result[f"point_estimate_{method}"].to_dataset()
    return estimate.expand_dims(replicate=n_replicates)


#: copies of the replicated features held at once (the replicates, centred and squared values, their products)
REPLICATE_COPIES = 6


def _require_replicate_memory(result: xr.DataTree, method: str, n_replicates: int, shape: tuple[int, ...]) -> None:
    """Refuse ``n_replicates`` replicated data sets that would not fit in memory, before any is drawn."""
    group = "posterior" if "posterior" in result else f"point_estimate_{method}"
    parameters = result[group].to_dataset()
    per_set = sum(variable.size for variable in parameters.data_vars.values())
    per_set //= max(1, parameters.sizes.get("chain", 1) * parameters.sizes.get("draw", 1))
    n_obs, n_features = shape

    def needed(n: int) -> int:
        return 8 * n * (REPLICATE_COPIES * n_obs * n_features + 2 * per_set)

    require_memory(
        needed(n_replicates),
        what=f"the check of {n_replicates:,} replicates of {n_obs:,} rows x {n_features:,} features",
        fix=lambda available: (
            f"at most {largest_fitting(needed, available, upper=n_replicates):,} replicates fit; lower "
            f"{spelled('n_replicates')}"
        ),
    )


def posterior_predictive_check(result: xr.DataTree, *, n_replicates: int = 200, random_seed: int = 0) -> xr.Dataset:
    """Compare the training features with features replicated from the fitted generative model.

    Parameters
    ----------
    result : xarray.DataTree
        Output of :func:`bayesclass.inference.engines.fit` for a generative family
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
    info = result_info(result)
    model = info.model
    if not isinstance(model, GenerativeClassifierModel):
        generative = sorted(name for name, family in REGISTRY.items() if issubclass(family, GenerativeClassifierModel))
        raise ValueError(
            f"the {model.name!r} model cannot generate features; posterior predictive checks of the features "
            f"need a generative family: {', '.join(map(repr, generative))}"
        )
    X = model_inputs(result, result["constant_data"]["X"].values)
    y = cast("xr.DataArray", result["observed_data"]["y"]).values  # a node's variable (DataTree stubs allow a node)
    _require_replicate_memory(result, info.method, n_replicates, X.shape)
    class_names = list(info.class_names)
    params = _replicate_parameters(result, info.method, n_replicates)
    replicated = (
        model.sample_features(params, y, random_seed=random_seed, reference=X)
        .transpose("replicate", "obs", "feature")
        .values
    )
    n_classes = len(class_names)
    onehot = np.eye(n_classes)[y]
    feature_names = list(info.feature_names)
    kinds = np.array(model.feature_kinds_of(params))
    variables: dict[str, tuple[tuple[str, ...], np.ndarray]] = {"feature_kind": (("feature",), kinds.astype(str))}

    def add(statistic: str, dims: tuple[str, ...], real: np.ndarray, replicates: np.ndarray) -> None:
        variables[f"observed_{statistic}"] = (dims, real)
        variables[f"replicated_{statistic}"] = (("replicate", *dims), replicates)
        with np.errstate(invalid="ignore"):
            mid = (replicates > real).mean(axis=0) + 0.5 * (replicates == real).mean(axis=0)
            p_value = np.where(np.isnan(real), np.nan, mid)
        variables[f"p_value_{statistic}"] = (dims, p_value)

    # per-feature statistics, each computed on the columns of the kinds it fits (NaN elsewhere)
    present = [kind for kind in PPC_STATISTICS_BY_KIND if kind != "categorical" and kind in kinds]
    column_statistics = list(dict.fromkeys(stat for kind in present for stat in PPC_STATISTICS_BY_KIND[kind]))
    observed = {stat: np.full((n_classes, kinds.size), np.nan) for stat in column_statistics}
    simulated = {stat: np.full((n_replicates, n_classes, kinds.size), np.nan) for stat in column_statistics}
    for kind in present:  # a handful of feature kinds
        columns = np.flatnonzero(kinds == kind)
        for target, values in ((observed, X), (simulated, replicated)):
            selected = values if columns.size == kinds.size else np.take(values, columns, axis=-1)  # C-ordered
            computed = _class_statistics(selected, y, n_classes, PPC_STATISTICS_BY_KIND[kind])
            for statistic, value in computed.items():
                target[statistic][..., columns] = value
    for statistic in column_statistics:
        add(statistic, ("class", "feature"), observed[statistic], simulated[statistic])
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
            "source": "posterior draws" if "posterior" in result else f"{info.method} point estimate",
        },
    )
