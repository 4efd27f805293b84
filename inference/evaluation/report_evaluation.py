"""One evaluation step for reports: everything a page shows, computed once into plain records.

:func:`evaluate_for_report` takes fitted results (and held-out rows) and returns a
:class:`~bayesclass.inference.evaluation.report_data.ReportData`: the facts of each run, its convergence
diagnostics and the family's advice, the posterior beside every point estimate, held-out scores with standard
errors (:func:`heldout_estimates`, :func:`score_estimates`), PSIS-LOO, calibration inputs, the decision boundary
or latent curve over evenly thinned draws, the generative check, the decisions, and the LOO comparison of
several runs. :mod:`bayesclass.reports` renders it. Everything that draws random numbers takes ``random_seed``.

Without held-out rows the validation part of the split a run was fitted on is reproduced from its typed
origin (:class:`~bayesclass.data.DataOrigin`) and checked against the training rows' fingerprint.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.data.arguments import spelled
from bayesclass.inference.criticism.diagnostics import MAX_R_HAT, MIN_ESS, condensed_table, diagnose
from bayesclass.inference.criticism.loo import PARETO_K_LIMIT, LooSummary, LooUnavailable, compare, loo
from bayesclass.inference.criticism.predictive_checks import posterior_predictive_check
from bayesclass.inference.criticism.unavailable import (
    MIN_CHAINS_RANK_PLOT,
    Unavailable,
    chain_shape_text,
    fit_with_more,
)
from bayesclass.inference.engines.methods import SAMPLERS
from bayesclass.inference.evaluation import report_data as rd
from bayesclass.inference.evaluation.conclusions import (
    Conclusion,
    ConvergenceFinding,
    Omitted,
    conclude,
    paired_log_loss,
    result_convergence,
)
from bayesclass.inference.evaluation.heldout import (
    Estimates as PredictedEstimates,
)
from bayesclass.inference.evaluation.heldout import (
    estimate_labels,
    fit_baselines,
    heldout_estimates,
    result_codes,
    score_estimates,
)
from bayesclass.inference.evaluation.parameters import (
    derived_names,
    forest_rows,
    parameter_comparison,
    parameter_panels,
    point_estimate_kinds,
)
from bayesclass.inference.evaluation.report_plots import CALIBRATION_DRAWS, boundary, latent_curve, thinned
from bayesclass.inference.evaluation.scores import score_table
from bayesclass.inference.prediction.decisions import LossMatrix, decide, expected_loss
from bayesclass.inference.prediction.predict import DEFAULT_INTERVAL_PROB, predict
from bayesclass.inference.result import (
    ResultInfo,
    check_result,
    data_result,
    gaussian_approximation,
    is_stack,
    result_info,
    stack_info,
)
from bayesclass.models.base import GenerativeClassifierModel

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = [
    "evaluate_comparison",
    "evaluate_for_report",
    "labelled_results",
    "predicted_splits",
    "predictive_check_record",
    "rank_runs",
    "validation_rows",
]


def evaluate_for_report(
    results,
    heldout: Dataset | Mapping[str, Dataset] | None = None,
    *,
    loss: LossMatrix | None = None,
    features: Sequence[str] | None = None,
    baselines: Sequence[str] = (),
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    random_seed: int = 0,
    bayesclass_version: str = "",
) -> rd.ReportData:
    """Everything the report of ``results`` shows, computed.

    Parameters
    ----------
    results : xarray.DataTree, sequence of them, or mapping of label to DataTree
        Fitted results; labels default to ``"<model> (<method>)"``, numbered where they repeat.
    heldout : Dataset or mapping of split name to Dataset, optional
        Held-out rows; without them the validation rows of each run's split where it can be reproduced.
    loss, features, baselines, interval_prob
        As :func:`bayesclass.report`.
    random_seed : int
        Seed of the replicated data (generative checks, calibration bands) and randomised baselines.
    bayesclass_version : str
        The version of the bayesclass that renders the page (shown in its provenance line).

    Returns
    -------
    ReportData

    Raises
    ------
    ValueError
        A result that does not pass :func:`bayesclass.inference.result.check_result`, held-out data of other classes,
        bad ``features``, ``interval_prob`` outside (0, 1).
    """
    runs = labelled_results(results)
    if not 0 < interval_prob < 1:
        raise ValueError(f"interval_prob={interval_prob!r} must be in (0, 1), e.g. 0.89")
    given = _heldout(heldout)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        comparison = _loo_comparison(runs) if len(runs) > 1 else None
        evaluations, predicted = [], {}
        for label, result in runs.items():
            rows, reason = (given, "") if given is not None else validation_rows(result)
            predicted[label] = predicted_splits(
                result, rows, baselines=baselines, interval_prob=interval_prob, random_seed=random_seed
            )
            evaluations.append(
                evaluate_run(
                    result,
                    label=label,
                    heldout=rows,
                    no_heldout_reason=reason,
                    loss=loss,
                    features=features,
                    baselines=baselines,
                    interval_prob=interval_prob,
                    random_seed=random_seed,
                    predicted=predicted[label],
                )
            )
        ranking = rank_runs(runs, predicted) if given is not None and len(runs) > 1 else ()
    raised = tuple(f"{w.category.__name__}: {w.message}" for w in caught)
    return rd.ReportData(tuple(evaluations), comparison, interval_prob, raised, bayesclass_version, ranking)


def predicted_splits(
    result, heldout: Mapping[str, Dataset], *, baselines: Sequence[str], interval_prob: float, random_seed: int
) -> dict[str, tuple[Dataset, PredictedEstimates]]:
    """Every estimate of ``result`` (and the baselines) predicted once per held-out split, with the split's rows.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result (or a stack).
    heldout : mapping of str to Dataset
        Held-out rows by split.
    baselines : sequence of str
        Baselines to fit on the result's training rows and predict.
    interval_prob : float
        Probability mass of the posterior intervals.
    random_seed : int
        Seed of the randomised baselines.

    Returns
    -------
    dict of str to (Dataset, Estimates)
        Per split, its rows and :func:`heldout_estimates` of them, shared by the scores, decisions and rankings.
    """
    fitted = fit_baselines(result, baselines, random_seed=random_seed) if baselines and heldout else None
    return {
        split: (data, heldout_estimates(result, data, baselines=fitted, interval_prob=interval_prob))
        for split, data in heldout.items()
    }


def rank_runs(
    runs: Mapping[str, xr.DataTree], predicted: Mapping[str, Mapping[str, tuple[Dataset, PredictedEstimates]]]
) -> tuple[rd.RunRanking, ...]:
    """Several runs ranked on the same held-out rows by each run's own first estimate (its posterior if any).

    The same functions as every held-out ranking: :func:`score_table`,
    :func:`~bayesclass.inference.evaluation.model_comparison.rank_heldout` (the paired per-row difference to the
    best) and :func:`~bayesclass.inference.evaluation.conclusions.paired_log_loss` (the best against the runner-up).

    Parameters
    ----------
    runs : mapping of str to xarray.DataTree
        The runs by label.
    predicted : mapping of str to mapping of str to (Dataset, Estimates)
        Per run, :func:`predicted_splits` of the same held-out splits.

    Returns
    -------
    tuple of RunRanking
        One per split; without rows and with the reason where the runs have different classes.
    """
    from bayesclass.inference.evaluation.model_comparison import rank_heldout

    headline = {label: next(iter(estimate_labels(result).values())) for label, result in runs.items()}
    rankings = []
    for split, (data, _) in next(iter(predicted.values())).items():
        estimates = {label: predicted[label][split][1] for label in runs}
        first = next(iter(estimates.values()))
        chosen = tuple((label, headline[label]) for label in runs)
        if any(own.class_names != first.class_names for own in estimates.values()):
            classes = "; ".join(f"{label}: {', '.join(own.class_names)}" for label, own in estimates.items())
            reason = f"the runs were fitted on different classes ({classes}); rank runs of the same classes"
            rankings.append(rd.RunRanking(split, data.name, data.n_obs, chosen, (), {}, None, reason))
            continue
        proba = {label: estimates[label].proba[estimate] for label, estimate in chosen}
        table = score_table(proba, first.y, class_names=first.class_names)
        errors = {label: standard_errors(estimates[label]).get(estimate, {}) for label, estimate in chosen}
        finding = paired_log_loss({label: p for label, p in proba.items() if p is not None}, first.y, split=split)
        rankings.append(
            rd.RunRanking(split, data.name, data.n_obs, chosen, rank_heldout(proba, first.y, table), errors, finding)
        )
    return tuple(rankings)


def evaluate_run(
    result,
    *,
    label,
    heldout,
    no_heldout_reason,
    loss,
    features,
    baselines,
    interval_prob,
    random_seed,
    predicted=None,
) -> rd.RunEvaluation:
    """One run's :class:`RunEvaluation` (see :func:`evaluate_for_report`; ``predicted``: :func:`predicted_splits`)."""
    if predicted is None:
        predicted = predicted_splits(
            result, heldout, baselines=baselines, interval_prob=interval_prob, random_seed=random_seed
        )
    if is_stack(result):
        return evaluate_stack_run(
            result, label=label, heldout=heldout, no_heldout_reason=no_heldout_reason, loss=loss, baselines=baselines,
            predicted=predicted, random_seed=random_seed,
        )  # fmt: skip
    info = result_info(result)
    scores = tuple(
        _scores(result, split, data, estimates, baselines=baselines, loss=loss)
        for split, (data, estimates) in predicted.items()
    )
    first_split = next(iter(heldout.items()), None)
    if first_split is None:
        calibration_rows, which = training_rows(result), "the training rows (no held-out rows)"
    else:
        which, calibration_rows = first_split
    verdict = diagnose(result) if "posterior" in result.children else None
    compared = estimates(result, info, interval_prob=interval_prob)
    loo_summary = loo_or_unavailable(result) if "log_likelihood" in result.children else None
    return rd.RunEvaluation(
        summary=run_summary(result, info, label=label),
        convergence=convergence(result, info, verdict) if verdict is not None else None,
        estimates=compared,
        heldout=scores,
        no_heldout_reason=no_heldout_reason,
        loo=loo_summary,
        pareto_k_limit=PARETO_K_LIMIT,
        calibration=calibration(result, info, calibration_rows, which=which, random_seed=random_seed),
        boundary=_input_figure(result, info, features=features, interval_prob=interval_prob, random_seed=random_seed),
        generative=generative_check(result, info, random_seed=random_seed),
        decisions=decisions(info, predicted, loss=loss) if loss is not None else None,
        fit_warnings=info.fit_warnings,
        conclusion=conclusion(
            result,
            info,
            verdict,
            {split: estimates_split for split, (_, estimates_split) in predicted.items()},
            compared,
            interval_prob=interval_prob,
            no_heldout_reason=no_heldout_reason,
            loo=loo_summary,
        ),
    )


