"""The sections of a run's report, rendered from its computed evaluation: tables, figures and text.

Each ``*_section`` function takes one :class:`~bayesclass.inference.evaluation.report_data.RunEvaluation` (computed
by :func:`bayesclass.inference.evaluation.report_evaluation.evaluate_for_report`) and returns a :class:`Section`,
or None where the section does not apply to what the run holds (no posterior: no convergence; no two numeric
features: no decision boundary; a discriminative family: no generative checks; no loss matrix: no decisions).
Nothing here fits, samples, predicts or draws random numbers: the numbers are formatted and
:mod:`bayesclass.reports.figures` draws them. The page itself is assembled by :mod:`bayesclass.reports.html`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from bayesclass.data.arguments import spelled
from bayesclass.inference.evaluation import report_data as rd
from bayesclass.reports import figures
from bayesclass.reports.labels import SCORE_COLUMNS, estimate_label

__all__ = [
    "Figure",
    "Section",
    "Table",
    "Text",
    "calibration_section",
    "conclusion_section",
    "convergence_section",
    "decision_boundary_section",
    "decisions_section",
    "estimates_section",
    "generative_section",
    "headline_table",
    "ranking_section",
    "number",
    "performance_section",
    "summary_section",
    "verdict_blocks",
]

#: parameter rows in tables before "... more"
MAX_TABLE_ROWS = 40
#: a table of more rows is folded on the page: its first FOLDED_ROWS_SHOWN rows shown, all of them one click away
FOLD_ROWS = 15
#: the rows a folded table shows
FOLDED_ROWS_SHOWN = 10
#: parameter elements in the rank and trace figures: the worst by r_hat and by ESS
CHAIN_PANELS = 8


@dataclass(frozen=True)
class Text:
    """A paragraph, a preformatted block or a red alert.

    Parameters
    ----------
    body : str
        The text (autoescaped on the page).
    kind : {"text", "pre", "alert", "verdict"}, default "text"
        A paragraph ("text"), a preformatted block ("pre"), a red alert ("alert") or a passed verdict ("verdict",
        a green line).
    fold : str, default ""
        A preformatted block shown folded, behind this label ("Show the study spec"); "" shows it.
    """

    body: str
    kind: str = "text"
    fold: str = ""


@dataclass(frozen=True)
class Table:
    """A table: ``header`` and ``rows`` of already formatted cells, a caption saying what the numbers are.

    Parameters
    ----------
    caption : str
        What the numbers are.
    header : tuple of str
        The column headings.
    rows : tuple of tuple of str
        The formatted cells, row by row (e.g. by :func:`number`).
    note : str, default ""
        A line under the table ("" for none).
    text : bool, default False
        The cells are text (left-aligned), not numbers.
    compact : bool, default False
        A small table laid out beside its neighbours (confusion matrices).
    wide : bool, default False
        A table of many columns, in a box that scrolls sideways instead of overflowing the page (keep its caption
        short: it scrolls with the table).
    kind : {"table", "advice"}, default "table"
        The block's kind, for the page template ("advice": the convergence advice box, highlighted).
    """

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""
    text: bool = False  # cells are text (left-aligned), not numbers
    compact: bool = False  # a small table laid out beside its neighbours (confusion matrices)
    wide: bool = False  # many columns: scrolls sideways
    kind: str = "table"

    @property
    def folded(self) -> bool:
        """Whether the page shows only its first :data:`FOLDED_ROWS_SHOWN` rows, the rest one click away."""
        return self.kind == "table" and not self.compact and len(self.rows) > FOLD_ROWS

    @property
    def shown_rows(self) -> tuple[tuple[str, ...], ...]:
        """The rows shown before the fold (all of them when the table is not folded)."""
        return self.rows[:FOLDED_ROWS_SHOWN] if self.folded else self.rows

    @property
    def folded_rows(self) -> tuple[tuple[str, ...], ...]:
        """The rows behind the fold (empty when the table is not folded)."""
        return self.rows[FOLDED_ROWS_SHOWN:] if self.folded else ()


@dataclass(frozen=True)
class Figure:
    """An inline SVG figure (:mod:`bayesclass.reports.figures`) with its caption.

    Parameters
    ----------
    svg : str
        The SVG document.
    caption : str
        What the figure shows.
    kind : str, default "figure"
        The block's kind, for the page template.
    """

    svg: str
    caption: str
    kind: str = "figure"


@dataclass(frozen=True)
class Section:
    """One section of the page: its anchor, title and blocks in order.

    Parameters
    ----------
    key : str
        The section's anchor on the page.
    title : str
        Its heading.
    blocks : tuple of Text, Table or Figure
        Its content, in order.
    alerts : tuple of str, default ()
        Alerts shown at the top of the page as well.
    """

    key: str
    title: str
    blocks: tuple[Text | Table | Figure, ...]
    alerts: tuple[str, ...] = field(default=())  # shown at the top of the page as well


def number(value: object, spec: str = ".4g") -> str:
    """A table cell: ``-`` for None, ``n/a`` for NaN, ``inf`` kept, else ``format(value, spec)``.

    Parameters
    ----------
    value : object
        None or a real number (anything ``float`` accepts).
    spec : str, default ".4g"
        The format specification of a finite number.

    Returns
    -------
    str
        The formatted cell (``"inf"`` or ``"-inf"`` for infinities).
    """
    if value is None:
        return "-"
    value = float(value)  # type: ignore[arg-type]
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value, spec)


def _interval_cell(row, low: str = "low", high: str = "high") -> str:
    return f"[{number(row[low], '.3g')}, {number(row[high], '.3g')}]" if row.get(low) is not None else "-"


def _estimate_cells(row, kind: str, with_se: bool) -> tuple[str, ...]:
    """A point estimate's cells: its value, then (where its covariance is stored) its SE and Wald interval."""
    if not with_se:
        return (number(row[kind]),)
    return number(row[kind]), number(row.get(f"{kind}_se")), _interval_cell(row, f"{kind}_low", f"{kind}_high")


