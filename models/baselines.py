"""The seeds' classical classifiers as baselines, beside the Bayesian families.

These are NOT PyMC models and are not in :data:`bayesclass.models.REGISTRY`; they have their
own registry, :data:`BASELINES`, and :func:`get_baseline`. Each one is a frozen, keyword-only
dataclass whose fields are its options (validated on construction), fitted on the NUMERIC
model input: the caller applies bayesclass's standardisation and treatment coding first, so a
baseline sees a float matrix ``X`` (n_rows, n_features) and integer class codes ``y`` in
``0..K-1`` (``K = len(class_names)``).

=================  =====================================================  =============================
registry name      method                                                 class probabilities
=================  =====================================================  =============================
``least_squares``  least squares on targets -1/+1 (seed 000 eq 9.1),      none: decisions only
                   1-of-K targets for K > 2 (seed 002)
``fisher``         Fisher's linear discriminant, two classes (seed 002)   none: decisions only
``perceptron``     the perceptron algorithm, two classes (seed 002)       none: decisions only
``knn``            k nearest neighbours, majority vote (seed 000 eq 9.3)  neighbour class frequencies
``knn_distance``   distance-weighted k nearest neighbours (eq 9.4)        normalised neighbour weights
``tree``           decision tree (seed 000 §9.3)                          leaf frequencies N_jc / N_j
``forest``         random forest / bagging (seed 000 §9.3.2)              mean over trees of N_jc / N_j
=================  =====================================================  =============================

scikit-learn does the work where it has the method (k-NN, trees, forests); least squares,
Fisher and the perceptron are a few lines of NumPy each, written as the seeds give them.

Decisions. Where a baseline gives class probabilities, the decision is their argmax, ties to
the LOWEST class code (``numpy.argmax``; scikit-learn's ``predict`` breaks ties the same way).
The two-class linear baselines decide by the sign of a score
``s(x) = w^T x + w_0`` whose positive side is class code 1: code 1 when ``s(x) > 0``, code 0
when ``s(x) <= 0`` -- seed 000 eq 9.2's ``sgn[0] = -1``, i.e. again ties to the lowest code.

Example
-------
>>> from bayesclass import data
>>> from bayesclass.models.baselines import get_baseline
>>> train = data.seed000_separable(100, random_seed=1)
>>> fitted = get_baseline("fisher").fit(train.X, train.y, class_names=train.class_names)
>>> fitted.predict(train.X[:3])  # doctest: +SKIP
array([1, 1, 0])
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import check_features
from bayesclass.data._validation import require_seed
from bayesclass.data.constraints import Constrained, Integer, Positive
from bayesclass.models.base import InvalidHyperparameterError

if TYPE_CHECKING:
    import sklearn.ensemble as sklearn_ensemble
    import sklearn.neighbors as sklearn_neighbors
    import sklearn.tree as sklearn_tree
else:
    sklearn_neighbors = lazy_import("sklearn.neighbors")
    sklearn_tree = lazy_import("sklearn.tree")
    sklearn_ensemble = lazy_import("sklearn.ensemble")

__all__ = [
    "BASELINES",
    "PERCEPTRON_MAX_EPOCHS",
    "Baseline",
    "DecisionTree",
    "FisherDiscriminant",
    "FittedBaseline",
    "KNearestNeighbours",
    "LeastSquares",
    "Perceptron",
    "RandomForest",
    "WeightedKNearestNeighbours",
    "get_baseline",
]

#: the perceptron's default iteration cap, in epochs (full passes over the training rows)
PERCEPTRON_MAX_EPOCHS = 1000

FisherThreshold = Literal["gaussian", "midpoint"]
NeighbourWeighting = Literal["inverse_distance", "gaussian"]
TreeCriterion = Literal["entropy", "gini"]
ForestFeatures = Literal["sqrt", "all"]


def _read_only(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    return value


# -- the contract ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Baseline(Constrained, abc.ABC):
    """A classical (non-Bayesian) classifier of the seeds, fitted on numeric inputs.

    Subclasses are frozen, keyword-only dataclasses: their fields are the options, their constraints
    declared on the fields (:mod:`bayesclass.data.constraints`) and checked on construction (a
    ``ValueError`` naming the option, its value and the fix). They implement
    :meth:`_fit` and either :meth:`_class_proba` (baselines with class probabilities) or
    :meth:`_predict` (decisions-only baselines).
    """

    #: registry name (:data:`BASELINES`), e.g. ``"least_squares"``
    name: ClassVar[str]
    #: human label for tables, with the seed it comes from
    label: ClassVar[str]
    #: one sentence: how class probabilities are obtained, or ``"none: decisions only"``
    probabilities: ClassVar[str]
    #: whether :meth:`FittedBaseline.class_proba` returns probabilities (``False``: it returns ``None``)
    gives_probabilities: ClassVar[bool]
    #: the largest number of classes the method handles (``None``: any)
    max_classes: ClassVar[int | None] = None
    #: whether :meth:`fit` needs a ``random_seed`` (the method draws random numbers)
    uses_random_seed: ClassVar[bool] = False

    def fit(
        self,
        X: Any,
        y: Any,
        *,
        class_names: Sequence[str],
        random_seed: int | None = None,
    ) -> FittedBaseline:
        """Fit the baseline to numeric inputs and integer class codes.

        Parameters
        ----------
        X : array_like, shape (n_rows, n_features)
            Numeric, finite training inputs (already standardised / coded by the caller).
        y : array_like of int, shape (n_rows,)
            Class codes in ``0..K-1``. A class may be absent (its probability is then 0 and it
            is never predicted), but at least two must be present.
        class_names : sequence of str
            The K class names, in code order; ``class_proba`` always has K columns.
        random_seed : int, optional
            Seed of the method's random numbers; required where :attr:`uses_random_seed`
            (tree, forest), ignored otherwise. Same seed, same fit.

        Returns
        -------
        FittedBaseline
            The fitted form: class probabilities (where the method has them) and decisions for new rows.

        Raises
        ------
        ValueError
            Non-numeric, non-finite or non-2-D ``X``; ``y`` of the wrong length, type or codes;
            fewer than two classes present; more classes than the method handles; a missing
            ``random_seed``; or a method-specific failure (said in the message).
        """
        names = _check_class_names(class_names)
        features = _check_training_features(X)
        codes = _check_training_codes(y, n_rows=features.shape[0], class_names=names)
        present = np.flatnonzero(np.bincount(codes, minlength=len(names)))
        if present.size < 2:
            raise ValueError(
                f"y holds only class {names[present[0]]!r}; a classifier needs training rows of at least 2 classes: "
                "check the target column or use a stratified split"
            )
        if self.max_classes is not None and len(names) > self.max_classes:
            raise ValueError(
                f"the {self.name!r} baseline is a two-class method (seed 002) but class_names has {len(names)} classes "
                f"({', '.join(map(repr, names))}); use least_squares, knn, knn_distance, tree or forest for K > 2, "
                "or merge classes into two"
            )
        seed: int | None
        if self.uses_random_seed:
            if random_seed is None:
                raise ValueError(
                    f"the {self.name!r} baseline draws random numbers; pass random_seed=<int> (same seed, same fit)"
                )
            seed = require_seed(random_seed)
        else:
            seed = None if random_seed is None else require_seed(random_seed)
        state, details = self._fit(features, codes, n_classes=len(names), random_seed=seed)
        return FittedBaseline(
            baseline=self,
            class_names=names,
            n_features=features.shape[1],
            details={key: _read_only(value) for key, value in details.items()},
            state=state,
        )

    @abc.abstractmethod
    def _fit(
        self, X: np.ndarray, y: np.ndarray, *, n_classes: int, random_seed: int | None
    ) -> tuple[Any, dict[str, Any]]:
        """(state, details) from validated inputs; ``state`` is whatever the prediction hooks need."""

    def _class_proba(self, state: Any, X: np.ndarray, n_classes: int) -> np.ndarray | None:
        """(n, K) class probabilities from validated inputs, or ``None`` (decisions only)."""
        return None

    def _predict(self, state: Any, X: np.ndarray) -> np.ndarray:
        """Class codes from validated inputs (decisions-only baselines implement it)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _predict or _class_proba")

    def to_dict(self) -> dict[str, Any]:
        """The options as plain JSON-able values, with ``"baseline"``: the registry name (for provenance).

        Returns
        -------
        dict
            ``"baseline"`` (the registry name) and every option field.
        """
        return {"baseline": self.name, **dataclasses.asdict(self)}


