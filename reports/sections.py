"""The sections of a report, computed from fitted results: what each section shows, as tables, figures and text.

Each ``*_section`` function takes one result (and the held-out rows where it scores) and returns a
:class:`Section`, or None where the section does not apply to what the result holds (no posterior: no
convergence; no two numeric features: no decision boundary; a discriminative family: no generative checks;
no loss matrix: no decisions). Every number goes through the library's one path: :func:`heldout_estimates`
(predicted once per held-out split) and :func:`score_estimates`, the two halves of :func:`evaluate` (scores,
decisions), :func:`predict` (probabilities), :func:`diagnose` (r_hat, ESS),
:func:`bayesclass.inference.criticism.loo.loo`
(PSIS-LOO), :func:`posterior_predictive_check`;
:mod:`bayesclass.reports.figures` draws them. The page itself is assembled by :mod:`bayesclass.reports.html`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.inference import diagnose, model_of, predict
from bayesclass.inference.criticism.diagnostics import MAX_R_HAT, MIN_ESS
from bayesclass.inference.criticism.loo import PARETO_K_LIMIT, loo
from bayesclass.inference.criticism.predictive_checks import posterior_predictive_check
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.evaluation.heldout import Estimates, result_codes, score_estimates
from bayesclass.inference.prediction.decisions import LossMatrix, decide, expected_loss
from bayesclass.models.base import GenerativeClassifierModel
from bayesclass.reports import figures
from bayesclass.reports.comparison import (
    ESTIMATE_LABELS,
    SCORE_COLUMNS,
    parameter_comparison,
    point_estimate_kinds,
    zero_probability_notes,
)

xr = lazy_import("xarray")

__all__ = [
    "Figure",
    "Section",
    "Table",
    "Text",
    "calibration_section",
    "convergence_section",
    "decision_boundary_section",
    "decisions_section",
    "estimates_section",
    "generative_section",
    "performance_section",
    "summary_section",
]

#: the draws a report predicts with (evenly thinned): figures and bands, not the scores (those use every draw)
FIGURE_DRAWS = 200
#: parameter rows in tables before "... more"
MAX_TABLE_ROWS = 40
#: rank-plot panels (parameter elements) at most
MAX_PANELS = 36


@dataclass(frozen=True)
class Text:
    """A paragraph (``kind`` "text"), a preformatted block ("pre") or a red alert ("alert")."""

    body: str
    kind: str = "text"


@dataclass(frozen=True)
class Table:
    """A table: ``header`` and ``rows`` of already formatted cells, a caption saying what the numbers are."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""
    text: bool = False  # cells are text (left-aligned), not numbers
    compact: bool = False  # a small table laid out beside its neighbours (confusion matrices)
    kind: str = "table"


@dataclass(frozen=True)
class Figure:
    """An inline SVG figure (:mod:`bayesclass.reports.figures`) with its caption."""

    svg: str
    caption: str
    kind: str = "figure"


@dataclass(frozen=True)
class Section:
    """One section of the page: ``key`` (its anchor), ``title`` and its blocks in order."""

    key: str
    title: str
    blocks: tuple[Text | Table | Figure, ...]
    alerts: tuple[str, ...] = field(default=())  # shown at the top of the page as well


def number(value: object, spec: str = ".4g") -> str:
    """A table cell: ``-`` for None, ``n/a`` for NaN, ``inf`` kept, else ``format(value, spec)``."""
    if value is None:
        return "-"
    value = float(value)  # type: ignore[arg-type]
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value, spec)


def attr_json(result, name: str, default: object) -> object:
    """A JSON attr of ``result`` (:func:`bayesclass.inference.io.check_result` has validated the ones it knows)."""
    if name not in result.attrs:
        return default
    try:
        return json.loads(result.attrs[name])
    except (TypeError, ValueError):
        raise ValueError(
            f"attr {name} of the result is not valid JSON ({str(result.attrs[name])[:60]!r}); the file was altered "
            "or damaged: refit the model"
        ) from None


def _label(kind: str) -> str:
    return ESTIMATE_LABELS.get(kind, kind)


def _thinned(result, max_draws: int = FIGURE_DRAWS):
    """``result`` with at most ``max_draws`` evenly spaced posterior draws (for figures: bands over draws)."""
    if "posterior" not in result.children:
        return result
    posterior = result["posterior"].to_dataset()
    total = posterior.sizes["chain"] * posterior.sizes["draw"]
    if total <= max_draws:
        return result
    step = math.ceil(total / max_draws)
    thinned = result.copy()
    thinned["posterior"] = xr.DataTree(posterior.isel(draw=slice(None, None, step)))
    return thinned


