"""HOW beliefs are updated and used: sampling, MAP/MLE, prediction, diagnostics, persistence.

Start with :func:`fit` (any registered model, by NUTS, MAP or MLE) and
:func:`predict` (:func:`predict_chunks` for rows that arrive in pieces; both in bounded memory through
the chunked engine of :mod:`bayesclass.inference.prediction.tiles`); :func:`diagnose` condenses ArviZ
diagnostics into a verdict;
:func:`posterior_predictive_check` compares replicated and real features (generative families);
:func:`save`/:func:`load` keep results as netCDF, and :func:`result_info` reads what a result records
(its typed schema, :mod:`bayesclass.inference.result`); :class:`BayesianClassifier`
wraps it all as a scikit-learn estimator.
"""

from bayesclass.inference._memory import InsufficientMemoryError, MemoryCheckError
from bayesclass.inference.criticism.diagnostics import MAX_R_HAT, MIN_ESS, ConvergenceReport, diagnose
from bayesclass.inference.criticism.predictive_checks import (
    PPC_STATISTICS,
    PPC_STATISTICS_BY_KIND,
    posterior_predictive_check,
)
from bayesclass.inference.engines.fit import METHODS, fit, model_of
from bayesclass.inference.engines.sampling import SamplerSettings, clear_compile_cache
from bayesclass.inference.io import load, save
from bayesclass.inference.prediction.predict import DEFAULT_INTERVAL_PROB, predict, predict_chunks
from bayesclass.inference.result import ResultInfo, result_info

# The submodules import PyMC, xarray and ArviZ on first use (bayesclass._lazy); the scikit-learn estimator,
# whose base classes must exist when its class is defined, is imported when it is first asked for.


def __getattr__(name: str):
    if name == "BayesianClassifier":
        from bayesclass.inference.estimator import BayesianClassifier

        return BayesianClassifier
    raise AttributeError(f"module 'bayesclass.inference' has no attribute {name!r}")


__all__ = [
    "DEFAULT_INTERVAL_PROB",
    "MAX_R_HAT",
    "METHODS",
    "MIN_ESS",
    "PPC_STATISTICS",
    "PPC_STATISTICS_BY_KIND",
    "ResultInfo",
    "BayesianClassifier",
    "ConvergenceReport",
    "InsufficientMemoryError",
    "MemoryCheckError",
    "SamplerSettings",
    "clear_compile_cache",
    "diagnose",
    "fit",
    "load",
    "model_of",
    "posterior_predictive_check",
    "predict",
    "predict_chunks",
    "result_info",
    "save",
]
