"""The plain-text Bayesian-vs-point-estimate comparison that ``bayesclass compare`` prints, and score tables.

Rendered from :class:`~bayesclass.inference.evaluation.report_data.ComparisonData`
(:func:`~bayesclass.inference.evaluation.report_evaluation.evaluate_comparison` computes it; ``bayesclass
.format_comparison`` composes the two): parameters side by side, then the held-out scores of every estimate.
"""

from __future__ import annotations

import json
import math

from bayesclass.inference.evaluation.report_data import ComparisonData, HeldoutScores, RunSummary
from bayesclass.reports.conclusion import format_conclusion
from bayesclass.reports.labels import SCORE_COLUMNS, estimate_label

__all__ = ["format_comparison", "format_scores", "zero_probability_notes"]


def format_scores(scores: HeldoutScores, *, title: str) -> list[str]:
    """Lines of a score table: one row per estimate, then the notes.

    A cell is ``-`` where a metric does not apply (a baseline without probabilities); ``inf`` is kept, and a
    note follows per estimate whose log loss is infinite.

    Parameters
    ----------
    scores : HeldoutScores
        The held-out scores of every estimate and baseline on one split.
    title : str
        The table's heading line (without the colon).

    Returns
    -------
    list of str
        The lines, without line ends: the title, the header, one row per estimate, the notes.
    """
    table = scores.table
    columns = [(name, header, spec) for name, header, spec in SCORE_COLUMNS if name in table.columns]
    columns = [column for column in columns if not table[column[0]].isna().all()]
    width = max(34, *(len(str(label)) for label in table.index))
    lines = [f"{title}:", f"  {'estimate':<{width}} " + " ".join(f"{header:>9}" for _, header, _ in columns)]
    for label, row in table.iterrows():
        cells = []
        for name, _, spec in columns:
            value = row[name]
            cells.append(
                f"{'-':>9}" if math.isnan(value) else f"{'inf':>9}" if math.isinf(value) else f"{value:>9{spec}}"
            )
        lines.append(f"  {str(label):<{width}} " + " ".join(cells))
    lines.extend(f"  {note}" for note in zero_probability_notes(table))
    if scores.left_out_baselines:
        lines.append(f"  baselines left out: {scores.left_out_baselines}")
    lines.append(
        f"  ({dict(scores.descriptions).get('ece', 'ECE: top-label calibration error')}; MCB: miscalibration "
        "of the CORP decomposition of the Brier score; '-': the estimate gives no probabilities)"
    )
    return lines


def zero_probability_notes(table) -> list[str]:
    """One line per estimate of a score table whose log loss is infinite or that leaves rows undefined.

    The log loss is infinite where rows give the observed class probability 0; a row is undefined where it
    has probability 0 under every class.

    Parameters
    ----------
    table : pandas.DataFrame
        The score table, one row per estimate (indexed by its label), with the counts ``n_zero_probability``,
        ``n_undefined`` and ``n_rows`` where known.

    Returns
    -------
    list of str
        The notes, in the table's order (empty if there is nothing to note).
    """
    notes = []
    for label, row in table.iterrows():
        if row.get("n_zero_probability", 0) > 0:
            notes.append(
                f"{label}: log loss inf, {int(row['n_zero_probability'])} of {int(row['n_rows'])} rows give the "
                "observed class probability 0"
            )
        if row.get("n_undefined", 0) > 0:
            notes.append(f"{label}: {int(row['n_undefined'])} rows undefined (probability 0 under every class)")
    return notes