# -- 1. summary --------------------------------------------------------------------------------------------------


def summary_section(result, *, label: str) -> Section:
    """Model family and hyperparameters (priors as formulas), data, method and sampler, seed, versions, timings,
    and the convergence verdict in one line."""
    attrs = result.attrs
    model = model_of(result)
    feature_names = attr_json(result, "feature_names", [])
    class_names = attr_json(result, "class_names", [])
    rows = [
        ("run", label),
        ("model family", f"{model.name} ({type(model).__name__})"),
        ("hyperparameters", json.dumps(model.to_dict(), sort_keys=True)),
        ("data", f"{attrs.get('data_name', '?')} (fingerprint {str(attrs.get('data_fingerprint', '?'))[:16]})"),
        ("data provenance", str(attrs.get("data_provenance", "not recorded"))),
        (
            "training rows x features",
            f"{result['observed_data']['y'].size} x {len(feature_names)}: {_listing(feature_names)}",
        ),
        ("classes", _listing(class_names)),
        ("standardized features", _listing(attr_json(result, "standardized_features", [])) or "none"),
        ("method", str(attrs.get("method", "?"))),
    ]
    if "posterior" in result.children:
        settings = attr_json(result, "sampler_settings", {})
        rows.append(("sampler settings", json.dumps(settings, sort_keys=True)))
        if "sampler_backend" in attrs:
            rows.append(("NUTS backend", str(attrs["sampler_backend"])))
    rows.append(("random seed", str(attrs.get("random_seed", "?"))))
    timings = [
        f"{name.replace('_', ' ')} {number(attrs[name], '.2f')} s"
        for name in ("compile_seconds", "sampling_seconds")
        if name in attrs
    ]
    if "compile_cache_hit" in attrs:
        timings.append(f"compile cache hit: {'yes' if int(attrs['compile_cache_hit']) else 'no'}")
    rows.append(("timings", ", ".join(timings) or "not recorded"))
    versions = attr_json(result, "package_versions", {})
    rows.append(("package versions", ", ".join(f"{name} {version}" for name, version in sorted(versions.items()))))
    rows.append(("fitted at", str(attrs.get("created_at", "not recorded"))))
    blocks: list = [Table("The run", ("item", "value"), tuple(rows), text=True)]
    blocks.append(Text("\n".join(model.prior_formulas(n_classes=len(class_names))), kind="pre"))
    if "posterior" in result.children and "sample_stats" not in result.children:
        blocks.insert(0, Text("Independent draws from the exact conjugate posterior: no sampler to converge."))
    elif "posterior" in result.children:
        report = diagnose(result)
        verdict = "PASS" if report.passed else "FAIL: " + "; ".join(report.failures)
        blocks.insert(0, Text(f"Convergence {verdict}.", kind="text" if report.passed else "alert"))
    else:
        blocks.insert(0, Text(f"Point estimate only ({attrs.get('method')}): no posterior draws to diagnose."))
    return Section("summary", "Summary", tuple(blocks))


def _listing(names: Sequence[str], limit: int = 20) -> str:
    shown = ", ".join(map(str, names[:limit]))
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


# -- 2. convergence -------------------------------------------------------------------------------------------------

#: what to try when the verdict fails, by the kind of failure
ADVICE = (
    "What to try: more tuning steps (--tune, e.g. 2000) and draws (--draws); a higher target acceptance "
    "(--target-accept 0.95) where there are divergences; a reparametrisation (logistic: --parametrization "
    "centered/whitened; gcc: --covariance-prior inverse_wishart); standardised features (--standardize)."
)


#: what the Convergence section says of exact draws instead of a verdict
EXACT_NOTE = (
    "Independent draws from the exact conjugate posterior: there is no sampler to converge, and no verdict. The "
    "r_hat and ESS below are shown for completeness; over many parameter elements their worst values cross the "
    "NUTS thresholds by chance (r_hat of independent draws scatters around 1 by about 1/sqrt(draws))."
)