# -- 0. conclusion ------------------------------------------------------------------------------------------------


def conclusion_section(run: rd.RunEvaluation) -> Section | None:
    """The page's opening: the verdict, the conclusion and the headline comparison; None where there is nothing.

    First the convergence verdict (a red alert with the advice computed from what failed, or one line saying it
    passed, or why there is no verdict); then the headline comparison: the run's own estimates (posterior,
    plug-ins) on each held-out split with the intervals of their mean scores; then the run's findings in a few
    sentences, each with its numbers (:mod:`bayesclass.reports.conclusion` words them) and the findings left out,
    with why.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.

    Returns
    -------
    Section or None
        The ``conclusion`` section (None where the run has no verdict, no conclusion and no held-out scores).
    """
    from bayesclass.inference.evaluation.conclusions import ScoreFinding
    from bayesclass.reports.conclusion import conclusion_omissions, conclusion_sentences, rule_sentence

    sentences = conclusion_sentences(run.conclusion) if run.conclusion is not None else []
    # a verdict (pass or fail) is the conclusion's first sentence: shown once, in the verdict box
    boxed = sentences[0] if sentences and run.convergence is not None and _has_verdict(run) else None
    blocks: list = verdict_blocks(run, sentence=boxed)
    headlines = [headline_table(scores) for scores in run.heldout if scores.own_estimates]
    blocks.extend(replace(table, note="") for table in headlines[:-1])  # the note once, under the last
    blocks.extend(headlines[-1:])
    blocks.extend(Text(sentence) for sentence in sentences[boxed is not None :])
    if run.conclusion is not None and any(isinstance(item, ScoreFinding) for item in run.conclusion.scores):
        blocks.append(Text(rule_sentence()))
    if run.conclusion is not None:
        omitted = conclusion_omissions(run.conclusion)
        if omitted:
            blocks.append(Text("Not concluded: " + "; ".join(omitted) + "."))
    return Section("conclusion", "Conclusion", tuple(blocks)) if blocks else None


def ranking_section(rankings: Sequence[rd.RunRanking], runs: Sequence[rd.RunEvaluation]) -> Section:
    """The opening of a page of several runs scored on the same given rows: one conclusion, one ranking table.

    The conclusion is the best run against the runner-up (paired per-row log losses, worded by
    :func:`~bayesclass.reports.conclusion.score_sentence`) and one line of the runs' convergence verdicts; the table
    ranks the runs, best first: log loss, Brier score and accuracy, each with the standard error of its mean over the
    rows, and the paired difference of per-row log losses to the best with its standard error.

    Parameters
    ----------
    rankings : sequence of RunRanking
        The runs' ranking on each given held-out split.
    runs : sequence of RunEvaluation
        The runs (their convergence verdicts).

    Returns
    -------
    Section
        The ``conclusion`` section.
    """
    from bayesclass.inference.evaluation.conclusions import ConvergenceFinding, ScoreFinding
    from bayesclass.reports.conclusion import score_sentence

    blocks: list = []
    verdicts = {
        run.summary.label: run.conclusion.convergence
        for run in runs
        if run.conclusion is not None and isinstance(run.conclusion.convergence, ConvergenceFinding)
    }
    failed = [label for label, finding in verdicts.items() if finding.verdict == "fail"]
    if failed:
        blocks.append(Text(f"Convergence FAILED for {', '.join(failed)}: their numbers are not to be trusted until a "
                           "rerun passes (each run's section below says what failed).", kind="alert"))  # fmt: skip
    elif any(finding.verdict == "pass" for finding in verdicts.values()):
        passed = [label for label, finding in verdicts.items() if finding.verdict == "pass"]
        blocks.append(Text(f"Convergence: the draws of {', '.join(passed)} pass the verdict.", kind="verdict"))
    for ranking in rankings:
        if not ranking.rows:
            blocks.append(Text(f"No ranking of the runs on {ranking.split}: {ranking.reason}.", kind="alert"))
            continue
        if isinstance(ranking.finding, ScoreFinding):
            blocks.append(Text(score_sentence(ranking.finding, among="the runs")))
        estimates = dict(ranking.estimates)

        def cell(label: str, metric: str, value: float, spec: str, ranking: rd.RunRanking = ranking) -> str:
            error = ranking.standard_errors.get(label, {}).get(metric)
            return number(value, spec) + ("" if error is None else f" ± {number(error, '.2g')}")

        blocks.append(
            Table(
                f"The runs ranked by held-out log loss on {ranking.split} ({ranking.n_rows} rows of "
                f"{ranking.data_name}), best first",
                ("run", "estimate", "log loss", "Brier", "accuracy", "diff", "se"),
                tuple(
                    (
                        row.label,
                        estimates.get(row.label, ""),
                        cell(row.label, "log_loss", row.log_loss, ".4f"),
                        cell(row.label, "brier", row.brier, ".4f"),
                        cell(row.label, "accuracy", row.accuracy, ".3f"),
                        number(row.difference, ".4f") + (" *" if row.verdict == "real" else ""),
                        number(row.standard_error, ".4f"),
                    )
                    for row in ranking.rows
                ),
                note="Each run's own first estimate (its posterior mean probabilities where it has draws); ± one "
                "standard error of the mean over the rows; diff: the mean per-row log loss minus the best run's, se "
                "its standard error (paired rows), * a real difference (beyond its noise and the practical "
                "threshold, as stated above). Each run's sections are folded below.",
            )
        )
    return Section("conclusion", "Conclusion", tuple(blocks))


