"""The HTML page of a comparison study, from the tidy table of :func:`bayesclass.inference.studies.runner.load`.

Its sections: learning curves, a stack against the best single family (where the study stacks families), paired
differences, interval coverage of a known truth (with its conclusion in sentences built from the numbers), missing
MLEs, calibration, convergence and cost.

The same self-contained page as a run's report (:func:`bayesclass.reports.html.render_page`: inline SVG
images, inline CSS, nothing from the network, every string escaped). Intervals over repeats are the smallest
and largest repeat (with few repeats, an equal-tailed interval would only restate them).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.inference.evaluation.coverage import coverage_summary
from bayesclass.inference.studies.differences import posterior_differences
from bayesclass.inference.studies.runner import current_cells, load_verified
from bayesclass.inference.studies.stack_summary import comparable_rows, stack_summary, stack_weight_summary
from bayesclass.reports import figures
from bayesclass.reports.conclusion import rule_sentence, threshold_text
from bayesclass.reports.html import PageSection, figures_first, render_page
from bayesclass.reports.sections import Figure, Table, Text, number

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_import("pandas")

__all__ = ["CURVE_METRICS", "coverage_headline", "stack_conclusion", "study_conclusion", "study_report"]

#: the metrics drawn as learning curves (those present), with their axis labels
CURVE_METRICS = {
    "log_loss": "held-out log loss",
    "brier": "held-out Brier score",
    "accuracy": "held-out accuracy",
    "kl_to_truth": "KL to the true P(class | x)",
    "truth_coverage": "coverage of the truth (89% interval)",
}
#: the sentence opening of each verdict of the stack against the best single family
_VERDICT_SENTENCES = {
    "stack better": "The stack beats the best single family",
    "best member better": "The best single family beats the stack",
    "negligible difference": "The difference is beyond twice its standard error but below the practical threshold "
    "(negligible)",
    "no clear difference": "Neither is better by more than twice the standard error",
    "equal": "The stack equals the best single family (all its weight on it)",
}


def study_report(out: str | Path, *, title: str | None = None, version: str = "") -> str:
    """The HTML page of the study whose results are in the folder ``out`` (``bayesclass study ... --out``).

    Parameters
    ----------
    out : str or pathlib.Path
        The study's results folder; the cells of its last spec are shown.
    title : str or None, default None
        The page title (None: ``"bayesclass study: "`` and the studies' names).
    version : str, default ""
        The bayesclass that renders it, shown in the page's provenance line ("" for unknown).

    Returns
    -------
    str
        The page as HTML text.

    Raises
    ------
    ValueError
        If the folder holds no finished cell yet.
    """
    started = time.perf_counter()
    # the last spec's cells (an earlier spec's records stay on disk), and the records left out
    table, rejected = load_verified(out, keys=current_cells(out))
    if table.empty:
        if rejected:
            raise ValueError(
                f"{str(out)!r} holds no verified cell record: {len(rejected)} left out ({'; '.join(rejected)}); rerun "
                "'bayesclass study SPEC.toml --out' on it to move them aside and run their cells again"
            )
        raise ValueError(f"{str(out)!r} holds no finished cell yet; run the study first")
    studies = sorted(set(table["study"].dropna()))
    title = title or f"bayesclass study: {', '.join(studies)}"
    ok = table[table["status"] == "ok"]
    compared = comparable_rows(ok)  # the comparisons leave out the cells that failed the convergence verdict
    colors = estimate_colors(ok["estimate"].dropna().unique())
    differences = posterior_differences(compared)
    coverage = coverage_summary(compared)
    opening = [PageSection("conclusion", "Conclusion", _opening(table, differences, coverage))]
    sections = [
        PageSection("summary", "Summary", _summary(table, Path(out))),
        PageSection("curves", "Learning curves", _curves(ok, colors)),
        PageSection("differences", "Posterior minus plug-in", _differences(differences, colors)),
        PageSection("coverage", "Interval coverage of the truth", _coverage(compared, colors)),
        PageSection("mle", "Where the MLE does not exist", _missing_mle(table)),
        PageSection("calibration", "Calibration", _calibration(ok, colors)),
        PageSection("convergence", "Convergence and failures", _convergence(table)),
        PageSection("cost", "Time per fit", _cost(table)),
    ]
    if (ok["kind"] == "stack").any():
        sections.insert(2, PageSection("stack", "Stack vs the best single family", _stacks(compared)))
    if rejected:
        sections.insert(1, PageSection("rejected", "Records left out", _rejected(rejected)))
    alerts = []
    if rejected:
        alerts.append(
            f"{len(rejected)} record(s) failed verification (damaged, edited, or written without a checksum) and are "
            "left out of every table; see 'Records left out'."
        )
    failed = table.loc[table["status"] == "error", "key"].nunique()
    if failed:
        alerts.append(f"{failed} cell(s) failed; their errors are listed under 'Convergence and failures'.")
    sections = [PageSection(section.anchor, section.heading, figures_first(section.blocks)) for section in sections]
    return render_page(title, sections, alerts=alerts, started=started, version=version, opening=opening)


def _opening(table, differences, coverage) -> tuple:
    """The page's opening: the study's findings in sentences, each with its numbers (all in the tables below)."""
    blocks: list = [Text(sentence) for sentence in study_conclusion(table, differences)]
    ok = table[table["status"] == "ok"]
    if (ok["kind"] == "stack").any():
        blocks.extend(Text(paragraph) for paragraph in stack_conclusion(stack_summary(ok)))
    blocks.extend(Text(sentence) for sentence in coverage_headline(coverage))
    if not differences.empty:
        blocks.append(Text(rule_sentence()))
    return tuple(blocks)


def study_conclusion(table, differences) -> list[str]:
    """Sentences of a study's outcome: its cells, then the posterior against each plug-in by held-out log loss.

    Parameters
    ----------
    table : pandas.DataFrame
        The study's tidy table (every cell, failed ones included).
    differences : pandas.DataFrame
        :func:`~bayesclass.inference.studies.differences.posterior_differences` of its finished cells (it leaves
        out the cells that failed the convergence verdict).

    Returns
    -------
    list of str
        First how many cells finished, failed, and failed the convergence verdict (left out of the comparisons);
        then per data set, model and point estimate's plug-in (not the baselines), at which training sizes the
        posterior's held-out log loss is lower or higher by more than twice the standard error of the paired
        difference, and where neither is.
    """
    cells = _cells(table)
    finished, failed = int((cells["status"] == "ok").sum()), int((cells["status"] == "error").sum())
    sampled = _sampled(cells)
    not_converged = int((sampled["converged"] == False).sum())  # noqa: E712 (a column of bools and None)
    sentences = [
        f"{finished} of {len(cells)} cells finished"
        + (f", {failed} failed (their errors are under 'Convergence and failures')" if failed else "")
        + (
            f"; {not_converged} of {len(sampled)} cells sampled by MCMC failed the convergence verdict"
            + (" and are left out of the comparisons (paired differences, stack, coverage)" if not_converged else "")
            if len(sampled)
            else ""
        )
        + "."
    ]
    own = (differences["metric"] == "log_loss") & (differences["compared"] > 0) & (differences["kind"] != "baseline")
    log_loss = differences[own]
    for (dataset, model, estimate), rows in log_loss.groupby(["dataset", "model", "estimate"], sort=True):
        parts = []
        for verdict, words in (
            ("posterior better", f"the posterior's lower by more than 2 SE and {threshold_text()}"),
            ("plug-in better", f"the {estimate}'s lower by more than 2 SE and {threshold_text()}"),
            ("negligible difference", f"beyond 2 SE but below {threshold_text()} (negligible)"),
            ("no clear difference", "within 2 SE"),
            ("equal", "equal"),
            ("one cell", "one repeat (no SE)"),
        ):
            sizes = rows.loc[rows["verdict"] == verdict, "size"].tolist()
            if sizes:
                parts.append(f"{words} at n = {', '.join(str(int(size)) for size in sizes)}")
        finite = rows[np.isfinite(rows["mean"])]
        low, high = (
            (number(finite["mean"].min(), ".3g"), number(finite["mean"].max(), ".3g")) if len(finite) else ("", "")
        )
        spread = (
            ""
            if finite.empty
            else f"mean difference {low}"
            if low == high
            else f"mean differences from {low} to {high}"
        )
        infinite = int(rows["infinite"].sum())
        if infinite:
            spread += ("; " if spread else "") + (
                f"the {estimate}'s log loss is infinite in {infinite} of {int(rows['compared'].sum())} cells: it "
                "gives probability 0 to an observed class, or to every class (see 'Where the MLE does not exist')"
            )
        sentences.append(
            f"On {dataset} ({model}), held-out log loss of the posterior vs the {estimate}, paired by cell: "
            f"{'; '.join(parts)}" + (f" ({spread})." if spread else ".")
        )
    return sentences


def coverage_headline(coverage) -> list[str]:
    """One sentence per data set and model: which estimates' intervals under- or over-cover the truth, and where.

    Parameters
    ----------
    coverage : pandas.DataFrame
        :func:`~bayesclass.inference.evaluation.coverage.coverage_summary` of a study.

    Returns
    -------
    list of str
        Per data set and model, the estimates and sizes whose coverage is more than twice its standard error
        below / above the nominal level, or that none is; the numbers are in the coverage table.
    """
    sentences = []
    for (dataset, model), group in coverage.groupby(["dataset", "model"], sort=True):
        measured = group[~group["verdict"].isin(["not available", "no standard error"])]
        if measured.empty:
            continue
        found = []
        for verdict in ("under-covers", "over-covers"):
            for (estimate, level, parameter), rows in measured[measured["verdict"] == verdict].groupby(
                ["estimate", "level", "parameter"], sort=True
            ):
                truth = "coefficients" if parameter else "P(class | x)"
                sizes = ", ".join(str(int(size)) for size in sorted(rows["size"]))
                found.append(
                    f"the {estimate}'s {level:.0%} intervals of {truth} {verdict.replace('-', ' ')} at n = {sizes}"
                )
        levels = ", ".join(f"{level:.0%}" for level in sorted(measured["level"].unique()))
        sentences.append(
            f"On {dataset} ({model}), interval coverage of the truth ({levels}): "
            + ("; ".join(found) if found else "every estimate within twice its standard error of nominal")
            + " (details under 'Interval coverage of the truth')."
        )
    return sentences


def _rejected(rejected: list[str]) -> tuple:
    """The records that failed verification, each with why (none of their numbers is shown elsewhere)."""
    return (
        Text(
            "These cell records did not pass verification (structure, value ranges, checksum, key and cell) and are "
            "not reported: rerunning the study moves them aside (*.damaged) and runs their cells again."
        ),
        Table(
            "Records left out",
            ("record", "why"),
            tuple(tuple(line.split(": ", 1)) for line in rejected),
            text=True,
        ),
    )


def estimate_colors(labels) -> dict[str, str]:
    """One colour per estimate label on every figure of the page.

    The posterior first, then the plug-ins, then the baselines, each group in alphabetical order.
    """
    order = sorted(set(map(str, labels)), key=lambda label: (label != "posterior", label.startswith("baseline"), label))
    return {label: f"C{index % 10}" for index, label in enumerate(order)}


def _cells(table):
    return table.drop_duplicates("key")


def _summary(table, out: Path) -> tuple:
    cells = _cells(table)
    rows = [
        ("results folder", str(out)),
        (
            "cells",
            f"{len(cells)}: {int((cells['status'] == 'ok').sum())} finished, "
            f"{int((cells['status'] == 'error').sum())} failed",
        ),  # fmt: skip
        ("data sets", ", ".join(sorted(cells["dataset"].unique()))),
        (
            "models",
            ", ".join(f"{m} ({meth})" for m, meth in sorted(set(zip(cells["model"], cells["method"], strict=True)))),
        ),
        ("training sizes", ", ".join(str(int(s)) for s in sorted(cells["size"].unique()))),
        ("repeats", str(int(cells["repeat"].max()) + 1)),
    ]
    blocks: list = [Table("The study", ("item", "value"), tuple(rows), text=True)]
    spec = out / "spec.toml"
    if spec.is_file():
        blocks.append(Text(spec.read_text(encoding="utf-8"), kind="pre", fold="Show the study spec (spec.toml)"))
    return tuple(blocks)


def _band(values):
    """(mean, low, high) over repeats; an infinite repeat makes the mean infinite (kept, never dropped)."""
    array = np.asarray(values, dtype=float)
    array = array[~np.isnan(array)]
    if array.size == 0:
        return math.nan, math.nan, math.nan
    return float(array.mean()), float(array.min()), float(array.max())


def _metric_panels(group, titles: dict[str, str]) -> dict:
    """Per metric in ``titles`` (panel title), per estimate: sizes and the mean and band over repeats (:func:`_band`).

    An estimate without a number at any size is left out, and a metric without any estimate has no panel.
    """
    panels = {}
    for metric, title in titles.items():
        lines = {}
        for estimate, rows in group[group["metric"] == metric].groupby("estimate", sort=False):
            stats = rows.groupby("size")["value"].apply(_band)
            if stats.empty or all(math.isnan(m) for m, _, _ in stats):
                continue
            lines[estimate] = (stats.index.to_numpy(dtype=float), *(np.array([v[i] for v in stats]) for i in range(3)))
        if lines:
            panels[title] = lines
    return panels


def _curves(ok, colors: dict[str, str]) -> tuple:
    blocks: list = []
    metrics = [m for m in CURVE_METRICS if m in set(ok["metric"])]
    for (dataset, model), group in ok.groupby(["dataset", "model"], sort=True):
        panels = _metric_panels(group, {metric: CURVE_METRICS[metric] for metric in metrics})
        if not panels:
            continue
        blocks.append(
            Figure(
                figures.learning_curve_plot(panels, colors=colors, title=f"{model} on {dataset}: learning curves"),
                f"{model} on {dataset}: each metric on the test split vs the training rows, mean over repeats with "
                "the band from the smallest to the largest repeat; a triangle marks an infinite mean (log loss inf: "
                "an observed class given probability 0)",
            )
        )
    if not blocks:
        blocks.append(Text("No finished cell has scores to draw."))
    return tuple(blocks)


def _differences(differences, colors: dict[str, str]) -> tuple:
    """Posterior minus each plug-in, paired by cell (same rows, same fit), per size (:func:`posterior_differences`)."""
    blocks: list = []
    for (dataset, model), group in differences.groupby(["dataset", "model"], sort=True):
        panels = {}
        for metric, rows in group[group["compared"] > 0].groupby("metric", sort=False):
            lines = {
                f"posterior - {estimate}": tuple(line[c].to_numpy(dtype=float) for c in ("size", "mean", "low", "high"))
                for estimate, line in rows.groupby("estimate", sort=False)
            }
            if lines:
                panels[f"{metric}: posterior - plug-in"] = lines
        if panels:
            blocks.append(
                Figure(
                    figures.learning_curve_plot(
                        panels,
                        reference=0.0,
                        colors={f"posterior - {label}": color for label, color in colors.items()},
                        title=f"{model} on {dataset}: posterior - plug-in",
                    ),
                    f"{model} on {dataset}: posterior minus each plug-in, per cell (same training rows and fit), mean "
                    "over repeats with the range; below 0 the posterior is better; -inf where the plug-in's log loss "
                    "is infinite (drawn at the bottom)",
                )
            )
    if differences.empty:
        return (Text("No posterior and plug-in scored in the same cells."),)
    blocks.append(
        Table(
            "Paired differences posterior - plug-in (lower is better for the posterior): mean over repeats ± its "
            "standard error, [smallest, largest] repeat, in how many repeats the posterior was better, and the "
            "verdict (a real difference: more than twice the standard error from 0 and beyond the practical "
            f"threshold, {threshold_text('log_loss')} for log loss and KL, {threshold_text('brier')} for Brier)",
            (
                "data",
                "model",
                "metric",
                "difference",
                "training rows",
                "mean ± SE",
                "range",
                "posterior better",
                "verdict",
            ),
            tuple(
                (
                    r.dataset,
                    r.model,
                    r.metric,
                    f"posterior - {r.estimate}",
                    str(r.size),
                    number(r.mean) + ("" if math.isnan(r.se) else f" ± {number(r.se, '.2g')}"),
                    f"[{number(r.low)}, {number(r.high)}]",
                    f"{r.posterior_better} of {r.compared}" if r.compared else "n/a",
                    r.verdict,
                )
                for r in differences[differences["compared"] > 0].itertuples()
            ),
            note=_not_compared_note(differences),
        )  # fmt: skip
    )
    return tuple(blocks)


def _not_compared_note(differences) -> str:
    """The plug-ins never compared (no probabilities in any of their cells), named once instead of row by row."""
    compared = differences.groupby(["dataset", "model", "estimate"])["compared"].sum()
    never = [f"{estimate} ({model} on {dataset})" for (dataset, model, estimate), n in compared.items() if n == 0]
    return f"Not compared (they give no probabilities): {', '.join(never)}." if never else ""


def _stacks(ok) -> tuple:
    """The stack against the best single family per size (:func:`stack_summary`), the weights, the conclusion."""
    summary = stack_summary(ok)
    blocks: list = [
        Text(
            "A stack is the mixture of its members' posterior predictive distributions, weighted by LOO stacking "
            "(or pseudo-BMA+) on the cell's training rows; every member is fitted on the same rows and scored on "
            "the same test split, so each cell pairs the stack with each family. The best single family at a size is "
            "the member with the lowest mean held-out log loss over the repeats there, chosen with hindsight on the "
            "test split (a bar that no choice made before seeing the test rows is sure to reach); the difference is "
            "paired cell by cell (below 0: the stack is better)."
        )
    ]
    if summary.empty:
        return (*blocks, Text("No cell scored both a stack and its members' log loss."))
    blocks.append(
        Table(
            "Held-out log loss of the stack and of the best single family at each size: means over repeats; the "
            "paired difference stack - best family, its [smallest, largest] cell, and in how many cells the stack "
            "was lower",
            (
                "data",
                "model",
                "training rows",
                "stack",
                "best family",
                "difference",
                "range",
                "stack lower",
                "verdict",
            ),  # fmt: skip
            tuple(
                (
                    r.dataset,
                    r.model,
                    str(r.size),
                    number(r.stack_mean),
                    f"{r.best_member} ({number(r.best_member_mean)})",
                    number(r.difference_mean),
                    f"[{number(r.difference_low)}, {number(r.difference_high)}]",
                    f"{r.stack_better} of {r.cells}",
                    r.verdict,
                )  # fmt: skip
                for r in summary.itertuples()
            ),
        )
    )
    weights = stack_weight_summary(ok)
    if not weights.empty:
        blocks.append(
            Table(
                "Each member's weight in the stack: mean over the cells, [smallest, largest] cell",
                ("data", "model", "training rows", "member", "weight", "range"),
                tuple(
                    (
                        r.dataset,
                        r.model,
                        str(r.size),
                        r.estimate,
                        number(r.mean, ".3f"),
                        f"[{number(r.low, '.3f')}, {number(r.high, '.3f')}]",
                    )  # fmt: skip
                    for r in weights.itertuples()
                ),
            )
        )
    blocks.extend(Text(paragraph) for paragraph in stack_conclusion(summary))
    return tuple(blocks)


def stack_conclusion(summary) -> list[str]:
    """Sentences saying at which training sizes the stack beats the best single family, from ``summary`` only.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`bayesclass.inference.studies.stack_summary.stack_summary` of a study.

    Returns
    -------
    list of str
        One paragraph per data set and stack: the best family and the paired difference at each size, then the
        sizes where the stack is better, where the best family is, and where neither is by more than twice the
        standard error. Every number in them is in the stack table.
    """
    paragraphs = []
    for (dataset, model), group in summary.groupby(["dataset", "model"], sort=True):
        group = group.sort_values("size")
        metric = str(group["metric"].iloc[0]).replace("_", " ")
        spans = [
            f"at n = {r.size} the best was {r.best_member} ({number(r.best_member_mean)}), the stack "
            f"{number(r.stack_mean)} (difference {number(r.difference_mean)}, the stack lower in {r.stack_better} of "
            f"{r.cells} cells)"
            for r in group.itertuples()
        ]
        sentence = f"On {dataset} ({model}), by held-out {metric}: "
        sentence += "; ".join(spans) + "."
        for verdict, what in _VERDICT_SENTENCES.items():
            sizes = [str(r.size) for r in group.itertuples() if r.verdict == verdict]
            if sizes:
                sentence += f" {what} at n = {', '.join(sizes)}."
        if (group["cells"] <= 1).all():
            sentence += " (One repeat per size: the verdicts follow the sign of one difference, no standard error.)"
        paragraphs.append(sentence)
    return paragraphs


def _coverage_title(level: float, parameter: bool) -> str:
    return f"{'true coefficients' if parameter else 'true P(class | x)'}: {level:.0%} intervals"


def _coverage(ok, colors: dict[str, str]) -> tuple:
    """Coverage of the truth vs training rows per estimate, nominal levels drawn; a table; the conclusion."""
    summary = coverage_summary(ok)
    if summary.empty and (ok["metric"] == "kl_to_truth").any():
        return (
            Text(
                "The study's data sets have a known truth, but its records hold no interval coverage: they were "
                "written by a bayesclass that did not measure it. Run the spec into a new results folder (or remove "
                "the records of those cells) to measure it."
            ),
        )
    if summary.empty:
        return (
            Text(
                "No data set of the study has a known truth (a generator's true P(class | x)), so no interval "
                "coverage was measured; add a generated data set (seed001_gaussians, seed004_gp, "
                "logistic_known_weights) to measure it."
            ),
        )
    blocks: list = [
        Text(
            "How often each estimate's interval holds the truth, on data whose truth is known: the share of test "
            "rows whose true P(class | x) lies in the interval (the posterior's equal-tailed interval; the MLE's "
            "and MAP's Wald intervals by the delta method) and, where the family's parameters are the "
            "generator's log-odds coefficients, the share of the true coefficients covered (compared in the "
            "model's standardised inputs). A well-calibrated interval covers at its nominal level (the dashed "
            "lines). Coverage is a property over independent samples of the generator: a data set declared with "
            "redraw = true draws its rows afresh for each repeat and trains on simple random samples of them; "
            "without it every repeat subsamples the same generated rows, stratified by class, which fixes the "
            "class counts and makes intervals cover more often than their level."
        )
    ]
    for (dataset, model), group in summary.groupby(["dataset", "model"], sort=True):
        panels: dict = {}
        references = {}
        for (parameter, level), rows in group.groupby(["parameter", "level"], sort=True):
            title = _coverage_title(level, parameter)
            references[title] = level
            lines = {}
            for estimate, line in rows.groupby("estimate", sort=False):
                if line["mean"].notna().any():
                    line = line.sort_values("size")
                    lines[estimate] = tuple(line[c].to_numpy(dtype=float) for c in ("size", "mean", "low", "high"))
            if lines:
                panels[title] = lines
        if panels:
            # one scale for the panels of a figure, from a little below the lowest repeat (or level) up to 1
            lowest = min(float(np.nanmin(group["low"].to_numpy(dtype=float))), min(references.values()))
            bottom = max(0.0, math.floor(10 * (lowest - 0.05)) / 10)
            blocks.append(
                Figure(
                    figures.learning_curve_plot(
                        panels,
                        reference=references,
                        colors=colors,
                        y_range=(bottom, 1.02),
                        columns=2,
                        title=f"{model} on {dataset}: coverage of the truth",
                    ),
                    f"{model} on {dataset}: coverage of the truth vs the training rows, mean over repeats with the "
                    "band from the smallest to the largest repeat; dashed: the nominal level",
                )
            )
    blocks.append(_coverage_table(summary))
    blocks.extend(Text(paragraph) for paragraph in coverage_conclusion(summary))
    return tuple(blocks)


def _coverage_table(summary) -> Table:
    """Coverage per estimate, truth and level (rows) and training size (columns): mean ± standard error."""
    sizes = sorted(int(size) for size in summary["size"].unique())
    marks = {"under-covers": " under", "over-covers": " over"}
    rows = []
    for (dataset, model, parameter, level, estimate), group in summary.groupby(
        ["dataset", "model", "parameter", "level", "estimate"], sort=True
    ):
        by_size = {int(r.size): r for r in group.itertuples()}
        cells = []
        for size in sizes:
            r = by_size.get(size)
            if r is None:
                cells.append("-")
            elif r.verdict == "not available":
                cells.append("not available")
            else:
                partial = f" ({r.cells} of {r.total} cells)" if r.cells < r.total else ""
                spread = "" if math.isnan(r.se) else f" ± {number(r.se, '.3f')}"
                cells.append(f"{number(r.mean, '.3f')}{spread}{marks.get(r.verdict, '')}{partial}")
        truth = "coefficients" if parameter else "P(class | x)"
        rows.append((dataset, model, truth, f"{level:.0%}", estimate, *cells))
    return Table(
        "Coverage of the truth per training size: mean over the cells where the estimate has an interval (a "
        "missing MLE has none: the cells counted are then given) ± its standard error over cells; 'under' / "
        "'over': more than twice the standard error below / above the nominal level",
        ("data", "model", "truth", "nominal", "estimate", *(f"n = {size}" for size in sizes)),
        tuple(rows),
    )


def _coverage_at(row) -> str:
    """``"93.1% at n = 20"``, with ``(in 3 of 5 cells)`` where the estimate has no interval in some cells."""
    partial = f" (in {row['cells']} of {row['total']} cells)" if row["cells"] < row["total"] else ""
    return f"{100 * row['mean']:.1f}% at n = {int(row['size'])}{partial}"


def coverage_conclusion(summary) -> list[str]:
    """Sentences stating which estimates under- or over-cover the truth, and by how much, from ``summary`` only.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`bayesclass.inference.evaluation.coverage.coverage_summary` of a study.

    Returns
    -------
    list of str
        One paragraph per data set and model. Per truth and level: each estimate's coverage at the smallest and
        largest training size,
        (and in how many cells, where an estimate, e.g. an MLE that does not exist, has no interval in some), then
        which estimates under- or over-cover (by how many points, at which size) or that none does; the estimates
        without an interval. Every number in them is in the coverage table.
    """
    paragraphs = []
    for (dataset, model), group in summary.groupby(["dataset", "model"], sort=True):
        sentences = []
        missing = sorted(set(group.loc[group["verdict"] == "not available", "estimate"]))
        measured = group[group["verdict"] != "not available"]
        for (parameter, level), rows in measured.groupby(["parameter", "level"], sort=True):
            what = "the true coefficients" if parameter else "the true P(class | x)"
            spans = []
            for estimate, line in rows.groupby("estimate", sort=True):
                line = line.sort_values("size")
                ends = [line.iloc[0]] + ([line.iloc[-1]] if len(line) > 1 else [])
                spans.append(f"{estimate} " + " and ".join(_coverage_at(end) for end in ends))
            sentence = f"On {dataset} ({model}), {level:.0%} intervals covered {what}: {'; '.join(spans)}."
            found = []
            for verdict in ("under-covers", "over-covers"):
                hit = rows[rows["verdict"] == verdict].sort_values(["estimate", "size"])
                found += [
                    f"the {r.estimate} {verdict} at n = {int(r.size)} by {100 * abs(r.difference):.1f} points "
                    f"(standard error {100 * r.se:.1f}; interval {100 * r.interval_low:.1f}-"
                    f"{100 * r.interval_high:.1f}%)"
                    for r in hit.itertuples()
                ]
            if found:
                sentence += (
                    " Nominal is outside the interval (mean -+ 2 standard errors of the cells; exact where the cells "
                    "are identical): " + "; ".join(found) + "."
                )
            elif (rows["verdict"] == "near nominal").any():
                widest = float(rows["se"].max())
                sentence += (
                    " Every estimate's interval (mean -+ 2 standard errors of the cells) contains nominal at every "
                    f"size measured (standard errors up to {100 * widest:.1f} points: "
                    f"{_cells_per_size(rows['cells'])} cells per size)."
                )
            if (rows["verdict"] == "no standard error").all():
                sentence += " (One repeat per size: no standard error, no verdict.)"
            sentences.append(sentence)
        if missing:
            sentences.append(
                f"On {dataset} ({model}), coverage is not available for {', '.join(missing)}: no interval (the family "
                "states no Gaussian approximation of these estimates)."
            )
        paragraphs.append(" ".join(sentences))
    return paragraphs


def _cells_per_size(cells) -> str:
    """``"3"`` or ``"2 to 3"``: the cells counted per size."""
    low, high = int(cells.min()), int(cells.max())
    return str(low) if low == high else f"{low} to {high}"


def mle_cause(status: object) -> str:
    """The cause of a missing MLE from the fit's status text: separation, zero counts, or the text itself."""
    text = str(status)
    if "separable" in text or "separation" in text:
        return "separation (the classes are linearly separable)"
    if "zero" in text or "count" in text:
        return "zero counts"
    return text


def _missing_mle(table) -> tuple:
    cells = _cells(table[table["status"] == "ok"])
    missing = cells[cells["mle_status"].notna() & (cells["mle_status"] != "exists")]
    blocks: list = []
    if missing.empty:
        blocks.append(Text("The MLE existed in every finished cell where it was computed."))
    else:
        counts = (
            missing.assign(cause=missing["mle_status"].map(mle_cause))
            .groupby(["dataset", "model", "size", "cause"], sort=True)["key"]
            .count()
        )
        totals = cells.groupby(["dataset", "model", "size"])["key"].count()
        blocks.append(
            Table(
                "Cells whose MLE does not exist, by cause (out of the cells of that size)",
                ("data", "model", "training rows", "cause", "cells"),
                tuple(
                    (d, m, str(int(s)), cause, f"{n} of {int(totals[(d, m, s)])}")
                    for (d, m, s, cause), n in counts.items()
                ),
            )
        )
    zero = table[(table["metric"] == "n_zero_probability") & (table["value"] > 0)]
    if not zero.empty:
        counts = zero.groupby(["dataset", "model", "estimate", "size"])["key"].nunique()
        blocks.append(
            Table(
                "Estimates that exist but give an observed test class probability 0 (log loss inf), in how many "
                "repeats",
                ("data", "model", "estimate", "training rows", "repeats"),
                tuple((d, m, e, str(int(s)), str(int(n))) for (d, m, e, s), n in counts.items()),
            )
        )
    return tuple(blocks)


def _calibration(ok, colors: dict[str, str]) -> tuple:
    """ECE and MCB of every estimate vs the training rows (a figure per data set and model), then the table."""
    metrics = [m for m in ("ece", "calibration_mcb") if m in set(ok["metric"])]
    if not metrics:
        return (Text("The study scored no calibration metric."),)
    labels = {"ece": "ECE (top-label, 10 bins)", "calibration_mcb": "MCB (CORP miscalibration of the Brier score)"}
    blocks: list = []
    scored = ok[ok["metric"].isin(metrics)]
    for (dataset, model), group in scored.groupby(["dataset", "model"], sort=True):
        panels = _metric_panels(group, {metric: labels[metric] for metric in metrics})
        if panels:
            blocks.append(
                Figure(
                    figures.learning_curve_plot(panels, colors=colors, title=f"{model} on {dataset}: calibration"),
                    f"{model} on {dataset}: calibration error on the test split vs the training rows (lower is "
                    "better), mean over repeats with the band from the smallest to the largest repeat",
                )
            )
    summary = scored.groupby(["dataset", "model", "estimate", "size", "metric"])["value"].mean()
    wide = summary.unstack("metric")
    rows = tuple(
        (d, m, e, str(int(s)), *(number(row.get(metric), ".4f") for metric in metrics))
        for (d, m, e, s), row in wide.iterrows()
    )
    blocks.append(
        Table(
            "Calibration on the test split, mean over repeats: ECE (top-label, 10 bins) and MCB (the miscalibration "
            "term of the CORP decomposition of the Brier score)",
            ("data", "model", "estimate", "training rows", *(m.replace("calibration_", "").upper() for m in metrics)),
            rows,
        )
    )
    return tuple(blocks)


def _convergence(table) -> tuple:
    cells = _cells(table)
    blocks: list = []
    sampled = _sampled(cells)
    failing = sampled[(sampled["converged"] == False)]  # noqa: E712 (a column of bools and None)
    blocks.append(
        Text(
            f"{len(sampled)} cells sampled by MCMC (NUTS or the GP's Gibbs sampler; a stack's cell where a member "
            f"was): {len(failing)} failed the "
            "convergence verdict (r_hat <= 1.01, "
            "bulk and tail ESS >= 400, no divergences); independent draws (exact, laplace) have no verdict."
            + (
                " The cells that failed it are listed below and left out of the comparisons (paired differences, "
                "stack vs the best family, interval coverage); the learning curves, calibration and cost still show "
                "them."
                if len(failing)
                else ""
            )
        )
    )
    if not failing.empty:
        blocks.append(
            Table(
                "Cells that failed the convergence verdict",
                ("data", "model", "training rows", "repeat", "max r_hat", "min bulk ESS", "divergences"),
                tuple(
                    (
                        r.dataset,
                        r.model,
                        str(int(r.size)),
                        str(int(r.repeat)),
                        number(r.max_r_hat, ".4f"),
                        number(r.min_ess_bulk, ".0f"),
                        str(int(r.divergences or 0)),
                    )
                    for r in failing.itertuples()
                ),  # fmt: skip
            )
        )
    errors = cells[cells["status"] == "error"]
    if not errors.empty:
        blocks.append(
            Table(
                "Cells that raised (recorded with their error; the study went on)",
                ("data", "model", "training rows", "repeat", "error"),
                tuple(
                    (r.dataset, r.model, str(int(r.size)), str(int(r.repeat)), str(r.error))
                    for r in errors.itertuples()
                ),
                text=True,
            )
        )
    return tuple(blocks)


def _sampled(cells):
    """The cells sampled by MCMC, the opening's and the convergence section's count alike.

    A stack's cell has a verdict where one of its members was sampled by MCMC: the worst over its members.
    """
    return cells[cells["method"].isin(["nuts", "gibbs"]) | cells["converged"].notna()]


def _cost(table) -> tuple:
    cells = _cells(table[table["status"] == "ok"])
    if cells.empty:
        return (Text("No finished cell."),)
    grouped = cells.groupby(["dataset", "model", "method", "size"])
    rows = tuple(
        (
            dataset,
            model,
            method,
            str(int(size)),
            str(len(group)),
            number(group["fit_seconds"].median(), ".2f"),
            number(group["sampling_seconds"].median(), ".3f"),
            number(group["compile_seconds"].median(), ".2f"),
            number(group["score_seconds"].median(), ".2f"),
        )
        for (dataset, model, method, size), group in grouped
    )
    return (
        Table(
            "Seconds per cell, median over cells: the fit (posterior draws and every point estimate), of it the "
            "sampling and the compilation (0 when a worker reused the compiled model), and the scoring",
            ("data", "model", "posterior by", "training rows", "cells", "fit", "sampling", "compile", "scoring"),
            rows,
        ),
    )