def evaluate_stack_run(
    result, *, label, heldout, no_heldout_reason, loss, baselines, predicted, random_seed
) -> rd.RunEvaluation:
    """A stack's :class:`RunEvaluation`: its members and weights, and the same scores, calibration and decisions.

    The stack is scored, calibrated and decided like any estimate (its mixture probabilities), each member's
    posterior beside it; it has no draws of its own to diagnose, no parameters and no PSIS-LOO (its weights come
    from its members' LOO, listed in the run's facts).
    """
    stack = stack_info(result)
    info = result_info(data_result(result))
    scores = tuple(
        _scores(result, split, data, estimates, baselines=baselines, loss=loss)
        for split, (data, estimates) in predicted.items()
    )
    which, rows = next(iter(heldout.items()), ("the training rows (no held-out rows)", None))
    rows = training_rows(result) if rows is None else rows
    prediction = predict(result, rows)
    labels = estimate_labels(result)
    proba = {  # the figure names its panels' variables by label: no "/" (a file path) in a variable name
        labels[kind].replace("/", "\u2215"): prediction[
            "class_proba" if kind == "posterior" else f"class_proba_{kind}"
        ].values
        for kind in labels
    }
    y, _ = result_codes(result, rows)
    members = tuple(
        f"member {label}: weight {weight:.4f}, elpd_loo {elpd:.2f} (se {se:.2f})"
        for label, weight, elpd, se in zip(stack.labels, stack.weights, stack.elpd_loo, stack.elpd_se, strict=True)
    )
    record = info.data
    summary = rd.RunSummary(
        label=label, family="stack", family_class="Stack", hyperparameters={"method": stack.method,
        "weights": dict(zip(stack.labels, stack.weights, strict=True))},
        prior_formulas=(f"P(class | x) = sum_m w_m P_m(class | x), weights by {stack.method} of the members' "
                        "PSIS-LOO (arviz_stats.compare)", *members),
        data_name=record.name, data_fingerprint=record.fingerprint, data_provenance=record.provenance,
        n_rows=int(data_result(result)["observed_data"]["y"].size), feature_names=record.feature_names,
        class_names=record.class_names, standardized_features=(), method=stack.method, draws="stack",
        sampler_settings={}, sampler_backend=None, random_seed=0, timings=(), compile_cache_hit=None,
        package_versions=tuple(sorted(info.package_versions.items())), created_at=stack.created_at,
        hyperparameter_rows=hyperparameter_rows(
            {"method": stack.method, "weights": dict(zip(stack.labels, stack.weights, strict=True))}, {}
        ),
    )  # fmt: skip
    return rd.RunEvaluation(
        summary=summary,
        convergence=None,
        estimates=rd.Estimates(rows=(), kinds=(), status=(), has_posterior=False),
        heldout=scores,
        no_heldout_reason=no_heldout_reason,
        loo=None,
        pareto_k_limit=PARETO_K_LIMIT,
        calibration=rd.Calibration(
            proba,
            y,
            info.class_names,
            which,
            rows.n_obs,
            (),
            random_seed,
            rd.calibration_classes(y, len(info.class_names), len(proba)),
        ),
        boundary=None,
        generative=None,
        decisions=decisions(info, predicted, loss=loss) if loss is not None else None,
        fit_warnings=(),
    )


