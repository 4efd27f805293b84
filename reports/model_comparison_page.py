"""The HTML page of a comparison of several families (``bayesclass compare --model all --report PAGE``).

Renders a :class:`~bayesclass.inference.evaluation.model_comparison.ModelComparison` (computed by
:func:`~bayesclass.inference.evaluation.model_comparison.compare_models`) as the same self-contained page as a
run's report (:func:`bayesclass.reports.html.render_page`: inline SVG images, inline CSS, nothing from the network,
every string escaped). Its sections: summary (the data, the rows of each split, the families fitted and those
that could not take the data, with their reasons), conclusion (the sentences ``compare`` prints,
:func:`~bayesclass.reports.model_comparison.comparison_sentences`), ranking (PSIS-LOO and held-out), elpd
differences with their intervals, weights (stacking and pseudo-BMA+, the stack against the best family),
calibration per family, disagreements (held-out rows whose predicted class differs between the families), warnings.
Nothing here computes a score or a weight: the numbers are the comparison's, formatted; the labels are the words
of the text ``compare`` prints (:mod:`bayesclass.reports.model_comparison`).
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from typing import Any

import numpy as np

from bayesclass.inference.evaluation.conclusions import NOISE_MULTIPLE, ScoreFinding
from bayesclass.inference.evaluation.model_comparison import PARETO_K_LIMIT, HeldoutRow, ModelComparison
from bayesclass.inference.result import result_info
from bayesclass.reports import figures
from bayesclass.reports.conclusion import VERDICT_WORDS, threshold_text
from bayesclass.reports.figures.comparison import elpd_difference_plot
from bayesclass.reports.html import PageSection, render_page
from bayesclass.reports.model_comparison import (
    STACK_METHOD_LABELS,
    comparison_sentences,
    left_out_baselines_sentence,
    recommendation,
)
from bayesclass.reports.sections import Figure, Table, Text, number

__all__ = ["render_model_comparison"]

#: the held-out ranking's note, as ``compare`` prints it
HELDOUT_NOTE = (
    f"diff: mean per-row log loss minus the best's; se its SE; * a real difference: above {NOISE_MULTIPLE:g} SE and "
    f"the practical threshold of {threshold_text()}"
)
#: the PSIS-LOO ranking's note, as ``compare`` prints it
LOO_NOTE = f"diff: elpd_loo minus the best's; dse its SE; k>{PARETO_K_LIMIT:g}: rows of unreliable PSIS"


def render_model_comparison(
    comparison: ModelComparison, *, title: str | None = None, started: float | None = None, version: str = ""
) -> str:
    """The HTML page of a comparison of several families.

    Parameters
    ----------
    comparison : ModelComparison
        :func:`~bayesclass.inference.evaluation.model_comparison.compare_models` of the data.
    title : str, optional
        The page title (default: the families and the data).
    started : float, optional
        A :func:`time.perf_counter` value when the page was begun (the page says how long it took).
    version : str, default ""
        The bayesclass that renders it, shown in the page's provenance line ("" for unknown).

    Returns
    -------
    str
        The page as HTML text.

    Raises
    ------
    TypeError
        ``comparison`` is not a ModelComparison.
    """
    if not isinstance(comparison, ModelComparison):
        raise TypeError(f"comparison must be a ModelComparison (compare_models), got {type(comparison).__name__}")
    started = time.perf_counter() if started is None else started
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opening = [_opening(comparison)]
        sections = [
            _summary(comparison),
            _ranking(comparison),
            _differences(comparison),
            _weights(comparison),
            _calibration(comparison),
            _disagreements(comparison),
        ]
    raised = [f"{warning.category.__name__}: {warning.message}" for warning in caught]
    sections.append(_warnings(comparison, raised))
    if title is None:
        title = f"bayesclass model comparison: {_subject(comparison)}"
    alerts = [f"{family} NOT fitted: {reason}" for family, reason in comparison.unavailable.items()]
    return render_page(title, sections, alerts=alerts, started=started, version=version, opening=opening)


def _opening(comparison: ModelComparison) -> PageSection:
    """The recommendation, the conclusion's sentences, then the headline: the held-out ranking on the last split."""
    blocks: list = [Text(recommendation(comparison), kind="verdict")]
    blocks += [Text(sentence) for sentence in comparison_sentences(comparison)]
    if comparison.heldout:
        split, rows = list(comparison.heldout.items())[-1]
        blocks.append(_heldout_table(split, comparison.n_rows.get(split, 0), rows))
    return PageSection("conclusion", "Conclusion", tuple(blocks))


