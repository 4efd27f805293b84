"""The report page states its conclusion first and shows the posterior, MAP and MLE with their intervals side by side:
the conclusion's sentences on the page and at the end of ``compare``'s text, the Wald bars in the forest plot, the
HDI and Wald columns in the parameter table, and the page in a real browser (tests/reports/browser.py)."""

from __future__ import annotations

import base64
import html
import re

import pytest

from bayesclass import data, inference, report
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation.report_evaluation import evaluate_for_report
from bayesclass.reports import figures
from bayesclass.reports.conclusion import conclusion_omissions, conclusion_sentences, rule_sentence
from bayesclass.reports.html import SECTION_TITLES, render_report, write_report
from tests.bad_inputs.harness import run

SAMPLER = SamplerSettings(draws=200, tune=300, chains=2, progressbar=False)


@pytest.fixture(scope="module")
def logistic_run():
    """Logistic regression on seed 001's Gaussians: the posterior, the MAP and the MLE, each with intervals."""
    source = data.seed001_gaussians(150, random_seed=1)
    train, validation, _ = data.train_validation_test_split(source, random_seed=0)
    result = inference.fit("logistic", train, method="nuts", sampler=SAMPLER, random_seed=1)
    evaluation = evaluate_for_report(result, validation)
    return result, validation, evaluation, render_report(evaluation)


def _paragraphs(page: str) -> list[str]:
    return [html.unescape(text) for text in re.findall(r"<p>(.*?)</p>", page, flags=re.S)]


def _section(page: str, anchor: str) -> str:
    start = page.index(f'<section id="{anchor}">')
    return page[start : page.index("</section>", start)]


def _svgs(fragment: str) -> list[str]:
    encoded = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', fragment)
    return [base64.b64decode(value).decode("utf-8") for value in encoded]


def test_the_conclusion_comes_first_and_states_every_sentence(logistic_run):
    _, _, evaluation, page = logistic_run
    conclusion = evaluation.runs[0].conclusion
    sentences = conclusion_sentences(conclusion)
    assert [html.unescape(t) for t in re.findall(r"<h2>(.*?)</h2>", page)][0] == SECTION_TITLES["conclusion"]
    section = _section(page, "run0-conclusion")
    # the verdict sentence opens the section in its box, then one paragraph per other sentence (no omission here)
    boxed = re.findall(r'<div class="(?:verdict|alert)">(.*?)</div>', section, flags=re.S)
    assert [html.unescape(text) for text in boxed] == sentences[:1]
    assert _paragraphs(section) == [*sentences[1:], rule_sentence()]  # the rule behind every verdict, once
    assert "practical threshold of 0.01 nats per row" in rule_sentence()
    assert conclusion_omissions(conclusion) == []
    assert sentences[0].startswith("Convergence: the 2 chains of 200 draws (method nuts)")
    assert any(s.startswith("On held-out data (") and "paired difference" in s for s in sentences)
    assert sum("Wald intervals (median width ratio" in s for s in sentences) == 2  # the MAP's and the MLE's


def test_the_estimates_show_posterior_map_and_mle_with_intervals_side_by_side(logistic_run):
    _, _, _, page = logistic_run
    section = _section(page, "run0-estimates")
    header = [html.unescape(cell) for cell in re.findall(r"<th>(.*?)</th>", section)]
    assert header == [
        "parameter",
        "post. mean",
        "post. sd",
        "89% ETI",
        "89% HDI",
        "MLE",
        "MLE SE",
        "MLE 89% Wald",
        "MAP",
        "MAP SE",
        "MAP 89% Wald",
    ]  # the point estimates in the result's storage order
    (forest,) = _svgs(section)
    assert "MAP 89% Wald" in forest and "MLE 89% Wald" in forest and "posterior 89% ETI" in forest
    # three line collections per panel: the posterior's intervals, the MAP's Wald bars, the MLE's
    panels = len(re.findall(r'<g id="axes_\d+"', forest))
    assert panels >= 2 and len(re.findall(r'id="LineCollection_\d+"', forest)) == 3 * panels


def test_the_forest_plot_draws_wald_bars_only_where_rows_carry_them():
    rows = [
        {"parameter": f"w[{i}]", "mean": 0.1 * i, "low": -1.0, "high": 1.0, "map": 0.2, "mle": 0.3} for i in range(3)
    ]
    markers = {"map": "MAP", "mle": "MLE"}
    plain = figures.forest_plot(rows, markers=markers)
    assert len(re.findall(r'id="LineCollection_\d+"', plain)) == 1 and "Wald" not in plain
    for row in rows:
        row.update(map_low=-0.8, map_high=1.2, mle_low=None, mle_high=None)
    with_map = figures.forest_plot(rows, markers=markers, wald_label="95% Wald")
    assert len(re.findall(r'id="LineCollection_\d+"', with_map)) == 2
    assert "MAP 95% Wald" in with_map and "MLE 95% Wald" not in with_map


