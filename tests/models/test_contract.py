"""The model contract, checked for EVERY registered family (``bayesclass.models.REGISTRY``).

Each family has one case below (a configured model, small data, how to draw its
posterior); a family added to the registry without a case fails
:func:`test_every_registered_family_has_a_contract_case`, so the contract covers it.
For every family: the hyperparameters round-trip through their provenance form; every
point estimate has the posterior's variable names and dims; ``class_log_proba`` is
normalised for draws and for every estimate; estimates do not depend on the order of
the training rows and predictions follow the order of the new rows; common bad input
gets a clear error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.special
import xarray as xr

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.models import (
    REGISTRY,
    GaussianClassConditional,
    GaussianClassConditionalPrior,
    LatentGaussianProcess,
    LogisticRegression,
    NaiveBayes,
    NoEstimateError,
    model_from_dict,
)


@dataclass(frozen=True)
class ContractCase:
    """A configured family, small data it fits, and how its posterior is drawn in these tests."""

    model: Any
    dataset: Any
    method: str  # "exact" where the family has conjugate draws, else a short "nuts" run


TINY_NUTS = SamplerSettings(draws=40, tune=60, chains=1, progressbar=False)

CASES = {
    "logistic": lambda: ContractCase(LogisticRegression(), data.seed001_gaussians(120, random_seed=5), "nuts"),
    "naive_bayes": lambda: ContractCase(NaiveBayes(), data.load("transport"), "exact"),
    "gcc": lambda: ContractCase(
        GaussianClassConditional(
            covariance="per-class", prior=GaussianClassConditionalPrior(covariance_prior="inverse_wishart")
        ),
        data.load("iris"),
        "exact",
    ),
    "gp": lambda: ContractCase(LatentGaussianProcess(), data.seed004_gp(30, random_seed=2), "nuts"),
}


def test_every_registered_family_has_a_contract_case():
    assert set(CASES) == set(REGISTRY), "add a ContractCase for every registered family"


@pytest.fixture(scope="module", params=sorted(REGISTRY))
def fitted(request):
    """(case, result): the posterior of each family beside all of its point estimates."""
    case = CASES[request.param]()
    result = inference.fit(case.model, case.dataset, method=case.method, sampler=TINY_NUTS, random_seed=1)
    return case, result


def _parameter_sets(case: ContractCase, result) -> dict[str, xr.Dataset]:
    sets = {"posterior": result["posterior"].to_dataset()}
    for kind in case.model.available_point_estimates():
        if f"point_estimate_{kind}" in result:
            sets[kind] = result[f"point_estimate_{kind}"].to_dataset()
    return sets


@pytest.mark.parametrize("family", sorted(REGISTRY))
def test_hyperparameters_round_trip_through_their_provenance_form(family):
    for model in (REGISTRY[family](), CASES[family]().model):
        text = model.to_json()
        assert json.loads(text)["model"] == family
        assert model_from_dict(json.loads(text)) == model
        assert type(model).from_dict(model.to_dict()) == model


def test_point_estimates_have_the_posteriors_names_and_dims(fitted):
    case, result = fitted
    posterior = result["posterior"].to_dataset()
    names = case.model.parameter_names(case.dataset)
    assert set(posterior.data_vars) == set(names)
    predictives = set(case.model.predictive_kinds())
    stored = [kind for kind in case.model.available_point_estimates() if f"point_estimate_{kind}" in result]
    assert set(stored) | {"mle"} >= set(case.model.available_point_estimates()) - predictives  # the MLE may not exist
    for kind in stored:
        estimate = result[f"point_estimate_{kind}"].to_dataset()
        assert estimate.attrs["kind"] == kind
        if kind in predictives:  # an exact predictive is a distribution, not a parameter set
            continue
        for name in names:
            expected = tuple(dim for dim in posterior[name].dims if dim not in ("chain", "draw"))
            assert estimate[name].dims == expected, (kind, name)
            assert estimate[name].shape == tuple(posterior.sizes[dim] for dim in expected)
        for name in ("class", "feature"):
            np.testing.assert_array_equal(estimate[name].values, posterior[name].values)


def test_class_log_proba_is_normalised_for_draws_and_every_estimate(fitted):
    case, result = fitted
    new = case.dataset.X[:7]
    for label, params in _parameter_sets(case, result).items():
        log_proba = case.model.class_log_proba(params, model_inputs(result, new))
        assert log_proba.dims[-2:] == ("obs", "class"), label
        assert list(log_proba["class"].values) == list(case.dataset.class_names)
        np.testing.assert_allclose(scipy.special.logsumexp(log_proba.values, axis=-1), 0.0, atol=1e-12, err_msg=label)


def test_predictions_follow_the_order_of_the_new_rows(fitted):
    case, result = fitted
    rows = case.dataset.X[:9]
    order = np.random.default_rng(0).permutation(len(rows))
    first = inference.predict(result, rows)
    second = inference.predict(result, rows[order])
    for name in first.data_vars:
        if "obs" not in first[name].dims:
            continue
        expected = first[name].isel(obs=order).values
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(second[name].values, expected, rtol=0, atol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(second[name].values, expected)


@pytest.mark.parametrize("family", sorted(REGISTRY))
def test_point_estimates_do_not_depend_on_the_order_of_the_training_rows(family):
    case = CASES[family]()
    order = np.random.default_rng(1).permutation(case.dataset.n_obs)
    shuffled = case.dataset.subset(order, name=f"{case.dataset.name}[shuffled]")
    for kind in case.model.available_point_estimates():
        try:
            original = case.model.point_estimate(case.dataset, kind)
        except NoEstimateError:
            continue
        permuted = case.model.point_estimate(shuffled, kind)
        for name in original.data_vars:
            values = permuted[name]
            if "obs" in values.dims:  # per-row quantities (a GP's latent values) move with their rows
                values = values.isel(obs=np.argsort(order))
            # the GP's hyperparameters come from an optimiser whose path sees the rows in another order
            tolerance = 1e-5 if family == "gp" else 1e-10
            np.testing.assert_allclose(
                values.values, original[name].values, rtol=tolerance, atol=tolerance, err_msg=f"{kind} {name}"
            )


@pytest.mark.parametrize("family", sorted(REGISTRY))
def test_common_bad_input_gets_a_clear_error(family):
    case = CASES[family]()
    model, dataset = case.model, case.dataset
    estimate = model.point_estimate(dataset, model.available_point_estimates()[0])
    with pytest.raises(ValueError, match=r"X has \d+ columns but the model was fitted on \d+ features"):
        model.class_log_proba(estimate, np.ones((2, dataset.n_features + 1)))
    bad = dataset.X[:3].copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"NaN"):
        model.class_log_proba(estimate, bad)
    with pytest.raises(ValueError, match=r"kind='median' is not a point estimate of this .* model; choose one of"):
        model.point_estimate(dataset, "median")
    single = dataset.subset(np.flatnonzero(dataset.y == dataset.y[0]), name="one class")
    with pytest.raises(ValueError, match=r"single class"):
        model.point_estimate(single, model.available_point_estimates()[0])
    with pytest.raises(ValueError, match=r"method='vb' is not available"):
        inference.fit(model, dataset, method="vb")
    with pytest.raises(TypeError, match=r"prior must be a .*Prior \(or a dict of its fields\)"):
        type(model)(prior=0.5)


@pytest.mark.parametrize("family", sorted(REGISTRY))
def test_prior_formulas_state_every_parameter(family):
    """The report's model summary: plain-text formulas naming every parameter the posterior holds, and the
    hyperparameters' values (a changed hyperparameter changes the text)."""
    case = CASES[family]()
    training = case.dataset.standardized() if family == "gp" else case.dataset
    formulas = case.model.prior_formulas()
    assert formulas and all(isinstance(line, str) and line for line in formulas)
    text = "\n".join(formulas)
    for name in case.model.parameter_names(training):
        if name.startswith(("hsgp_", "training_", "laplace_", "latent_whitened")):
            continue  # data or transforms carried beside the parameters, not priors
        assert name.split("_cholesky")[0] in text, (name, text)
    other = model_from_dict({**case.model.to_dict(), **_changed_prior(family)})
    assert other.prior_formulas() != formulas


def _changed_prior(family: str) -> dict:
    """One prior hyperparameter of each family set to another value, in its provenance form."""
    changes = {
        "logistic": {"prior": {"weight_sigma": 7.5, "intercept_sigma": 10.0}},
        "naive_bayes": {"prior": {**NaiveBayes().to_dict()["prior"], "binary_alpha": 3.5}},
        "gcc": {
            "prior": {
                **GaussianClassConditional().to_dict()["prior"],
                "covariance_prior": "inverse_wishart",
                "wishart_scale": 4.5,
            }
        },
        "gp": {"prior": {**LatentGaussianProcess().to_dict()["prior"], "amplitude_sigma": 4.5}},
    }
    return changes[family]