@dataclass(frozen=True, eq=False)
class FittedBaseline:
    """A fitted baseline: class probabilities (where it has them) and decisions for new rows.

    Parameters
    ----------
    baseline : Baseline
        The baseline and its options.
    class_names : tuple of str
        The K classes, in code order.
    n_features : int
        Number of input columns at fit time (new rows must have as many).
    details : dict
        What was fitted, read-only arrays: weights, thresholds, convergence (see each baseline).
    state : object
        The baseline's own fitted form (weights, a scikit-learn estimator); read ``details`` instead.
    """

    baseline: Baseline
    class_names: tuple[str, ...]
    n_features: int
    details: dict[str, Any]
    state: Any = field(repr=False)

    def _features(self, X: Any) -> np.ndarray:
        return check_features(X, n_features=self.n_features, argument="X")

    def class_proba(self, X: Any) -> np.ndarray | None:
        """P(class | x) for every row of ``X``.

        Parameters
        ----------
        X : array_like, shape (n, n_features) or (n_features,)
            New inputs, validated as at fit (numeric, finite, ``n_features`` columns; one 1-D row is allowed).

        Returns
        -------
        numpy.ndarray of shape (n, K) or None
            Rows summing to 1; ``None`` for a decisions-only baseline (:attr:`Baseline.gives_probabilities`
            is false; see :attr:`Baseline.probabilities`).
        """
        features = self._features(X)
        return self.baseline._class_proba(self.state, features, len(self.class_names))

    def predict(self, X: Any) -> np.ndarray:
        """Class codes ``0..K-1`` of the rows of ``X``.

        The argmax of :meth:`class_proba` (ties to the lowest code) where the baseline has probabilities,
        otherwise its own decision rule (module docstring).

        Parameters
        ----------
        X : array_like, shape (n, n_features) or (n_features,)
            New inputs, validated as at fit.

        Returns
        -------
        numpy.ndarray of int, shape (n,)
            The decided class code of every row.
        """
        features = self._features(X)
        proba = self.baseline._class_proba(self.state, features, len(self.class_names))
        if proba is None:
            return self.baseline._predict(self.state, features)
        return np.argmax(proba, axis=1)


