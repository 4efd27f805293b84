"""The plain-text comparison of several families that ``bayesclass compare --model all`` prints.

Renders a :class:`~bayesclass.inference.evaluation.model_comparison.ModelComparison` (computed by
:func:`~bayesclass.inference.evaluation.model_comparison.compare_models`): the families fitted and those that could
not take the data (with their reasons), the PSIS-LOO ranking beside the held-out ranking of the validation rows,
the test rows' ranking, and a few sentences built only from those numbers. Nothing here computes a number.
"""

from __future__ import annotations

import math
from itertools import zip_longest

from bayesclass.inference.evaluation.conclusions import ScoreFinding
from bayesclass.inference.evaluation.model_comparison import (
    PARETO_K_LIMIT,
    HeldoutRow,
    LooRow,
    ModelComparison,
    Ranking,
)
from bayesclass.inference.result import result_info
from bayesclass.reports.conclusion import VERDICT_WORDS, rule_sentence, score_sentence, threshold_text, verdict_clause

__all__ = [
    "STACK_METHOD_LABELS",
    "comparison_sentences",
    "format_model_comparison",
    "left_out_baselines_sentence",
    "ranking_coverage",
    "recommendation",
    "stack_sentences",
]

#: the split whose ranking is printed beside the LOO ranking (the others follow below)
SIDE_BY_SIDE_SPLIT = "validation"
#: the names of the weight methods on the page and in the text
STACK_METHOD_LABELS = {"stacking": "stacking", "pseudo_bma_plus": "pseudo-BMA+"}


def format_model_comparison(comparison: ModelComparison) -> str:
    """The text ``bayesclass compare --model all`` prints.

    Parameters
    ----------
    comparison : ModelComparison
        The computed comparison.

    Returns
    -------
    str
        The lines joined by newlines (no final newline).
    """
    lines = [f"families on the same {comparison.n_rows['train']} training rows (seed {comparison.random_seed}):"]
    for fitted in comparison.fits:
        if fitted.result is not None:
            lines.append(
                f"  {fitted.family:<12} fitted by {fitted.method:<6} in {fitted.seconds:6.1f} s "
                f"(CPU {fitted.cpu_seconds:.1f} s)"
            )
            note = result_info(fitted.result).method_note  # why the family's default method is this one here
            if note:
                lines.append(f"  {'':<12} ({note})")
    for family, reason in comparison.unavailable.items():
        lines.append(f"  {family:<12} NOT fitted: {reason}")
    lines.append("")
    left = _loo_lines(comparison)
    splits = list(comparison.heldout)
    first = SIDE_BY_SIDE_SPLIT if SIDE_BY_SIDE_SPLIT in splits else (splits[0] if splits else None)
    right = _heldout_lines(comparison, first) if first is not None else []
    width = max((len(line) for line in left), default=0)
    for one, other in zip_longest(left, right, fillvalue=""):
        lines.append(f"{one:<{width}} | {other}".rstrip())
    lines.extend(f"no PSIS-LOO for {family}: {reason}" for family, reason in comparison.loo_left_out)
    if comparison.left_out_baselines:
        lines.append(left_out_baselines_sentence(comparison))
    for split in splits:
        if split != first:
            lines.append("")
            lines.extend(_heldout_lines(comparison, split))
    lines.append("")
    lines.extend(_stack_lines(comparison))
    lines.append("")
    lines.append("conclusion:")
    lines.append(f"  {recommendation(comparison)}")
    lines.extend(f"  {sentence}" for sentence in comparison_sentences(comparison))
    return "\n".join(lines)


def _stack_lines(comparison: ModelComparison) -> list[str]:
    stacked = comparison.stack
    if stacked is None:
        return ["no stack (not asked for)"]
    if stacked.result is None:
        return [f"no stack: {stacked.reason}"]
    methods = list(stacked.weights)
    lines = ["weights of the stacked predictive (LOO stacking is the stack's own; pseudo-BMA+ beside it)"]
    lines.append(f"  {'family':<12} " + " ".join(f"{STACK_METHOD_LABELS.get(name, name):>12}" for name in methods))
    families = list(stacked.weights[methods[0]])
    for family in families:
        lines.append(
            f"  {family:<12} " + " ".join(f"{stacked.weights[name].get(family, math.nan):>12.3f}" for name in methods)
        )
    lines.extend(f"  note: {note}" for note in stacked.notes)
    return lines