def _has_verdict(run: rd.RunEvaluation) -> bool:
    """Whether the run's conclusion states a pass or fail verdict (not independent draws, not a stack)."""
    from bayesclass.inference.evaluation.conclusions import ConvergenceFinding

    finding = run.conclusion.convergence if run.conclusion is not None else None
    return isinstance(finding, ConvergenceFinding) and finding.verdict in ("pass", "fail")


def verdict_blocks(run: rd.RunEvaluation, *, sentence: str | None = None) -> list:
    """The verdict line of the page's opening, and the advice box when it failed.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.
    sentence : str, optional
        The verdict's text (the conclusion's convergence sentence, with its numbers); default a short line from
        the run's diagnostics.

    Returns
    -------
    list of Text and Table
        A green "verdict" line (passed), a red alert and the advice (failed), or, without a conclusion to say it,
        one line saying why there is no verdict (independent draws, a point estimate, a stack).
    """
    facts, convergence = run.summary, run.convergence
    if (convergence is None or facts.draws in ("stack", "independent")) and run.conclusion is not None:
        return []  # no verdict to show: the conclusion's first sentence says why
    if facts.draws == "stack":
        return [Text("Verdict: none of its own (a stack of fitted results; each member was diagnosed by its fit).")]
    if facts.draws == "independent":
        return [Text(f"Verdict: none needed. {_capitalised(facts.method_description)}: no sampler to converge.")]
    if convergence is None:
        return [Text(f"Verdict: none. Point estimate only ({facts.method}): no posterior draws to diagnose.")]
    if convergence.passed:
        return [Text(sentence or f"Convergence PASS: {convergence.worst}.", kind="verdict")]
    blocks: list = [Text(sentence or f"Convergence FAIL: {'; '.join(convergence.failures)}.", kind="alert")]
    if convergence.advice:
        blocks.append(_advice_table(convergence.advice))
    return blocks


def headline_table(scores: rd.HeldoutScores) -> Table:
    """The headline comparison: the run's own estimates on one held-out split, with intervals of the mean scores.

    Parameters
    ----------
    scores : HeldoutScores
        The scores of one held-out split.

    Returns
    -------
    Table
        One row per own estimate (posterior, then each point estimate): log loss, Brier and accuracy, each with
        its interval (mean ± z SE over the rows).
    """
    prob = rd.HEADLINE_INTERVAL_PROB
    scored = (("log_loss", "log loss", ".4f"), ("brier", "Brier", ".4f"), ("accuracy", "accuracy", ".3f"))
    metrics = tuple(metric for metric in scored if metric[0] in scores.table.columns)

    def cell(label: str, metric: str, spec: str) -> str:
        value = number(scores.table.loc[label, metric], spec)
        interval = scores.interval(label, metric, prob)
        return value if interval is None else f"{value} [{number(interval[0], spec)}, {number(interval[1], spec)}]"

    rows = tuple((label, *(cell(label, metric, spec) for metric, _, spec in metrics)) for label in scores.own_estimates)
    return Table(
        f"Posterior vs point estimates on {scores.split} ({scores.n_rows} held-out rows of {scores.data_name}): "
        f"mean score [{prob:.0%} interval: mean ± {rd.standard_errors_for(prob):.2f} standard errors over "
        "the rows, cut at the score's range]",
        ("estimate", *(f"{header} (lower is better)" if name != "accuracy" else header for name, header, _ in metrics)),
        rows,
        note="More scores (and the baselines, where scored) are under Predictive performance. '-': no interval "
        "(a per-row score is infinite: an observed class given probability 0).",
    )


# -- 1. summary --------------------------------------------------------------------------------------------------


def summary_section(run: rd.RunEvaluation) -> Section:
    """The summary section: what was fitted, on what, how, and whether it converged.

    Model family, data, method and sampler, seed, versions, timings,
    then the hyperparameters as a table (name, value, the prior they set)
    and the model's prior and likelihood as formulas.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.

    Returns
    -------
    Section
        The ``summary`` section.
    """
    facts = run.summary
    rows = [
        ("run", facts.label),
        ("model family", f"{facts.family} ({facts.family_class})"),
        ("data", f"{facts.data_name or '?'} (fingerprint {facts.data_fingerprint[:16] or '?'})"),
        ("data provenance", facts.data_provenance or "not recorded"),
        (
            "training rows x features",
            f"{facts.n_rows} x {len(facts.feature_names)}: {_listing(facts.feature_names)}",
        ),
        (
            "rows dropped for blank cells",
            f"{facts.dropped_rows} (missing='drop'; blanks per column: "
            + ", ".join(f"{column} {count}" for column, count in facts.blanks_per_column)
            + ")"
            if facts.dropped_rows
            else "none",
        ),
        ("classes", _listing(facts.class_names)),
        ("standardized features", _listing(facts.standardized_features) or "none"),
        ("method", facts.method),
    ]
    if facts.draws != "point":
        rows.append(("sampler settings", json.dumps(facts.sampler_settings, sort_keys=True)))
        if facts.sampler_backend is not None:
            rows.append(("NUTS backend", facts.sampler_backend))
    rows.append(("random seed", str(facts.random_seed)))
    timings = [f"{name.replace('_', ' ')} {number(seconds, '.2f')} s" for name, seconds in facts.timings]
    if facts.compile_cache_hit is not None:
        timings.append(f"compile cache hit: {'yes' if facts.compile_cache_hit else 'no'}")
    rows.append(("timings", ", ".join(timings) or "not recorded"))
    rows.append(("package versions", ", ".join(f"{name} {version}" for name, version in facts.package_versions)))
    rows.append(("fitted at", facts.created_at or "not recorded"))
    blocks: list = [Table("The run", ("item", "value"), tuple(rows), text=True)]
    if facts.hyperparameter_rows:
        blocks.append(
            Table(
                "Hyperparameters and priors",
                ("name", "value", "prior"),
                tuple((name, value, prior or "-") for name, value, prior in facts.hyperparameter_rows),
                note="The prior each hyperparameter sets, as the model states it; the whole model follows.",
                text=True,
            )
        )
    blocks.append(Text("\n".join(facts.prior_formulas), kind="pre"))
    return Section("summary", "Summary", tuple(blocks))