# -- summary ---------------------------------------------------------------------------------------------------


def _summary(comparison: ModelComparison) -> PageSection:
    rows = ", ".join(f"{n} {part}" for part, n in comparison.n_rows.items())
    fitted = [f for f in comparison.fits if f.result is not None]
    notes = {f.family: result_info(f.result).method_note for f in fitted}  # why the default method is this one here
    with_notes = any(notes.values())
    blocks: list = [
        Text(
            f"{comparison.data_name}: {rows} rows (seed {comparison.random_seed}); every family is fitted on the "
            f"same {comparison.n_rows.get('train', 0)} training rows and scored on the same held-out rows."
        ),
        Table(
            f"Families on the same {comparison.n_rows.get('train', 0)} training rows (seed {comparison.random_seed})",
            ("family", "fitted by", "seconds", "CPU seconds", *(("why this method",) if with_notes else ())),
            tuple(
                (f.family, f.method, number(f.seconds, ".1f"), number(f.cpu_seconds, ".1f"))
                + ((notes[f.family] or "its default",) if with_notes else ())
                for f in fitted
            ),
            text=True,
        ),
    ]
    if comparison.unavailable:
        blocks.append(
            Table(
                "Families NOT fitted, with the reason (the family's own check of the data, or the fit's error)",
                ("family", "method", "reason"),
                tuple((f.family, f.method, f.reason) for f in comparison.fits if f.result is None),
                text=True,
            )
        )
    return PageSection("summary", "Summary", tuple(blocks))


# -- ranking ---------------------------------------------------------------------------------------------------


def _ranking(comparison: ModelComparison) -> PageSection:
    n_train = comparison.n_rows.get("train", 0)
    blocks: list = []
    if comparison.loo:
        blocks.append(
            Table(
                f"Ranking by PSIS-LOO ({n_train} training rows), best first (arviz_stats.compare)",
                ("family", "elpd_loo", "se", "diff", "dse", "p_loo", f"k>{PARETO_K_LIMIT:g}", "max k"),
                tuple(
                    (
                        row.family,
                        number(row.elpd, ".2f"),
                        number(row.se, ".2f"),
                        number(0.0 - abs(row.elpd_diff), ".2f"),
                        number(row.dse, ".2f"),
                        number(row.p_loo, ".2f"),
                        f"{row.n_high_k} !" if row.n_high_k else "0",
                        number(row.max_k, ".2f"),
                    )
                    for row in comparison.loo
                ),
                note=f"elpd_loo: expected log pointwise predictive density and se its standard error; {LOO_NOTE} "
                "(flagged !: its elpd_loo is shown, not trusted; rank it by its held-out scores); p_loo: the "
                "effective number of parameters; max k: the largest Pareto k.",
            )
        )
    else:
        blocks.append(Text("No family has a PSIS-LOO estimate." if comparison.results else "No family was fitted."))
    blocks.extend(
        Text(
            f"PSIS-LOO is unreliable for {row.family}: {row.n_high_k} of {n_train} training rows have Pareto k > "
            f"{PARETO_K_LIMIT:g} (max {row.max_k:.2f}): rank it by its held-out scores."
        )
        for row in comparison.unreliable_loo
    )
    blocks.extend(Text(f"No PSIS-LOO for {family}: {reason}.") for family, reason in comparison.loo_left_out)
    if comparison.left_out_baselines:
        blocks.append(Text(f"{left_out_baselines_sentence(comparison).capitalize()}."))
    for split, rows in comparison.heldout.items():
        blocks.append(_heldout_table(split, comparison.n_rows.get(split, 0), rows))
    return PageSection("ranking", "Ranking", tuple(blocks))