def evaluate_comparison(
    result,
    heldout: Mapping[str, Dataset] | None = None,
    *,
    baselines: Sequence[str] = (),
    loss: LossMatrix | None = None,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    random_seed: int = 0,
) -> rd.ComparisonData:
    """What ``bayesclass compare`` prints of ``result``: facts, convergence, parameters and held-out scores.

    The parameters are shown beside the point estimates; the held-out scores are those of every estimate and
    baseline on each split of ``heldout``.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    heldout : mapping of str to Dataset, optional
        Held-out splits by name (none: no scores).
    baselines : sequence of str
        Baselines scored beside the estimates.
    loss : LossMatrix, optional
        Adds the mean loss of each estimate's Bayes decisions.
    interval_prob : float, default DEFAULT_INTERVAL_PROB
        Probability mass of the posterior intervals.
    random_seed : int, default 0
        Seed of the randomised baselines.

    Returns
    -------
    ComparisonData
        The records ``bayesclass compare`` prints.
    """
    info = result_info(result)
    fitted = fit_baselines(result, baselines, random_seed=random_seed) if baselines else None
    scores = []
    predicted = {}
    for split, data in (heldout or {}).items():
        predicted[split] = heldout_estimates(result, data, baselines=fitted, interval_prob=interval_prob)
        scores.append(_scores(result, split, data, predicted[split], baselines=baselines, loss=loss))
    verdict = diagnose(result) if "posterior" in result.children else None
    compared = estimates(result, info, interval_prob=interval_prob)
    return rd.ComparisonData(
        summary=run_summary(result, info, label=""),
        convergence=str(verdict) if verdict is not None else None,
        estimates=compared,
        interval_prob=interval_prob,
        heldout=tuple(scores),
        conclusion=conclusion(
            result,
            info,
            verdict,
            predicted,
            compared,
            interval_prob=interval_prob,
            loo=loo_or_unavailable(result) if "log_likelihood" in result.children else None,
        ),
    )