def _listing(names: Sequence[str], limit: int = 20) -> str:
    shown = ", ".join(map(str, names[:limit]))
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


# -- 2. convergence -------------------------------------------------------------------------------------------------

#: what the Convergence section says of independent draws instead of a verdict (after the method's description)
INDEPENDENT_NOTE = (
    ": there is no sampler to converge, and no verdict. The "
    "r_hat and ESS below are shown for completeness; over many parameter elements their worst values cross the "
    "NUTS thresholds by chance (r_hat of independent draws scatters around 1 by about 1/sqrt(draws))."
)


def convergence_section(run: rd.RunEvaluation) -> Section | None:
    """The convergence section: diagnostics per parameter element and of the sampler, with plots.

    r_hat, bulk/tail ESS and MCSE per parameter element (the worst 20 when there are more), divergences, tree
    depth hits, E-BFMI, rank and trace plots of the top-level parameters. A failed verdict is an alert; the advice
    computed from what failed (``Convergence.advice``) is in the page's opening (:func:`verdict_blocks`).

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.

    Returns
    -------
    Section or None
        The ``convergence`` section; None for a run without a posterior.
    """
    convergence = run.convergence
    if convergence is None:
        return None
    table = convergence.table  # every element: the counts
    readable = table if convergence.summary_table is None else convergence.summary_table
    latent = readable[~readable.index.isin(table.index)]  # one row of worst values per latent block
    elements = readable[readable.index.isin(table.index)]
    worst = elements.sort_values("r_hat", ascending=False).index[:10].tolist()
    worst += [name for name in elements.sort_values("ess_bulk").index if name not in worst][: 20 - len(worst)]
    shown = elements.loc[worst] if len(elements) > 20 else elements
    columns = ("mean", "sd", "r_hat", "ess_bulk", "ess_tail", "mcse_mean")
    rows = tuple(
        (str(name), *(number(row[column], ".4g" if column != "r_hat" else ".4f") for column in columns))
        for name, row in shown.iterrows()
    ) + tuple(
        (str(name), "-", "-", *(number(row[column], ".4g" if column != "r_hat" else ".4f") for column in columns[2:]))
        for name, row in latent.iterrows()
    )
    max_r_hat, min_ess = convergence.max_r_hat, convergence.min_ess
    high_r_hat = int((table["r_hat"] > max_r_hat).sum())
    low_ess = int(((table["ess_bulk"] < min_ess) | (table["ess_tail"] < min_ess)).sum())
    undefined = {name: int(table[column].isna().sum()) for name, column in (("r_hat", "r_hat"), ("ESS", "ess_bulk"))}
    not_available = "".join(f", {count} with {name} not available (n/a)" for name, count in undefined.items() if count)
    which = (
        f"the worst {len(shown)} of {len(elements)} parameter elements by r_hat and bulk ESS"
        if len(elements) > 20
        else ""
    )
    if len(latent):
        which = f"{which or 'the elements of ' + ', '.join(convergence.parameter_names)}, then one row per latent block"
    caption = (
        f"Rank-normalised split r_hat (<= {max_r_hat}), bulk and tail ESS (>= {min_ess}) and the MCSE of the mean, "
        "from arviz_stats" + (f"; {which}" if which else "")
    )
    block_notes = "".join(
        f" {name}: its worst values over its elements (largest r_hat and MCSE, smallest ESS; no mean or sd); "
        f"{row['r_hat_failing']} with r_hat > {max_r_hat} or n/a (largest at {row['worst_element']}), "
        f"{row['ess_failing']} with bulk or tail ESS < {min_ess} or n/a (smallest at {row['lowest_ess_element']})."
        for name, row in latent.iterrows()
    )
    if len(latent):
        block_notes += f" Every element's row: diagnose with {spelled('full', True)}."
    blocks: list = []
    alerts: tuple[str, ...] = ()
    if convergence.independent:  # independent exact draws: nothing to converge
        description = _capitalised(run.summary.method_description)
        blocks.append(Text(f"{description}{INDEPENDENT_NOTE} Worst values: {convergence.worst}."))
        blocks.extend(Text(f"{_capitalised(item)}.") for item in convergence.unavailable)  # no verdict to fail
    elif convergence.passed:
        blocks.append(Text(f"Convergence PASS: {convergence.worst}."))
    else:
        message = f"Convergence FAIL: {'; '.join(convergence.failures)}."
        blocks.append(Text(message, kind="alert"))
        alerts = (message + (" What to try: see the Conclusion." if convergence.advice else ""),)
    if convergence.advice and not convergence.independent:  # the box itself opens the page, with the verdict
        blocks.append(Text("What to try, computed from what failed, is at the top of the page under Conclusion."))
    blocks.append(
        Table(
            caption,
            ("parameter", *columns),
            rows,
            note=f"{len(table)} parameter elements: {high_r_hat} with r_hat > {max_r_hat}, {low_ess} with bulk or "
            f"tail ESS < {min_ess}{not_available}.{block_notes}",
        )
    )
    blocks.append(
        Table(
            "NUTS statistics" if convergence.integrates_trajectories else "Sampler statistics",
            ("statistic", "value"),
            _sampler_rows(
                convergence.statistics, method=run.summary.method, description=run.summary.method_description
            ),
            text=True,
        )
    )
    blocks.extend(_chain_figures(convergence, subject=_subject(run)))
    return Section("convergence", "Convergence", tuple(blocks), alerts)


def _advice_table(advice: Sequence[str]) -> Table:
    """The advice box: one row per suggestion computed from what failed (worded for the interface in use)."""
    return Table(
        "What to try, computed from what failed",
        ("suggestion",),
        tuple((line,) for line in advice),
        text=True,
        kind="advice",
    )


