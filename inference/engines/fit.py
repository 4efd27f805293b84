"""One entry to fit any registered model: NUTS, exact conjugate draws, or a point estimate, as an ArviZ ``DataTree``.

Layout of the result (every group a plain ``xarray.Dataset``):

``posterior``            draws of the model's parameters (any registered sampler), dims ``chain, draw, ...``
``sample_stats``         the sampler's statistics (NUTS: divergences, step size, tree depth ...; Gibbs: lp ...)
``log_likelihood``       ``y``: log P(y_i | x_i, theta) per draw and training row (every fit with draws; for LOO,
                         :mod:`bayesclass.inference.criticism.loo`)
``posterior_predictive`` every fit with draws: ``y`` (chain, draw, obs), a class code replicated per draw and
                         training row from P(class | x_i, theta), coded as ``observed_data`` ``y``; for the generative
                         families also ``X`` (replicate, obs, model_feature), features replicated given those labels
                         under a capped number of evenly spaced draws
                         (:mod:`bayesclass.inference.criticism.posterior_predictive`; seeded by ``random_seed``), so
                         that ``arviz_stats.loo_pit`` and ``arviz_plots.plot_ppc_pava`` take the result as it is.
                         A point estimate has no such group (nothing to replicate from), nor has a file written
                         before it existed
``point_estimate_map``   the MAP, same variables as the posterior minus ``chain``/``draw``
``point_estimate_mle``   the MLE, where it exists (``ResultInfo.mle_status`` says why not)
``point_estimate_<kind>`` every other point estimate of the family (e.g. naive Bayes'
                         ``posterior_mean``); ``ResultInfo.point_estimate_status`` says for each kind
                         "exists" or why it does not
``estimate_covariance_<kind>`` the point estimate's covariance where the family states its curvature
                         (:meth:`~bayesclass.models.base.ClassifierModel.gaussian_approximation`): over its
                         parameters in the model's inputs (standardised where the fit standardised), read back
                         by :func:`bayesclass.inference.result.gaussian_approximation`
``observed_data``        ``y`` (class codes) of the training data
``constant_data``        ``X`` of the training data and the feature standardisation (and ``true_class_proba``
                         where the data come from a known generator)

Root attrs record the provenance (model and hyperparameters, method, sampler settings, seed, the data's name,
fingerprint and structured origin, coding, standardisation, versions, timings, every warning the fit raised).
They are written and read by one typed schema, :mod:`bayesclass.inference.result` (``result_info(result)``);
no other module reads them.
"""

from __future__ import annotations

import dataclasses
import datetime
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from bayesclass._interrupts import before_draws
from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset, check_features
from bayesclass.data._validation import require_seed
from bayesclass.data.arguments import spelled
from bayesclass.data.coding import categorical_levels, treatment_code
from bayesclass.data.kinds import FeatureKind
from bayesclass.data.origin import MissingPolicy
from bayesclass.inference._memory import largest_fitting, parameter_values, require_memory, tile_bytes
from bayesclass.inference.criticism.posterior_predictive import (
    MAX_REPLICATED_FEATURE_VALUES,
    label_dtype,
    posterior_predictive_group,
    training_draws,
)
from bayesclass.inference.engines.methods import METHODS, SAMPLERS, methods_of
from bayesclass.inference.engines.sampler import SamplerRun
from bayesclass.inference.engines.sampling import SamplerSettings
from bayesclass.inference.result import (
    COVARIANCE_GROUP_PREFIX,
    DataRecord,
    ResultInfo,
    model_of,
    result_info,
    write_info,
)
from bayesclass.models import ClassifierModel, get_model
from bayesclass.models.base import ConvergenceError, NoEstimateError

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = [
    "DEFAULT_STANDARDIZE",
    "METHODS",
    "Method",
    "check_standardize",
    "fit",
    "model_inputs",
    "model_of",
    "standardization_of",
]

#: a ``method`` value: "auto" or a name in :data:`~bayesclass.inference.engines.methods.METHODS` (the registry of
#: samplers and the point estimate kinds; ``methods_of(model)`` lists what one family instance accepts)
Method = str
#: ``standardize`` values: no scaling, the continuous columns (True), or binary columns too ("all")
Standardize = bool | Literal["all"]
#: the ``standardize`` of every entry point (``fit``, ``compare_models``, studies, ``BayesianClassifier``, the CLI):
#: the continuous columns are scaled, so a default fit's class probabilities do not depend on their units and the
#: families' priors (stated on standardised inputs) mean what they say; ``False`` states the priors in the data's units
DEFAULT_STANDARDIZE: Standardize = True