# -- inputs ----------------------------------------------------------------------------------------------------------


def labelled_results(results) -> dict[str, xr.DataTree]:
    """``results`` as label -> checked result DataTree (labels ``"<model> (<method>)"``, numbered on repeats).

    Parameters
    ----------
    results : xarray.DataTree or sequence or mapping
        One result, a list of them, or a dict label -> result.

    Returns
    -------
    dict of str to xarray.DataTree
        The results by label.

    Raises
    ------
    TypeError
        ``results`` (or one of them) is not a result DataTree.
    ValueError
        No results, or a result that fails :func:`check_result`.
    """
    if isinstance(results, xr.DataTree):
        results = [results]
    if isinstance(results, Mapping):
        runs = {str(label): result for label, result in results.items()}
    elif isinstance(results, Sequence) and not isinstance(results, str):
        runs = {}
        for result in results:
            base = _default_label(result)
            label, n = base, 2
            while label in runs:
                label, n = f"{base} #{n}", n + 1
            runs[label] = result
    else:
        raise TypeError(
            f"results must be a result DataTree, a list of them or a dict label -> result, got {type(results)}"
        )
    if not runs:
        raise ValueError("results is empty; pass one or more fitted results")
    for label, result in runs.items():
        if not isinstance(result, xr.DataTree):
            raise TypeError(f"result {label!r} is a {type(result).__name__}, not a result DataTree (bayesclass.fit)")
        try:
            check_result(result)
        except ValueError as error:
            raise ValueError(f"cannot report result {label!r}: {error}") from None
    return runs


def _default_label(result) -> str:
    try:
        if is_stack(result):
            return f"stack ({stack_info(result).method})"
        info = result_info(result)
    except (TypeError, ValueError):
        return "unreadable result"  # labelled_results then refuses it, naming what is wrong
    return f"{info.model.name} ({info.method})"


def _heldout(data) -> dict[str, Dataset] | None:
    if data is None:
        return None
    if isinstance(data, Dataset):
        return {"held-out data": data}
    if isinstance(data, Mapping) and all(isinstance(value, Dataset) for value in data.values()):
        return {str(name): value for name, value in data.items()}
    raise TypeError(f"data must be a Dataset or a dict of split name -> Dataset, got {type(data).__name__}")


def validation_rows(result) -> tuple[dict[str, Dataset], str]:
    """The validation part of the split ``result``'s training rows came from, and "" — or no rows and why.

    Reproduced from the result's typed origin (a built-in source, its arguments, the split's fractions, seed and
    stratification); the reproduced training part must have the training rows' fingerprint.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.

    Returns
    -------
    rows : dict of str to Dataset
        ``{"validation": rows}``, or empty where the split cannot be reproduced.
    reason : str
        "" where there are rows; otherwise why not, and what to give instead.
    """
    from bayesclass.data import available, load, train_validation_test_split

    record = result_info(data_result(result)).data
    origin = record.origin
    if origin.split is None or origin.split.part != "train":
        return {}, (
            f"the run was fitted on {record.name!r}, not on the training part of a split; give held-out rows "
            f"({spelled('data', metavar='...')}), or see PSIS-LOO below"
        )
    base = origin.source or record.name.removesuffix("[train]")
    if origin.source not in {info.name for info in available()}:
        return {}, f"the split of {base!r} (not a built-in data set) cannot be reproduced; give {spelled('data')}"
    split = origin.split
    try:
        full = load(origin.source, **dict(origin.arguments))
        train, validation, _ = train_validation_test_split(
            full, fractions=split.fractions, random_seed=split.random_seed, stratify=split.stratify
        )
    except (ValueError, TypeError) as error:
        return {}, f"the split of {base!r} could not be reproduced ({error}); give {spelled('data')}"
    if train.fingerprint() != record.fingerprint:
        return {}, (
            f"the reproduced split of {base!r} does not match the training rows' fingerprint; give {spelled('data')}"
        )
    return {"validation": validation}, ""