def _subject(run: rd.RunEvaluation) -> str:
    """What the run's figures are of, for their titles: "naive_bayes on penguins"."""
    return f"{run.summary.family} on {run.summary.data_name}"


def worst_elements(table, candidates: Sequence[str], limit: int = CHAIN_PANELS) -> list[str]:
    """The ``limit`` rows of the convergence ``table`` among ``candidates`` worst by r_hat or by ESS, worst first.

    Taken in turn from the highest r_hat and from the lowest of bulk and tail ESS (n/a last in both), each
    element once; of rows with the same statistics in every column (a symmetric matrix's mirrored entries) only
    the first.

    Parameters
    ----------
    table : pandas.DataFrame
        The convergence table (``Convergence.table``: index the element labels, columns ``r_hat``, ``ess_bulk``,
        ``ess_tail``).
    candidates : sequence of str
        The element labels that may be chosen (those with draws to plot).
    limit : int
        How many to choose at most.

    Returns
    -------
    list of str
        The chosen labels, worst first.
    """
    allowed = set(candidates)
    rows = table.loc[[label for label in table.index if label in allowed]]
    rows = rows[~rows.duplicated(keep="first")]  # the mirror of a symmetric matrix's entry: the same statistics
    by_r_hat = rows["r_hat"].sort_values(ascending=False, na_position="last", kind="stable").index
    by_ess = rows[["ess_bulk", "ess_tail"]].min(axis=1).sort_values(na_position="last", kind="stable").index
    chosen: list[str] = []
    for pair in zip(by_r_hat, by_ess, strict=True):
        chosen.extend(label for label in pair if label not in chosen)
    return chosen[:limit]


def _chain_figures(convergence: rd.Convergence, *, subject: str) -> list[Figure | Text]:
    posterior = convergence.draws
    candidates = list(figures.element_labels(posterior))
    shown = worst_elements(convergence.table, candidates)
    listing = ", ".join(convergence.parameter_names)
    if len(shown) < len(candidates):
        which = (
            f"the {len(shown)} elements of {listing} with the highest r_hat or lowest ESS, of {len(candidates)} "
            "(the convergence table lists the worst by r_hat and ESS)"
        )
    else:
        which = f"every element of {listing}"
    unavailable = {item.name for item in convergence.figures_unavailable}
    blocks: list[Figure | Text] = [Text(f"{_capitalised(item)}.") for item in convergence.figures_unavailable]
    if "rank plots" not in unavailable:
        n_draws = posterior.sizes["draw"]
        step = figures.rank_thinning(n_draws)
        thinned = (
            f" Every {_ordinal(step)} draw is used ({len(range(0, n_draws, step))} per chain)." if step > 1 else ""
        )
        svg = figures.rank_plot(posterior, shown, thin=step, title=f"{subject} — rank plots")
        blocks.append(
            Figure(
                svg,
                f"Rank plots of {which}, one line per chain (arviz_plots). Each line is how far that chain's ranks "
                "among all chains' draws depart from uniform (its ECDF minus the uniform CDF): chains that sample "
                "the same distribution have uniform ranks, and their lines stay near 0 within the panel's height "
                f"(about what chance allows at the {figures.RANK_ALPHA:.0%} level); a marked point is where a chain "
                f"departs from uniform beyond chance.{thinned}",
            )
        )
    blocks.append(
        Figure(
            figures.trace_plot(posterior, shown, title=f"{subject} — traces"),
            f"Traces of {which} (arviz_plots): per element, the density of each chain's draws (left) and the draws "
            "in order (right). Chains that agree overlap; a trace without trends or long flat stretches mixes well.",
        )
    )
    return blocks


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _capitalised(item: object) -> str:
    """``str(item)`` with its first letter upper-cased (an Unavailable as a sentence; "r_hat" left as it is)."""
    text = str(item)
    return text if text.startswith("r_hat") else text[:1].upper() + text[1:]


def _sampler_rows(stats: rd.SamplerStatistics | None, *, method: str, description: str) -> tuple[tuple[str, str], ...]:
    if stats is None:
        return (("draws", f"{description}: no sampler statistics"),)
    rows = [
        (
            "divergent transitions",
            str(stats.divergences)
            if stats.divergences is not None
            else f"none possible ({method}: no trajectories are integrated)",
        )
    ]
    if stats.hyperparameter_evaluations is not None:
        rows.append(
            ("log densities per sweep (hyperparameter slices)", number(stats.hyperparameter_evaluations, ".1f"))
        )
    if stats.scale_factor_range is not None:
        rows.append(("scale move factor (5% - 95%)", " - ".join(number(v, ".3f") for v in stats.scale_factor_range)))
    if stats.max_treedepth_hits is not None:
        rows.append(("transitions that hit the maximum tree depth", str(stats.max_treedepth_hits)))
    if stats.max_tree_depth is not None:
        rows.append(("maximum tree depth seen", str(stats.max_tree_depth)))
    if stats.bfmi is not None:
        rows.append(("E-BFMI per chain (< 0.3: poor exploration)", ", ".join(number(v, ".3f") for v in stats.bfmi)))
    if stats.step_size is not None:
        rows.append(("step size (mean over draws)", number(stats.step_size, ".3g")))
    return tuple(rows)


# -- 3. posterior vs point estimates ----------------------------------------------------------------------------


def _forest_panels_note(estimates: rd.Estimates) -> str:
    """The forest plot's caption tail: one panel per variable and unit, which are standardised, what is left out."""
    panels = estimates.panels
    if not panels:
        return ""
    text = "; one panel per parameter kind and unit, each on its own axis"
    standardised = [panel.title for panel in panels if panel.standardised]
    if standardised:
        text += f"; {', '.join(standardised)}: (value - posterior mean) / posterior sd, their inputs' units differ"
    if estimates.forest_left_out:
        drawn = len(estimates.rows) - estimates.forest_left_out
        text += (
            f"; {drawn} of the {len(estimates.rows)} parameters are drawn, those furthest from 0 (|posterior mean| / "
            f"posterior sd, or an estimate over its SE); the other {estimates.forest_left_out} are left out of the "
            "figure, not of the table"
        )
    return text