def fit(
    model: ClassifierModel | str,
    data: Dataset | pd.DataFrame,
    *,
    target: str | None = None,
    missing: MissingPolicy | None = None,
    features: Sequence[str] | str | None = None,
    feature_kinds: Mapping[str, FeatureKind] | None = None,
    max_levels: int | None = None,
    method: Method = "auto",
    sampler: SamplerSettings | None = None,
    standardize: Standardize = DEFAULT_STANDARDIZE,
    random_seed: int | None = None,
) -> xr.DataTree:
    """Fit ``model`` to ``data``.

    Parameters
    ----------
    model : ClassifierModel or str
        A family instance (e.g. ``LogisticRegression(link="probit")``) or a
        registry name (default hyperparameters).
    data : Dataset or pandas.DataFrame
        Training data (see :func:`data.load`), or a DataFrame with the class labels in column ``target``
        (coded by :meth:`Dataset.from_frame <bayesclass.data.Dataset.from_frame>`: text, ``bool`` and
        ``category`` columns become levels).
    target : str, optional
        The class column of a DataFrame (required with one; refused with a Dataset, which has its classes).
    missing : {"error", "drop"}, optional
        With a DataFrame: a blank cell in a used column refuses it (default "error", counting the blanks per
        column) or drops its row ("drop"; the count is recorded in the result). Refused with a Dataset.
    features : sequence of str or str, optional
        With a DataFrame: the feature columns to use (a list, or comma-separated names; default every column but
        ``target``). Only these and ``target`` are checked for blanks.
    feature_kinds : Mapping[str, FeatureKind], optional
        With a DataFrame: declared kinds of some columns, e.g. ``{"year": "categorical"}`` (a numeric column is
        then coded by its distinct values).
    max_levels : int, optional
        With a DataFrame: the most levels a categorical column may have (default
        :data:`~bayesclass.data.table.DEFAULT_MAX_LEVELS`); a column with more is refused, naming it.
    method : str
        Posterior sampling by NUTS; by the latent GP's exact data-augmentation Gibbs sampler ("gibbs",
        :mod:`bayesclass.inference.engines.gibbs`); or by independent draws from the exact conjugate posterior
        ("exact", where ``model.has_exact()``); every point estimate of the model that exists is stored
        beside the draws for comparison. Otherwise one point estimate (one of
        ``model.available_point_estimates()``; ``methods_of(model)`` lists all). ``"auto"`` (default): the
        family's choice for ``data`` (``model.default_method_for``: "nuts" for most; the latent GP's Gibbs
        sampler, or "laplace" where the Gibbs sweep would cost too much, e.g. many inputs, with the reason recorded
        as ``method_note``), or "nuts" when ``sampler`` names a NUTS backend.
    sampler : SamplerSettings, optional
        Settings of the NUTS run; "gibbs" uses its ``draws``, ``tune`` (burn-in sweeps), ``chains``,
        ``progressbar`` and ``keep_partial``; "exact" its ``draws`` and ``chains``; point estimates ignore it.
        ``draws`` and ``tune`` left None (the default) take the family's defaults for the method and the
        number of rows (``model.sampling_defaults``); the result records the numbers used.
    standardize : bool or "all", default True
        ``True`` (:data:`DEFAULT_STANDARDIZE`): centre and scale the continuous features by their training mean
        and standard deviation (ddof 0) before fitting, so that the class probabilities do not depend on their
        units (a column in mm or in m, shifted or not, gives the same fit) and the priors, stated on standardised
        inputs, mean what they say; ``"all"``: the binary (0/1) features too, which the model then sees as
        continuous (e.g. dummy columns of a logistic regression); ``False``: no scaling, the priors then apply in
        the data's units. Categorical codes and counts are never scaled. The transform is
        stored (``constant_data`` ``feature_center``/``feature_scale``, attrs
        ``standardize_mode`` and ``standardized_features``; ``result_info(result).prior_scale`` says it in words)
        and applied by :func:`bayesclass.inference.prediction.predict`.
    random_seed : int, optional
        Seed of the sampler; drawn from fresh entropy and recorded when None.

    Returns
    -------
    xarray.DataTree
        See the module docstring.
    """
    table_options = {"target": target, "missing": missing, "features": features, "feature_kinds": feature_kinds}
    data = as_dataset(data, **table_options, max_levels=max_levels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result, info = _fit(
            model, data, method=method, sampler=sampler, standardize=standardize, random_seed=random_seed
        )
    for warning in caught:  # shown to the caller as before, and kept with the result for its report
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    write_info(
        result, dataclasses.replace(info, fit_warnings=tuple(f"{w.category.__name__}: {w.message}" for w in caught))
    )
    return result


def as_dataset(data: object, **table_options: Any) -> Dataset:
    """``data`` as a Dataset: a DataFrame with ``target`` goes through ``Dataset.from_frame``; else checked.

    ``table_options`` are ``target``, ``missing``, ``features``, ``feature_kinds`` and ``max_levels`` (None where
    not given).
    """
    target = table_options["target"]
    options: dict[str, Any] = {key: value for key, value in table_options.items() if value is not None}
    pandas = sys.modules.get("pandas")  # a DataFrame exists only where pandas was imported
    if pandas is not None and isinstance(data, pandas.DataFrame):
        if target is None:
            raise ValueError(
                f"data is a DataFrame with columns {list(data.columns)[:10]}: name its class column, e.g. "
                "fit(model, frame, target='species')"
            )
        return Dataset.from_frame(data, **options)
    if isinstance(data, Dataset) and options:
        given = next(iter(options))
        raise ValueError(
            f"{given}= applies to a DataFrame; data is the Dataset {data.name!r}, whose classes and rows are fixed: "
            f"drop {given}= (or pass the DataFrame)"
        )
    return data  # type: ignore[return-value]  # a wrong type is refused by _fit, naming the accepted types


def _fit(model, data, *, method, sampler, standardize, random_seed) -> tuple[xr.DataTree, ResultInfo]:
    if isinstance(model, str):
        model = get_model(model)
    if not isinstance(model, ClassifierModel):
        raise TypeError(f"model must be a registry name or a ClassifierModel, got {type(model).__name__}")
    sampler = sampler or SamplerSettings()
    method = resolve_method(model, method, sampler, data=data if isinstance(data, Dataset) else None)
    accepted = methods_of(model)
    if method not in accepted:
        raise ValueError(
            f"{spelled('method', method)} is not available for the {model.name!r} model; choose one of "
            f"{', '.join(map(repr, accepted))}{model.unavailable_hint(method)}"
        )
    if not isinstance(data, Dataset):
        raise TypeError(
            f"data must be a bayesclass.data.Dataset (see bayesclass.load) or a pandas DataFrame with target=COLUMN, "
            f"got {type(data).__name__}"
        )
    sampler = with_sampling_defaults(model, method, sampler, data.n_obs)
    if random_seed is not None:
        random_seed = require_seed(random_seed)
    if random_seed is None:
        random_seed = int(np.random.SeedSequence().generate_state(1)[0])
    model.check_training_data(data)

    coding = (
        categorical_levels(data.X, data.feature_names, data.feature_kinds, data.category_names)
        if model.categorical_coding == "treatment"
        else {}
    )
    coded = _treatment_coded(data, coding)
    center, scale = _standardization(coded, standardize)
    training = _apply_standardization(coded, center, scale, standardize)

    groups: dict[str, xr.Dataset] = {}
    run = SamplerRun(posterior=None)
    predictive = None
    if method in SAMPLERS:
        run = _sample(model, training, method, sampler, random_seed)
        groups["posterior"] = model.with_coords(run.posterior, training)
        if run.sample_stats is not None:
            groups["sample_stats"] = run.sample_stats
        # pointwise log-likelihood of the training rows (LOO, inference.criticism.loo) and their replicates
        groups["log_likelihood"], labels = training_draws(
            model, groups["posterior"], training.X, training.y, random_seed=random_seed
        )
        groups["posterior_predictive"], predictive = posterior_predictive_group(
            model, groups["posterior"], cast("np.ndarray", labels), training.X, (center, scale), random_seed=random_seed
        )
    status = _point_estimates(model, training, method, groups)

    groups["observed_data"] = xr.Dataset({"y": (("obs",), training.y)})
    groups["constant_data"] = xr.Dataset(
        {
            "X": (("obs", "feature"), data.X),
            "feature_center": (("model_feature",), center),
            "feature_scale": (("model_feature",), scale),
        },
        coords={"feature": list(data.feature_names), "model_feature": list(training.feature_names)},
    )
    if data.true_class_proba is not None:  # generated data: the truth, for reports (class order of the data)
        groups["constant_data"]["true_class_proba"] = (("obs", "class"), data.true_class_proba)
        groups["constant_data"] = groups["constant_data"].assign_coords({"class": list(data.class_names)})
    tree = xr.DataTree.from_dict({name: xr.DataTree(dataset) for name, dataset in groups.items()})
    scaled_kinds = standardized_kinds(standardize)
    info = ResultInfo(
        model=model,
        method=method,
        sampler_settings=dict(run.sampler_settings),
        sampler_backend=run.sampler_backend,
        random_seed=int(random_seed),
        standardize_mode="all" if standardize == "all" else "continuous" if standardize else "none",
        standardized_features=tuple(
            name for name, kind in zip(coded.feature_names, coded.feature_kinds, strict=True) if kind in scaled_kinds
        ),
        treatment_coding={name: tuple(levels) for name, levels in coding.items()},
        model_feature_names=tuple(training.feature_names),
        data=DataRecord(
            name=data.name,
            fingerprint=data.fingerprint(),
            target_fingerprint=data.target_fingerprint,
            provenance=data.provenance,
            origin=data.origin,
            class_names=tuple(data.class_names),
            feature_names=tuple(data.feature_names),
            feature_kinds=tuple(data.feature_kinds),
            category_names={name: tuple(levels) for name, levels in data.category_names.items()},
            missing=data.missing,
        ),
        point_estimate_status=status,
        package_versions=_package_versions(),
        created_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        compile_seconds=run.compile_seconds,
        sampling_seconds=run.sampling_seconds,
        compile_cache_hit=run.compile_cache_hit,
        partial=run.partial,
        partial_reason=_partial_reason(groups, sampler) if run.partial else "",
        method_note=model.method_note(method, data),
        posterior_predictive=predictive,
    )
    return tree, info


def _sample(model, training: Dataset, method: str, sampler: SamplerSettings, random_seed: int) -> SamplerRun:
    """Run the sampler ``method`` after the memory check (:func:`require_fit_memory`).

    With ``keep_partial``, an interrupt before it drew anything says so. The family's warnings about the method
    (:meth:`~bayesclass.models.base.ClassifierModel.method_warnings`) come first.
    """
    for message in model.method_warnings(method, training):
        warnings.warn(message, UserWarning, stacklevel=2)
    with before_draws(sampler.keep_partial, "before sampling began (while the model and sampler were set up)"):
        require_fit_memory(model, training, method, sampler)
        return SAMPLERS[method].run(model, training, sampler, random_seed)


def _point_estimates(model: ClassifierModel, training: Dataset, method: str, groups: dict[str, xr.Dataset]) -> dict:
    """Add each point estimate (every one beside draws, else ``method``) and its covariance to ``groups``.

    Returns the status of each kind: "exists", or why not (beside draws a missing estimate is recorded, not fatal;
    one whose optimiser failed is also warned of, so the caller and the report's warnings see it).
    """
    status: dict[str, str] = {}
    for kind in model.available_point_estimates() if method in SAMPLERS else (method,):
        try:
            groups[f"point_estimate_{kind}"] = model.point_estimate(training, kind)
            status[kind] = "exists"
            approximation = model.gaussian_approximation(training, kind)
            if approximation is not None:  # its covariance, beside it (standard errors, Wald and delta intervals)
                groups[f"{COVARIANCE_GROUP_PREFIX}{kind}"] = approximation.to_dataset()
        except NoEstimateError as error:  # it does not exist for these data (separation ...): the status says why
            if method not in SAMPLERS:
                raise
            status[kind] = str(error)
        except ConvergenceError as error:  # a failure, not a fact of the data: said as a warning too
            if method not in SAMPLERS:
                raise
            status[kind] = f"did not converge: {error}"
            warnings.warn(
                f"the {kind} point estimate is not stored beside the draws: its optimiser {status[kind]}",
                UserWarning,
                stacklevel=2,
            )
    return status


def with_sampling_defaults(
    model: ClassifierModel, method: str, sampler: SamplerSettings, n_obs: int
) -> SamplerSettings:
    """``sampler`` with the draws and tuning steps it leaves None set to the family's defaults.

    Parameters
    ----------
    model : ClassifierModel
        The family instance (:meth:`~bayesclass.models.base.ClassifierModel.sampling_defaults`).
    method : str
        The resolved method (a point estimate uses no sampler: its settings stay as given).
    sampler : SamplerSettings
        The caller's settings.
    n_obs : int
        The number of training rows.

    Returns
    -------
    SamplerSettings
        ``sampler`` with ``draws`` and ``tune`` set (those the caller gave are kept).
    """
    if method not in SAMPLERS or (sampler.draws is not None and sampler.tune is not None):
        return sampler
    defaults = model.sampling_defaults(method, n_obs)
    return dataclasses.replace(
        sampler,
        draws=defaults["draws"] if sampler.draws is None else sampler.draws,
        tune=defaults["tune"] if sampler.tune is None else sampler.tune,
    )


#: sample statistics per step a sampler may record (NUTS: tree depth, step size, energy ... about a dozen)
SAMPLE_STATS_VALUES = 16
#: copies of the draws held at once: the sampler's trace, the arrays it returns, the xarray posterior, the
#: per-draw work of the prediction kernel (4 chains x 50,000-100,000 draws of naive Bayes, logistic and gcc
#: peaked at 0.5 to 0.92 times the estimate: bench numbers in the module docstring of
#: :mod:`bayesclass.inference._memory`)
DRAW_COPIES = 5


def fit_bytes(model: ClassifierModel, training: Dataset, method: str, sampler: SamplerSettings) -> Callable[..., int]:
    """The estimated peak bytes of a sampling fit, as a function of its settings (``draws``, ``tune``, ``chains``).

    The sampler's stored steps (``Sampler.stored_steps``) x chains x (the values of one draw
    (:func:`~bayesclass.inference._memory.parameter_values`) + :data:`SAMPLE_STATS_VALUES`) x
    :data:`DRAW_COPIES`, plus the pointwise log-likelihood (chains x draws x rows) and its working tiles, the
    replicated labels (chains x draws x rows, small integers) and at most
    :data:`~bayesclass.inference.criticism.posterior_predictive.MAX_REPLICATED_FEATURE_VALUES` replicated
    features (three float64 copies while they are drawn).

    Parameters
    ----------
    model : ClassifierModel
        The family instance.
    training : Dataset
        The coded and standardised training data.
    method : str
        A sampling method of :data:`~bayesclass.inference.engines.methods.SAMPLERS`.
    sampler : SamplerSettings
        The settings, with ``draws`` and ``tune`` set.

    Returns
    -------
    callable
        ``needed(draws=..., tune=..., chains=...) -> int``: bytes, each setting defaulting to ``sampler``'s.
    """
    values = (SAMPLERS[method].values_per_draw or parameter_values)(model, training) + SAMPLE_STATS_VALUES
    draws, tune = sampler.resolved_counts()

    def steps(d: int, t: int) -> int:
        return SAMPLERS[method].stored_steps(model, training, dataclasses.replace(sampler, draws=d, tune=t))

    base, per_draw = steps(1, 0), steps(2, 0) - steps(1, 0)  # the steps are linear in draws and tune
    per_tune = steps(1, 1) - base
    n_obs, n_classes = training.n_obs, len(training.class_names)

    def needed(draws: int = draws, tune: int = tune, chains: int = sampler.chains) -> int:
        stored = base + (draws - 1) * per_draw + tune * per_tune
        sampling = 8 * chains * stored * values * DRAW_COPIES
        log_likelihood = 8 * chains * draws * n_obs + tile_bytes(n_classes * chains * draws, n_obs)
        labels = label_dtype(n_classes).itemsize * chains * draws * n_obs
        return sampling + log_likelihood + labels + 3 * 8 * MAX_REPLICATED_FEATURE_VALUES

    return needed


def require_fit_memory(model: ClassifierModel, training: Dataset, method: str, sampler: SamplerSettings) -> None:
    """Refuse a sampling fit whose draws would not fit in memory, before anything is compiled or sampled.

    Parameters
    ----------
    model, training, method, sampler
        As in :func:`fit_bytes`.

    Raises
    ------
    InsufficientMemoryError
        The estimate (:func:`fit_bytes`) exceeds the available memory; the message gives both and the most
        draws (or chains) that fit.
    """
    needed = fit_bytes(model, training, method, sampler)
    draws, tune = sampler.resolved_counts()
    chains = sampler.chains
    uses_tune = needed(tune=tune + 1) > needed()  # exact draws have no warm-up
    tuned = f" and tune={tune:,}" if uses_tune else ""

    def fix(available: int) -> str:
        most = largest_fitting(lambda n: needed(draws=n), available, upper=draws)
        if most >= 1:
            return f"at most {most:,} draws with {chains:,} chains{tuned} fit; lower draws"
        most = largest_fitting(lambda n: needed(tune=n), available, upper=tune) if tune and uses_tune else 0
        if most >= 1:
            return f"at most tune={most:,} with {chains:,} chains of {draws:,} draws fit; lower tune"
        most = largest_fitting(lambda n: needed(chains=n), available, upper=chains)
        if most >= 1:
            return f"at most {most:,} chains of {draws:,} draws{tuned} fit; lower chains"
        most = largest_fitting(lambda n: needed(draws=n, tune=0, chains=1), available, upper=draws)
        return f"at most {most:,} draws with 1 chain and tune=0 fit; lower draws, tune and chains"

    require_memory(
        needed(),
        what=f"the {method} fit ({chains:,} chains x {draws:,} draws{tuned}, {training.n_obs:,} rows)",
        fix=fix,
    )


def _partial_reason(groups: dict[str, xr.Dataset], sampler: SamplerSettings) -> str:
    """Why an interrupted sampler's kept draws are fewer than asked for."""
    kept = groups["posterior"].sizes
    return (
        f"interrupted: {kept['draw']} of {sampler.draws} draws per chain in {kept['chain']} of "
        f"{sampler.chains} chains were kept (keep_partial=True); the settings attr is what was asked for"
    )


def resolve_method(
    model: ClassifierModel, method: str, sampler: SamplerSettings, *, data: Dataset | None = None
) -> str:
    """The method ``fit(method=...)`` runs.

    Parameters
    ----------
    model : ClassifierModel
        The family instance.
    method : str
        A method name or ``"auto"``.
    sampler : SamplerSettings
        The settings (a named NUTS backend makes ``"auto"`` mean NUTS).
    data : Dataset, optional
        The training data, where known: ``"auto"`` is then the family's choice for them
        (:meth:`~bayesclass.models.base.ClassifierModel.default_method_for`; the latent GP's Laplace fallback on
        many inputs).

    Returns
    -------
    str
        ``method``, or for ``"auto"`` the family's ``default_method_for(data)`` (its ``default_sampling_method``
        without data; "nuts" where ``sampler`` names a NUTS backend).

    Raises
    ------
    ValueError
        A NUTS backend named for a sampler that has none (a named backend is never ignored).
    """
    if method == "auto":
        if sampler.backend != "auto":
            return "nuts"
        return model.default_sampling_method if data is None else model.default_method_for(data)
    if method in SAMPLERS and not SAMPLERS[method].uses_backend and sampler.backend != "auto":
        raise ValueError(
            f"{spelled('backend', sampler.backend)} is a NUTS backend, but {spelled('method', method)} is not NUTS: "
            f"drop the backend or use {spelled('method', 'nuts')}"
        )
    return method


def standardization_of(result: xr.DataTree) -> tuple[np.ndarray, np.ndarray]:
    """(center, scale) per model input that :func:`fit` applied (after any treatment coding).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result (its ``constant_data`` group holds ``feature_center`` and ``feature_scale``).

    Returns
    -------
    center, scale : numpy.ndarray of shape (n_inputs,)
        The model sees ``(x - center) / scale``; 0 and 1 for an input that is not standardized.
    """
    constant = result["constant_data"]
    # a child node's variables are DataArrays (the DataTree stubs also allow a child node)
    center, scale = (cast("xr.DataArray", constant[name]) for name in ("feature_center", "feature_scale"))
    return center.values, scale.values


def model_inputs(result: xr.DataTree, X: Any, *, info: ResultInfo | None = None) -> np.ndarray:
    """New rows in the data's units -> the inputs the model of ``result`` sees.

    The same treatment coding of categorical columns and the same standardization as in training are
    applied (one path for every estimate).

    Parameters
    ----------
    result : xarray.DataTree
        The fitted result whose model the rows are for.
    X : array-like or Dataset
        An array (n_obs, n_features), one row, or a :class:`~bayesclass.data.Dataset`, with the columns of
        the training data (attr ``feature_names``).
    info : ResultInfo, optional
        ``result``'s typed attrs when the caller has them already (a predictor's every chunk); parsed if None.

    Returns
    -------
    numpy.ndarray of shape (n_obs, n_inputs)
        The coded and standardized rows.
    """
    info = result_info(result) if info is None else info
    feature_names = info.feature_names
    values = check_features(
        X, n_features=len(feature_names), feature_names=feature_names, category_names=info.data.category_names
    )
    if info.treatment_coding:
        values, _, _ = treatment_code(values, feature_names, dict(info.treatment_coding))
    center, scale = standardization_of(result)
    return (values - center) / scale


def _treatment_coded(data: Dataset, coding: dict[str, tuple[str, ...]]) -> Dataset:
    """``data`` with its categorical columns treatment-coded (:mod:`bayesclass.data.coding`), as binary columns."""
    if not coding:
        return data
    X, names, indicator = treatment_code(data.X, data.feature_names, coding)
    kept = iter(kind for name, kind in zip(data.feature_names, data.feature_kinds, strict=True) if name not in coding)
    kinds = tuple("binary" if is_indicator else next(kept) for is_indicator in indicator)
    return dataclasses.replace(
        data,
        X=X,
        feature_names=names,
        feature_kinds=kinds,
        category_names={name: levels for name, levels in data.category_names.items() if name not in coding},
        provenance=f"{data.provenance}; treatment-coded {', '.join(map(repr, coding))} (reference: the first level)",
    )


def standardized_kinds(standardize: Standardize) -> tuple[str, ...]:
    """The feature kinds ``standardize`` scales (categorical codes and counts never are)."""
    if isinstance(standardize, (bool, np.bool_)):
        return ("continuous",) if standardize else ()
    if isinstance(standardize, str) and standardize == "all":
        return ("continuous", "binary")
    raise ValueError(
        f"standardize must be False, True (continuous columns) or 'all' (binary columns too), got {standardize!r}"
    )


def check_standardize(standardize: Standardize) -> None:
    """Refuse, before any fit, a ``standardize`` that is not one of its values (a constant column is legal).

    Parameters
    ----------
    standardize : bool or "all"
        As :func:`fit` takes it.

    Raises
    ------
    ValueError
        ``standardize`` is not False, True or "all".
    """
    standardized_kinds(standardize)


def _standardization(data: Dataset, standardize: Standardize) -> tuple[np.ndarray, np.ndarray]:
    """(center, scale) per feature: the mean and sd (ddof 0) of the columns ``standardize`` scales, else 0 and 1."""
    center = np.zeros(data.n_features)
    scale = np.ones(data.n_features)
    scaled = np.isin(np.array(data.feature_kinds), standardized_kinds(standardize))
    if scaled.any():
        std = data.X.std(axis=0)
        constant = scaled & (std == 0)
        if constant.any():  # legal, and uninformative: centred to 0, not scaled
            names = ", ".join(repr(data.feature_names[j]) for j in np.flatnonzero(constant))
            warnings.warn(
                f"constant feature(s) {names} in the training data: centred, not scaled; a constant column carries no "
                "information about the class: drop it to silence this",
                UserWarning,
                stacklevel=2,
            )
            std = np.where(constant, 1.0, std)
        center[scaled] = data.X[:, scaled].mean(axis=0)
        scale[scaled] = std[scaled]
    return center, scale


def _apply_standardization(data: Dataset, center: np.ndarray, scale: np.ndarray, standardize: Standardize) -> Dataset:
    """``data`` with ``(x - center) / scale``; a scaled binary column becomes a continuous one."""
    scaled = np.isin(np.array(data.feature_kinds), standardized_kinds(standardize))
    if not scaled.any():
        return data
    kinds = tuple(
        "continuous" if is_scaled else kind for kind, is_scaled in zip(data.feature_kinds, scaled, strict=True)
    )
    categories = {
        name: levels for name, levels in data.category_names.items() if not scaled[data.feature_names.index(name)]
    }
    return dataclasses.replace(data, X=(data.X - center) / scale, feature_kinds=kinds, category_names=categories)


def _package_versions() -> dict[str, str]:
    packages = {
        name: _version(name)
        for name in ("bayesclass", "pymc", "pytensor", "nutpie", "arviz", "numpy", "scipy", "xarray", "scikit-learn")
    }
    packages["python"] = sys.version.split()[0]
    return packages


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"