def training_rows(result) -> Dataset:
    """The training rows stored in a result, as a Dataset in its classes (calibration without held-out rows)."""
    result = data_result(result)
    record = result_info(result).data
    return Dataset(
        name=record.name or "training rows",
        X=result["constant_data"]["X"].values,
        y=result["observed_data"]["y"].values,
        feature_names=record.feature_names,
        class_names=record.class_names,
        feature_kinds=record.feature_kinds,
        category_names={name: tuple(levels) for name, levels in record.category_names.items()},
    )


# -- sections --------------------------------------------------------------------------------------------------------


def run_summary(result, info: ResultInfo, *, label: str) -> rd.RunSummary:
    """The facts of a run (:class:`RunSummary`)."""
    model, record = info.model, info.data
    draws: rd.DrawKind = (
        "point" if not info.has_draws else "independent" if SAMPLERS[info.method].independent_draws else "markov_chain"
    )
    return rd.RunSummary(
        label=label,
        family=model.name,
        family_class=type(model).__name__,
        hyperparameters=model.to_dict(),
        prior_formulas=(*model.prior_formulas(n_classes=len(record.class_names)), info.prior_scale),
        data_name=record.name,
        data_fingerprint=record.fingerprint,
        data_provenance=record.provenance,
        n_rows=int(result["observed_data"]["y"].size),
        feature_names=record.feature_names,
        class_names=record.class_names,
        standardized_features=info.standardized_features,
        method=info.method,
        method_description="; ".join(
            filter(None, (SAMPLERS[info.method].description if info.has_draws else "", info.method_note))
        ),
        draws=draws,
        sampler_settings=dict(info.sampler_settings),
        sampler_backend=info.sampler_backend,
        random_seed=info.random_seed,
        timings=tuple(info.timings.items()),
        compile_cache_hit=info.compile_cache_hit,
        package_versions=tuple(sorted(info.package_versions.items())),
        created_at=info.created_at,
        dropped_rows=record.missing.dropped_rows,
        blanks_per_column=record.missing.blanks_per_column,
        hyperparameter_rows=hyperparameter_rows(
            model.to_dict(), model.hyperparameter_priors(n_classes=len(record.class_names))
        ),
    )


def hyperparameter_rows(values: Mapping[str, object], priors: Mapping[str, str]) -> tuple[tuple[str, str, str], ...]:
    """The hyperparameters as rows (name, value, prior): nested values flattened to dotted names.

    Parameters
    ----------
    values : mapping
        The hyperparameters (``model.to_dict()``; its ``"model"`` key, the family's name, is left out); a nested
        mapping (a prior dataclass as a dict) gives one row per field, named ``"prior.lengthscale_alpha"``.
    priors : mapping of str to str
        Dotted name -> the prior statement the hyperparameter sets
        (:meth:`~bayesclass.models.base.ClassifierModel.hyperparameter_priors`).

    Returns
    -------
    tuple of (str, str, str)
        Name, value as text (numbers in ``g`` format, None as "none"), prior statement ("" where none), in the
        order of ``values``.
    """
    rows: list[tuple[str, str, str]] = []

    def add(prefix: str, value: object) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                add(f"{prefix}.{key}" if prefix else str(key), item)
        else:
            rows.append((prefix, _value_text(value), priors.get(prefix, "")))

    add("", {key: value for key, value in values.items() if key != "model"})
    return tuple(rows)


def _value_text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float | np.floating):
        return format(float(value), ".6g")
    if isinstance(value, list | tuple):
        return ", ".join(map(_value_text, value))
    return str(value)


def convergence(result, info: ResultInfo, report=None) -> rd.Convergence:
    """r_hat, ESS and MCSE per parameter element, the verdict, advice, sampler statistics and summary draws.

    The table has every element's row, the summary table one row of worst values per latent block (the variables
    outside the family's summary parameters) beside the summary parameters' elements. The advice is the verdict's
    (computed from what failed, the method and the family); the draws are those of the family's summary parameters.
    ``report`` is the verdict (:func:`diagnose`) where already computed.
    """
    report = diagnose(result) if report is None else report
    stats = result["sample_stats"].to_dataset() if "sample_stats" in result.children else None
    posterior = result["posterior"].to_dataset()
    shown = info.model.summary_parameter_names
    names = tuple(name for name in posterior.data_vars if shown is None or name in shown)
    trajectories = stats is None or "diverging" in stats
    return rd.Convergence(
        independent=stats is None,
        passed=report.passed,
        failures=report.failures,
        worst=str(report).split("\n")[1].strip(),
        table=report.element_table,
        max_r_hat=MAX_R_HAT,
        min_ess=MIN_ESS,
        advice=report.advice,
        integrates_trajectories=trajectories,
        statistics=None if stats is None else sampler_statistics(result, stats),
        draws=posterior[list(names)],
        parameter_names=names,
        unavailable=report.unavailable,
        figures_unavailable=chain_figures_unavailable(posterior),
        summary_table=condensed_table(report.element_table, posterior, shown),
    )


