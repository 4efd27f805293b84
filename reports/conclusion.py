"""A run's conclusion in words: one sentence per computed finding, each stating the numbers behind it.

Renders a :class:`~bayesclass.inference.evaluation.conclusions.Conclusion` (computed by
:mod:`bayesclass.inference.evaluation.conclusions`; the decisions it words, such as "real",
"negligible", "wider", "shifted", are made there). The HTML report states these sentences in its Conclusion section and
``bayesclass compare`` prints them last. Nothing here computes a number.
"""

from __future__ import annotations

import math

from bayesclass.inference.evaluation.conclusions import (
    NOISE_MULTIPLE,
    PRACTICAL_THRESHOLDS,
    Conclusion,
    ConvergenceFinding,
    IntervalFinding,
    MissingEstimate,
    Omitted,
    ParetoFinding,
    ScoreFinding,
    Verdict,
)
from bayesclass.reports.labels import estimate_label

__all__ = [
    "VERDICT_WORDS",
    "conclusion_omissions",
    "conclusion_sentences",
    "format_conclusion",
    "pareto_sentence",
    "rule_sentence",
    "score_sentence",
    "threshold_text",
    "verdict_clause",
]

#: the words of each verdict of :func:`~bayesclass.inference.evaluation.conclusions.difference_verdict`
VERDICT_WORDS: dict[Verdict, str] = {
    "real": "a real difference",
    "negligible": "beyond its noise but negligible",
    "within noise": "within its noise",
}


def threshold_text(score: str = "log_loss") -> str:
    """The practical threshold of ``score`` with its unit: "0.01 nats per row".

    Parameters
    ----------
    score : str, default "log_loss"
        A key of :data:`~bayesclass.inference.evaluation.conclusions.PRACTICAL_THRESHOLDS`.

    Returns
    -------
    str
    """
    value, unit = PRACTICAL_THRESHOLDS[score]
    return f"{value:g} {unit}"


def rule_sentence(score: str = "log_loss", *, what: str = "log loss") -> str:
    """The rule every verdict on a page follows, stated once: 2 SE and the practical threshold.

    Parameters
    ----------
    score : str, default "log_loss"
        The score whose threshold is stated.
    what : str, default "log loss"
        Its name in the sentence.

    Returns
    -------
    str
        "A difference in log loss is called real only when it exceeds 2 SE and 0.01 nats per row; ...".
    """
    threshold = threshold_text(score)
    return (
        f"A difference in {what} is called real only when it exceeds {NOISE_MULTIPLE:g} standard errors AND the "
        f"practical threshold of {threshold}; differences below {threshold} are treated as negligible (below it "
        "two estimates' probabilities lead to the same decisions), and those within "
        f"{NOISE_MULTIPLE:g} SE as noise."
    )


_TOPICS = {
    "convergence": "convergence",
    "scores": "held-out comparison",
    "missing": "missing estimates",
    "intervals": "posterior vs Wald intervals",
}


def conclusion_sentences(conclusion: Conclusion) -> list[str]:
    """The conclusion's sentences, in order: convergence, held-out scores, missing estimates, intervals.

    Parameters
    ----------
    conclusion : Conclusion
        The run's findings.

    Returns
    -------
    list of str
        One sentence per finding that could be made (the :class:`Omitted` ones are in
        :func:`conclusion_omissions`).
    """
    sentences = []
    if isinstance(conclusion.convergence, ConvergenceFinding):
        sentences.append(_convergence(conclusion.convergence))
    sentences += [_scores(finding) for finding in conclusion.scores if isinstance(finding, ScoreFinding)]
    sentences += [_missing(finding) for finding in conclusion.missing]
    sentences += [_intervals(finding) for finding in conclusion.intervals if isinstance(finding, IntervalFinding)]
    if conclusion.pareto is not None:
        sentences.append(pareto_sentence(conclusion.pareto))
    return sentences