def test_the_page_and_compare_state_the_same_conclusion_from_the_cli(tmp_path, capsys):
    page_path = tmp_path / "report.html"
    code = run(
        "compare",
        "--model",
        "logistic",
        "--data",
        "seed001_gaussians",
        "--method",
        "laplace",
        "--seed",
        "0",
        "--report",
        str(page_path),
    )
    assert code == 0
    text = capsys.readouterr().out
    tail = text[text.rindex("conclusion:") :].splitlines()
    sentences = [line.strip() for line in tail[1:] if not line.strip().startswith(("(not concluded", "wrote"))]
    assert sentences[0].startswith("Convergence: no verdict; the ")  # Laplace draws are independent
    assert sum(s.startswith("On validation (") for s in sentences) == 1
    assert sum(s.startswith("On test (") for s in sentences) == 1
    page = page_path.read_text(encoding="utf-8")
    assert _paragraphs(_section(page, "run0-conclusion")) == sentences


def test_the_conclusion_page_in_a_real_browser(browser, logistic_run, tmp_path):
    """Headless Chromium: the conclusion is the first heading, no console error, no request, every image decoded."""
    _, _, _, page = logistic_run
    path = write_report(tmp_path / "conclusion.html", page)
    seen = browser.inspect(path, screenshot=tmp_path / "conclusion.png")
    assert seen.console_errors == () and seen.foreign_requests == ()
    assert seen.images and seen.broken_images == ()
    headings = [text for text in seen.heading_texts if text in SECTION_TITLES.values()]
    assert headings[:3] == [SECTION_TITLES[key] for key in ("conclusion", "summary", "convergence")]
    assert seen.screenshot.stat().st_size > 10_000


def test_a_report_of_several_runs_concludes_each(logistic_run):
    result, validation, _, _ = logistic_run
    laplace = inference.fit("logistic", _training(result), method="laplace", sampler=SAMPLER, random_seed=2)
    page = report({"nuts": result, "laplace": laplace}, validation)
    for index, label in enumerate(("nuts", "laplace")):
        assert f"{SECTION_TITLES['conclusion']}: {label}" in html.unescape(page)
        section = _section(page, f"run{index}-conclusion")
        boxed = re.findall(r'<div class="(?:verdict|alert)">(.*?)</div>', section, flags=re.S)
        # NUTS: the verdict sentence in its box; Laplace draws: "no verdict", the first paragraph
        assert (boxed or _paragraphs(section))[0].startswith("Convergence: ")


def _training(result) -> data.Dataset:
    from bayesclass.inference.evaluation.report_evaluation import training_rows

    return training_rows(result)


def test_rows_of_high_pareto_k_are_a_warning_and_a_conclusion_sentence(logistic_run):
    """The README's page drew 51 of 341 rows above k = 0.7 and said "No warnings were raised"."""
    import dataclasses

    from bayesclass.inference.evaluation.conclusions import ParetoFinding
    from bayesclass.reports.conclusion import pareto_sentence

    _, _, evaluation, page = logistic_run
    run0 = evaluation.runs[0]
    finding = run0.conclusion.pareto
    assert finding == ParetoFinding(run0.loo.n_high_k, run0.loo.n_rows, float(run0.loo.pareto_k.max()), 0.7)
    high = ParetoFinding(51, 341, 1.234, 0.7)
    run = dataclasses.replace(run0, conclusion=dataclasses.replace(run0.conclusion, pareto=high))
    flagged = render_report(dataclasses.replace(evaluation, runs=(run,)))
    warning = f"PSIS-LOO of {run.summary.label}: {pareto_sentence(high)}"
    assert warning in html.unescape(_section(flagged, "warnings"))
    assert pareto_sentence(high) in _paragraphs(_section(flagged, "run0-conclusion"))
    low = ParetoFinding(0, 341, 0.5, 0.7)
    run = dataclasses.replace(run0, conclusion=dataclasses.replace(run0.conclusion, pareto=low))
    quiet = render_report(dataclasses.replace(evaluation, runs=(run,)))
    assert "PSIS-LOO of" not in _section(quiet, "warnings")
    assert pareto_sentence(low) in _paragraphs(_section(quiet, "run0-conclusion"))