# -- input checks ------------------------------------------------------------------------------------
def _check_class_names(class_names: Any) -> tuple[str, ...]:
    if isinstance(class_names, str) or not isinstance(class_names, Sequence):
        raise ValueError(
            f"class_names must be a sequence of class-name strings in code order, got {class_names!r}; "
            "pass e.g. Dataset.class_names"
        )
    names = tuple(class_names)
    if len(names) < 2 or not all(isinstance(name, str) for name in names) or len(set(names)) != len(names):
        raise ValueError(
            f"class_names must hold at least 2 distinct strings, got {names!r}; pass e.g. Dataset.class_names"
        )
    return names


def _check_training_features(X: Any) -> np.ndarray:
    try:
        array = np.asarray(X)
    except ValueError as error:  # ragged rows
        raise ValueError(f"X is not a rectangular array ({error}); pass equal-length rows") from error
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"X must be numeric (the coded model input), got dtype {array.dtype}; code text columns first "
            "(bayesclass.data.coding, or fit through bayesclass)"
        )
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(
            f"X must be a non-empty 2-D array (n_rows, n_features), got shape {array.shape}; "
            "one feature is X.reshape(-1, 1)"
        )
    return check_features(array, n_features=array.shape[1], argument="X")


def _check_training_codes(y: Any, *, n_rows: int, class_names: tuple[str, ...]) -> np.ndarray:
    codes = np.asarray(y)
    if codes.ndim != 1 or codes.dtype.kind not in "iu":
        raise ValueError(
            f"y must be a 1-D array of integer class codes, got dtype {codes.dtype} and shape {codes.shape}; "
            "pass Dataset.y (codes 0..K-1), not labels or floats"
        )
    if codes.shape[0] != n_rows:
        raise ValueError(f"y has {codes.shape[0]} codes but X has {n_rows} rows; pass one class code per row of X")
    outside = np.flatnonzero((codes < 0) | (codes >= len(class_names)))
    if outside.size:
        row = int(outside[0])
        raise ValueError(
            f"y contains code {codes[row]} at row {row} but class_names has {len(class_names)} classes "
            f"(codes 0..{len(class_names) - 1}); pass codes in that range or the full class_names"
        )
    return codes.astype(np.intp)


def _all_classes(estimator: Any, proba: np.ndarray, n_classes: int) -> np.ndarray:
    """scikit-learn's probabilities (one column per class PRESENT at fit, ``estimator.classes_``) on all K codes."""
    full = np.zeros((proba.shape[0], n_classes))
    full[:, estimator.classes_] = proba
    return full


def _augmented(X: np.ndarray) -> np.ndarray:
    """The design matrix with the dummy input x_0 = 1 first (seed 002)."""
    return np.column_stack([np.ones(X.shape[0]), X])