def pareto_sentence(finding: ParetoFinding) -> str:
    """The sentence of a :class:`ParetoFinding`: how many training rows have Pareto k above the limit.

    Parameters
    ----------
    finding : ParetoFinding
        The run's PSIS-LOO Pareto k.

    Returns
    -------
    str
        A warning where some row is above the limit (the run page also lists it under Warnings).
    """
    if finding.reliable:
        return (
            f"PSIS-LOO is reliable: every one of the {finding.n_rows} training rows has Pareto k <= "
            f"{finding.limit:g} (max {_g(finding.max_k, '.2f')})."
        )
    return (
        f"PSIS-LOO is unreliable: {finding.n_high_k} of {finding.n_rows} training rows have Pareto k > "
        f"{finding.limit:g} (max {_g(finding.max_k, '.2f')}), so their leave-one-out estimates, and elpd_loo, are "
        "not to be trusted (more draws help; influential rows call for a more robust model); judge the fit by its "
        "held-out scores."
    )


def conclusion_omissions(conclusion: Conclusion) -> list[str]:
    """The findings left out, each with why ("posterior vs Wald intervals: no point estimate ...").

    Parameters
    ----------
    conclusion : Conclusion
        The run's findings.

    Returns
    -------
    list of str
        One line per :class:`Omitted` finding.
    """
    left_out = [conclusion.convergence, *conclusion.scores, *conclusion.intervals]
    return [f"{_TOPICS[item.topic]}: {item.reason}" for item in left_out if isinstance(item, Omitted)]


def format_conclusion(conclusion: Conclusion) -> list[str]:
    """The conclusion as plain-text lines (``bayesclass compare``): a heading, the sentences, the rule, the omissions.

    Parameters
    ----------
    conclusion : Conclusion
        The run's findings.

    Returns
    -------
    list of str
        The lines, without line ends.
    """
    lines = ["conclusion:"]
    lines += [f"  {sentence}" for sentence in conclusion_sentences(conclusion)]
    if any(isinstance(finding, ScoreFinding) for finding in conclusion.scores):
        lines.append(f"  {rule_sentence()}")  # the rule behind the verdicts, as the page states it
    lines += [f"  (not concluded: {item})" for item in conclusion_omissions(conclusion)]
    return lines


def _g(value: float, spec: str = ".3g") -> str:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value, spec)


def _convergence(finding: ConvergenceFinding) -> str:
    max_r_hat, min_ess = finding.thresholds
    draws = f"{finding.n_chains} chain{'s' * (finding.n_chains != 1)} of {finding.n_draws} draws"
    numbers = (
        f"max r_hat {_g(finding.max_r_hat, '.4f')}, min ESS bulk {_g(finding.min_ess_bulk, '.0f')} / tail "
        f"{_g(finding.min_ess_tail, '.0f')}"
    )
    if finding.verdict == "no_verdict":
        return (
            f"Convergence: no verdict; the {finding.n_chains * finding.n_draws} draws of method {finding.method} are "
            f"independent, with no Markov chain to converge ({numbers}, for reference)."
        )
    if finding.n_divergences is not None:
        numbers += f", {finding.n_divergences} divergent transitions (limits r_hat <= {max_r_hat:g}, ESS >= "
        numbers += f"{min_ess:g}, no divergences)"
    else:
        numbers += f" (limits r_hat <= {max_r_hat:g}, ESS >= {min_ess:g}; the sampler integrates no trajectories, "
        numbers += "so there are no divergences to count)"
    if finding.verdict == "pass":
        return f"Convergence: the {draws} (method {finding.method}) pass the verdict: {numbers}."
    return (
        f"Convergence: the {draws} (method {finding.method}) FAIL the verdict ({'; '.join(finding.failures)}): "
        f"{numbers}; the posterior's numbers are not to be trusted until a rerun passes."
    )


def _estimate(label: str) -> str:
    return "the posterior" if label == "posterior" else f"the {label}"


def score_sentence(finding: ScoreFinding, *, among: str = "") -> str:
    """The sentence of one held-out :class:`ScoreFinding`: the best estimate against the runner-up, with numbers.

    Parameters
    ----------
    finding : ScoreFinding
        The best estimate by held-out log loss and its paired difference to the runner-up.
    among : str
        Which estimates the finding compared when they are not all those scored (e.g. "the families'
        posteriors"), said after the split so that "scores best" is not read against the whole ranking.

    Returns
    -------
    str
        One sentence.
    """
    return _scores(finding, among=among)


