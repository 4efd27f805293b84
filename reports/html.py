"""One self-contained HTML page rendered from a computed evaluation.

``render_report`` returns it, ``write_report`` saves it.

The page opens offline: figures are inline SVG images (``data:`` URLs), the style sheet is inline, and nothing
is loaded from the network (a Content-Security-Policy forbids scripts and any source but ``data:`` images).
Every string from the user (feature, class and data names, paths, attrs) goes through jinja2's autoescape.
The output is byte-identical for the same inputs, except the one line under the title that says when and how
fast it was generated (``<p class="generated">``).

Sections (each only where it applies; :mod:`bayesclass.reports.sections` renders them from
:class:`~bayesclass.inference.evaluation.report_data.ReportData`, which
:func:`~bayesclass.inference.evaluation.report_evaluation.evaluate_for_report` computes): conclusion, summary,
convergence, posterior vs point estimates, predictive performance (held-out scores, PSIS-LOO; several runs: their LOO
comparison), calibration, decision boundary, generative checks, decisions, warnings. ``bayesclass.report``
composes the two steps.
"""

from __future__ import annotations

import base64
import datetime
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bayesclass.inference.evaluation import report_data as rd
from bayesclass.inference.io import atomic_write
from bayesclass.reports import sections as sec
from bayesclass.reports.conclusion import pareto_sentence

__all__ = [
    "OPENING_KEY",
    "SECTION_TITLES",
    "PageSection",
    "figures_first",
    "render_page",
    "render_report",
    "write_report",
]

#: the section a run's page opens with, above the contents (its verdict replaces the alerts at the top)
OPENING_KEY = "conclusion"

#: the section titles in page order (a run's sections carry its label when the page holds several runs)
SECTION_TITLES = {
    "comparison": "Model comparison",
    "conclusion": "Conclusion",
    "summary": "Summary",
    "convergence": "Convergence",
    "estimates": "Posterior vs point estimates",
    "performance": "Predictive performance",
    "calibration": "Calibration",
    "boundary": "Decision boundary",
    "generative": "Generative checks",
    "decisions": "Decisions",
    "warnings": "Warnings",
}


@dataclass(frozen=True)
class PageSection:
    """A section of the page: its anchor, heading and blocks.

    Parameters
    ----------
    anchor : str
        The section's anchor (``id``) on the page.
    heading : str
        Its heading (and entry in the contents).
    blocks : tuple
        Its :class:`~bayesclass.reports.sections.Text`, :class:`~bayesclass.reports.sections.Table` and
        :class:`~bayesclass.reports.sections.Figure` blocks, in order.
    fold : str, default ""
        Shown folded (HTML ``<details>``) behind this label, with the sections next to it of the same label ("":
        shown).
    """

    anchor: str
    heading: str
    blocks: tuple
    fold: str = ""


def render_report(
    data: rd.ReportData,
    *,
    title: str | None = None,
    extra_warnings: Sequence[str] = (),
    started: float | None = None,
) -> str:
    """The HTML page of a computed evaluation.

    Parameters
    ----------
    data : ReportData
        :func:`bayesclass.inference.evaluation.report_evaluation.evaluate_for_report` of the runs.
    title : str, optional
        The page title (default: the runs' models and data).
    extra_warnings : sequence of str
        Warnings raised before the report (e.g. by the fit that ``bayesclass compare`` just ran), listed verbatim.
    started : float, optional
        A :func:`time.perf_counter` value when the report was begun (the page says how long it took).

    Returns
    -------
    str
        The page.
    """
    started = time.perf_counter() if started is None else started
    several = len(data.runs) > 1
    ranked = bool(data.ranking)  # several runs on the same given rows: one conclusion, the runs folded below it
    opening: list[PageSection] = []
    page_sections: list[PageSection] = []
    alerts: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if ranked:
            ranking = sec.ranking_section(data.ranking, data.runs)
            opening.append(PageSection(ranking.key, ranking.title, ranking.blocks))
        if data.comparison is not None:
            (page_sections if ranked else opening).append(_comparison_section(data.comparison))
        for index, run in enumerate(data.runs):
            label = run.summary.label
            sections = _run_sections(run, interval_prob=data.interval_prob)
            opens = any(section.key == OPENING_KEY for section in sections)  # its verdict is stated first
            fold = f"{label}: {', '.join(section.title for section in sections)}" if ranked else ""
            for section in sections:
                if not opens:
                    alerts.extend(f"{label}: {alert}" if several else alert for alert in section.alerts)
                heading = section.title if not several else f"{section.title}: {label}"
                page_section = PageSection(f"run{index}-{section.key}", heading, figures_first(section.blocks), fold)
                (opening if section.key == OPENING_KEY and not ranked else page_sections).append(page_section)
    raised = [*data.warnings, *(f"{w.category.__name__}: {w.message}" for w in caught)]
    fit_warnings = [(run.summary.label, message) for run in data.runs for message in run.fit_warnings]
    unreliable = [
        f"PSIS-LOO of {run.summary.label}: {pareto_sentence(run.conclusion.pareto)}"
        for run in data.runs
        if run.conclusion is not None and run.conclusion.pareto is not None and not run.conclusion.pareto.reliable
    ]
    page_sections.append(_warnings_section(fit_warnings, list(extra_warnings), raised, unreliable))
    if title is None:
        title = "bayesclass report: " + "; ".join(
            f"{run.summary.family} on {run.summary.data_name or '?'}" for run in data.runs
        )
    return render_page(
        title, page_sections, alerts=alerts, started=started, version=data.bayesclass_version, opening=opening
    )