def chain_figures_unavailable(posterior) -> tuple[Unavailable, ...]:
    """The chain figures that cannot be drawn from ``posterior``: rank plots need 2 or more chains.

    The rank plots' simultaneous band is a multi-chain uniformity test (``arviz_plots.plot_rank``); the traces
    can always be drawn.
    """
    n_chains, n_draws = int(posterior.sizes["chain"]), int(posterior.sizes["draw"])
    if n_chains >= MIN_CHAINS_RANK_PLOT:
        return ()
    reason = (
        f"the result has {chain_shape_text(n_chains, n_draws)}; rank plots compare the ranks of "
        f"{MIN_CHAINS_RANK_PLOT} or more chains"
    )
    return (Unavailable("rank plots", reason, fit_with_more("chains", 4)),)


def loo_or_unavailable(result) -> LooSummary | Unavailable:
    """PSIS-LOO of ``result`` (:func:`~bayesclass.inference.criticism.loo.loo`), or why it cannot be computed."""
    try:
        return loo(result)
    except LooUnavailable as error:
        return error.unavailable


def sampler_statistics(result, stats) -> rd.SamplerStatistics:
    """The sampler's own statistics: divergences, tree depth, E-BFMI, step size, Gibbs slice evaluations."""
    values: dict = {"divergences": int(stats["diverging"].sum()) if "diverging" in stats else None}
    if "hyperparameter_evaluations" in stats:
        values["hyperparameter_evaluations"] = float(stats["hyperparameter_evaluations"].mean())
        low, high = np.quantile(stats["scale_factor"].values, [0.05, 0.95])
        values["scale_factor_range"] = (float(low), float(high))
    for name in ("reached_max_treedepth", "maxdepth_reached"):
        if name in stats:
            values["max_treedepth_hits"] = int(stats[name].sum())
            break
    if "tree_depth" in stats:
        values["max_tree_depth"] = int(stats["tree_depth"].max())
    if "energy" in stats and stats.sizes["draw"] < 2:  # E-BFMI compares successive draws: not available (NaN)
        values["bfmi"] = (math.nan,) * int(stats.sizes["chain"])
    elif "energy" in stats:
        import arviz_stats as azs

        values["bfmi"] = tuple(float(v) for v in np.atleast_1d(azs.bfmi(result)["energy"].values))
    if "step_size" in stats:
        values["step_size"] = float(stats["step_size"].mean())
    return rd.SamplerStatistics(**values)


def estimates(result, info: ResultInfo, *, interval_prob: float) -> rd.Estimates:
    """The posterior beside every stored point estimate (:func:`parameter_comparison`)."""
    rows = tuple(parameter_comparison(result, interval_prob=interval_prob))
    kinds = tuple(point_estimate_kinds(result))
    drawn, left_out = forest_rows(rows, kinds)
    notes = []
    for kind in kinds:  # a covariance that covers none of the rows shown: say what it is over
        approximation = gaussian_approximation(result, kind)
        if approximation is not None and all(row.get(f"{kind}_se") is None for row in rows):
            over = ", ".join(approximation.names)
            notes.append(
                (
                    kind,
                    f"no standard error for the parameters shown: its covariance is over {over} only, the "
                    f"{approximation.curvature}",
                )
            )
    return rd.Estimates(
        rows=rows,
        kinds=kinds,
        status=tuple(info.point_estimate_status.items()),
        has_posterior="posterior" in result.children,
        covariance_notes=tuple(notes),
        panels=parameter_panels(result, drawn),
        forest_left_out=left_out,
    )


def conclusion(
    result,
    info: ResultInfo,
    verdict,
    predicted: Mapping[str, PredictedEstimates],
    compared: rd.Estimates,
    *,
    interval_prob: float,
    no_heldout_reason: str = "",
    loo: object = None,
) -> Conclusion:
    """The run's findings (:func:`~bayesclass.inference.evaluation.conclusions.conclude`).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    info : ResultInfo
        Its records.
    verdict : ConvergenceReport or None
        :func:`diagnose` of its draws (None: a point estimate).
    predicted : mapping of str to Estimates
        Per held-out split, every estimate's probabilities (:func:`heldout_estimates`).
    compared : Estimates
        The posterior beside every point estimate (:func:`estimates`).
    interval_prob : float
        The probability of its intervals.
    no_heldout_reason : str, default ""
        Why there are no held-out rows, where ``predicted`` is empty.
    loo : LooSummary, optional
        The run's PSIS-LOO, for the Pareto k finding.

    Returns
    -------
    Conclusion
    """
    finding: ConvergenceFinding | Omitted
    if verdict is None:
        finding = Omitted("convergence", f"the result is a point estimate (method {info.method}), without draws")
    else:
        finding = result_convergence(result, verdict, method=info.method)
    return conclude(
        convergence=finding,
        predicted={split: (split_estimates.proba, split_estimates.y) for split, split_estimates in predicted.items()},
        compared=list(estimate_labels(result).values()),
        status=info.point_estimate_status,
        n_rows=int(result["observed_data"]["y"].size),
        estimates=compared,
        interval_prob=interval_prob,
        no_heldout_reason=no_heldout_reason or "no held-out rows",
        loo=loo,
    )


