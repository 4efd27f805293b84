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

from bayesclass.inference.fit import model_of, standardization_of

__all__ = ["PPC_STATISTICS", "posterior_predictive_check"]

#: the statistics compared, per class and feature
PPC_STATISTICS = ("mean", "sd", "skewness")


def _class_moments(x: np.ndarray, onehot: np.ndarray) -> dict[str, np.ndarray]:
    """Mean, sd (ddof 0) and skewness per class of x (..., obs, feature); onehot (obs, class) -> (..., class, feature)."""
    counts = onehot.sum(axis=0)[:, np.newaxis]
    mean = np.swapaxes(x, -1, -2) @ onehot / counts.T  # (..., feature, class)
    mean = np.swapaxes(mean, -1, -2)
    centred = x - mean[..., np.argmax(onehot, axis=1), :]
    second = np.swapaxes(np.swapaxes(centred**2, -1, -2) @ onehot, -1, -2) / counts
    third = np.swapaxes(np.swapaxes(centred**3, -1, -2) @ onehot, -1, -2) / counts
    with np.errstate(invalid="ignore", divide="ignore"):
        skewness = third / second**1.5
    return {"mean": mean, "sd": np.sqrt(second), "skewness": skewness}


def posterior_predictive_check(result: xr.DataTree, *, n_replicates: int = 200, random_seed: int = 0) -> xr.Dataset:
    """Compare the training features with features replicated from the fitted generative model.

    Parameters
    ----------
    result : xarray.DataTree
        Output of :func:`inference.fit` for a family with ``sample_features``
        (``gcc``). With a posterior, each replicate uses one posterior draw
        (evenly spaced over chains and draws); without, every replicate uses the
        fitted point estimate.
    n_replicates : int
        Number of replicated data sets.
    random_seed : int
        Seed of the replicated features.

    Returns
    -------
    xarray.Dataset
        For each statistic in :data:`PPC_STATISTICS`: ``observed_<stat>``
        (class, feature), ``replicated_<stat>`` (replicate, class, feature) and
        ``p_value_<stat>`` = the fraction of replicates with ``T_rep >= T_obs``.
        Statistics are in the units the model was fitted in (standardised
        units when the fit standardised the features).
    """
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, (int, np.integer)) or n_replicates < 1:
        raise ValueError(f"n_replicates must be a positive integer, e.g. 200; got {n_replicates!r}")
    model = model_of(result)
    if not hasattr(model, "sample_features"):
        raise ValueError(
            f"the {model.name!r} model cannot generate features; posterior predictive checks of the features "
            "need a generative family such as 'gcc'"
        )
    center, scale = standardization_of(result)
    X = (result["constant_data"]["X"].values - center) / scale
    y = result["observed_data"]["y"].values
    class_names = json.loads(result.attrs["class_names"])
    if "posterior" in result:
        stacked = result["posterior"].to_dataset().stack(sample=("chain", "draw"))
        picks = np.linspace(0, stacked.sizes["sample"] - 1, n_replicates).round().astype(int)
        params = stacked.isel(sample=picks).drop_vars(["sample", "chain", "draw"]).rename(sample="replicate")
    else:
        estimate = result[f"point_estimate_{result.attrs['method']}"].to_dataset()
        params = estimate.expand_dims(replicate=n_replicates)
    replicated = model.sample_features(params, y, random_seed=random_seed).transpose("replicate", "obs", "feature").values
    onehot = np.eye(len(class_names))[y]
    observed = _class_moments(X, onehot)
    simulated = _class_moments(replicated, onehot)
    feature_names = json.loads(result.attrs["feature_names"])
    variables: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
    for statistic in PPC_STATISTICS:
        variables[f"observed_{statistic}"] = (("class", "feature"), observed[statistic])
        variables[f"replicated_{statistic}"] = (("replicate", "class", "feature"), simulated[statistic])
        variables[f"p_value_{statistic}"] = (("class", "feature"), (simulated[statistic] >= observed[statistic]).mean(axis=0))
    return xr.Dataset(
        variables,
        coords={"class": class_names, "feature": feature_names},
        attrs={
            "description": "posterior predictive check: p_value = P(T_rep >= T_obs) over replicated training features "
            "with the real labels (seed 001 §B.1)",
            "n_replicates": int(n_replicates),
            "random_seed": int(random_seed),
            "source": "posterior draws" if "posterior" in result else f"{result.attrs['method']} point estimate",
        },
    )