def _heldout_table(split: str, n_rows: int, rows: tuple[HeldoutRow, ...], *, caption: str = "") -> Table | Text:
    if not rows:
        return Text(f"Ranking by held-out log loss ({split}, {n_rows} rows): no estimate to score.")
    undecided = any(math.isnan(row.log_loss) for row in rows)
    zero = (
        "; inf: the estimate gave some held-out row's observed class probability 0"
        if any(math.isinf(row.log_loss) for row in rows)
        else ""
    )
    return Table(
        caption
        or f"Ranking by held-out log loss ({split}, {n_rows} rows), best first: every family's posterior, "
        "its point estimates and the baselines",
        ("estimate", "log loss", "Brier", "accuracy", "diff", "se"),
        tuple(
            (
                row.label,
                number(row.log_loss, ".4f"),
                number(row.brier, ".4f"),
                number(row.accuracy, ".3f"),
                number(row.difference, ".4f") + (" *" if row.verdict == "real" else ""),
                number(row.standard_error, ".4f"),
            )
            for row in rows
        ),
        note=HELDOUT_NOTE + zero + ("; n/a: no probabilities (a baseline that only decides)." if undecided else "."),
    )


# -- elpd differences ------------------------------------------------------------------------------------------


def _subject(comparison: ModelComparison) -> str:
    """What the page is of, for its title and its figures': the fitted families, "logistic, gcc on penguins"."""
    return f"{', '.join(comparison.results) or 'no family'} on {comparison.data_name}"


def _differences(comparison: ModelComparison) -> PageSection:
    heading = "elpd differences"
    loo = comparison.loo
    if len(loo) < 2:
        reason = "one family has a PSIS-LOO estimate" if loo else "no family has a PSIS-LOO estimate"
        return PageSection("differences", heading, (Text(f"No differences to show: {reason}."),))
    labels = {
        row.family: row.family + (f" (k>{PARETO_K_LIMIT:g} on {row.n_high_k} rows)" if row.n_high_k else "")
        for row in loo
    }
    with figures.figure_title(f"{_subject(comparison)} — elpd differences"):
        svg = elpd_difference_plot(
            {labels[row.family]: (row.elpd_diff, row.dse) for row in loo}, multiple=NOISE_MULTIPLE
        )
    figure = Figure(
        svg,
        f"elpd_loo of each family minus the best's, with bars of +-{NOISE_MULTIPLE:g} dse (arviz_plots plot_compare): "
        "a bar that crosses the dashed line of the best is a difference within its noise; a family marked "
        f"k>{PARETO_K_LIMIT:g} has an unreliable estimate",
    )
    blocks: list[Any] = [figure, *_p_loo_notes(comparison)]
    far = _far_apart(loo)
    if far:
        rest = [row for row in loo if row.family not in far]
        names = ", ".join(far)
        with figures.figure_title(f"{_subject(comparison)} — elpd differences without {names}"):
            svg = elpd_difference_plot(
                {labels[row.family]: (row.elpd_diff, row.dse) for row in rest}, multiple=NOISE_MULTIPLE
            )
        blocks.append(
            Figure(
                svg,
                f"The same without {names}, whose difference is over {FAR_APART:g} times the others' and squeezes "
                f"them against the best's line above; {names} stays in the figure above and the table below",
            )
        )
    table = Table(
        f"elpd_loo differences to the best, with their standard errors and intervals of +-{NOISE_MULTIPLE:g} dse",
        ("family", "diff", "dse", f"diff +-{NOISE_MULTIPLE:g} dse", "verdict"),
        tuple(
            (
                labels[row.family],
                number(0.0 - abs(row.elpd_diff), ".2f"),
                number(row.dse, ".2f"),
                _interval(0.0 - abs(row.elpd_diff), NOISE_MULTIPLE * row.dse),
                "best" if index == 0 else VERDICT_WORDS[row.verdict or "within noise"],
            )
            for index, row in enumerate(loo)
        ),
    )
    return PageSection("differences", heading, (*blocks, table))


#: a family's elpd difference this many times the largest extent (|diff| + bars) of the others' is drawn apart
FAR_APART = 10.0


def _far_apart(loo: Any) -> tuple[str, ...]:
    """The families drawn apart: each bar's near end over :data:`FAR_APART` times every other family's far end.

    Such a family shows the others as one point; at least two families must remain to draw.
    """
    extent = {row.family: abs(row.elpd_diff) + NOISE_MULTIPLE * row.dse for row in loo}
    near = {row.family: abs(row.elpd_diff) - NOISE_MULTIPLE * row.dse for row in loo}
    ordered = sorted(extent, key=extent.__getitem__)
    for cut in range(2, len(ordered)):
        inner, outer = ordered[:cut], ordered[cut:]
        scale = max(extent[family] for family in inner)
        if scale > 0 and all(near[family] > FAR_APART * scale for family in outer):
            return tuple(row.family for row in loo if row.family in outer)
    return ()


