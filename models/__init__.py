"""WHAT is believed: one module per classifier family, all under one contract.

``REGISTRY`` maps the registry name (also the CLI's ``--model``) to the family
class; :func:`get_model` builds one from keyword hyperparameters and
:func:`model_from_dict` rebuilds one from the provenance attrs of a saved run.
"""

from __future__ import annotations

from typing import Any

from bayesclass.models.base import ClassifierModel, ConvergenceError, NoEstimateError
from bayesclass.models.gaussian_class_conditional import (
    GaussianClassConditional,
    GaussianClassConditionalPrior,
)
from bayesclass.models.gaussian_process import GaussianProcessPrior, LatentGaussianProcess
from bayesclass.models.logistic import LogisticPrior, LogisticRegression, SeparationError
from bayesclass.models.naive_bayes import NaiveBayes, NaiveBayesPrior

__all__ = [
    "REGISTRY",
    "ClassifierModel",
    "ConvergenceError",
    "GaussianClassConditional",
    "GaussianClassConditionalPrior",
    "GaussianProcessPrior",
    "LatentGaussianProcess",
    "LogisticPrior",
    "LogisticRegression",
    "NaiveBayes",
    "NaiveBayesPrior",
    "NoEstimateError",
    "SeparationError",
    "get_model",
    "model_from_dict",
]

REGISTRY: dict[str, type[ClassifierModel]] = {
    LogisticRegression.name: LogisticRegression,
    NaiveBayes.name: NaiveBayes,
    GaussianClassConditional.name: GaussianClassConditional,
    LatentGaussianProcess.name: LatentGaussianProcess,
}


def _family(name: str) -> type[ClassifierModel]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(map(repr, sorted(REGISTRY)))}") from None


def get_model(name: str, **hyperparameters: Any) -> ClassifierModel:
    """The family registered as ``name`` with the given hyperparameters.

    Parameters
    ----------
    name : str
        Registry name of the family (a key of ``REGISTRY``, also the CLI's ``--model``).
    **hyperparameters
        Keyword hyperparameters of that family (its dataclass fields; a prior may be a dict of its fields).

    Returns
    -------
    ClassifierModel
        The family instance, validated on construction.

    Raises
    ------
    ValueError
        If ``name`` is not a registered family.
    """
    return _family(name)(**hyperparameters)


def model_from_dict(values: dict[str, Any]) -> ClassifierModel:
    """Rebuild a model from :meth:`ClassifierModel.to_dict` output.

    Parameters
    ----------
    values : dict
        Output of :meth:`ClassifierModel.to_dict`: ``values["model"]`` is the registry name, the other
        entries the hyperparameters (names of earlier versions accepted).

    Returns
    -------
    ClassifierModel
        The family instance those values describe.

    Raises
    ------
    ValueError
        If ``values["model"]`` is not a registered family.
    """
    return _family(values["model"]).from_dict(values)