def _loo_lines(comparison: ModelComparison) -> list[str]:
    lines = [f"ranking by PSIS-LOO ({comparison.n_rows['train']} training rows)"]
    if comparison.loo:
        lines.append(
            f"  {'family':<12} {'elpd_loo':>9} {'se':>6} {'diff':>8} {'dse':>6} {'p_loo':>6} k>{PARETO_K_LIMIT:g}"
        )
        lines.extend(_loo_row(row) for row in comparison.loo)
        lines.append("  (diff: elpd_loo minus the best's; dse its SE;")
        lines.append(f"   k>{PARETO_K_LIMIT:g}: rows of unreliable PSIS)")
    if not comparison.loo:
        lines.append("  no family has a PSIS-LOO estimate" if comparison.results else "  no family was fitted")
    return lines


def _loo_row(row: LooRow) -> str:
    flag = f"{row.n_high_k:>5}" + (" !" if row.n_high_k else "")
    return (
        f"  {row.family:<12} {row.elpd:>9.2f} {row.se:>6.2f} {0.0 - abs(row.elpd_diff):>8.2f} {row.dse:>6.2f} "
        f"{row.p_loo:>6.2f} {flag}"
    )


def _heldout_lines(comparison: ModelComparison, split: str) -> list[str]:
    rows = comparison.heldout.get(split, ())
    lines = [f"ranking by held-out log loss ({split}, {comparison.n_rows.get(split, 0)} rows)"]
    if not rows:
        return [*lines, "  no estimate to score"]
    width = max(34, *(len(row.label) for row in rows))
    lines.append(f"  {'estimate':<{width}} {'log loss':>8} {'Brier':>7} {'acc.':>6} {'diff':>8} {'se':>7}")
    lines.extend(_heldout_row(row, width) for row in rows)
    lines.append(
        f"  (diff: mean per-row log loss minus the best's; se its SE; * real: above 2 SE and {threshold_text()})"
    )
    if any(math.isinf(row.log_loss) for row in rows):
        lines.append("  (inf: the estimate gave some held-out row's observed class probability 0)")
    if any(math.isnan(row.log_loss) for row in rows):
        lines.append("  (-: no probabilities, only decisions (accuracy), or no score defined)")
    return lines


def _heldout_row(row: HeldoutRow, width: int) -> str:
    return (
        f"  {row.label:<{width}} {_number(row.log_loss, 8, '.4f')} {_number(row.brier, 7, '.4f')} "
        f"{_number(row.accuracy, 6, '.3f')} {_number(row.difference, 8, '.4f')} "
        f"{_number(row.standard_error, 7, '.4f')}{' *' if row.verdict == 'real' else ''}"
    )


def _number(value: float, width: int, spec: str) -> str:
    if math.isnan(value):
        return f"{'-':>{width}}"
    if math.isinf(value):
        return f"{'inf':>{width}}"
    return f"{value:>{width}{spec}}"


def left_out_baselines_sentence(comparison: ModelComparison) -> str:
    """The baselines asked for but not scored, and why (they classify fewer classes than the data have).

    Parameters
    ----------
    comparison : ModelComparison
        The computed comparison.

    Returns
    -------
    str
        One line.
    """
    n_classes = len(result_info(next(iter(comparison.results.values()))).class_names)
    return (
        f"baselines not scored: {', '.join(comparison.left_out_baselines)} ({n_classes} classes, more than they "
        "classify)"
    )