def _p_loo_notes(comparison: ModelComparison) -> list[Text]:
    """A note per family whose p_loo exceeds its training rows: its PSIS-LOO estimate means nothing."""
    n_train = comparison.n_rows["train"]
    return [
        Text(
            f"{row.family}: p_loo {row.p_loo:.2f} exceeds the {n_train} training rows; by the PSIS-LOO guidance "
            "(Vehtari, Gelman and Gabry 2017) its leave-one-out estimate then fails (a very flexible or misspecified "
            "model, or a poor approximation of its posterior): its elpd_loo and difference are not evidence about "
            "the family; rank it by its held-out scores (Ranking)."
        )
        for row in comparison.loo
        if row.p_loo > n_train
    ]


def _interval(center: float, half_width: float) -> str:
    return f"[{number(center - half_width, '.2f')}, {number(center + half_width, '.2f')}]"


# -- weights ---------------------------------------------------------------------------------------------------


def _weights(comparison: ModelComparison) -> PageSection:
    stack = comparison.stack
    if stack is None:
        return PageSection("weights", "Weights", (Text("No stack (not asked for)."),))
    blocks: list = []
    methods = list(stack.weights)
    families = list(dict.fromkeys(family for name in methods for family in stack.weights[name]))
    if families:
        blocks.append(
            Table(
                "Weights of the stacked predictive: LOO stacking (Yao, Vehtari, Simpson and Gelman 2018) is the "
                "stack's own; pseudo-BMA+ beside it (arviz_stats.compare)",
                ("family", *(f"{STACK_METHOD_LABELS.get(name, name)} weight" for name in methods)),
                tuple(
                    (family, *(number(stack.weights[name].get(family), ".3f") for name in methods))
                    for family in families
                ),
                note=f"The stack mixes the families' posterior predictive probabilities by the "
                f"{STACK_METHOD_LABELS.get(stack.method, stack.method)} weights; each column sums to 1."
                + "".join(f" Note: {note}." for note in stack.notes),
            )
        )
    if stack.result is None:
        blocks.append(Text(f"No stack: {stack.reason}.", kind="alert"))
        return PageSection("weights", "Weights", tuple(blocks))
    findings = [finding for finding in comparison.stack_findings.values() if isinstance(finding, ScoreFinding)]
    if findings:
        blocks.append(
            Table(
                f"{stack.label} against the best family's posterior on each held-out split: paired per-row log losses",
                ("split", "rows", "better", "log loss", "other", "log loss", "difference", "se", "verdict"),
                tuple(_stack_finding_row(finding) for finding in findings),
                note=f"difference: the mean per-row log loss of the other minus the better's; se its SE; a real "
                f"difference above {NOISE_MULTIPLE:g} SE and {threshold_text()}, negligible above {NOISE_MULTIPLE:g} "
                "SE only.",
            )
        )
    for split, rows in comparison.heldout.items():
        finding = comparison.findings.get(split)
        best = finding.best if isinstance(finding, ScoreFinding) else None
        shown = tuple(row for row in rows if row.label in (stack.label, best))
        if not any(row.label == stack.label for row in shown):
            blocks.append(Text(f"The stack has no held-out scores on {split}."))
            continue
        n_rows = comparison.n_rows.get(split, 0)
        blocks.append(
            _heldout_table(
                split,
                n_rows,
                shown,
                caption=f"Held-out scores of the stack and of the best family's posterior on {split} ({n_rows} rows); "
                "diff and se against the first of the whole ranking (Ranking, above)",
            )
        )
    return PageSection("weights", "Weights", tuple(blocks))


def _stack_finding_row(finding: ScoreFinding) -> tuple[str, ...]:
    losses = dict(finding.log_losses)
    other = finding.runner_up or ""
    return (
        finding.split,
        str(finding.n_rows),
        finding.best,
        number(losses.get(finding.best), ".4f"),
        other,
        number(losses.get(other), ".4f"),
        number(finding.difference, ".4f"),
        number(finding.standard_error, ".4f"),
        VERDICT_WORDS[finding.verdict],
    )


