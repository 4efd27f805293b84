"""Plain-text renderings of computed evaluations, for the terminal (the command line prints them).

Each function formats what it is given and computes nothing: no fitting, no sampling, no random numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from bayesclass.inference.evaluation.report_data import GenerativeCheck
from bayesclass.inference.result import result_info, stack_info

__all__ = ["format_datasets", "format_loo", "format_predictive_check", "format_stack"]

_FLAG_LOW, _FLAG_HIGH = 0.025, 0.975  # a p-value outside [0.025, 0.975] is flagged
_LONGEST_TABLE = 60  # a table longer than this (e.g. 64 pixels x 10 digits) lists the flagged statistics only


class _LooSummary(Protocol):
    """What :func:`format_loo` reads of a :class:`~bayesclass.inference.criticism.loo.LooSummary`.

    A protocol, so that reports need not import criticism (which draws).
    """

    @property
    def n_high_k(self) -> int:
        """Rows with a Pareto k above the limit."""

    @property
    def n_rows(self) -> int:
        """Rows the estimate is computed from."""

    @property
    def n_samples(self) -> int:
        """Draws the estimate is computed from."""

    @property
    def good_k(self) -> float:
        """ArviZ's sample-size dependent threshold of Pareto k."""

    @property
    def notes(self) -> tuple[str, ...]:
        """One line per warning the computation raised."""


def format_datasets(datasets: Iterable) -> str:
    """The table of built-in datasets (:func:`bayesclass.data.available`).

    Parameters
    ----------
    datasets : iterable of DatasetInfo
        The catalogue entries (name, rows, features, classes, description).

    Returns
    -------
    str
        A header line, then one line per data set: name, rows, features, classes and description.
    """
    lines = [f"{'name':<20} {'rows':>9} {'features':>8} {'classes':>7}  description"]
    for info in datasets:
        lines.append(f"{info.name:<20} {info.n_obs!s:>9} {info.n_features:>8} {info.n_classes:>7}  {info.description}")
    return "\n".join(lines)


def format_predictive_check(check: GenerativeCheck) -> str:
    """The text of a posterior predictive check (:func:`bayesclass.inference.posterior_predictive_check`).

    Per statistic, how many class x feature statistics apply and how many are flagged (p outside
    [0.025, 0.975], with p = P(T_rep > T_obs) + P(T_rep = T_obs)/2); then the table of (class, feature,
    statistic, observed value, p), or only its flagged rows, most extreme first, when it is longer than 60 rows.

    Parameters
    ----------
    check : GenerativeCheck
        The check's cells and counts
        (:func:`bayesclass.inference.evaluation.report_evaluation.predictive_check_record`).

    Returns
    -------
    str
        The text, lines joined by newlines; a flagged p is marked ``*``.
    """
    lines = [
        f"posterior predictive check ({check.n_replicates} replicates from the {check.source}); "
        "p = P(T_rep > T_obs) + P(T_rep = T_obs)/2, * outside [0.025, 0.975]"
    ]
    cells = check.cells_in_order  # (class, feature or level, statistic, observed, p)
    for statistic, kinds, n_applicable in check.statistics:
        n_flagged = sum(1 for cell in cells if cell[2] == statistic and not _FLAG_LOW <= cell[4] <= _FLAG_HIGH)
        lines.append(
            f"{statistic} ({', '.join(kinds)}): {n_applicable} class x feature statistics, {n_flagged} flagged"
        )
    flagged = [cell for cell in cells if not _FLAG_LOW <= cell[4] <= _FLAG_HIGH]
    longest = _LONGEST_TABLE
    shown = cells if len(cells) <= longest else sorted(flagged, key=lambda cell: min(cell[4], 1 - cell[4]))
    if len(cells) > longest:
        lines.append(f"the flagged statistics, most extreme first (first {longest}):" if flagged else "none flagged")
    if shown:
        lines.append(f"{'class':<16} {'feature':<28} {'statistic':<16} {'observed':>11} {'p':>7}")
    for class_name, label, statistic, value, p in shown[:longest]:
        mark = "*" if not _FLAG_LOW <= p <= _FLAG_HIGH else ""
        lines.append(f"{class_name[:16]:<16} {label[:28]:<28} {statistic:<16} {value:>11.4g} {p:>7.3f}{mark}")
    lines.append(f"{len(flagged)} of {len(cells)} statistics flagged")
    return "\n".join(lines)


def format_loo(results: Mapping[str, object], summaries: Mapping[str, _LooSummary], table=None) -> str:
    """PSIS-LOO of saved results, then their comparison.

    Per result (by name), its model, method and data, its
    :class:`~bayesclass.inference.criticism.loo.LooSummary`, its rows of high Pareto k and its notes (the
    warnings the computation raised, one line each); then, given, the comparison ``table``
    (:func:`bayesclass.inference.criticism.loo.compare`), best first, and the notes of its ``warning`` column
    that are not already shown above.

    Parameters
    ----------
    results : Mapping of str to result
        The loaded results by name (a path as given); each is read with
        :func:`~bayesclass.inference.result.result_info`.
    summaries : Mapping of str to LooSummary
        The PSIS-LOO summary of each result, by the same names, in the order shown.
    table : pandas.DataFrame or None, default None
        The comparison of the results, best first (None: no comparison, e.g. for one result).

    Returns
    -------
    str
        The text, lines joined by newlines.
    """
    lines = []
    for name, summary in summaries.items():
        info = result_info(results[name])
        lines.append(f"{name} ({info.model.name}, {info.method}, data {info.data.name}):")
        lines.append(f"  {summary}")
        lines.append(
            f"  rows with Pareto k > 0.7: {summary.n_high_k} of {summary.n_rows} (ArviZ's threshold for "
            f"{summary.n_samples} draws: {summary.good_k:.2f})"
        )
        lines += [f"  note: {note}" for note in summary.notes]
    if table is not None:
        columns = [column for column in ("rank", "elpd", "se", "p", "elpd_diff", "dse", "weight") if column in table]
        lines.append("\ncomparison (arviz_stats.compare, stacking weights; best first):")
        lines.append(table[columns].to_string(float_format=lambda value: f"{value:.3f}"))
        extra = []  # the comparison's own notes (each result's were shown with its summary)
        for name, warning in table["warning"].items() if "warning" in table else ():
            shown = "; ".join(summaries[name].notes) if name in summaries else ""
            extra.append(warning[len(shown) :].lstrip("; ") if warning.startswith(shown) else warning)
        lines += [f"  note: {note}" for note in dict.fromkeys(extra) if note]
    return "\n".join(lines)


def format_stack(stack) -> str:
    """A stack's members with their weights and PSIS-LOO, one line each, heaviest first.

    Parameters
    ----------
    stack : xarray.DataTree
        A stack (:func:`bayesclass.inference.stacking.stack`).

    Returns
    -------
    str
        The text, lines joined by newlines.
    """
    info = stack_info(stack)
    rows = sorted(
        zip(info.labels, info.weights, info.elpd_loo, info.elpd_se, strict=True),
        key=lambda row: -row[1],
    )
    width = max(len(label) for label in info.labels)
    lines = [f"stack of {len(info.labels)} results by {info.method} weights (arviz_stats.compare):"]
    lines += [
        f"  {label:<{width}}  weight {weight:.4f}  elpd_loo {elpd:.2f} (se {se:.2f})"
        for label, weight, elpd, se in rows
    ]
    return "\n".join(lines)