def convergence_section(result) -> Section | None:
    """r_hat, bulk/tail ESS and MCSE per parameter element (the worst 20 when there are more), divergences, tree
    depth hits, E-BFMI, rank and trace plots of the top-level parameters. A failed verdict is an alert."""
    if "posterior" not in result.children:
        return None
    report = diagnose(result)
    table = report.table
    worst = table.sort_values("r_hat", ascending=False).index[:10].tolist()
    worst += [name for name in table.sort_values("ess_bulk").index if name not in worst][: 20 - len(worst)]
    shown = table.loc[worst] if len(table) > 20 else table
    columns = ("mean", "sd", "r_hat", "ess_bulk", "ess_tail", "mcse_mean")
    rows = tuple(
        (str(name), *(number(row[column], ".4g" if column != "r_hat" else ".4f") for column in columns))
        for name, row in shown.iterrows()
    )
    high_r_hat = int((table["r_hat"] > MAX_R_HAT).sum())
    low_ess = int(((table["ess_bulk"] < MIN_ESS) | (table["ess_tail"] < MIN_ESS)).sum())
    caption = (
        f"Rank-normalised split r_hat (<= {MAX_R_HAT}), bulk and tail ESS (>= {MIN_ESS}) and the MCSE of the mean, "
        "from arviz_stats"
        + (
            f"; the worst {len(shown)} of {len(table)} parameter elements by r_hat and bulk ESS"
            if len(table) > 20
            else ""
        )
    )
    blocks: list = []
    alerts: tuple[str, ...] = ()
    if "sample_stats" not in result.children:  # independent exact draws: nothing to converge
        blocks.append(Text(f"{EXACT_NOTE} Worst values: {_worst_values(report)}."))
    elif report.passed:
        blocks.append(Text(f"Convergence PASS: {_worst_values(report)}."))
    else:
        message = f"Convergence FAIL: {'; '.join(report.failures)}. {ADVICE}"
        blocks.append(Text(message, kind="alert"))
        alerts = (message,)
    blocks.append(
        Table(
            caption,
            ("parameter", *columns),
            rows,
            note=f"{len(table)} parameter elements: {high_r_hat} with r_hat > {MAX_R_HAT}, {low_ess} with bulk or "
            f"tail ESS < {MIN_ESS}.",
        )
    )
    nuts = "sample_stats" not in result.children or "diverging" in result["sample_stats"].to_dataset()
    blocks.append(
        Table(
            "NUTS statistics" if nuts else "Sampler statistics",
            ("statistic", "value"),
            _sampler_rows(result),
            text=True,
        )
    )
    names = _top_level(result)
    posterior = result["posterior"].to_dataset()
    cap = max(1, MAX_PANELS // len(names))  # elements per variable: at most MAX_PANELS panels in all
    listing = ", ".join(names)
    capped = f"; at most the first {cap} elements of each" if any(posterior[n].size > cap for n in names) else ""
    blocks.append(
        Figure(figures.rank_plot(posterior, names, max_elements=cap), f"Rank plots of {listing} (arviz_plots){capped}")
    )
    blocks.append(
        Figure(figures.trace_plot(posterior, names, max_elements=cap), f"Traces of {listing} (arviz_plots){capped}")
    )
    return Section("convergence", "Convergence", tuple(blocks), alerts)


def _worst_values(report) -> str:
    """The numbers line of a :class:`ConvergenceReport` (its text without the verdict line)."""
    return str(report).split("\n", 1)[-1].strip()


def _top_level(result) -> list[str]:
    """The parameters a report plots: the family's summary parameters (a GP: its hyperparameters), else all."""
    model = model_of(result)
    names = list(result["posterior"].to_dataset().data_vars)
    shown = model.summary_parameter_names
    return [name for name in names if shown is None or name in shown]


def _sampler_rows(result) -> tuple[tuple[str, str], ...]:
    if "sample_stats" not in result.children:
        return (("draws", "independent draws from the exact conjugate posterior: no sampler statistics"),)
    stats = result["sample_stats"].to_dataset()
    rows = [
        (
            "divergent transitions",
            str(int(stats["diverging"].sum()))
            if "diverging" in stats
            else f"none possible ({result.attrs.get('method')}: no trajectories are integrated)",
        )
    ]
    if "hyperparameter_evaluations" in stats:
        rows.append(
            (
                "log densities per sweep (hyperparameter slices)",
                number(float(stats["hyperparameter_evaluations"].mean()), ".1f"),
            )
        )
        rows.append(
            (
                "scale move factor (5% - 95%)",
                " - ".join(number(float(v), ".3f") for v in np.quantile(stats["scale_factor"].values, [0.05, 0.95])),
            )
        )
    for name in ("reached_max_treedepth", "maxdepth_reached"):
        if name in stats:
            rows.append(("transitions that hit the maximum tree depth", str(int(stats[name].sum()))))
            break
    if "tree_depth" in stats:
        rows.append(("maximum tree depth seen", str(int(stats["tree_depth"].max()))))
    if "energy" in stats:
        import arviz_stats as azs

        bfmi = np.atleast_1d(azs.bfmi(result)["energy"].values)
        rows.append(("E-BFMI per chain (< 0.3: poor exploration)", ", ".join(number(v, ".3f") for v in bfmi)))
    if "step_size" in stats:
        rows.append(("step size (mean over draws)", number(float(stats["step_size"].mean()), ".3g")))
    return tuple(rows)


# -- 3. posterior vs point estimates ----------------------------------------------------------------------------


def estimates_section(result, *, interval_prob: float) -> Section:
    """Forest plot of the posterior (mean and interval) with every stored point estimate as a marker, the same as a
    table, and one explicit line for each estimate that does not exist, with why."""
    rows = parameter_comparison(result, interval_prob=interval_prob)
    kinds = point_estimate_kinds(result)
    interval = f"{interval_prob:.0%} ETI"
    blocks: list = []
    for kind, reason in attr_json(result, "point_estimate_status", {}).items():
        if reason != "exists":
            blocks.append(Text(f"{_label(kind)} is not shown: {reason}", kind="alert" if kind == "mle" else "text"))
    has_posterior = "posterior" in result.children
    blocks.append(
        Figure(
            figures.forest_plot(rows, markers={kind: _label(kind) for kind in kinds}, interval_label=interval),
            (f"Posterior mean and {interval} (line) " if has_posterior else "")
            + (f"with {', '.join(_label(kind) for kind in kinds)} as markers" if kinds else "")
            + (f"; the first {MAX_TABLE_ROWS} of {len(rows)} rows" if len(rows) > MAX_TABLE_ROWS else ""),
        )
    )
    header = ("parameter", "post. mean", "post. sd", interval, *(_label(kind) for kind in kinds))
    table_rows = tuple(
        (
            str(row["parameter"]),
            number(row["mean"]),
            number(row["sd"]),
            f"[{number(row['low'], '.3g')}, {number(row['high'], '.3g')}]" if row["low"] is not None else "-",
            *(number(row[kind]) for kind in kinds),
        )
        for row in rows[:MAX_TABLE_ROWS]
    )
    note = f"{len(rows) - MAX_TABLE_ROWS} more rows are in the saved result." if len(rows) > MAX_TABLE_ROWS else ""
    blocks.append(Table(f"Parameters: posterior ({interval}) beside the point estimates", header, table_rows, note))
    return Section("estimates", "Posterior vs point estimates", tuple(blocks))


# -- 4. predictive performance -------------------------------------------------------------------------------------


def performance_section(
    result,
    heldout: Mapping[str, tuple[Dataset, Estimates]],
    *,
    no_heldout_reason: str,
    baselines: Sequence[str],
    loss: LossMatrix | None,
    interval_prob: float,
) -> Section:
    """Held-out scores of every estimate (and baseline) as a table and bars with standard errors; PSIS-LOO with
    the Pareto k of every training row. ``heldout``: split name -> (its rows, :func:`heldout_estimates` on them)."""
    blocks: list = []
    if not heldout:
        blocks.append(Text(f"No held-out scores: {no_heldout_reason}."))
    for split, (data, estimates) in heldout.items():
        table = score_estimates(result, estimates, baselines=baselines, loss=loss)
        columns = [(name, header, spec) for name, header, spec in SCORE_COLUMNS if name in table.columns]
        columns = [column for column in columns if not table[column[0]].isna().all()]
        rows = tuple(
            (str(label), *(number(row[name], spec) for name, _, spec in columns)) for label, row in table.iterrows()
        )
        descriptions = table.attrs.get("descriptions", {})
        notes = [f"{header}: {descriptions[name]}" for name, header, _ in columns if name in descriptions]
        notes += zero_probability_notes(table)
        if table.attrs.get("left_out_baselines"):
            notes.append(f"baselines left out: {table.attrs['left_out_baselines']}")
        blocks.append(
            Table(
                f"Held-out scores on {split} ({data.n_obs} rows of {data.name}); '-': the estimate gives no "
                f"probabilities; the posterior is its mean probabilities (interval: {interval_prob:.0%} ETI)",
                ("estimate", *(header for _, header, _ in columns)),
                rows,
                note="; ".join(notes),
            )
        )
        errors = _standard_errors(estimates)
        scores = {
            str(label): {
                "log_loss": (float(row["log_loss"]), errors.get(str(label), {}).get("log_loss")),
                "brier": (float(row["brier"]), errors.get(str(label), {}).get("brier")),
                "accuracy": (float(row["accuracy"]), errors.get(str(label), {}).get("accuracy")),
            }
            for label, row in table.iterrows()
        }
        blocks.append(
            Figure(
                figures.score_bars(
                    scores, metrics=(("log_loss", "log loss"), ("brier", "Brier"), ("accuracy", "accuracy"))
                ),
                f"Held-out scores on {split}; error bars: one standard error of the mean over the {data.n_obs} rows",
            )
        )
    if "log_likelihood" in result.children:
        summary = loo(result)
        blocks.append(
            Table(
                "PSIS-LOO of the training rows (arviz_stats.loo): expected log pointwise predictive density of "
                "log P(y | x) and its standard error",
                ("elpd_loo", "se", "p_loo", f"rows with Pareto k > {PARETO_K_LIMIT}", "rows", "draws"),
                (
                    (
                        number(summary.elpd_loo, ".2f"),
                        number(summary.se, ".2f"),
                        number(summary.p_loo, ".2f"),
                        str(summary.n_high_k),
                        str(summary.n_rows),
                        str(summary.n_samples),
                    ),
                ),
                note=f"ArviZ's threshold for {summary.n_samples} draws: {summary.good_k:.2f}"
                + ("; the estimate is unreliable where k is high" if summary.n_high_k else ""),
            )
        )
        blocks.append(
            Figure(
                figures.pareto_k_plot(summary.pareto_k, threshold=PARETO_K_LIMIT),
                f"Pareto k of each training row, with the {PARETO_K_LIMIT} line",
            )
        )
    elif "posterior" not in result.children:
        blocks.append(Text("LOO needs posterior draws; this result is a point estimate."))
    return Section("performance", "Predictive performance", tuple(blocks))


def _standard_errors(estimates) -> dict[str, dict[str, float]]:
    """Standard error of the mean over rows of each per-row score (log loss, Brier, 0-1 accuracy)."""
    errors = {}
    y = estimates.y
    n = y.size
    for label, proba in estimates.proba.items():
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


# -- 5. calibration -------------------------------------------------------------------------------------------------


def calibration_section(result, rows: Dataset, *, which: str, random_seed: int) -> Section:
    """PAV reliability diagrams with consistency bands: posterior predictive draws and replicates of each point
    estimate's plug-in probabilities, side by side."""
    thinned = _thinned(result)
    prediction = predict(thinned, rows, return_draws="posterior" in thinned.children)
    proba: dict[str, np.ndarray] = {}
    skipped = []
    if "class_proba_draws" in prediction:
        draws = prediction["class_proba_draws"].transpose("chain", "draw", "obs", "class").values
        proba["posterior"] = draws.reshape(-1, *draws.shape[2:])
    for kind in point_estimate_kinds(result):
        values = prediction[f"class_proba_{kind}"].transpose("obs", "class").values
        if np.isnan(values).any():
            skipped.append(_label(kind))
            continue
        proba[_label(kind)] = values
    class_names = attr_json(result, "class_names", [])
    y, _ = result_codes(result, rows)
    blocks: list = [
        Figure(
            figures.reliability_plot(proba, y, class_names=class_names, random_seed=random_seed),
            f"PAV (isotonic) calibration of P(class | x) on {which} ({rows.n_obs} rows), with consistency bands from "
            "replicated outcomes (arviz_plots plot_ppc_pava): posterior predictive draws; each point estimate's "
            "outcomes replicated from its plug-in probabilities"
            + (" (one-vs-others, one panel per class)" if len(class_names) > 2 else ""),
        )
    ]
    if skipped:
        blocks.append(Text(f"Not shown: {', '.join(skipped)} (probability 0 under every class on some rows)."))
    return Section("calibration", "Calibration", tuple(blocks))


# -- 6. decision boundary -------------------------------------------------------------------------------------------

GRID_POINTS = 60


def decision_boundary_section(result, *, features: Sequence[str] | None, interval_prob: float) -> Section | None:
    """Two features: posterior mean P(class | x) on a grid, the boundary and its credible band, point-estimate
    boundaries, the training points; shared-covariance gcc adds its linear discriminants. One input (a GP): the
    latent f and the probability curve with their bands. None where neither applies."""
    feature_names = list(attr_json(result, "feature_names", []))
    kinds = list(attr_json(result, "feature_kinds", []))
    model = model_of(result)
    if features is None:
        if len(feature_names) == 1 and model.name == "gp":
            return _latent_curve_section(result, interval_prob=interval_prob)
        if len(feature_names) != 2:
            return None
        features = feature_names
    features = list(features)
    unknown = [name for name in features if name not in feature_names]
    if len(features) != 2 or unknown:
        raise ValueError(
            f"features={features!r}: name two of the fitted features ({_listing(feature_names)}), e.g. "
            f"--features {','.join(feature_names[:2])}"
        )
    columns = [feature_names.index(name) for name in features]
    if any(kinds[j] not in ("continuous", "count") for j in columns):
        return Section(
            "boundary",
            "Decision boundary",
            (
                Text(
                    f"No decision boundary: {features} must be numeric features (kinds {[kinds[j] for j in columns]})."
                ),
            ),
        )
    X = result["constant_data"]["X"].values
    y = result["observed_data"]["y"].values
    axes = []
    for j in columns:
        low, high = float(X[:, j].min()), float(X[:, j].max())
        pad = 0.05 * (high - low or 1.0)
        axes.append(np.linspace(low - pad, high + pad, GRID_POINTS))
    mesh = np.meshgrid(axes[0], axes[1])
    grid = np.tile(_typical_row(X, kinds), (GRID_POINTS * GRID_POINTS, 1))
    grid[:, columns[0]] = mesh[0].ravel()
    grid[:, columns[1]] = mesh[1].ravel()
    thinned = _thinned(result)
    prediction = predict(thinned, grid, return_draws="posterior" in thinned.children)
    K = prediction.sizes["class"]
    shape = (GRID_POINTS, GRID_POINTS, K)
    if "class_proba_draws" in prediction:
        draws = prediction["class_proba_draws"].transpose("chain", "draw", "obs", "class").values
        proba_draws = draws.reshape(-1, *shape)
    else:
        proba_draws = prediction["class_proba"].transpose("obs", "class").values.reshape(1, *shape)
    point = {
        _label(kind): prediction[f"class_proba_{kind}"].transpose("obs", "class").values.reshape(shape)
        for kind in point_estimate_kinds(result)
    }
    others = [name for j, name in enumerate(feature_names) if j not in columns]
    caption = (
        f"Posterior mean P(class | x) over {features[0]} and {features[1]} ({proba_draws.shape[0]} evenly spaced "
        f"draws), the boundary with its {interval_prob:.0%} credible band, the point estimates' boundaries, the "
        "training points"
        + (
            f"; the other features held at their training median (mode for categorical): {_listing(others)}"
            if others
            else ""
        )
    )
    blocks: list = [
        Figure(
            figures.boundary_plot(
                (axes[0], axes[1]),
                proba_draws,
                point_proba=point,
                X=X[:, columns],
                y=y,
                class_names=attr_json(result, "class_names", []),
                feature_names=(features[0], features[1]),
                interval_prob=interval_prob,
            ),
            caption,
        )
    ]
    derived = _discriminant_rows(result, interval_prob=interval_prob)
    if derived is not None:
        blocks.append(derived)
    return Section("boundary", "Decision boundary", tuple(blocks))


def _typical_row(X: np.ndarray, kinds: Sequence[str]) -> np.ndarray:
    """The training median of each numeric column, the most frequent value of each categorical or binary one."""
    row = np.median(X, axis=0)
    for j, kind in enumerate(kinds):
        if kind in ("categorical", "binary"):
            values, counts = np.unique(X[:, j], return_counts=True)
            row[j] = values[np.argmax(counts)]
    return row


def _discriminant_rows(result, *, interval_prob: float) -> Table | None:
    """The linear discriminants ``w_k, w_k0`` of a shared-covariance Gaussian model (seed 001 §D, seed 002)."""
    model = model_of(result)
    reference = result["posterior"] if "posterior" in result.children else None
    if reference is None:
        kinds = point_estimate_kinds(result)
        reference = result[f"point_estimate_{kinds[0]}"] if kinds else None
    if reference is None:
        return None
    derived = set(model.derived_quantities(reference.to_dataset()).data_vars)
    if not derived:
        return None
    kinds = point_estimate_kinds(result)
    rows = [
        row
        for row in parameter_comparison(result, interval_prob=interval_prob)
        if str(row["parameter"]).split("[")[0] in derived
    ]
    interval = f"{interval_prob:.0%} ETI"
    return Table(
        f"Linear discriminants of the shared covariance: a_k(x) = w_k . x + w_k0 (seed 001 §D, seed 002); "
        f"posterior mean and {interval} beside the point estimates, in the model's inputs"
        + (" (standardised features)" if int(result.attrs.get("standardize", 0)) else ""),
        ("quantity", "post. mean", interval, *(_label(kind) for kind in kinds)),
        tuple(
            (
                str(row["parameter"]),
                number(row["mean"]),
                f"[{number(row['low'], '.3g')}, {number(row['high'], '.3g')}]" if row["low"] is not None else "-",
                *(number(row[kind]) for kind in kinds),
            )
            for row in rows[:MAX_TABLE_ROWS]
        ),
    )


def _latent_curve_section(result, *, interval_prob: float) -> Section:
    """One-input GP: latent f and P(class 1 | x) along the input, with bands over draws."""
    model = model_of(result)
    X = result["constant_data"]["X"].values
    y = result["observed_data"]["y"].values
    low, high = float(X.min()), float(X.max())
    pad = 0.05 * (high - low or 1.0)
    x = np.linspace(low - pad, high + pad, 200)
    inputs = model_inputs(result, x[:, np.newaxis])
    thinned = _thinned(result)
    rng = np.random.default_rng(0)
    latent_draws = None
    proba_draws = None
    if "posterior" in thinned.children:
        posterior = thinned["posterior"].to_dataset()
        moments = model.latent_predictive(posterior, inputs)
        mean = moments["latent_mean"].transpose(..., "obs").values.reshape(-1, x.size)
        sd = np.sqrt(moments["latent_variance"].transpose(..., "obs").values.reshape(-1, x.size))
        latent_draws = mean + sd * rng.standard_normal(mean.shape)  # f* per draw: conditional mean plus its spread
        prediction = predict(thinned, x[:, np.newaxis], return_draws=True)
        proba_draws = prediction["class_proba_draws"].isel({"class": 1}).transpose("chain", "draw", "obs").values
        proba_draws = proba_draws.reshape(-1, x.size)
    else:
        prediction = predict(thinned, x[:, np.newaxis])
    point_latent, point_proba = {}, {}
    for kind in point_estimate_kinds(result):
        params = result[f"point_estimate_{kind}"].to_dataset()
        point_latent[_label(kind)] = model.latent_predictive(params, inputs)["latent_mean"].values.ravel()
        point_proba[_label(kind)] = prediction[f"class_proba_{kind}"].isel({"class": 1}).values
    true_latent = None
    if "true_class_proba" in result["constant_data"]:
        import scipy.special

        p = np.clip(result["constant_data"]["true_class_proba"].isel({"class": 1}).values, 1e-12, 1 - 1e-12)
        true_latent = scipy.special.logit(p) if model.link == "logit" else scipy.special.ndtri(p)
    feature_name = attr_json(result, "feature_names", ["x"])[0]
    if latent_draws is None:  # a point estimate only (the Laplace fit): its curve stands for the posterior's
        first = next(iter(point_latent))
        latent_draws, proba_draws = point_latent[first][np.newaxis], point_proba[first][np.newaxis]
    svg = figures.latent_curve_plot(
        x,
        latent_draws,
        proba_draws,
        X=X[:, 0],
        y=y,
        true_points=None if true_latent is None else (X[:, 0], true_latent),
        point_latent=point_latent,
        point_proba=point_proba,
        interval_prob=interval_prob,
        feature_name=feature_name,
        class_names=attr_json(result, "class_names", []),
    )
    caption = (
        f"Latent f and P(class 1 | {feature_name}) with their {interval_prob:.0%} bands over posterior draws, the "
        "point estimates dashed"
        + ("; the true latent of the generator at the training inputs (dots)" if true_latent is not None else "")
    )
    return Section("boundary", "Decision boundary", (Figure(svg, caption),))


# -- 7. generative checks --------------------------------------------------------------------------------------------


def generative_section(result, *, random_seed: int, n_replicates: int = 200) -> Section | None:
    """Replicated vs observed per-class feature statistics and their posterior predictive p-values (naive Bayes,
    gcc). None for a discriminative family."""
    if not isinstance(model_of(result), GenerativeClassifierModel):
        return None
    check = posterior_predictive_check(result, n_replicates=n_replicates, random_seed=random_seed)
    cells = []
    for name in check.data_vars:
        if not name.startswith("p_value_"):
            continue
        statistic = name.removeprefix("p_value_")
        other = next(dim for dim in check[name].dims if dim != "class")
        p_values = check[name].transpose("class", other).values
        observed = check[f"observed_{statistic}"].transpose("class", other).values
        for k, j in np.argwhere(~np.isnan(p_values)):
            cells.append(
                (str(check["class"].values[k]), str(check[other].values[j]), statistic, observed[k, j], p_values[k, j])
            )
    cells.sort(key=lambda cell: min(cell[4], 1 - cell[4]))
    flagged = sum(1 for cell in cells if not 0.025 <= cell[4] <= 0.975)
    rows = tuple(
        (c, f, s, number(o), number(p, ".3f") + (" *" if not 0.025 <= p <= 0.975 else ""))
        for c, f, s, o, p in cells[:MAX_TABLE_ROWS]
    )
    source = check.attrs.get("source", "posterior")
    return Section(
        "generative",
        "Generative checks",
        (
            Text(
                f"{flagged} of {len(cells)} class x feature statistics flagged (* : p outside [0.025, 0.975]); "
                f"{check.attrs.get('n_replicates', n_replicates)} replicated training sets from the {source}, with "
                "the real labels (seed 001 §B.1)."
            ),
            Figure(
                figures.generative_check_plot(check),
                "Replicated distribution of each statistic (per class and feature) with the observed value; the "
                "most extreme p-values first",
            ),
            Table(
                "Posterior predictive p-values P(T_rep > T_obs) + P(T_rep = T_obs)/2, most extreme first",
                ("class", "feature", "statistic", "observed", "p"),
                rows,
                note=f"{len(cells) - MAX_TABLE_ROWS} more statistics not listed."
                if len(cells) > MAX_TABLE_ROWS
                else "",
            ),
        ),
    )


# -- 8. decisions ----------------------------------------------------------------------------------------------------


def decisions_section(
    result, heldout: Mapping[str, tuple[Dataset, Estimates]], *, loss: LossMatrix | None
) -> Section | None:
    """The loss matrix, the mean loss of the Bayes decisions of every estimate on the held-out rows, and each
    estimate's confusion matrix. None without a loss matrix."""
    if loss is None:
        return None
    class_names = tuple(attr_json(result, "class_names", []))
    matrix = loss.aligned(class_names)
    blocks: list = [
        Table(
            "Loss matrix L[true, decision] (rows: true class; columns: decision)",
            ("true \\ decision", *class_names),
            tuple((name, *(number(v, "g") for v in matrix[k])) for k, name in enumerate(class_names)),
        )
    ]
    if not heldout:
        blocks.append(Text("Decisions are scored on held-out rows; there are none (give --data)."))
    for split, (data, estimates) in heldout.items():
        rows = []
        posterior = estimates.proba.get("posterior")
        for label, proba in estimates.proba.items():
            chosen = decide(expected_loss(proba, matrix)) if proba is not None else estimates.decisions.get(label)
            if chosen is None:
                continue
            defined = chosen >= 0
            mean_loss = float(matrix[estimates.y[defined], chosen[defined]].mean()) if defined.any() else math.nan
            row = [label, number(mean_loss, ".4f")]  # over the decided rows (a NaN row has no decision)
            if posterior is not None:  # what the posterior expects each rule's decisions to lose
                risk = expected_loss(posterior[defined], matrix)[np.arange(int(defined.sum())), chosen[defined]]
                row.append(number(float(risk.mean()) if defined.any() else math.nan, ".4f"))
            rows.append((*row, str(int((~defined).sum()))))
            blocks.append(_confusion(label, split, estimates.y, chosen, class_names))
        header = ("estimate", "mean loss", *(("posterior expected loss",) if posterior is not None else ()))
        blocks.insert(
            1,
            Table(
                f"Loss of the decisions on {split} ({data.n_obs} rows): each estimate decides by least expected loss "
                "under its own probabilities (the posterior: the Bayes decision under the posterior mean; a point "
                "estimate: the plug-in decision). Mean loss: the average L[true, decision] over the decided rows; "
                "posterior expected loss: the average of sum_k L[k, decision] P(k | x) under the posterior mean "
                "probabilities, which the Bayes decisions minimise row by row",
                (*header, "rows undecided"),
                tuple(rows),
            ),
        )
    return Section("decisions", "Decisions", tuple(blocks))


def _confusion(label: str, split: str, y: np.ndarray, chosen: np.ndarray, class_names: tuple[str, ...]) -> Table:
    from sklearn.metrics import confusion_matrix

    defined = chosen >= 0
    matrix = confusion_matrix(y[defined], chosen[defined], labels=np.arange(len(class_names)))
    return Table(
        f"Confusion matrix of {label} on {split} (rows: true class; columns: decision)",
        ("true \\ decision", *class_names),
        tuple((name, *(str(int(v)) for v in matrix[k])) for k, name in enumerate(class_names)),
        compact=True,
    )
