"""A scikit-learn estimator over the same core as :func:`inference.fit` / :func:`inference.predict`.

``BayesianClassifier`` follows scikit-learn's conventions: constructor arguments
are stored unchanged (``get_params``/``set_params``/``clone`` work), ``fit``
learns ``classes_``, ``n_features_in_`` and ``result_`` (the fitted DataTree),
so it works inside ``Pipeline``, ``GridSearchCV`` and ``cross_val_score``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from bayesclass.data import Dataset, check_features
from bayesclass.inference.fit import Method, fit
from bayesclass.inference.predict import DEFAULT_INTERVAL_PROB, predict
from bayesclass.inference.sampling import SamplerSettings
from bayesclass.models import ClassifierModel

__all__ = ["BayesianClassifier"]


class BayesianClassifier(ClassifierMixin, BaseEstimator):
    """Any registered bayesclass model as a scikit-learn classifier.

    Parameters
    ----------
    model : str or ClassifierModel
        Registry name (``"logistic"``) or a configured family instance such as
        ``LogisticRegression(prior=LogisticPrior(weight_sigma=2.0))``.
    method : {"nuts", "exact", "map", "mle", "posterior_mean", "unbiased"}
        How to fit; ``predict_proba`` returns the posterior mean for "nuts" and
        the plug-in probabilities of the point estimate otherwise.
    sampler : SamplerSettings, optional
        NUTS settings (default: ``SamplerSettings(progressbar=False)``).
    standardize : bool
        Standardise continuous features inside the fit (see :func:`inference.fit`).
    feature_kinds : str or sequence of str
        How the columns of ``X`` are modelled (``data.FeatureKind``): one kind for
        every column (default ``"continuous"``) or one per column, e.g.
        ``"binary"`` for 0/1 inputs to naive Bayes.
    random_seed : int, optional
        Seed of the sampler.
    """

    def __init__(
        self,
        model: str | ClassifierModel = "logistic",
        *,
        method: Method = "nuts",
        sampler: SamplerSettings | None = None,
        standardize: bool = False,
        feature_kinds: str | Sequence[str] = "continuous",
        random_seed: int | None = None,
    ) -> None:
        self.model = model
        self.method = method
        self.sampler = sampler
        self.standardize = standardize
        self.feature_kinds = feature_kinds
        self.random_seed = random_seed

    def fit(self, X: Any, y: Any) -> BayesianClassifier:
        """Fit to features ``X`` (n_obs, n_features) and labels ``y`` of any hashable type."""
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (one label per row), got shape {y.shape}; pass y.ravel()")
        check_classification_targets(y)
        if np.ndim(X) != 2:
            raise ValueError(f"X must be 2-D (n_obs, n_features), got shape {np.shape(X)}; reshape one feature with X.reshape(-1, 1)")
        values = check_features(X, n_features=np.shape(X)[1], argument="X")
        if len(values) != len(y):
            raise ValueError(f"X has {len(values)} rows but y has {len(y)} labels; pass one label per row")
        self.classes_, codes = np.unique(y, return_inverse=True)
        self.n_features_in_ = values.shape[1]
        data = Dataset(
            name="BayesianClassifier.fit",
            X=values,
            y=codes,
            feature_names=tuple(f"x{j}" for j in range(values.shape[1])),
            class_names=tuple(str(label) for label in self.classes_),
            feature_kinds=(
                (self.feature_kinds,) * values.shape[1] if isinstance(self.feature_kinds, str) else self.feature_kinds
            ),
            provenance="arrays passed to BayesianClassifier.fit",
        )
        self.result_ = fit(
            self.model,
            data,
            method=self.method,
            sampler=self.sampler or SamplerSettings(progressbar=False),
            standardize=self.standardize,
            random_seed=self.random_seed,
        )
        return self

    def predict_full(self, X: Any, *, interval_prob: float = DEFAULT_INTERVAL_PROB) -> xr.Dataset:
        """Everything :func:`inference.predict` returns (draws, interval, point estimates)."""
        check_is_fitted(self, "result_")
        return predict(self.result_, X, interval_prob=interval_prob)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (n_obs, n_classes), columns in the order of ``classes_``."""
        check_is_fitted(self, "result_")
        return predict(self.result_, X, keep_draws=False)["class_proba"].values

    def predict_log_proba(self, X: Any) -> np.ndarray:
        return np.log(self.predict_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """The class of highest probability for each row."""
        proba = self.predict_proba(X)  # first: raises NotFittedError before classes_ is looked up
        return self.classes_[np.argmax(proba, axis=1)]