# -- least squares -----------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class LeastSquares(Baseline):
    r"""Least-squares classification (seed 000 §9.1; seed 002 "Least Squares for Classification").

    Two classes: the labels are treated as numbers :math:`t_n \in \{-1, +1\}` (code 0 -> -1,
    code 1 -> +1) and, with the dummy input :math:`\tilde x = (1, x)`,

    .. math:: \tilde w = \arg\min_w \sum_n (t_n - \tilde x_n^T w)^2 = \tilde X^\dagger t
       \quad \text{(seed 000 eq 9.1)},

    deciding by :math:`\operatorname{sgn}[\tilde w^T \tilde x]` with ``sgn[0] = -1`` (eq 9.2):
    code 1 when :math:`\tilde w^T \tilde x > 0`.

    K > 2 classes: 1-of-K targets :math:`T` (row n is the unit vector of its class), one least-squares
    fit per class, :math:`\tilde W = \tilde X^\dagger T`, and the class with the largest output
    :math:`y_k(x) = \tilde w_k^T \tilde x` (seed 002), ties to the lowest code. (For K = 2 this
    argmax rule gives the same decisions as the -1/+1 fit.)

    The pseudo-inverse is ``numpy.linalg.lstsq`` (the minimum-norm solution when :math:`\tilde X`
    is rank deficient). No class probabilities: the outputs are not confined to [0, 1] (seed 000
    Figure 9.2), so the baseline reports decisions only.

    ``details``: ``weights`` (D,) and ``bias`` for two classes, (K, D) and (K,) for more;
    ``target_coding``; ``rank`` of :math:`\tilde X`.
    """

    name: ClassVar[str] = "least_squares"
    label: ClassVar[str] = "least squares (seed 000 eq 9.1)"
    probabilities: ClassVar[str] = (
        "none: decisions only (least-squares outputs are not probabilities: they leave [0, 1], seed 000 Figure 9.2)"
    )
    gives_probabilities: ClassVar[bool] = False

    def _fit(self, X, y, *, n_classes, random_seed):
        design = _augmented(X)
        if n_classes == 2:
            targets = np.where(y == 1, 1.0, -1.0)
            coding = "-1/+1 (code 0 -> -1, code 1 -> +1; seed 000 eq 9.1)"
        else:
            targets = np.eye(n_classes)[y]
            coding = "1-of-K (seed 002)"
        solution, _, rank, _ = np.linalg.lstsq(design, targets, rcond=None)
        bias = float(solution[0]) if n_classes == 2 else solution[0]
        details = {"weights": solution[1:].T, "bias": bias, "target_coding": coding, "rank": int(rank)}
        return solution, details

    def _predict(self, state, X):
        outputs = _augmented(X) @ state
        if outputs.ndim == 1:
            return (outputs > 0).astype(np.intp)  # sgn[0] = -1 -> code 0 (seed 000 eq 9.2)
        return np.argmax(outputs, axis=1)


