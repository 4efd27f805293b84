"""A scikit-learn estimator over the same core as :func:`bayesclass.inference.engines.fit` and its ``predict``.

``BayesianClassifier`` follows scikit-learn's conventions: constructor arguments
are stored unchanged (``get_params``/``set_params``/``clone`` work), ``fit``
learns ``classes_``, ``n_features_in_`` and ``result_`` (the fitted DataTree),
so it works inside ``Pipeline``, ``GridSearchCV`` and ``cross_val_score``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.inference.engines.fit import DEFAULT_STANDARDIZE, Method, Standardize, fit
from bayesclass.inference.engines.methods import SAMPLERS
from bayesclass.inference.engines.sampling import SamplerSettings
from bayesclass.inference.prediction.predict import DEFAULT_INTERVAL_PROB, predict, predict_log_proba
from bayesclass.models import ClassifierModel

if TYPE_CHECKING:
    import xarray as xr

    from bayesclass.data import FeatureKind
else:
    xr = lazy_import("xarray")

__all__ = ["BayesianClassifier"]


class BayesianClassifier(ClassifierMixin, BaseEstimator):
    """Any registered bayesclass model as a scikit-learn classifier.

    Parameters
    ----------
    model : str or ClassifierModel
        Registry name (``"logistic"``) or a configured family instance such as
        ``LogisticRegression(prior=LogisticPrior(weight_sigma=2.0))``.
    method : {"auto", "nuts", "gibbs", "exact", "map", "mle", "posterior_mean", "unbiased"}
        How to fit (``"auto"``: the family's sampler, see :func:`bayesclass.inference.engines.fit`);
        ``predict_proba`` returns the posterior mean for the samplers and the plug-in probabilities
        of the point estimate otherwise.
    sampler : SamplerSettings, optional
        NUTS settings (default: ``SamplerSettings(progressbar=False)``).
    standardize : bool or "all", default True
        Standardise the continuous features inside the fit, so that the probabilities do not depend on their
        units and the priors are on standardised inputs; ``False``: no scaling, the priors in the data's units
        (see :func:`bayesclass.inference.engines.fit`).
    feature_kinds : str or sequence of str
        How the columns of ``X`` are modelled (``bayesclass.data.FeatureKind``): one kind for
        every column (default ``"continuous"``) or one per column, e.g.
        ``"binary"`` for 0/1 inputs to naive Bayes.
    random_seed : int, optional
        Seed of the sampler ("nuts", "gibbs") or of the exact draws ("exact"); without one those fits
        differ from run to run, and the estimator's ``non_deterministic`` tag says so.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The labels seen in ``fit``, sorted; the columns of :meth:`predict_proba` follow them.
    n_features_in_ : int
        Number of columns of ``X`` in ``fit`` (set by scikit-learn's ``validate_data``).
    result_ : xarray.DataTree
        The fitted result of :func:`bayesclass.inference.engines.fit`.
    """

    def __init__(
        self,
        model: str | ClassifierModel = "logistic",
        *,
        method: Method = "auto",
        sampler: SamplerSettings | None = None,
        standardize: Standardize = DEFAULT_STANDARDIZE,
        feature_kinds: str | Sequence[str] = "continuous",
        random_seed: int | None = None,
    ) -> None:
        self.model = model
        self.method = method
        self.sampler = sampler
        self.standardize = standardize
        self.feature_kinds = feature_kinds
        self.random_seed = random_seed

    def __sklearn_tags__(self):
        """scikit-learn's tags: dense finite input only; random unless the draws are seeded."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False  # refused with scikit-learn's own message (validate_data)
        tags.input_tags.allow_nan = False
        # posterior draws (NUTS, Gibbs, exact) differ between runs unless random_seed is fixed; point estimates do not
        tags.non_deterministic = self.method in ("auto", *SAMPLERS) and self.random_seed is None
        return tags

    def fit(self, X: Any, y: Any) -> BayesianClassifier:
        """Fit to features ``X`` (n_obs, n_features) and labels ``y`` of any hashable type.

        Input is validated by scikit-learn's ``validate_data`` (dense numeric 2-D ``X``,
        finite values, at least 2 rows, one label per row; sparse matrices refused).

        Parameters
        ----------
        X : array-like of shape (n_obs, n_features)
            The training features.
        y : array-like of shape (n_obs,)
            The labels, of any hashable type (their sorted distinct values become ``classes_``).

        Returns
        -------
        BayesianClassifier
            ``self``, fitted (``result_``, ``classes_``).
        """
        _refuse_text(X, argument="X")
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        n_features = X.shape[1]
        data = Dataset(
            name="BayesianClassifier.fit",
            X=X,
            y=codes,
            feature_names=tuple(getattr(self, "feature_names_in_", [f"x{j}" for j in range(n_features)])),
            class_names=tuple(str(label) for label in self.classes_),
            feature_kinds=cast(  # the kinds as given: Dataset checks them
                "tuple[FeatureKind, ...]",
                (self.feature_kinds,) * n_features if isinstance(self.feature_kinds, str) else self.feature_kinds,
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

    def _validated(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "result_")
        _refuse_text(X, argument="X")
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict_full(
        self, X: Any, *, interval_prob: float = DEFAULT_INTERVAL_PROB, return_draws: bool = True
    ) -> xr.Dataset:
        """Everything :func:`bayesclass.inference.prediction.predict` returns for the rows ``X``.

        Parameters
        ----------
        X : array-like of shape (n_obs, n_features)
            Dense numeric rows, validated by scikit-learn's ``validate_data``.
        interval_prob : float, default DEFAULT_INTERVAL_PROB
            Probability mass of the equal-tailed intervals, in (0, 1).
        return_draws : bool, default True
            Include the per-draw probabilities (rows x draws x classes x 8 bytes).

        Returns
        -------
        xarray.Dataset
            The probabilities, their interval, the point estimates' and (with ``return_draws``) the draws'.
        """
        X = self._validated(X)
        return predict(self.result_, X, interval_prob=interval_prob, return_draws=return_draws)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (n_obs, n_classes), columns in the order of ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_obs, n_features)
            Dense numeric rows, validated by scikit-learn's ``validate_data``.

        Returns
        -------
        numpy.ndarray of shape (n_obs, n_classes)
            P(class | x): the posterior mean over draws, or the point estimate's plug-in.
        """
        X = self._validated(X)
        return predict(self.result_, X)["class_proba"].values

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log of :meth:`predict_proba`, computed in the log domain (finite where probabilities underflow).

        Parameters
        ----------
        X : array-like of shape (n_obs, n_features)
            Dense numeric rows, validated by scikit-learn's ``validate_data``.

        Returns
        -------
        numpy.ndarray of shape (n_obs, n_classes)
            log P(class | x).
        """
        X = self._validated(X)
        return predict_log_proba(self.result_, X).values

    def predict(self, X: Any) -> np.ndarray:
        """The class of highest probability for each row.

        Parameters
        ----------
        X : array-like of shape (n_obs, n_features)
            Dense numeric rows, validated by scikit-learn's ``validate_data``.

        Returns
        -------
        numpy.ndarray of shape (n_obs,)
            Labels from ``classes_``.
        """
        proba = self.predict_proba(X)  # first: raises NotFittedError before classes_ is looked up
        return self.classes_[np.argmax(proba, axis=1)]


_CODE_IT = (
    "code it as numbers first (e.g. one 0/1 column per level with pandas.get_dummies), or fit with "
    "bayesclass.fit(model, frame, target=COLUMN), which codes text columns"
)


def _refuse_text(X: Any, *, argument: str) -> None:
    """Refuse text in ``X`` with the column that holds it, as scikit-learn's own estimators do.

    ``validate_data(dtype=float64)`` would turn the text ``"1.5"`` into a number and say only "could not convert
    string to float" of other text.
    """
    pandas = sys.modules.get("pandas")  # a DataFrame exists only where pandas was imported
    if pandas is not None and isinstance(X, pandas.DataFrame):
        text = [
            column
            for column, dtype in X.dtypes.items()
            if not (pandas.api.types.is_numeric_dtype(dtype) or pandas.api.types.is_bool_dtype(dtype))
        ]
        if text:
            raise ValueError(
                f"{argument} has column(s) {text[:5]} of text or categories (dtype {X.dtypes[text[0]]}); "
                f"BayesianClassifier takes numbers: {_CODE_IT}"
            )
        return
    if isinstance(X, (str, bytes)) or not isinstance(X, (np.ndarray, list, tuple)):
        return  # scipy sparse, scalars, ...: scikit-learn's validate_data says what is wrong
    try:
        array = np.asarray(X)
    except ValueError:
        return  # ragged rows: validate_data says so
    if array.ndim != 2 or array.dtype.kind not in "OUS":
        return  # numbers, or a shape validate_data refuses
    is_text = np.vectorize(lambda cell: isinstance(cell, (str, bytes)), otypes=[bool])(array)
    if is_text.any():
        row, column = (int(index[0]) for index in np.nonzero(is_text))
        raise ValueError(
            f"{argument}[{row}, {column}] is the text {array[row, column]!r} (column {column}); BayesianClassifier "
            f"takes numbers: {_CODE_IT}"
        )
