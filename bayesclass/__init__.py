"""bayesclass: Bayesian classifiers as PyMC models, each beside its closed-form MLE/MAP estimate.

The package is laid out as ``data -> models -> inference -> reports -> bayesclass`` (the README's "Layout"
section); this module re-exports what an analyst needs::

    import bayesclass as bc
    data = bc.load("breast_cancer")
    result = bc.fit(bc.LogisticRegression(), data, method="nuts", standardize=True, random_seed=0)
    print(bc.diagnose(result))
    bc.predict(result, data.X[:5])["class_proba"]
"""

import importlib

#: where each public name lives; the modules are imported on first use (PEP 562), so that ``import bayesclass``
#: and ``bayesclass --help`` do not pay for PyMC, ArviZ and xarray until they are needed
_EXPORTS = {
    "Dataset": "bayesclass.data",
    "available": "bayesclass.data",
    "load": "bayesclass.data",
    "load_csv": "bayesclass.data",
    "train_validation_test_split": "bayesclass.data",
    "BayesianClassifier": "bayesclass.inference",
    "SamplerSettings": "bayesclass.inference",
    "compare_models": "bayesclass.inference.evaluation.model_comparison",
    "diagnose": "bayesclass.inference",
    "fit": "bayesclass.inference",
    "InsufficientMemoryError": "bayesclass.inference",
    "posterior_predictive_check": "bayesclass.inference",
    "predict": "bayesclass.inference",
    "result_info": "bayesclass.inference",
    "load_result": ("bayesclass.inference", "load"),
    "save_result": ("bayesclass.inference", "save"),
    "stack": "bayesclass.inference.stacking",
    "REGISTRY": "bayesclass.models",
    "GaussianClassConditional": "bayesclass.models",
    "GaussianClassConditionalPrior": "bayesclass.models",
    "GaussianProcessPrior": "bayesclass.models",
    "LatentGaussianProcess": "bayesclass.models",
    "LogisticPrior": "bayesclass.models",
    "LogisticRegression": "bayesclass.models",
    "NaiveBayes": "bayesclass.models",
    "NaiveBayesPrior": "bayesclass.models",
    "NoEstimateError": "bayesclass.models",
    "SeparationError": "bayesclass.models",
    "get_model": "bayesclass.models",
    "format_comparison": "bayesclass._report",
    "format_model_comparison": "bayesclass.reports.model_comparison",
    "report": "bayesclass._report",
    "write_report": "bayesclass.reports.html",
}


#: the four subpackages, importable as attributes (``bayesclass.data.load``) without an import statement
_SUBPACKAGES = ("data", "models", "inference", "reports")


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"bayesclass.{name}")
    try:
        target = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'bayesclass' has no attribute {name!r}") from None
    module, attribute = target if isinstance(target, tuple) else (target, name)
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *_SUBPACKAGES})


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
    "InsufficientMemoryError",
    "NoEstimateError",
    "SamplerSettings",
    "SeparationError",
    "available",
    "compare_models",
    "diagnose",
    "fit",
    "format_comparison",
    "format_model_comparison",
    "report",
    "write_report",
    "get_model",
    "load",
    "load_csv",
    "load_result",
    "posterior_predictive_check",
    "predict",
    "result_info",
    "save_result",
    "stack",
    "train_validation_test_split",
]