# -- Fisher ------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class FisherDiscriminant(Baseline):
    r"""Fisher's linear discriminant for two classes (seed 002 "Fisher's linear discriminant").

    With class means :math:`m_0, m_1` (codes 0, 1) and the total within-class scatter

    .. math:: S_W = \sum_{n \in C_0} (x_n - m_0)(x_n - m_0)^T + \sum_{n \in C_1} (x_n - m_1)(x_n - m_1)^T,

    the direction maximising the Fisher criterion :math:`J(w) = w^T S_B w / w^T S_W w` is
    :math:`w = S_W^{-1}(m_1 - m_0)` (seed 002, with its C1, C2 as codes 0, 1), so that class 1
    projects higher. A row is class 1 when :math:`y = w^T x > y_0` (seed 002's :math:`y \ge -w_0`
    rule, with :math:`y_0 = -w_0`), else class 0. Seed 002 leaves the threshold :math:`y_0`
    open; the option ``threshold`` chooses it:

    ``"gaussian"`` (default)
        the projections modelled as two Gaussians with one shared variance
        :math:`s^2 = \sum_k \sum_{n \in C_k} (y_n - \bar y_k)^2 / N` and priors :math:`N_k / N`,
        fitted by maximum likelihood (Bishop 2006 §4.1.4, the seed's source), and :math:`y_0` where
        their posteriors are equal:
        :math:`y_0 = (\bar y_0 + \bar y_1)/2 - s^2 \ln(N_1/N_0) / (\bar y_1 - \bar y_0)`.
        This boundary is exactly linear discriminant analysis's (scikit-learn's
        ``LinearDiscriminantAnalysis`` with its default priors).
    ``"midpoint"``
        the midpoint of the projected class means, :math:`y_0 = (\bar y_0 + \bar y_1)/2`.

    The direction is the least-squares one (Bishop 2006 §4.1.5): least squares on two classes and
    Fisher differ only in the threshold. Two classes only; decisions only (the seed defines no
    probabilities).

    ``details``: ``weights`` (D,), ``threshold`` :math:`y_0`, ``bias`` :math:`w_0 = -y_0`,
    ``threshold_rule``, ``projected_class_means`` (2,).

    Parameters
    ----------
    threshold : {"gaussian", "midpoint"}
        How :math:`y_0` is chosen (above).
    """

    name: ClassVar[str] = "fisher"
    label: ClassVar[str] = "Fisher's linear discriminant (seed 002)"
    probabilities: ClassVar[str] = (
        "none: decisions only (seed 002 defines a projection and a threshold, no probability)"
    )
    gives_probabilities: ClassVar[bool] = False
    max_classes: ClassVar[int | None] = 2

    threshold: FisherThreshold = "gaussian"

    def _fit(self, X, y, *, n_classes, random_seed):
        groups = [X[y == code] for code in (0, 1)]
        means = [group.mean(axis=0) for group in groups]
        centred = [group - mean for group, mean in zip(groups, means, strict=True)]
        scatter = centred[0].T @ centred[0] + centred[1].T @ centred[1]
        rank = np.linalg.matrix_rank(scatter)
        if rank < X.shape[1]:
            raise ValueError(
                f"X: the within-class scatter S_W is singular (rank {rank} < {X.shape[1]} features), so Fisher's "
                "w = S_W^-1 (m_1 - m_0) is undefined; drop constant or collinear columns, or pass more rows per class"
            )
        difference = means[1] - means[0]
        if not np.any(difference):
            raise ValueError("X: the two class means are equal, so Fisher's direction is undefined; check y")
        weights = np.linalg.solve(scatter, difference)
        projected = X @ weights
        projected_means = np.array([projected[y == 0].mean(), projected[y == 1].mean()])
        midpoint = float(projected_means.mean())
        if self.threshold == "midpoint":
            threshold, rule = midpoint, "midpoint of the projected class means"
        else:
            n_rows = np.array([groups[0].shape[0], groups[1].shape[0]])
            residuals = projected - projected_means[y]
            variance = float(residuals @ residuals) / n_rows.sum()  # the maximum-likelihood shared variance
            separation = projected_means[1] - projected_means[0]
            threshold = midpoint - variance * math.log(n_rows[1] / n_rows[0]) / separation
            rule = "equal posteriors of shared-variance Gaussians on the projection, priors N_k/N (= LDA)"
        details = {
            "weights": weights,
            "threshold": float(threshold),
            "bias": -float(threshold),
            "threshold_rule": rule,
            "projected_class_means": projected_means,
        }
        return (weights, float(threshold)), details

    def _predict(self, state, X):
        weights, threshold = state
        return (X @ weights > threshold).astype(np.intp)


# -- perceptron --------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Perceptron(Baseline):
    r"""The perceptron algorithm for two classes (seed 002 "The perceptron algorithm"), in NumPy.

    Features :math:`\phi(x) = (1, x)` (the dummy input carries the bias), targets
    :math:`t_n = +1` for code 1 and :math:`-1` for code 0, :math:`w^{(0)} = 0`, learning rate
    :math:`\eta = 1` (seed 002: no loss of generality). The rows are visited in their training
    order, cyclically; each misclassified pattern, :math:`t_n w^T \phi_n \le 0`, updates

    .. math:: w^{(\tau+1)} = w^{(\tau)} + \phi_n t_n,

    the stochastic-gradient step on the perceptron criterion
    :math:`E_P(w) = -\sum_{n \in \mathcal M} w^T \phi_n t_n` (seed 002). An epoch is one pass over all
    rows. The algorithm stops after the first epoch without an update (converged: every training row
    has :math:`t_n w^T \phi_n > 0`; guaranteed in finitely many steps on linearly separable data, the
    perceptron convergence theorem) or after ``max_epochs`` epochs (default
    :data:`PERCEPTRON_MAX_EPOCHS`): on data that are not linearly separable it never converges and
    keeps cycling, and the weights of the last update are kept. Decision: code 1 when
    :math:`w^T \phi(x) > 0`, else code 0 (at exactly 0, where seed 002's step function gives +1, this
    rule gives the lower code, as every baseline here).

    scikit-learn's ``Perceptron`` differs (shuffled order, a stopping tolerance on the loss,
    optional penalties, one-vs-rest for K > 2), hence this implementation. Not converged is
    reported, not raised: ``details["converged"]``. Decisions only.

    ``details``: ``converged`` (bool), ``epochs`` (passes made), ``iteration_cap`` (= ``max_epochs``),
    ``updates`` (total), ``updates_per_epoch`` (epochs,), ``training_errors`` (with the final weights),
    ``weights`` (D,), ``bias``.

    Parameters
    ----------
    max_epochs : int
        The iteration cap, in epochs (>= 1).
    """

    name: ClassVar[str] = "perceptron"
    label: ClassVar[str] = "perceptron (seed 002)"
    probabilities: ClassVar[str] = "none: decisions only (the perceptron's step function gives no probability)"
    gives_probabilities: ClassVar[bool] = False
    max_classes: ClassVar[int | None] = 2

    max_epochs: Annotated[int, Integer(minimum=1)] = PERCEPTRON_MAX_EPOCHS

    def _fit(self, X, y, *, n_classes, random_seed):
        features = _augmented(X)
        targets = np.where(y == 1, 1.0, -1.0)
        weights = np.zeros(features.shape[1])
        updates_per_epoch: list[int] = []
        converged = False
        for _ in range(self.max_epochs):
            updates = 0
            for phi, target in zip(features, targets, strict=True):
                if target * (phi @ weights) <= 0:
                    weights += target * phi
                    updates += 1
            updates_per_epoch.append(updates)
            if updates == 0:
                converged = True
                break
        errors = int(np.count_nonzero((features @ weights > 0).astype(np.intp) != y))
        details = {
            "converged": converged,
            "epochs": len(updates_per_epoch),
            "iteration_cap": self.max_epochs,
            "updates": int(sum(updates_per_epoch)),
            "updates_per_epoch": np.array(updates_per_epoch),
            "training_errors": errors,
            "weights": weights[1:].copy(),
            "bias": float(weights[0]),
        }
        return weights, details

    def _predict(self, state, X):
        return (_augmented(X) @ state > 0).astype(np.intp)