def _scores(result, split, data: Dataset, predicted: PredictedEstimates, *, baselines, loss) -> rd.HeldoutScores:
    table = score_estimates(result, predicted, baselines=baselines, loss=loss)
    descriptions = tuple(table.attrs.get("descriptions", {}).items())
    left_out = str(table.attrs.get("left_out_baselines", ""))
    table.attrs.clear()  # lifted into the record's fields
    return rd.HeldoutScores(
        split=split,
        data_name=data.name,
        n_rows=data.n_obs,
        table=table,
        descriptions=descriptions,
        left_out_baselines=left_out,
        standard_errors=standard_errors(predicted),
        own_estimates=tuple(label for label in estimate_labels(result).values() if label in table.index),
    )


def standard_errors(predicted: PredictedEstimates) -> dict[str, dict[str, float | None]]:
    """Standard error of the mean over rows of each per-row score (log loss, Brier, 0-1 accuracy)."""
    errors = {}
    y = predicted.y
    n = y.size
    for label, proba in predicted.proba.items():
        if proba is None or n < 2:
            continue
        defined = ~np.isnan(proba).any(axis=1)
        p = proba[defined]
        observed = p[np.arange(p.shape[0]), y[defined]]
        onehot = np.eye(p.shape[1])[y[defined]]
        per_row = {
            "log_loss": -np.log(observed, where=observed > 0, out=np.full(observed.shape, np.inf)),
            "brier": ((p - onehot) ** 2).sum(axis=1),
            "accuracy": (p.argmax(axis=1) == y[defined]).astype(float),
        }
        errors[label] = {
            name: float(values.std(ddof=1) / np.sqrt(values.size)) if np.isfinite(values).all() else None
            for name, values in per_row.items()
        }
    return errors


def calibration(result, info: ResultInfo, rows: Dataset, *, which: str, random_seed: int) -> rd.Calibration:
    """Posterior predictive draws (evenly thinned) and each point estimate's plug-in probabilities on ``rows``.

    The draws are the :data:`CALIBRATION_DRAWS` that the reliability diagrams replicate outcomes from, one each (the
    GP's prediction on its training rows costs a kernel solve per draw).
    """
    figure_result = thinned(result, CALIBRATION_DRAWS)
    prediction = predict(figure_result, rows, return_draws="posterior" in figure_result.children, draws="all")
    proba: dict[str, np.ndarray] = {}
    skipped = []
    if "class_proba_draws" in prediction:
        draws = prediction["class_proba_draws"].transpose("chain", "draw", "obs", "class").values
        proba["posterior"] = draws.reshape(-1, *draws.shape[2:])
    for kind in point_estimate_kinds(result):
        values = prediction[f"class_proba_{kind}"].transpose("obs", "class").values
        if np.isnan(values).any():
            skipped.append(kind)
            continue
        proba[kind] = values
    y, _ = result_codes(result, rows)
    classes = rd.calibration_classes(y, len(info.class_names), len(proba))
    return rd.Calibration(proba, y, info.class_names, which, rows.n_obs, tuple(skipped), random_seed, classes)


def _input_figure(
    result, info: ResultInfo, *, features, interval_prob, random_seed
) -> rd.Boundary | rd.LatentCurve | None:
    """The decision boundary over two features, the latent curve of a one-input latent family, or None."""
    feature_names = info.feature_names
    if features is None:
        if len(feature_names) == 1 and info.model.latent_curve:
            return latent_curve(result, info, random_seed=random_seed)
        if len(feature_names) != 2:
            return None
        features = feature_names
    features = list(features)
    unknown = [name for name in features if name not in feature_names]
    if len(features) != 2 or unknown:
        shown = ", ".join(feature_names[:20]) + (
            f", ... ({len(feature_names) - 20} more)" if len(feature_names) > 20 else ""
        )
        raise ValueError(
            f"{spelled('features', features)}: name two of the fitted features ({shown}), e.g. "
            f"{spelled('features', list(feature_names[:2]))}"
        )
    result_boundary = boundary(result, info, (features[0], features[1]))
    derived = derived_quantities(result, info, interval_prob=interval_prob) if result_boundary.numeric else None
    if derived is None:
        return result_boundary
    from dataclasses import replace

    return replace(result_boundary, derived=derived)