def comparison_sentences(comparison: ModelComparison) -> list[str]:
    """A few sentences of conclusion, each stating the numbers of the rankings behind it.

    Parameters
    ----------
    comparison : ModelComparison
        The computed comparison.

    Returns
    -------
    list of str
        The LOO ranking's first two, the families whose LOO is unreliable, each split's best posterior against
        its runner-up, and whether the two rankings agree.
    """
    sentences = [convergence_sentence(comparison.convergence)] if comparison.convergence else []
    loo = {row.family: row for row in comparison.loo}
    for ranking in comparison.rankings:
        if ranking.criterion == "PSIS-LOO":
            sentences.append(_loo_sentence(ranking, loo))
    for split, finding in comparison.findings.items():
        if isinstance(finding, ScoreFinding):
            held = next((r for r in comparison.rankings if r.criterion != "PSIS-LOO" and r.split == split), None)
            among = ranking_coverage(held, "the posteriors of") if held else "the families' posteriors"
            sentences.append(score_sentence(finding, among=among))
            sentences.extend(_overall_best(split, comparison.heldout.get(split, ()), finding.best))
    for agreement in comparison.agreement:
        if agreement.agree:
            sentences.append(
                f"The two rankings agree: {agreement.loo_best} is first by PSIS-LOO and by held-out log loss on "
                f"{agreement.split}."
            )
        else:
            sentences.append(
                f"The two rankings disagree: PSIS-LOO (among the families with a reliable estimate) puts "
                f"{agreement.loo_best} first, held-out log loss on {agreement.split} {agreement.heldout_best}."
            )
    sentences.extend(stack_sentences(comparison))
    if comparison.unavailable:
        sentences.append(
            f"Not compared: {', '.join(comparison.unavailable)} (the data do not fit the family; reasons above)."
        )
    sentences.append(rule_sentence())
    return sentences