# -- k nearest neighbours ----------------------------------------------------------------------------
def _gaussian_weights(distances: np.ndarray, *, bandwidth: float) -> np.ndarray:
    """Seed 000 eq 9.4's weights exp(-d^2 / 2 sigma^2), each row divided by its largest weight.

    The division cancels when scikit-learn normalises the votes, and keeps the weights from all
    underflowing to 0 for a query far from every training row.
    """
    squared = distances**2
    return np.exp(-(squared - squared.min(axis=1, keepdims=True)) / (2.0 * bandwidth**2))


@dataclass(frozen=True, kw_only=True)
class _SklearnBaseline(Baseline):
    """A baseline whose fitted state is a scikit-learn classifier with ``predict_proba``."""

    gives_probabilities: ClassVar[bool] = True

    def _class_proba(self, state, X, n_classes):
        return _all_classes(state, state.predict_proba(X), n_classes)


def _neighbours(X: np.ndarray, y: np.ndarray, k: int, weights: Any) -> Any:
    if k > X.shape[0]:
        raise ValueError(
            f"k={k} neighbours is more than the {X.shape[0]} training rows; pass k <= {X.shape[0]} or more rows"
        )
    return sklearn_neighbors.KNeighborsClassifier(n_neighbors=k, weights=weights, metric="euclidean").fit(X, y)


@dataclass(frozen=True, kw_only=True)
class KNearestNeighbours(_SklearnBaseline):
    r"""k nearest neighbours by majority vote (seed 000 §9.2 eq 9.3), scikit-learn's ``KNeighborsClassifier``.

    :math:`N_k(x)` are the k training rows nearest to x in Euclidean distance; the class
    probabilities are the neighbour class frequencies

    .. math:: P(c \mid x) = \frac{1}{k} \sum_{i \in N_k(x)} [y_i = c],

    whose argmax is eq 9.3's :math:`\operatorname{sgn}[\sum_{i \in N_k(x)} y_i]` for labels -1/+1
    (a tie goes to the lowest code). Equal distances are broken by scikit-learn's neighbour search.

    ``details``: ``k``.

    Parameters
    ----------
    k : int
        Number of neighbours, >= 1 and at most the number of training rows.
    """

    name: ClassVar[str] = "knn"
    label: ClassVar[str] = "k nearest neighbours (seed 000 eq 9.3)"
    probabilities: ClassVar[str] = "the class frequencies among the k nearest training rows (Euclidean distance)"

    k: Annotated[int, Integer(minimum=1)] = 5

    def _fit(self, X, y, *, n_classes, random_seed):
        return _neighbours(X, y, self.k, "uniform"), {"k": self.k}


