"""bayesclass: Bayesian classifiers as PyMC models, each beside its closed-form MLE/MAP estimate.

The package is laid out as ``data -> models -> inference -> reports`` (see
DESIGN.md); this module re-exports what an analyst needs::

    import bayesclass as bc
    data = bc.load("breast_cancer")
    result = bc.fit(bc.LogisticRegression(), data, method="nuts", standardize=True, random_seed=0)
    print(bc.diagnose(result))
    bc.predict(result, data.X[:5])["class_proba"]
"""

from bayesclass.data import Dataset, available, load, load_csv, train_validation_test_split
from bayesclass.inference import (
    BayesianClassifier,
    SamplerSettings,
    diagnose,
    fit,
    posterior_predictive_check,
    predict,
)
from bayesclass.inference import load as load_result
from bayesclass.inference import save as save_result
from bayesclass.models import (
    REGISTRY,
    GaussianClassConditional,
    GaussianClassConditionalPrior,
    GaussianProcessPrior,
    LatentGaussianProcess,
    LogisticPrior,
    LogisticRegression,
    NaiveBayes,
    NaiveBayesPrior,
    NoEstimateError,
    SeparationError,
    get_model,
)
from bayesclass.reports.comparison import format_comparison

__version__ = "0.1.0"

__all__ = [
    "REGISTRY",
    "BayesianClassifier",
    "Dataset",
    "GaussianClassConditional",
    "GaussianClassConditionalPrior",
    "GaussianProcessPrior",
    "LatentGaussianProcess",
    "LogisticPrior",
    "LogisticRegression",
    "NaiveBayes",
    "NaiveBayesPrior",
    "NoEstimateError",
    "SamplerSettings",
    "SeparationError",
    "available",
    "diagnose",
    "fit",
    "format_comparison",
    "get_model",
    "load",
    "load_csv",
    "load_result",
    "posterior_predictive_check",
    "predict",
    "save_result",
    "train_validation_test_split",
]