def derived_quantities(result, info: ResultInfo, *, interval_prob: float) -> rd.DerivedQuantities | None:
    """The family's derived quantities (gcc with a shared covariance: its linear discriminants), or None."""
    names = derived_names(result)
    if not names:
        return None
    rows = tuple(
        row
        for row in parameter_comparison(result, interval_prob=interval_prob)
        if str(row["parameter"]).split("[")[0] in names
    )
    return rd.DerivedQuantities(
        title=info.model.derived_quantities_title,
        rows=rows,
        kinds=tuple(point_estimate_kinds(result)),
        standardized=info.standardize_mode != "none",
    )


def generative_check(result, info: ResultInfo, *, random_seed: int, n_replicates: int = 200):
    """Replicated vs observed per-class feature statistics and their p-values (generative families), or None."""
    if not isinstance(info.model, GenerativeClassifierModel):
        return None
    return predictive_check_record(
        posterior_predictive_check(result, n_replicates=n_replicates, random_seed=random_seed)
    )


def predictive_check_record(check) -> rd.GenerativeCheck:
    """The cells and per-statistic counts of a posterior predictive check, as the page and the CLI show them.

    Parameters
    ----------
    check : xarray.Dataset
        From :func:`bayesclass.inference.posterior_predictive_check`: ``p_value_<statistic>`` and
        ``observed_<statistic>`` by class and feature (or category level), ``feature_kind``, and the attributes
        ``n_replicates`` and ``source``.

    Returns
    -------
    GenerativeCheck
        Its cells (class, feature or level, statistic, observed value, p-value), most extreme first and in the
        check's order, and per statistic the feature kinds it applies to and how many statistics it has.
    """
    cells: list[tuple[str, str, str, float, float]] = []
    statistics: list[tuple[str, tuple[str, ...], int]] = []
    for name in map(str, check.data_vars):
        if not name.startswith("p_value_"):
            continue
        statistic = name.removeprefix("p_value_")
        other = next(dim for dim in check[name].dims if dim != "class")
        p_values = check[name].transpose("class", other).values
        observed = check[f"observed_{statistic}"].transpose("class", other).values
        applies = ~np.isnan(p_values)  # NaN: the statistic does not apply to this feature's kind
        kinds = (
            sorted(set(check["feature_kind"].values[applies.any(axis=0)].tolist()))
            if other == "feature"
            else ["categorical"]
        )
        statistics.append((statistic, tuple(kinds), int(applies.sum())))
        for k, j in np.argwhere(applies):
            cells.append(
                (
                    str(check["class"].values[k]),
                    str(check[other].values[j]),
                    statistic,
                    float(observed[k, j]),
                    float(p_values[k, j]),
                )
            )
    return rd.GenerativeCheck(
        check=check,
        cells=tuple(sorted(cells, key=lambda cell: min(cell[4], 1 - cell[4]))),
        n_replicates=int(check.attrs["n_replicates"]),
        source=str(check.attrs["source"]),
        statistics=tuple(statistics),
        cells_in_order=tuple(cells),
    )


def decisions(info: ResultInfo, predicted, *, loss: LossMatrix) -> rd.Decisions:
    """Each estimate's decisions by least expected loss on every held-out split, with their losses.

    With each rule's decisions: their mean loss, their posterior expected loss, and their confusion matrices.
    """
    from sklearn.metrics import confusion_matrix

    class_names = info.class_names
    matrix = loss.aligned(class_names)
    splits = []
    for split, (data, predicted_split) in predicted.items():
        rows = []
        posterior = predicted_split.proba.get("posterior")
        y = predicted_split.y
        for label, proba in predicted_split.proba.items():
            chosen = decide(expected_loss(proba, matrix)) if proba is not None else predicted_split.decisions.get(label)
            if chosen is None:
                continue
            defined = chosen >= 0
            mean_loss = float(matrix[y[defined], chosen[defined]].mean()) if defined.any() else math.nan
            risk = None
            if posterior is not None:  # what the posterior expects each rule's decisions to lose
                expected = expected_loss(posterior[defined], matrix)[np.arange(int(defined.sum())), chosen[defined]]
                risk = float(expected.mean()) if defined.any() else math.nan
            counts = confusion_matrix(y[defined], chosen[defined], labels=np.arange(len(class_names)))
            rows.append(rd.DecisionRow(label, mean_loss, risk, int((~defined).sum()), counts))
        splits.append(rd.SplitDecisions(split, data.n_obs, tuple(rows), posterior is not None))
    return rd.Decisions(class_names, np.asarray(matrix), tuple(splits))


def _loo_comparison(runs: Mapping[str, xr.DataTree]) -> rd.LooComparison:
    """PSIS-LOO comparison of several runs fitted on the same rows (arviz_stats.compare), or why there is none."""
    with_draws = {label: result for label, result in runs.items() if "log_likelihood" in result.children}
    if len(with_draws) < 2:
        return rd.LooComparison(None, "fewer than two runs have draws")
    try:
        return rd.LooComparison(compare(with_draws))
    except ValueError as error:
        return rd.LooComparison(None, str(error))