@dataclass(frozen=True, kw_only=True)
class WeightedKNearestNeighbours(_SklearnBaseline):
    r"""Distance-weighted k nearest neighbours (seed 000 §9.2 eq 9.4), scikit-learn's ``KNeighborsClassifier``.

    Each of the k nearest rows votes with a weight :math:`w(x_i)`; the class probabilities are
    the normalised weighted votes

    .. math:: P(c \mid x) = \frac{\sum_{i \in N_k(x)} w(x_i) [y_i = c]}{\sum_{i \in N_k(x)} w(x_i)},

    whose argmax is eq 9.4's decision for labels -1/+1. ``weighting``:

    ``"inverse_distance"`` (default)
        :math:`w(x_i) = 1 / \lVert x_i - x \rVert` ("simply inverse Euclidean distance", seed 000);
        scikit-learn's ``weights="distance"``: a query at distance 0 from training rows takes
        their classes only (each with weight 1).
    ``"gaussian"``
        :math:`w(x_i) = \exp(-\lVert x_i - x \rVert^2 / 2\sigma^2)` (eq 9.4), :math:`\sigma` =
        ``bandwidth``, computed relative to the nearest neighbour so the weights cannot all
        underflow (the ratio, and so the probabilities, are unchanged).

    ``details``: ``k``, ``weighting``, ``bandwidth``.

    Parameters
    ----------
    k : int
        Number of neighbours, >= 1 and at most the number of training rows.
    weighting : {"inverse_distance", "gaussian"}
        The weight function (above).
    bandwidth : float, optional
        :math:`\sigma` of the Gaussian weights, in the units of X (> 0); required for
        ``weighting="gaussian"`` and refused otherwise.
    """

    name: ClassVar[str] = "knn_distance"
    label: ClassVar[str] = "distance-weighted k nearest neighbours (seed 000 eq 9.4)"
    probabilities: ClassVar[str] = (
        "the weighted class votes of the k nearest rows divided by their total weight "
        "(inverse-distance or Gaussian weights)"
    )

    k: Annotated[int, Integer(minimum=1)] = 5
    weighting: NeighbourWeighting = "inverse_distance"
    bandwidth: Annotated[float | None, Positive()] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.weighting == "gaussian" and self.bandwidth is None:
            raise ValueError(
                "bandwidth is required with weighting='gaussian' (sigma of seed 000 eq 9.4); pass e.g. bandwidth=1.0"
            )
        if self.weighting != "gaussian" and self.bandwidth is not None:
            raise ValueError(
                f"bandwidth={self.bandwidth!r} applies to weighting='gaussian' only; "
                "drop it or set weighting='gaussian'"
            )

    def _fit(self, X, y, *, n_classes, random_seed):
        if self.weighting == "gaussian":
            weights: Any = functools.partial(_gaussian_weights, bandwidth=self.bandwidth)
        else:
            weights = "distance"
        details = {"k": self.k, "weighting": self.weighting, "bandwidth": self.bandwidth}
        return _neighbours(X, y, self.k, weights), details


# -- trees -------------------------------------------------------------------------------------------
def _sklearn_random_state(random_seed: int) -> int:
    """scikit-learn's ``random_state`` (an integer below 2**32) hashed from a bayesclass seed (also below 2**32)."""
    return int(np.random.SeedSequence(random_seed).generate_state(1)[0])


@dataclass(frozen=True, kw_only=True)
class DecisionTree(_SklearnBaseline):
    r"""A decision tree (seed 000 §9.3), scikit-learn's ``DecisionTreeClassifier``.

    Grown greedily with univariate splits :math:`x_d < \tau` at midpoints between sorted values
    (seed 000 §9.3.1), each chosen to maximise the information gain
    :math:`IG = H(D_j) - \frac{N_L}{N_j} H(D_L) - \frac{N_R}{N_j} H(D_R)` (eqs 9.5-9.6;
    ``criterion="entropy"``, the default) or the Gini decrease. Each leaf j holds the class
    frequencies of its training rows, and these are the class probabilities:

    .. math:: P(y = c \mid j) = N_{j,c} / N_j \quad \text{(seed 000 §9.3)}.

    With the defaults the tree is grown until its leaves are pure (probabilities 0 or 1).
    scikit-learn breaks ties between equally good splits at random, hence ``random_seed``.

    ``details``: ``depth``, ``leaves``, ``sklearn_random_state``.

    Parameters
    ----------
    criterion : {"entropy", "gini"}
        Split criterion.
    max_depth : int, optional
        Largest depth (>= 1); ``None`` grows until the leaves are pure or ``min_samples_leaf`` stops it.
    min_samples_leaf : int
        Fewest training rows in a leaf (>= 1).
    """

    name: ClassVar[str] = "tree"
    label: ClassVar[str] = "decision tree (seed 000 §9.3)"
    probabilities: ClassVar[str] = "the class frequencies N_jc / N_j of the training rows in the leaf x falls in"
    uses_random_seed: ClassVar[bool] = True

    criterion: TreeCriterion = "entropy"
    max_depth: Annotated[int | None, Integer(minimum=1)] = None
    min_samples_leaf: Annotated[int, Integer(minimum=1)] = 1

    def _fit(self, X, y, *, n_classes, random_seed):
        state = _sklearn_random_state(random_seed)
        tree = sklearn_tree.DecisionTreeClassifier(
            criterion=self.criterion,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            random_state=state,
        ).fit(X, y)
        details = {"depth": int(tree.get_depth()), "leaves": int(tree.get_n_leaves()), "sklearn_random_state": state}
        return tree, details