def render_page(
    title: str,
    sections: Sequence[PageSection],
    *,
    alerts: Sequence[str] = (),
    started: float,
    version: str = "",
    opening: Sequence[PageSection] = (),
) -> str:
    """The page around ``sections`` (the run report's, a study report's).

    Title, the one provenance line (when and how fast it was generated, and by which bayesclass), alerts, the
    opening sections (what a reader needs first: the conclusion, the verdict, the headline comparison), the
    contents of the other sections, then those sections.

    Parameters
    ----------
    title : str
        The page title.
    sections : sequence of PageSection
        The sections in page order.
    alerts : sequence of str, default ()
        Alerts shown at the top of the page.
    started : float
        A :func:`time.perf_counter` value when the page was begun (the page says how long it took).
    version : str, default ""
        The bayesclass that renders it ("" for unknown).
    opening : sequence of PageSection, default ()
        The sections shown above the contents.

    Returns
    -------
    str
        The page as HTML text.
    """
    seconds = time.perf_counter() - started
    generated = (
        f"Generated by bayesclass {version or '(version unknown)'} on "
        f"{datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')} in {seconds:.1f} s."
    )
    groups: list[tuple[str, list[PageSection]]] = []  # runs of sections with the same fold label
    for section in sections:
        if groups and section.fold and groups[-1][0] == section.fold:
            groups[-1][1].append(section)
        else:
            groups.append((section.fold, [section]))
    return _template().render(
        title=title, generated=generated, alerts=list(alerts), opening=list(opening), sections=list(sections),
        groups=groups,
    )  # fmt: skip


def write_report(path: str | Path, page: str) -> Path:
    """Write ``page`` (from :func:`bayesclass.report`) to ``path`` atomically.

    An interrupted write leaves no partial file and an earlier report as it was.

    Parameters
    ----------
    path : str or pathlib.Path
        Where to write; it must end in ``.html`` or ``.htm``.
    page : str
        The page as HTML text.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        If ``path`` does not end in ``.html`` or ``.htm``.
    """
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"report path {str(path)!r} must end in .html")
    with atomic_write(path) as temporary:
        temporary.write_text(page, encoding="utf-8")
    return path


def figures_first(blocks: Sequence) -> tuple:
    """``blocks`` with every figure moved above the tables right before it (a figure stops at text or advice).

    A section shows what its numbers look like before it lists them: each figure is moved up past the run of
    ordinary tables just above it, not past a paragraph, an alert, another figure or an advice box.

    Parameters
    ----------
    blocks : sequence
        A section's blocks in the order its function built them.

    Returns
    -------
    tuple
        The same blocks, figures first within each run of tables.
    """
    ordered: list = []
    for block in blocks:
        position = len(ordered)
        if block.kind == "figure":
            while position and ordered[position - 1].kind == "table":
                position -= 1
        ordered.insert(position, block)
    return tuple(ordered)


# -- sections ------------------------------------------------------------------------------------------------------


def _run_sections(run: rd.RunEvaluation, *, interval_prob: float) -> list[sec.Section]:
    sections = [
        sec.conclusion_section(run),
        sec.summary_section(run),
        sec.convergence_section(run),
        sec.estimates_section(run, interval_prob=interval_prob),
        sec.performance_section(run, interval_prob=interval_prob),
        sec.calibration_section(run),
        sec.decision_boundary_section(run, interval_prob=interval_prob),
        sec.generative_section(run),
        sec.decisions_section(run),
    ]
    return [section for section in sections if section is not None]


def _comparison_section(comparison: rd.LooComparison) -> PageSection:
    """PSIS-LOO comparison of several runs fitted on the same rows (arviz_stats.compare), or why there is none."""
    title = SECTION_TITLES["comparison"]
    table = comparison.table
    if table is None:
        return PageSection("comparison", title, (sec.Text(f"No LOO comparison: {comparison.reason}."),))
    columns = [column for column in ("rank", "elpd", "se", "p", "elpd_diff", "dse", "weight") if column in table]
    rows = tuple(
        (str(label), *(sec.number(row[column], ".0f" if column == "rank" else ".3f") for column in columns))
        for label, row in table.iterrows()
    )
    caption = (
        "PSIS-LOO comparison of the runs fitted on the same rows (arviz_stats.compare): elpd_loo, its standard "
        "error, p_loo, the difference to the best and its standard error, stacking weights; best first"
    )
    return PageSection("comparison", title, (sec.Table(caption, ("run", *columns), rows),))


def _warnings_section(fit_warnings, extra, raised, unreliable=()) -> PageSection:
    lines = [f"fit of {label}: {message}" for label, message in fit_warnings]
    lines += list(unreliable)
    lines += [f"before the report: {message}" for message in extra]
    lines += [f"report (checks, scores, figures): {message}" for message in raised]
    unique = list(dict.fromkeys(lines))
    blocks = (sec.Text("\n".join(unique), kind="pre"),) if unique else (sec.Text("No warnings were raised."),)
    return PageSection("warnings", SECTION_TITLES["warnings"], blocks)


def _template():
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("bayesclass.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    environment.filters["svg_base64"] = lambda svg: base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return environment.get_template("report.html.j2")