def estimates_section(run: rd.RunEvaluation, *, interval_prob: float) -> Section | None:
    """The estimates section: the posterior beside every stored point estimate.

    Forest plot of the posterior (mean and interval) with every stored point estimate as a marker, the same as a
    table, and one explicit line for each estimate that does not exist, with why.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.
    interval_prob : float
        The probability of the central (equal-tailed) credible intervals and bands, e.g. 0.89.

    Returns
    -------
    Section
        The ``estimates`` section.
    """
    estimates = run.estimates
    rows, kinds = list(estimates.rows), estimates.kinds
    if not rows:  # a stack: no parameters of its own (its members' are in their own reports)
        return None
    interval = f"{interval_prob:.0%} ETI"
    blocks: list = []
    for kind, reason in estimates.status:
        if reason != "exists":
            blocks.append(
                Text(f"{estimate_label(kind)} is not shown: {reason}", kind="alert" if kind == "mle" else "text")
            )
    with_se = {kind: any(row.get(f"{kind}_se") is not None for row in rows) for kind in kinds}
    blocks.append(
        Figure(
            figures.forest_plot(
                estimates.panels or rows,
                markers={kind: estimate_label(kind) for kind in kinds},
                interval_label=interval,
                wald_label=f"{interval_prob:.0%} Wald",
                title=f"{_subject(run)} — posterior and point estimates",
            ),
            (f"Posterior mean and {interval} (line) " if estimates.has_posterior else "")
            + (f"with {', '.join(estimate_label(kind) for kind in kinds)} as markers" if kinds else "")
            + (
                f"; below each posterior line, the {interval_prob:.0%} Wald interval (estimate -+ z SE) of "
                f"{', '.join(estimate_label(kind) for kind in kinds if with_se[kind])} in its colour"
                if any(with_se.values())
                else ""
            )
            + _forest_panels_note(estimates),
        )
    )
    wald = f"{interval_prob:.0%} Wald"
    header = (
        "parameter",
        "post. mean",
        "post. sd",
        interval,
        f"{interval_prob:.0%} HDI",
        *(
            label
            for kind in kinds
            for label in (
                (estimate_label(kind), f"{estimate_label(kind)} SE", f"{estimate_label(kind)} {wald}")
                if with_se[kind]
                else (estimate_label(kind),)
            )
        ),
    )
    table_rows = tuple(
        (
            str(row["parameter"]),
            number(row["mean"]),
            number(row["sd"]),
            _interval_cell(row),
            _interval_cell(row, "hdi_low", "hdi_high"),
            *(cell for kind in kinds for cell in _estimate_cells(row, kind, with_se[kind])),
        )
        for row in rows[:MAX_TABLE_ROWS]
    )
    notes = [f"{estimate_label(kind)}: {text}." for kind, text in estimates.covariance_notes]
    if len(rows) > MAX_TABLE_ROWS:
        notes.append(f"{len(rows) - MAX_TABLE_ROWS} more rows are in the saved result.")
    note = " ".join(notes)
    caption = f"Parameters: posterior mean, sd, {interval} and {interval_prob:.0%} HDI beside each point estimate" + (
        " with its SE and Wald interval (estimate -+ z SE)" if any(with_se.values()) else ""
    )
    blocks.append(Table(caption, header, table_rows, note))
    return Section("estimates", "Posterior vs point estimates", tuple(blocks))


# -- 4. predictive performance -------------------------------------------------------------------------------------


def performance_section(run: rd.RunEvaluation, *, interval_prob: float) -> Section:
    """The predictive performance section: held-out scores and PSIS-LOO.

    Held-out scores of every estimate (and baseline) as a table and bars with standard errors; PSIS-LOO with
    the Pareto k of every training row.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.
    interval_prob : float
        The probability of the central (equal-tailed) credible intervals and bands, e.g. 0.89.

    Returns
    -------
    Section
        The ``performance`` section.
    """
    from bayesclass.reports.comparison import zero_probability_notes

    blocks: list = []
    if not run.heldout:
        blocks.append(Text(f"No held-out scores: {run.no_heldout_reason}."))
    for scores in run.heldout:
        table = scores.table
        columns = [(name, header, spec) for name, header, spec in SCORE_COLUMNS if name in table.columns]
        columns = [column for column in columns if not table[column[0]].isna().all()]
        rows = tuple(
            (str(label), *(number(row[name], spec) for name, _, spec in columns)) for label, row in table.iterrows()
        )
        descriptions = dict(scores.descriptions)
        notes = [f"{header}: {descriptions[name]}" for name, header, _ in columns if name in descriptions]
        notes += zero_probability_notes(table)
        if scores.left_out_baselines:
            notes.append(f"baselines left out: {scores.left_out_baselines}")
        blocks.append(
            Table(
                f"Held-out scores on {scores.split} ({scores.n_rows} rows of {scores.data_name}); '-': the estimate "
                f"gives no probabilities; the posterior is its mean probabilities (interval: {interval_prob:.0%} ETI)",
                ("estimate", *(header for _, header, _ in columns)),
                rows,
                note="; ".join(notes),
            )
        )
        blocks.append(_score_bars(scores, subject=_subject(run)))
    blocks.extend(_loo_blocks(run))
    return Section("performance", "Predictive performance", tuple(blocks))


