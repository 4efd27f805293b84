"""Tests of inference.BayesianClassifier: scikit-learn conventions, pipelines, labels, parity."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse
import scipy.special
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

from bayesclass import data, inference
from bayesclass.inference import BayesianClassifier, SamplerSettings
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.models import LogisticPrior, LogisticRegression
from tests.conftest import FAST_SAMPLER


@pytest.fixture(scope="module")
def iris_labels(iris) -> np.ndarray:
    """Iris species as strings, the way a user passes them."""
    return np.asarray(iris.class_names)[iris.y]


def test_get_params_set_params_and_clone():
    model = LogisticRegression(prior=LogisticPrior(weight_sigma=2.0))
    estimator = BayesianClassifier(model, method="map", sampler=FAST_SAMPLER, standardize=True, random_seed=5)
    params = estimator.get_params()
    assert params == {
        "model": model,
        "method": "map",
        "sampler": FAST_SAMPLER,
        "standardize": True,
        "feature_kinds": "continuous",
        "random_seed": 5,
    }
    copy = clone(estimator)
    assert copy is not estimator and copy.get_params() == params
    assert estimator.set_params(method="nuts", random_seed=6) is estimator
    assert (estimator.method, estimator.random_seed) == ("nuts", 6)
    assert copy.method == "map"  # the clone is independent
    with pytest.raises(ValueError, match="Invalid parameter 'link'"):
        estimator.set_params(link="probit")


def test_clone_of_a_fitted_estimator_is_unfitted(gaussians_small):
    estimator = BayesianClassifier(method="map").fit(gaussians_small.X, gaussians_small.y)
    copy = clone(estimator)
    assert not hasattr(copy, "result_")
    with pytest.raises(NotFittedError):
        copy.predict(gaussians_small.X)


def test_fit_learns_sklearn_attributes(iris, iris_labels):
    estimator = BayesianClassifier(method="map").fit(iris.X, iris_labels)
    assert estimator.n_features_in_ == 4
    np.testing.assert_array_equal(estimator.classes_, np.unique(iris_labels))
    assert estimator.result_.attrs["method"] == "map"
    assert "point_estimate_map" in estimator.result_


def test_pipeline_cross_validation_on_iris(iris, iris_labels):
    pipeline = make_pipeline(StandardScaler(), BayesianClassifier(method="map"))
    scores = cross_val_score(pipeline, iris.X, iris_labels, cv=5)
    assert scores.shape == (5,)
    assert scores.mean() > 0.9


def test_string_labels_round_trip_and_proba_columns_follow_classes(iris, iris_labels):
    # relabel so that sorted label order differs from the code order: codes 0,1,2 -> "z", "b", "m"
    labels = np.array(["z", "b", "m"])[iris.y]
    estimator = BayesianClassifier(method="map", standardize=True).fit(iris.X, labels)
    assert estimator.classes_.tolist() == ["b", "m", "z"]
    predicted = estimator.predict(iris.X)
    assert predicted.dtype == labels.dtype and set(predicted) <= {"b", "m", "z"}
    assert np.mean(predicted == labels) > 0.9
    proba = estimator.predict_proba(iris.X)
    assert proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    # column k is P(classes_[k]): compare with a fit on the original codes
    reference = inference.fit("logistic", iris, method="map", standardize=True)
    by_code = inference.predict(reference, iris.X)["class_proba"].values  # columns: codes 0, 1, 2
    np.testing.assert_allclose(proba, by_code[:, [1, 2, 0]], atol=1e-10)  # "b"=1, "m"=2, "z"=0
    np.testing.assert_allclose(estimator.predict_log_proba(iris.X), np.log(proba), rtol=1e-12)


def test_integer_labels_round_trip(gaussians_small):
    labels = np.array([10, 20])[gaussians_small.y]
    estimator = BayesianClassifier(method="map").fit(gaussians_small.X, labels)
    predicted = estimator.predict(gaussians_small.X)
    assert predicted.dtype.kind == "i" and set(predicted.tolist()) <= {10, 20}
    assert estimator.score(gaussians_small.X, labels) == np.mean(predicted == labels)


@pytest.mark.parametrize("name", ["breast_cancer", "iris"])
def test_map_estimator_matches_sklearn_predict_proba(name):
    dataset = data.load(name).standardized()
    ours = BayesianClassifier(LogisticRegression(prior=LogisticPrior(1.0, math.inf)), method="map")
    ours.fit(dataset.X, dataset.y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        theirs = SklearnLogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(dataset.X, dataset.y)
    np.testing.assert_allclose(ours.predict_proba(dataset.X), theirs.predict_proba(dataset.X), rtol=0, atol=1e-5)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)


def test_standardize_option_equals_a_scaler_in_a_pipeline():
    wine = data.load("wine")
    inside = BayesianClassifier(method="map", standardize=True).fit(wine.X, wine.y)
    pipeline = make_pipeline(StandardScaler(), BayesianClassifier(method="map")).fit(wine.X, wine.y)
    np.testing.assert_allclose(inside.predict_proba(wine.X), pipeline.predict_proba(wine.X), rtol=0, atol=1e-10)


def test_nuts_estimator_predicts_the_posterior_mean(gaussians_small):
    estimator = BayesianClassifier(method="nuts", sampler=FAST_SAMPLER, random_seed=3)
    estimator.fit(gaussians_small.X, gaussians_small.y)
    assert "posterior" in estimator.result_
    proba = estimator.predict_proba(gaussians_small.X[:20])
    full = estimator.predict_full(gaussians_small.X[:20])
    np.testing.assert_allclose(proba, full["class_proba_draws"].mean(("chain", "draw")).values, rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)


def test_unfitted_estimator_raises_not_fitted(gaussians_small):
    estimator = BayesianClassifier(method="map")
    for method in (estimator.predict, estimator.predict_proba, estimator.predict_full):
        with pytest.raises(NotFittedError):
            method(gaussians_small.X)


def test_fit_rejects_mismatched_lengths():
    X, y = np.random.default_rng(0).normal(size=(10, 2)), np.array([0, 1] * 4 + [0])
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[10, 9\]"):
        BayesianClassifier(method="map").fit(X, y)


def test_fit_rejects_1d_features():
    with pytest.raises(ValueError, match=r"Expected 2D array, got 1D array instead(.|\n)*Reshape your data"):
        BayesianClassifier(method="map").fit(np.arange(6.0), np.array([0, 1, 0, 1, 0, 1]))


def test_fit_rejects_2d_labels_and_ravels_a_column_vector():
    with pytest.raises(ValueError, match=r"y should be a 1d array, got an array of shape \(6, 2\)"):
        BayesianClassifier(method="map").fit(np.ones((6, 2)), np.zeros((6, 2)))
    X = np.random.default_rng(0).normal(size=(6, 2))
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        BayesianClassifier(method="map").fit(X, np.array([[0], [1], [0], [1], [0], [1]]))


def test_fit_rejects_single_class_and_nan(gaussians_small):
    with pytest.raises(ValueError, match="single class"):
        BayesianClassifier(method="map").fit(gaussians_small.X, np.zeros(gaussians_small.n_obs, dtype=int))
    X = gaussians_small.X.copy()
    X[7, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        BayesianClassifier(method="map").fit(X, gaussians_small.y)


def test_fit_rejects_continuous_targets(gaussians_small):
    with pytest.raises(ValueError, match="Unknown label type"):
        BayesianClassifier(method="map").fit(gaussians_small.X, gaussians_small.X[:, 0])


def test_predict_rejects_wrong_number_of_features(gaussians_small):
    estimator = BayesianClassifier(method="map").fit(gaussians_small.X, gaussians_small.y)
    with pytest.raises(ValueError, match="X has 3 features, but BayesianClassifier is expecting 2 features"):
        estimator.predict(np.ones((2, 3)))


def test_unknown_method_fails_at_fit(gaussians_small):
    with pytest.raises(ValueError, match=r"method='vb' is not available for the 'logistic' model.*'nuts'"):
        BayesianClassifier(method="vb").fit(gaussians_small.X, gaussians_small.y)


def test_sampler_settings_reach_the_fit(gaussians_small):
    settings = SamplerSettings(draws=50, tune=50, chains=1, progressbar=False)
    estimator = BayesianClassifier(method="nuts", sampler=settings, random_seed=4)
    posterior = estimator.fit(gaussians_small.X, gaussians_small.y).result_["posterior"]
    assert (posterior.sizes["chain"], posterior.sizes["draw"]) == (1, 50)
    assert estimator.result_.attrs["random_seed"] == 4


def test_naive_bayes_estimator_on_binary_inputs_matches_bernoulli_nb():
    """BayesianClassifier("naive_bayes", feature_kinds="binary") by posterior mean == BernoulliNB(alpha=1) with the
    same class prior (N_j + 1) / (N + K) (seed 000 eqs 9.29, 9.30)."""
    from sklearn.naive_bayes import BernoulliNB

    from bayesclass.data import load

    digits = load("digits_binary")
    labels = np.asarray(digits.class_names)[digits.y]  # string labels: the estimator maps them itself
    estimator = BayesianClassifier("naive_bayes", method="posterior_mean", feature_kinds="binary").fit(digits.X, labels)
    counts = np.bincount(digits.y)
    reference = BernoulliNB(alpha=1.0, class_prior=(counts + 1) / (counts.sum() + counts.size)).fit(digits.X, labels)
    np.testing.assert_array_equal(estimator.classes_, reference.classes_)
    np.testing.assert_allclose(
        estimator.predict_proba(digits.X[:200]), reference.predict_proba(digits.X[:200]), rtol=0, atol=1e-10
    )
    np.testing.assert_array_equal(estimator.predict(digits.X[:200]), reference.predict(digits.X[:200]))


def test_naive_bayes_estimator_rejects_non_binary_values_for_binary_kind():
    X = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, 0.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match=r"X\[1, 1\] = 2.0 in binary .* must be 0 or 1"):
        BayesianClassifier("naive_bayes", method="mle", feature_kinds="binary").fit(X, [0, 1, 0, 1])


# -- scikit-learn's own conformance suite ----------------------------------------------------------------

MAP_ESTIMATORS = [BayesianClassifier(family, method="map") for family in ("logistic", "naive_bayes", "gcc")]


@parametrize_with_checks(MAP_ESTIMATORS)
def test_map_estimators_pass_every_scikit_learn_check(estimator, check):
    """Every check of ``parametrize_with_checks`` for logistic, naive Bayes (Gaussian) and gcc in MAP mode."""
    check(estimator)


#: exact conjugate draws (no compilation, milliseconds): every check through the posterior-draws code path
EXACT_ESTIMATOR = BayesianClassifier(
    "naive_bayes", method="exact", sampler=SamplerSettings(draws=100, chains=2, progressbar=False), random_seed=0
)


@parametrize_with_checks([EXACT_ESTIMATOR])
def test_exact_draws_estimator_passes_every_scikit_learn_check(estimator, check):
    """Predictions averaged over posterior draws (naive Bayes' exact posterior) pass every check too."""
    check(estimator)


#: a tiny sampler: the API checks fit many small data sets of the same structure (compiled once)
TINY_SAMPLER = SamplerSettings(draws=40, tune=40, chains=1, progressbar=False)
NUTS_ESTIMATOR = BayesianClassifier("logistic", method="nuts", sampler=TINY_SAMPLER, random_seed=0)
#: the NUTS-mode checks of the default run: every check that refuses its input or inspects the API without a
#: NUTS fit (milliseconds), and the fitting API checks whose data share two compiled structures (~30 s in all);
#: the rest compile one NUTS model per data shape (~10-30 s each) and run as slow
NUTS_API_CHECKS = {
    # no NUTS fit: construction, parameters, tags, refused input
    "check_estimator_cloneable",
    "check_estimator_tags_renamed",
    "check_valid_tag_types",
    "check_estimator_repr",
    "check_no_attributes_set_in_init",
    "check_mixin_order",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_parameters_default_constructible",
    "check_get_params_invariance",
    "check_set_params",
    "check_estimators_unfitted",
    "check_complex_data",
    "check_estimators_empty_data_messages",
    "check_estimator_sparse_tag",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_classifiers_one_label",
    "check_classifiers_one_label_sample_weights",
    "check_classifiers_regression_target",
    "check_supervised_y_no_nan",
    "check_estimators_partial_fit_n_features",
    "check_non_transformer_estimators_n_iter",
    "check_decision_proba_consistency",
    "check_fit2d_1sample",
    "check_fit1d",
    "check_requires_y_none",
    # fitting API checks
    "check_fit_score_takes_y",
    "check_dont_overwrite_parameters",
    "check_n_features_in_after_fitting",
    "check_fit2d_predict1d",
}


def _check_name(check) -> str:
    return getattr(check, "func", check).__name__


def _check_id(check) -> str:
    """The check's name with its keyword variants, e.g. ``check_classifiers_train(readonly_memmap=True)``."""
    keywords = getattr(check, "keywords", {})
    variant = ",".join(f"{key}={value}" for key, value in keywords.items())
    return f"{_check_name(check)}({variant})" if variant else _check_name(check)


def _nuts_checks(*, api: bool) -> list:
    """scikit-learn's checks of ``NUTS_ESTIMATOR``, the API ones (``api=True``) or the others."""
    return [
        pytest.param(estimator, check, id=_check_id(check))
        for estimator, check in estimator_checks_generator(NUTS_ESTIMATOR, mark="xfail")
        if (_check_name(check) in NUTS_API_CHECKS) == api
    ]


def test_nuts_api_check_names_are_scikit_learn_checks():
    """A renamed or removed scikit-learn check must not silently drop out of the default run."""
    names = {_check_name(check) for _, check in estimator_checks_generator(NUTS_ESTIMATOR)}
    assert NUTS_API_CHECKS <= names, sorted(NUTS_API_CHECKS - names)


@pytest.mark.parametrize(("estimator", "check"), _nuts_checks(api=True))
def test_nuts_estimator_passes_the_scikit_learn_api_checks(estimator, check):
    """NUTS mode, the API checks (the default run); the others fit many NUTS models and run as slow below."""
    check(estimator)


@pytest.mark.slow
@pytest.mark.parametrize(("estimator", "check"), _nuts_checks(api=False))
def test_nuts_estimator_passes_every_other_scikit_learn_check(estimator, check):
    check(estimator)


def test_tags_declare_dense_finite_input_and_randomness_of_unseeded_draws():
    for method, seed, random in [("nuts", None, True), ("exact", None, True), ("nuts", 0, False), ("map", None, False)]:
        tags = get_tags(BayesianClassifier("naive_bayes", method=method, random_seed=seed))
        assert tags.non_deterministic is random, (method, seed)
        assert (tags.input_tags.sparse, tags.input_tags.allow_nan) == (False, False)
        assert tags.estimator_type == "classifier" and tags.classifier_tags is not None


def test_exact_draws_differ_without_a_seed_and_repeat_with_one(gaussians_small):
    """What the non_deterministic tag declares: unseeded exact draws change from fit to fit, seeded ones do not."""
    X, y = gaussians_small.X, gaussians_small.y
    sampler = SamplerSettings(draws=50, chains=1, progressbar=False)

    def proba(seed):
        estimator = BayesianClassifier("naive_bayes", method="exact", sampler=sampler, random_seed=seed)
        return estimator.fit(X, y).predict_proba(X[:10])

    assert not np.array_equal(proba(None), proba(None))
    np.testing.assert_array_equal(proba(7), proba(7))


@pytest.mark.parametrize("sparse_format", ["csr_matrix", "csr_array"])
def test_sparse_input_is_refused_with_scikit_learns_message(gaussians_small, sparse_format):
    sparse = getattr(scipy.sparse, sparse_format)(gaussians_small.X)
    with pytest.raises(TypeError, match="Sparse data was passed for X, but dense data is required"):
        BayesianClassifier(method="map").fit(sparse, gaussians_small.y)
    estimator = BayesianClassifier(method="map").fit(gaussians_small.X, gaussians_small.y)
    with pytest.raises(TypeError, match="Sparse data was passed for X, but dense data is required"):
        estimator.predict_proba(sparse)


def test_predict_log_proba_stays_finite_where_probabilities_underflow(gaussians_small):
    """Far from the data P(class) underflows to 0 for one class; its log probability is finite and equals the
    closed form of logistic regression, log sigmoid(+-eta), computed in the log domain."""
    estimator = BayesianClassifier(method="map").fit(gaussians_small.X, gaussians_small.y)
    far = np.array([[1e3, -1e3], [-1e3, 1e3]])
    log_proba = estimator.predict_log_proba(far)
    assert np.isfinite(log_proba).all()
    assert (estimator.predict_proba(far) == 0).any()  # the plain probabilities do underflow
    np.testing.assert_allclose(scipy.special.logsumexp(log_proba, axis=1), 0.0, atol=1e-12)
    estimate = estimator.result_["point_estimate_map"]
    eta = float(estimate["intercept"]) + model_inputs(estimator.result_, far) @ estimate["weights"].values
    np.testing.assert_allclose(log_proba[:, 1], -np.logaddexp(0.0, -eta), rtol=1e-12)


@pytest.mark.parametrize("family", ["naive_bayes", "gcc"])
def test_generative_predict_log_proba_stays_finite_and_normalised_far_from_the_data(gaussians_small, family):
    estimator = BayesianClassifier(family, method="map").fit(gaussians_small.X, gaussians_small.y)
    far = np.array([[1e4, -1e4], [-1e4, 1e4], [0.0, 0.0]])
    log_proba = estimator.predict_log_proba(far)
    assert np.isfinite(log_proba).all()
    assert (estimator.predict_proba(far[:2]) == 0).any()  # the plain probabilities do underflow
    np.testing.assert_allclose(scipy.special.logsumexp(log_proba, axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.exp(log_proba), estimator.predict_proba(far), rtol=1e-12, atol=1e-300)


@pytest.fixture(scope="module")
def nuts_estimator(gaussians_small) -> BayesianClassifier:
    """Logistic regression by NUTS with the tiny sampler (the structure the API checks compile too)."""
    return BayesianClassifier(method="nuts", sampler=TINY_SAMPLER, random_seed=1).fit(
        gaussians_small.X, gaussians_small.y
    )


def test_predict_log_proba_of_draws_is_the_log_of_the_posterior_mean(nuts_estimator, gaussians_small):
    np.testing.assert_allclose(
        nuts_estimator.predict_log_proba(gaussians_small.X[:20]),
        np.log(nuts_estimator.predict_proba(gaussians_small.X[:20])),
        rtol=1e-10,
    )


def test_predict_log_proba_of_draws_stays_finite_where_the_posterior_mean_underflows(nuts_estimator):
    """log of the posterior mean probability, logsumexp_s log sigmoid(+-eta_s) - log S over the S draws, from the
    draws' closed form: finite for rows whose posterior mean probability underflows to 0."""
    far = np.array([[1e3, -1e3], [-1e3, 1e3]])
    log_proba = nuts_estimator.predict_log_proba(far)
    assert np.isfinite(log_proba).all()
    assert (nuts_estimator.predict_proba(far) == 0).any()
    posterior = nuts_estimator.result_["posterior"]
    intercept = posterior["intercept"].values.reshape(-1)  # (S,)
    weights = posterior["weights"].values.reshape(intercept.size, -1)  # (S, n_features)
    eta = intercept[:, None] + weights @ model_inputs(nuts_estimator.result_, far).T  # (S, n_rows)
    log_class_1 = scipy.special.logsumexp(-np.logaddexp(0.0, -eta), axis=0) - np.log(intercept.size)
    log_class_0 = scipy.special.logsumexp(-np.logaddexp(0.0, eta), axis=0) - np.log(intercept.size)
    np.testing.assert_allclose(log_proba, np.column_stack([log_class_0, log_class_1]), rtol=1e-10)