def format_comparison(data: ComparisonData, *, max_rows: int = 40) -> str:
    """The plain-text comparison printed by ``bayesclass compare``.

    The run, its convergence, parameters side by side (at most ``max_rows``), then for each held-out split
    the scores of every estimate and baseline, then the conclusion's sentences
    (:func:`~bayesclass.reports.conclusion.format_conclusion`).

    Parameters
    ----------
    data : ComparisonData
        The computed comparison (from
        :func:`~bayesclass.inference.evaluation.report_evaluation.evaluate_comparison`).
    max_rows : int, default 40
        The most parameter rows shown; a line counts the rest.

    Returns
    -------
    str
        The comparison text, lines joined by newlines (no final newline).
    """
    facts = data.summary
    lines = [
        f"model {facts.family} {json.dumps(facts.hyperparameters, sort_keys=True)}",
        f"data {facts.data_name} (fingerprint {facts.data_fingerprint[:12]}), method {facts.method}, "
        f"seed {facts.random_seed}, standardized features: {', '.join(facts.standardized_features) or 'none'}",
    ]
    timing = _timing_line(facts)
    if timing:
        lines.append(timing)
    if data.convergence is not None:
        lines.append(data.convergence)
    for kind, reason in data.estimates.status:
        if reason != "exists":
            lines.append(f"{estimate_label(kind)}: {reason}")
    kinds = data.estimates.kinds
    rows = data.estimates.rows
    interval = f"{data.interval_prob:.0%} ETI"
    with_se = [kind for kind in kinds if any(row.get(f"{kind}_se") is not None for row in rows)]
    lines.append("")
    lines.append(
        f"{'parameter':<38} {'post. mean':>10} {'post. sd':>9} {interval:>21} "
        + " ".join(
            f"{estimate_label(kind)[:10]:>10}"
            + (f" {'SE':>9} {f'{data.interval_prob:.0%} Wald':>21}" if kind in with_se else "")
            for kind in kinds
        )
    )

    def number(value: object, width: int) -> str:
        return f"{value:>{width}.4g}" if value is not None else f"{'-':>{width}}"

    def band(row: dict, low: str, high: str) -> str:
        return f"[{row[low]:.3g}, {row[high]:.3g}]" if row.get(low) is not None else "-"

    for row in rows[:max_rows]:
        lines.append(
            f"{row['parameter'][:38]:<38} {number(row['mean'], 10)} {number(row['sd'], 9)} "
            f"{band(row, 'low', 'high'):>21} "
            + " ".join(
                number(row[kind], 10)
                + (
                    f" {number(row.get(f'{kind}_se'), 9)} {band(row, f'{kind}_low', f'{kind}_high'):>21}"
                    if kind in with_se
                    else ""
                )
                for kind in kinds
            )
        )
    if with_se:
        lines.append(
            f"(SE and Wald interval (estimate -+ z SE) of {', '.join(estimate_label(kind) for kind in with_se)}: "
            "from the estimate's Gaussian approximation, the inverse Hessian of its objective at the estimate)"
        )
        if any(row.get(f"{kind}_se") == 0.0 for row in rows for kind in with_se):
            lines.append(
                "(SE 0: the estimate lies on its parameter's boundary, e.g. a probability of exactly 0 or 1; no "
                "regular Gaussian approximation there, so the Wald interval is the point itself, not a confidence "
                "statement: read the posterior's interval)"
            )
    for kind, note in data.estimates.covariance_notes:
        lines.append(f"({estimate_label(kind)}: {note})")
    if len(rows) > max_rows:
        lines.append(f"... {len(rows) - max_rows} more parameters (see the saved result)")
    for scores in data.heldout:
        lines.append("")
        lines.extend(format_scores(scores, title=f"held-out {scores.split} ({scores.n_rows} rows)"))
    if data.conclusion is not None:
        lines.append("")
        lines.extend(format_conclusion(data.conclusion))
    return "\n".join(lines)


def _timing_line(facts: RunSummary) -> str:
    timings = dict(facts.timings)
    settings = json.dumps(facts.sampler_settings)
    if facts.draws == "markov_chain" and "compile_seconds" in timings:
        return (
            f"NUTS: compile {timings['compile_seconds']:.1f} s (cache hit: "
            f"{'yes' if facts.compile_cache_hit else 'no'}), "
            f"sampling {timings.get('sampling_seconds', math.nan):.1f} s, settings {settings}"
        )
    if facts.draws == "markov_chain":
        return (
            f"{facts.method}: sampling {timings.get('sampling_seconds', math.nan):.1f} s (nothing compiled), "
            f"settings {settings}"
        )
    if facts.draws == "independent":
        return f"{facts.method_description}: {timings.get('sampling_seconds', math.nan):.3f} s, settings {settings}"
    return ""