def _scores(finding: ScoreFinding, *, among: str = "") -> str:
    losses = dict(finding.log_losses)
    best = f"{_estimate(finding.best)} scores best by held-out log loss ({_g(losses[finding.best], '.4f')}"
    lead = f"On {finding.split} ({finding.n_rows} rows), " + (f"among {among}, " if among else "")
    left_out = (
        " (not compared: "
        + ", ".join(f"the {label}, {count} rows undefined" for label, count in finding.left_out)
        + ")"
        if finding.left_out
        else ""
    )
    if finding.runner_up is None and finding.left_out:
        return f"{lead}{best}); it is the only estimate with every row defined, nothing to compare it with{left_out}."
    if finding.runner_up is None:
        return f"{lead}{best}); it is the only one compared, nothing to rank it against."
    runner = f"{_estimate(finding.runner_up)}'s {_g(losses[finding.runner_up], '.4f')})"
    zero = dict(finding.zero_probability_rows)
    if math.isinf(finding.difference):
        return (
            f"{lead}{best}, against {runner}: {_estimate(finding.runner_up)} gives "
            f"{zero.get(finding.runner_up, 0)} of {finding.n_rows} rows an observed-class probability 0, so the "
            f"paired difference is infinite, larger than any noise{left_out}."
        )
    return (
        f"{lead}{best}, against {runner}; the paired difference of per-row log losses is "
        f"{_g(finding.difference)} with standard error {_g(finding.standard_error)} "
        f"({_g(finding.ratio, '.2f')} SE): {verdict_clause(finding.verdict, finding.standard_error)}{left_out}."
    )


def verdict_clause(verdict: Verdict, standard_error: float, *, score: str = "log_loss") -> str:
    """A verdict with its two bars: "a real difference (beyond 2 SE = 0.012 and the threshold of 0.01 nats ...)".

    Parameters
    ----------
    verdict : {"real", "negligible", "within noise"}
        The verdict of the difference.
    standard_error : float
        Its standard error (NaN: none).
    score : str, default "log_loss"
        The score whose practical threshold applies.

    Returns
    -------
    str
    """
    bar = f"{NOISE_MULTIPLE:g} SE = {_g(NOISE_MULTIPLE * standard_error)}"
    threshold = f"the practical threshold of {threshold_text(score)}"
    if verdict == "real":
        return f"{VERDICT_WORDS[verdict]} (beyond {bar} and {threshold})"
    if verdict == "negligible":
        return f"{VERDICT_WORDS[verdict]} (beyond {bar} but below {threshold}: the two are interchangeable here)"
    if math.isnan(standard_error):
        return f"{VERDICT_WORDS[verdict]} (no standard error: no evidence of a difference)"
    return f"{VERDICT_WORDS[verdict]} (the bar is {bar})"


def _missing(finding: MissingEstimate) -> str:
    label = estimate_label(finding.kind)
    others = (
        f"{finding.n_estimates} other point estimate exists"
        if finding.n_estimates == 1
        else f"{finding.n_estimates} other point estimates exist"
    )
    return (
        f"The {label} is absent on these {finding.n_rows} training rows ({others}); the fit's reason: "
        f"{finding.reason.rstrip('.')}."
    )


def _intervals(finding: IntervalFinding) -> str:
    label = estimate_label(finding.kind)
    level = f"{finding.interval_prob:.0%}"
    width = {"wider": "wider than", "narrower": "narrower than", "as wide": "about as wide as"}[finding.width]
    shift = (
        f"shifted: a posterior mean lies up to {_g(finding.largest_shift, '.2f')} posterior sd from the {label} "
        f"(at {finding.shift_parameter})"
        if finding.shifted
        else f"centred alike: every posterior mean lies within {_g(finding.largest_shift, '.2f')} posterior sd of "
        f"the {label} (largest at {finding.shift_parameter})"
    )
    return (
        f"The posterior's {level} intervals are {width} the {label}'s {level} Wald intervals (median width ratio "
        f"{_g(finding.median_width_ratio, '.3f')} over {finding.n_parameters} parameters, from "
        f"{_g(finding.min_width_ratio, '.3f')} to {_g(finding.max_width_ratio, '.3f')}) and {shift}."
    )