# -- calibration -----------------------------------------------------------------------------------------------


def _calibration(comparison: ModelComparison) -> PageSection:
    heading = "Calibration"
    predictions = comparison.predictions
    if not predictions:
        return PageSection("calibration", heading, (Text("No held-out probabilities in the comparison to draw."),))
    stack_label = comparison.stack.label if comparison.stack is not None else "stack"
    blocks: list = []
    for split, held in predictions.items():
        proba = {(stack_label if key == "stack" else f"{key}: posterior"): values for key, values in held.proba.items()}
        try:
            with figures.figure_title(f"{_subject(comparison)} — calibration on {split}"):
                svg = figures.reliability_plot(
                    proba, held.y, class_names=list(held.class_names), random_seed=comparison.random_seed
                )
        except ValueError as error:
            blocks.append(Text(f"No calibration plot on {split}: {error}.", kind="alert"))
            continue
        blocks.append(
            Figure(
                svg,
                "PAV (isotonic) calibration of each family's posterior mean P(class | x)"
                + (" and the stack's" if "stack" in held.proba else "")
                + f" on {split} "
                f"({len(held.y)} rows), with consistency bands from outcomes replicated from each estimate's "
                "probabilities (arviz_plots plot_ppc_pava)"
                + (" (one-vs-others, one panel per class)" if len(held.class_names) > 2 else ""),
            )
        )
    return PageSection("calibration", heading, tuple(blocks))


# -- disagreements ---------------------------------------------------------------------------------------------


def _disagreements(comparison: ModelComparison) -> PageSection:
    heading = "Disagreements"
    disagreements = comparison.disagreements
    if len(comparison.results) < 2:
        return PageSection("disagreements", heading, (Text("One family fitted: no other to disagree with."),))
    if not disagreements:
        return PageSection("disagreements", heading, (Text("The comparison holds no disagreements to show."),))
    blocks: list = []
    for split, found in disagreements.items():
        if not found.n_disagree:
            blocks.append(
                Text(f"On {split}, every family's posterior predicts the same class for all {found.n_rows} rows.")
            )
            continue
        listed = len(found.table)
        shown = f"the first {listed} are listed" if listed < found.n_disagree else "listed"
        blocks.append(
            Text(
                f"On {split}, the families' posteriors predict different classes for {found.n_disagree} of "
                f"{found.n_rows} rows; {shown} below with the true class, each family's predicted class and its "
                "posterior mean probability (p), then the row's features (row: its position in the whole table, "
                "from 0)."
            )
        )
        table = found.table
        probabilities = {f"{family} p" for family in comparison.results}  # to 4 decimals: 1.0000, not 1
        rows = zip(table.index, table.itertuples(index=False, name=None), strict=True)
        blocks.append(
            Table(
                f"Rows of {split} where the families disagree",
                ("row", *map(str, table.columns)),
                tuple(
                    (
                        str(index),
                        *(
                            _cell(value, ".4f" if column in probabilities else ".4g")
                            for column, value in zip(table.columns, values, strict=True)
                        ),
                    )
                    for index, values in rows
                ),
                wide=True,
            )
        )
    return PageSection("disagreements", heading, tuple(blocks))


def _cell(value: Any, spec: str) -> str:
    """A disagreement table's cell: text as it is, whole numbers as integers, other numbers formatted by ``spec``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return number(value, spec)
    return str(value)


# -- warnings --------------------------------------------------------------------------------------------------


def _warnings(comparison: ModelComparison, raised: list[str]) -> PageSection:
    lines = [
        f"fit of {family}: {message}"
        for family, result in comparison.results.items()
        for message in result_info(result).fit_warnings
    ]
    lines += [f"PSIS-LOO of {row.family}: {row.notes}" for row in comparison.loo if row.notes]
    if comparison.stack is not None:
        lines += list(comparison.stack.notes)
    lines += [f"report (figures): {message}" for message in raised]
    unique = list(dict.fromkeys(lines))
    blocks = (Text("\n".join(unique), kind="pre"),) if unique else (Text("No warnings were raised."),)
    return PageSection("warnings", "Warnings", blocks)