def _score_bars(scores: rd.HeldoutScores, *, subject: str) -> Figure:
    errors = scores.standard_errors
    metrics = ("log_loss", "brier", "accuracy")
    values = {
        str(label): {name: (float(row[name]), errors.get(str(label), {}).get(name)) for name in metrics}
        for label, row in scores.table.iterrows()
    }
    with figures.figure_title(f"{subject} — held-out scores on {scores.split}"):
        svg = figures.score_bars(
            values, metrics=(("log_loss", "log loss"), ("brier", "Brier"), ("accuracy", "accuracy"))
        )
    return Figure(
        svg,
        f"Held-out scores on {scores.split}; error bars: one standard error of the mean over the {scores.n_rows} rows "
        "(each estimate's own: overlapping bars do not mean equal scores; the paired differences are in the "
        "conclusion)",
    )


def _loo_blocks(run: rd.RunEvaluation) -> list:
    summary, limit = run.loo, run.pareto_k_limit
    if summary is None:
        return (
            [Text("LOO needs posterior draws; this result is a point estimate.")]
            if run.summary.draws == "point"
            else []
        )
    if isinstance(summary, rd.Unavailable):
        return [Text(f"{_capitalised(summary)}.", kind="alert")]
    with figures.figure_title(f"{_subject(run)} — PSIS-LOO Pareto k"):
        pareto_k = figures.pareto_k_plot(summary.pareto_k, threshold=limit)
    return [
        Table(
            "PSIS-LOO of the training rows (arviz_stats.loo): expected log pointwise predictive density of "
            "log P(y | x) and its standard error",
            ("elpd_loo", "se", "p_loo", f"rows with Pareto k > {limit}", "rows", "draws"),
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
        ),
        Figure(
            pareto_k,
            f"Pareto k of each training row, with the {limit} line",
        ),
    ]


# -- 5. calibration -------------------------------------------------------------------------------------------------


def calibration_section(run: rd.RunEvaluation) -> Section:
    """The calibration section: PAV reliability diagrams with consistency bands.

    Posterior predictive draws and replicates of each point estimate's plug-in probabilities, side by side.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.

    Returns
    -------
    Section
        The ``calibration`` section.
    """
    calibration = run.calibration
    proba = {estimate_label(kind): values for kind, values in calibration.proba.items()}
    class_names = list(calibration.class_names)
    with figures.figure_title(f"{_subject(run)} — calibration on {calibration.rows}"):
        svg = figures.reliability_plot(
            proba,
            calibration.y,
            class_names=class_names,
            random_seed=calibration.replicate_seed,
            classes=calibration.classes,
        )
    shown = [class_names[k] for k in calibration.classes]
    picked = (
        f" (one-vs-others, one panel per class; {len(shown)} of the {len(class_names)} classes, those with the most "
        f"rows here: {', '.join(shown)}; a figure draws at most {rd.MAX_CALIBRATION_PANELS} panels)"
        if len(class_names) > 2 and len(shown) < len(class_names)
        else " (one-vs-others, one panel per class)"
        if len(class_names) > 2
        else ""
    )
    blocks: list = [
        Figure(
            svg,
            f"Calibration of P(class | x) on {calibration.rows} ({calibration.n_rows} rows; arviz_plots "
            "plot_ppc_pava): x, the forecast probability; y, the conditional event probability (CEP: how often the "
            "class occurred at that forecast, fitted by PAV isotonic regression); solid line: the observed labels; "
            "band: the same fit on outcomes replicated from the estimate (posterior predictive draws, or a point "
            "estimate's plug-in probabilities); dashed diagonal: perfect calibration. A solid line outside its band "
            "is miscalibration beyond chance" + picked,
        )
    ]
    if calibration.skipped:
        skipped = ", ".join(estimate_label(kind) for kind in calibration.skipped)
        blocks.append(Text(f"Not shown: {skipped} (probability 0 under every class on some rows)."))
    return Section("calibration", "Calibration", tuple(blocks))


# -- 6. decision boundary -------------------------------------------------------------------------------------------


def decision_boundary_section(run: rd.RunEvaluation, *, interval_prob: float) -> Section | None:
    """The decision boundary section, over two features or along the one input of a latent family.

    Two features: posterior mean P(class | x) on a grid, the boundary and its credible band, point-estimate
    boundaries, the training points, and the family's derived quantities. One input of a latent family: the
    latent f and the probability curve with their bands.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.
    interval_prob : float
        The probability of the central (equal-tailed) credible intervals and bands, e.g. 0.89.

    Returns
    -------
    Section or None
        The ``boundary`` section; None where neither applies.
    """
    figure = run.boundary
    if figure is None:
        return None
    if isinstance(figure, rd.LatentCurve):
        return _latent_curve_section(figure, interval_prob=interval_prob, subject=_subject(run))
    features = list(figure.features)
    if not figure.numeric:
        return Section(
            "boundary",
            "Decision boundary",
            (Text(f"No decision boundary: {features} must be numeric features (kinds {list(figure.kinds)})."),),
        )
    axes, proba_draws, point_proba, X, y = figure.axes, figure.proba_draws, figure.point_proba, figure.X, figure.y
    # a numeric Boundary carries its grid, draws and training points (report_plots fills them together)
    assert axes is not None and proba_draws is not None and point_proba is not None and X is not None and y is not None
    caption = (
        f"Posterior mean P(class | x) over {features[0]} and {features[1]} ({proba_draws.shape[0]} evenly "
        f"spaced draws), the boundary with its {interval_prob:.0%} credible band, the point estimates' boundaries, "
        "the training points"
        + (
            f"; the other features held at their training median (mode for categorical): {_listing(figure.held_fixed)}"
            if figure.held_fixed
            else ""
        )
    )
    with figures.figure_title(f"{_subject(run)} — decision boundary"):
        svg = figures.boundary_plot(
            axes,
            proba_draws,
            point_proba={estimate_label(kind): values for kind, values in point_proba.items()},
            X=X,
            y=y,
            class_names=list(figure.class_names),
            feature_names=(features[0], features[1]),
            interval_prob=interval_prob,
        )
    blocks: list = [Figure(svg, caption)]
    if figure.derived is not None:
        blocks.append(_derived_table(figure.derived, interval_prob=interval_prob))
    return Section("boundary", "Decision boundary", tuple(blocks))