def _names(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def ranking_coverage(ranking: Ranking, what: str = "") -> str:
    """Which families a ranking covers and which it leaves out, with why: "logistic and gcc (left out: gp, ...)".

    Parameters
    ----------
    ranking : Ranking
        One criterion's ranking.
    what : str, default ""
        Words before the families' names ("the posteriors of").

    Returns
    -------
    str
    """
    covered = f"{what} {_names(ranking.families)}".strip() if ranking.families else "no family"
    if not ranking.left_out:
        return covered
    return covered + " (left out: " + "; ".join(f"{family}, {why}" for family, why in ranking.left_out) + ")"


def _loo_sentence(ranking: Ranking, loo: dict[str, LooRow]) -> str:
    lead = f"By PSIS-LOO on the {ranking.n_rows} training rows, among {ranking_coverage(ranking)}"
    if not ranking.families:
        why = "; ".join(f"{family}, {reason}" for family, reason in ranking.left_out)
        return f"By PSIS-LOO on the {ranking.n_rows} training rows, no family can be ranked ({why})."
    best = loo[ranking.families[0]]
    first = f"{best.family} ranks first (elpd_loo {best.elpd:.2f}, se {best.se:.2f})"
    if len(ranking.families) == 1:
        return f"{lead}, {first}: the only family ranked, nothing to rank it against."
    second = ranking.families[1]
    return (
        f"{lead}, {first}; {second} is {ranking.difference:.4f} nats per training row lower "
        f"({best.elpd - loo[second].elpd:.2f} in elpd_loo) with standard error {ranking.standard_error:.4f} per row: "
        f"{verdict_clause(ranking.verdict or 'within noise', ranking.standard_error)}."
    )


def recommendation(comparison: ModelComparison) -> str:
    """The page's first line: the family to use, from the last held-out ranking (the test rows), else PSIS-LOO.

    Parameters
    ----------
    comparison : ModelComparison
        The computed comparison.

    Returns
    -------
    str
        "Recommended: gcc (best held-out log loss on 40 test rows; naive_bayes within noise of it, so either
        serves)"; "No recommendation: ..." where no ranking has a family.
    """
    ranked = [ranking for ranking in comparison.rankings if ranking.families]
    heldout = [ranking for ranking in ranked if ranking.criterion != "PSIS-LOO"]
    if not ranked:
        return "No recommendation: no family could be ranked (none fitted, no PSIS-LOO, no held-out scores)."
    ranking = (heldout or ranked)[-1]
    rows = "training" if ranking.split == "train" else ranking.split
    text = f"Recommended: {ranking.best} (best {ranking.criterion} on {ranking.n_rows} {rows} rows"
    if len(ranking.families) == 1:
        text += ", the only family ranked"
    elif ranking.verdict == "real":
        text += (
            f"; {ranking.families[1]}, next, is {ranking.difference:.4f} nats per row worse: {VERDICT_WORDS['real']}"
        )
    else:
        margin = "is worse by a negligible margin" if ranking.verdict == "negligible" else "is within noise of it"
        text += f"; {ranking.families[1]} {margin}, so either serves"
    if ranking.left_out:
        text += f"; not ranked: {', '.join(family for family, _ in ranking.left_out)}"
    verdict = comparison.convergence.get(ranking.families[0])
    if verdict is not None and verdict.verdict == "fail":
        text += "; its draws FAIL the convergence verdict: rerun it before trusting this"
    return text + ")."


def convergence_sentence(verdicts) -> str:
    """One sentence of every family's convergence verdict, with the worst r_hat and ESS.

    Parameters
    ----------
    verdicts : mapping of str to ConvergenceFinding
        Per family with posterior draws (:attr:`ModelComparison.convergence`).

    Returns
    -------
    str
        "Convergence: logistic PASS (...); naive_bayes FAIL (...): ..."; a failure says its posterior's numbers are
        not to be trusted until a rerun passes.
    """
    parts, failed = [], []
    for family, finding in verdicts.items():
        numbers = (
            f"max r_hat {finding.max_r_hat:.4f}, min ESS bulk {finding.min_ess_bulk:.0f} / tail "
            f"{finding.min_ess_tail:.0f}"
        )
        if finding.verdict == "no_verdict":
            parts.append(f"{family} no verdict (independent {finding.method} draws)")
        elif finding.verdict == "pass":
            parts.append(f"{family} PASS ({numbers})")
        else:
            parts.append(f"{family} FAIL ({'; '.join(finding.failures)})")
            failed.append(family)
    text = "Convergence: " + "; ".join(parts)
    if failed:
        text += (
            f". The numbers of {', '.join(failed)} are not to be trusted until a rerun passes (its page: "
            "bayesclass report --run on the saved result gives what to try)"
        )
    return text + "."


def _overall_best(split: str, rows, best_family: str) -> list[str]:
    """Where an estimate other than the families' posteriors (a plug-in, a baseline) scores best on ``split``."""
    rows = list(rows)
    if not rows or rows[0].label == best_family:
        return []
    family = next((row for row in rows if row.label == best_family), None)
    if family is None:
        return []
    return [
        f"On {split}, the lowest held-out log loss of all is {rows[0].label}'s ({rows[0].log_loss:.4f}); the best "
        f"family posterior, {best_family}, is {family.difference:.4f} higher with standard error "
        f"{family.standard_error:.4f}: {verdict_clause(family.verdict or 'within noise', family.standard_error)}."
    ]


def stack_sentences(comparison: ModelComparison) -> list[str]:
    """The stack's weights and, per held-out split, the stack against the best family posterior, with numbers.

    Parameters
    ----------
    comparison : ModelComparison
        The computed comparison.

    Returns
    -------
    list of str
        Nothing without a stack; why there is none where it could not be built.
    """
    stacked = comparison.stack
    if stacked is None:
        return []
    if stacked.result is None:
        return [f"No stack: {stacked.reason}."]
    own = stacked.weights.get(stacked.method, {})
    listed = ", ".join(f"{family} {weight:.2f}" for family, weight in sorted(own.items(), key=lambda item: -item[1]))
    sentences = [f"LOO {STACK_METHOD_LABELS.get(stacked.method, stacked.method)} weights: {listed}."]
    for split, finding in comparison.stack_findings.items():
        if not isinstance(finding, ScoreFinding) or finding.runner_up is None:
            continue
        losses = dict(finding.log_losses)
        stack_first = finding.best == stacked.label
        family = (finding.runner_up if stack_first else finding.best).removesuffix(": posterior")
        verdict = verdict_clause(finding.verdict, finding.standard_error)
        if finding.verdict != "real":
            verdict += ": the stack neither beats nor loses to the best family by a difference that matters"
        elif stack_first:
            verdict += ": the stack beats the best family"
        else:
            verdict += ": the best family beats the stack"
        sentences.append(
            f"On {split}, the stack's held-out log loss is {losses[stacked.label]:.4f} against {family}'s posterior "
            f"{losses[finding.runner_up if stack_first else finding.best]:.4f} (the best family there); the paired "
            f"difference is {finding.difference:.4f} with standard error {finding.standard_error:.4f}: {verdict}."
        )
    return sentences