@dataclass(frozen=True, kw_only=True)
class RandomForest(_SklearnBaseline):
    r"""A random forest / bagging (seed 000 §9.3.2), scikit-learn's ``RandomForestClassifier``.

    ``n_trees`` trees, each grown (as :class:`DecisionTree`) on a bootstrap sample of the rows and,
    with ``max_features="sqrt"``, choosing each split among a random subset of
    :math:`\max(1, \lfloor\sqrt{D}\rfloor)` of the D features ("randomly choose different subsets of
    features to consider for the split function search at each node", seed 000);
    ``max_features="all"`` considers every feature, which is plain bagging of trees. The class
    probabilities average the trees' conditional distributions (seed 000: "averaging the
    conditional distributions (a process known as Bagging)"):

    .. math:: P(c \mid x) = \frac{1}{T} \sum_{t=1}^{T} N^{(t)}_{j_t(x),c} / N^{(t)}_{j_t(x)},

    where the leaf counts of tree t are those of its bootstrap sample (rows counted with their
    multiplicity). Seeded by ``random_seed``; one thread.

    ``details``: ``n_trees``, ``max_features``, ``sklearn_random_state``.

    Parameters
    ----------
    n_trees : int
        Number of trees T (>= 1).
    max_features : {"sqrt", "all"}
        Features considered at each split (above).
    criterion : {"entropy", "gini"}
        Split criterion.
    max_depth : int, optional
        Largest depth of each tree (>= 1), ``None`` for none.
    min_samples_leaf : int
        Fewest (bootstrap) rows in a leaf (>= 1).
    """

    name: ClassVar[str] = "forest"
    label: ClassVar[str] = "random forest / bagging (seed 000 §9.3.2)"
    probabilities: ClassVar[str] = "the mean over the trees of their leaf class frequencies N_jc / N_j"
    uses_random_seed: ClassVar[bool] = True

    n_trees: Annotated[int, Integer(minimum=1)] = 100
    max_features: ForestFeatures = "sqrt"
    criterion: TreeCriterion = "entropy"
    max_depth: Annotated[int | None, Integer(minimum=1)] = None
    min_samples_leaf: Annotated[int, Integer(minimum=1)] = 1

    def _fit(self, X, y, *, n_classes, random_seed):
        state = _sklearn_random_state(random_seed)
        forest = sklearn_ensemble.RandomForestClassifier(
            n_estimators=self.n_trees,
            max_features="sqrt" if self.max_features == "sqrt" else None,
            criterion=self.criterion,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            bootstrap=True,
            n_jobs=1,
            random_state=state,
        ).fit(X, y)
        details = {"n_trees": self.n_trees, "max_features": self.max_features, "sklearn_random_state": state}
        return forest, details


# -- registry ----------------------------------------------------------------------------------------
BASELINES: dict[str, type[Baseline]] = {
    baseline.name: baseline
    for baseline in (
        LeastSquares,
        FisherDiscriminant,
        Perceptron,
        KNearestNeighbours,
        WeightedKNearestNeighbours,
        DecisionTree,
        RandomForest,
    )
}


def get_baseline(name: str, **options: Any) -> Baseline:
    """The baseline registered as ``name`` (:data:`BASELINES`) with the given options.

    Parameters
    ----------
    name : str
        Registry name (a key of :data:`BASELINES`, e.g. ``"knn"``).
    **options
        The baseline's options (its dataclass fields).

    Returns
    -------
    Baseline
        The baseline, its options validated.

    Raises
    ------
    ValueError
        An unknown name, an unknown option (an ``InvalidHyperparameterError``, also a ``TypeError``)
        or a bad option value.
    """
    try:
        cls = BASELINES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown baseline {name!r}; choose one of {', '.join(map(repr, BASELINES))}") from None
    known = [option.name for option in dataclasses.fields(cls)]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidHyperparameterError(
            f"unknown option(s) {', '.join(map(repr, unknown))} for baseline {name!r}; "
            f"its options are {', '.join(known) if known else 'none'}"
        )
    return cls(**options)