def _derived_table(derived: rd.DerivedQuantities, *, interval_prob: float) -> Table:
    """The family's derived quantities (its title), posterior beside the point estimates."""
    interval = f"{interval_prob:.0%} ETI"
    return Table(
        f"{derived.title}; posterior mean and {interval} beside the point estimates, in the model's inputs"
        + (" (standardised features)" if derived.standardized else ""),
        ("quantity", "post. mean", interval, *(estimate_label(kind) for kind in derived.kinds)),
        tuple(
            (
                str(row["parameter"]),
                number(row["mean"]),
                _interval_cell(row),
                *(number(row[kind]) for kind in derived.kinds),
            )
            for row in derived.rows[:MAX_TABLE_ROWS]
        ),
    )


def _latent_curve_section(curve: rd.LatentCurve, *, interval_prob: float, subject: str) -> Section:
    """One input: latent f and P(class 1 | x) along the input, with bands over draws."""
    with figures.figure_title(f"{subject} — latent function"):
        svg = figures.latent_curve_plot(
            curve.x,
            curve.latent_draws,
            curve.proba_draws,
            X=curve.X,
            y=curve.y,
            true_points=None if curve.true_latent is None else (curve.X, curve.true_latent),
            point_latent={estimate_label(kind): values for kind, values in curve.point_latent.items()},
            point_proba={estimate_label(kind): values for kind, values in curve.point_proba.items()},
            interval_prob=interval_prob,
            feature_name=curve.feature_name,
            class_names=list(curve.class_names),
        )
    caption = (
        f"Latent f and P(class 1 | {curve.feature_name}) with their {interval_prob:.0%} bands over posterior draws, "
        "the point estimates dashed"
        + ("; the true latent of the generator at the training inputs (dots)" if curve.true_latent is not None else "")
    )
    return Section("boundary", "Decision boundary", (Figure(svg, caption),))


# -- 7. generative checks --------------------------------------------------------------------------------------------


def generative_section(run: rd.RunEvaluation) -> Section | None:
    """The generative checks section of a generative family.

    Replicated vs observed per-class feature statistics and their posterior predictive p-values.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.

    Returns
    -------
    Section or None
        The ``generative`` section; None for a discriminative family.
    """
    check = run.generative
    if check is None:
        return None
    cells = check.cells
    with figures.figure_title(f"{_subject(run)} — generative checks"):
        svg = figures.generative_check_plot(check.check)
    flagged = sum(1 for cell in cells if not 0.025 <= cell[4] <= 0.975)
    rows = tuple(
        (c, f, s, number(o), number(p, ".3f") + (" *" if not 0.025 <= p <= 0.975 else ""))
        for c, f, s, o, p in cells[:MAX_TABLE_ROWS]
    )
    return Section(
        "generative",
        "Generative checks",
        (
            Text(
                f"{flagged} of {len(cells)} class x feature statistics flagged (* : p outside [0.025, 0.975]); "
                f"{check.n_replicates} replicated training sets from the {check.source}, with the real labels "
                "(seed 001 §B.1)."
            ),
            Figure(
                svg,
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


def decisions_section(run: rd.RunEvaluation) -> Section | None:
    """The decisions section: Bayes decisions under the run's loss matrix.

    The loss matrix, the mean loss of the Bayes decisions of every estimate on the held-out rows, and each
    estimate's confusion matrix.

    Parameters
    ----------
    run : RunEvaluation
        The run's computed evaluation.

    Returns
    -------
    Section or None
        The ``decisions`` section; None without a loss matrix.
    """
    decisions = run.decisions
    if decisions is None:
        return None
    class_names = decisions.class_names
    matrix = decisions.loss_matrix
    blocks: list = [
        Table(
            "Loss matrix L[true, decision] (rows: true class; columns: decision)",
            ("true \\ decision", *class_names),
            tuple((name, *(number(v, "g") for v in matrix[k])) for k, name in enumerate(class_names)),
        )
    ]
    if not decisions.splits:
        blocks.append(Text("Decisions are scored on held-out rows; there are none (give --data)."))
    for split in decisions.splits:
        rows = []
        for row in split.rows:
            cells = [row.label, number(row.mean_loss, ".4f")]  # over the decided rows (a NaN row has no decision)
            if split.has_posterior:
                cells.append(number(row.posterior_expected_loss, ".4f"))
            rows.append((*cells, str(row.n_undecided)))
            blocks.append(_confusion(row, split.split, class_names))
        header = ("estimate", "mean loss", *(("posterior expected loss",) if split.has_posterior else ()))
        blocks.insert(
            1,
            Table(
                f"Loss of the decisions on {split.split} ({split.n_rows} rows): each estimate decides by least "
                "expected loss under its own probabilities (the posterior: the Bayes decision under the posterior "
                "mean; a point estimate: the plug-in decision). Mean loss: the average L[true, decision] over the "
                "decided rows; posterior expected loss: the average of sum_k L[k, decision] P(k | x) under the "
                "posterior mean probabilities, which the Bayes decisions minimise row by row",
                (*header, "rows undecided"),
                tuple(rows),
            ),
        )
    return Section("decisions", "Decisions", tuple(blocks))


def _confusion(row: rd.DecisionRow, split: str, class_names: tuple[str, ...]) -> Table:
    return Table(
        f"Confusion matrix of {row.label} on {split} (rows: true class; columns: decision)",
        ("true \\ decision", *class_names),
        tuple((name, *(str(int(v)) for v in row.confusion[k])) for k, name in enumerate(class_names)),
        compact=True,
    )
