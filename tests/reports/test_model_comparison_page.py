"""The page of a comparison of several families (``compare --model all --report``): every section, the families not
fitted with their reasons, no stack with its reason, escaped labels, and the CLI's page in a real browser."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re

import pandas as pd
import pytest
from markupsafe import escape

import bayesclass as bc
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation.model_comparison import (
    Disagreement,
    FamilyFit,
    HeldoutRow,
    LooRow,
    StackOutcome,
    compare_models,
)
from bayesclass.reports.figures.comparison import elpd_difference_plot
from bayesclass.reports.model_comparison import comparison_sentences, recommendation
from bayesclass.reports.model_comparison_page import render_model_comparison
from tests.bad_inputs.harness import run

HEADINGS = ("Conclusion", "Summary", "Ranking", "elpd differences", "Weights", "Calibration", "Disagreements",
            "Warnings")  # fmt: skip
SHORT = ("--draws", "100", "--tune", "100", "--chains", "2", "--no-progress", "--seed", "0")


@pytest.fixture(scope="module")
def comparison():
    """logistic and naive Bayes fitted on the penguins (3 classes, categorical columns: gcc refuses them)."""
    data = bc.load("penguins", missing="drop")
    sampler = SamplerSettings(draws=100, tune=100, chains=2, progressbar=False)
    return compare_models(data, "logistic,naive_bayes,gcc", standardize=True, sampler=sampler, random_seed=0)


def _section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match is not None, f"no section {anchor}"
    return match.group(1)


def _has_cell(html: str, text: str) -> bool:
    """Whether ``text`` (escaped) is a whole cell of ``html`` (a cell over 40 characters is wrapped)."""
    return f"<td>{escape(text)}</td>" in html or f'<td class="wrap">{escape(text)}</td>' in html


def test_every_section_is_on_the_page_with_the_conclusion_of_compare(comparison):
    page = render_model_comparison(comparison)
    opening = _section(page, "conclusion")
    assert re.search(r'<div class="verdict">\s*Recommended: ', opening), opening[:300]  # the first line
    assert opening.index(str(escape(recommendation(comparison)))) < opening.index("<p>")
    assert "practical threshold of 0.01 nats per row" in opening
    for heading in HEADINGS:
        assert page.count(f"<h2>{heading}</h2>") == 1, heading
    conclusion = _section(page, "conclusion")
    sentences = comparison_sentences(comparison)
    assert sentences and all(str(escape(sentence)) in conclusion for sentence in sentences)
    ranking = _section(page, "ranking")
    for row in comparison.loo:
        assert f"<td>{row.family}</td>" in ranking and f"<td>{row.elpd:.2f}</td>" in ranking
    for split, rows in comparison.heldout.items():
        assert f"Ranking by held-out log loss ({split}, {comparison.n_rows[split]} rows)" in ranking
        assert all(_has_cell(ranking, row.label) for row in rows)
    assert "<h1>bayesclass model comparison: logistic, naive_bayes on penguins</h1>" in page  # gcc not fitted
    assert sentences[0].startswith("Convergence: logistic ") and "naive_bayes " in sentences[0]


def test_families_not_fitted_are_listed_with_their_reason(comparison):
    assert set(comparison.unavailable) == {"gcc"}
    page = render_model_comparison(comparison)
    reason = str(escape(comparison.unavailable["gcc"]))
    summary = _section(page, "summary")
    assert "Families NOT fitted" in summary and "<td>gcc</td>" in summary and reason in summary
    assert f'<div class="alert">gcc NOT fitted: {reason}</div>' in page  # at the top as well
    for fitted in comparison.fits:
        if fitted.result is not None:
            assert f"<td>{fitted.family}</td><td>{fitted.method}</td><td>{fitted.seconds:.1f}</td>" in summary


def test_the_weights_and_the_stack_against_the_best_family(comparison):
    stack = comparison.stack
    assert stack is not None and stack.result is not None, stack
    weights = _section(render_model_comparison(comparison), "weights")
    assert "<th>stacking weight</th><th>pseudo-BMA+ weight</th>" in weights
    for family in comparison.results:
        cells = "".join(f"<td>{stack.weights[name][family]:.3f}</td>" for name in ("stacking", "pseudo_bma_plus"))
        assert f"<td>{family}</td>{cells}" in weights
    for split, finding in comparison.findings.items():
        assert f"Held-out scores of the stack and of the best family&#39;s posterior on {split}" in weights
        assert f"<td>{escape(stack.label)}</td>" in weights and f"<td>{escape(finding.best)}</td>" in weights
    for split, finding in comparison.stack_findings.items():  # the paired difference of the stack and the best
        assert f"<td>{split}</td><td>{finding.n_rows}</td><td>{escape(finding.best)}</td>" in weights
        assert f"<td>{finding.difference:.4f}</td><td>{finding.standard_error:.4f}</td>" in weights


def test_no_stack_says_why(comparison):
    reason = "1 family has posterior draws with a log-likelihood: a stack needs two or more"
    page = render_model_comparison(dataclasses.replace(comparison, stack=StackOutcome("stacking", reason=reason)))
    assert f"No stack: {reason}." in _section(page, "weights")
    none = render_model_comparison(dataclasses.replace(comparison, stack=None))
    assert "No stack (not asked for)." in _section(none, "weights")


def test_calibration_draws_every_family_and_the_stack_per_split(comparison):
    calibration = _section(render_model_comparison(comparison), "calibration")
    assert calibration.count("<img ") == len(comparison.predictions) >= 2
    for split, held in comparison.predictions.items():
        assert set(held.proba) == {*comparison.results, "stack"}
        assert f"the stack&#39;s on {split} ({len(held.y)} rows)" in calibration


def test_disagreements_list_the_rows_with_their_features_or_say_there_are_none(comparison):
    page = render_model_comparison(comparison)
    section = _section(page, "disagreements")
    assert any(found.n_disagree for found in comparison.disagreements.values())  # the penguins have some
    for split, found in comparison.disagreements.items():
        if found.n_disagree:
            assert (
                f"On {split}, the families&#39; posteriors predict different classes for {found.n_disagree} of "
                f"{found.n_rows} rows" in section
            )
            header = "".join(f"<th>{escape(column)}</th>" for column in ("row", *found.table.columns))
            assert header in section
            assert all(f"<tr><td>{row}</td>" in section for row in found.table.index)
    agreed = {split: dataclasses.replace(found, n_disagree=0, table=found.table.iloc[:0])
              for split, found in comparison.disagreements.items()}  # fmt: skip
    quiet = _section(render_model_comparison(dataclasses.replace(comparison, disagreements=agreed)), "disagreements")
    for split, found in agreed.items():
        assert f"On {split}, every family&#39;s posterior predicts the same class for all {found.n_rows} rows." in quiet


def test_one_family_has_no_differences_and_no_disagreements(comparison):
    first = next(fitted for fitted in comparison.fits if fitted.result is not None)
    alone = dataclasses.replace(
        comparison, fits=(first,), loo=tuple(row for row in comparison.loo if row.family == first.family)
    )
    page = render_model_comparison(alone)
    assert "No differences to show: one family has a PSIS-LOO estimate." in _section(page, "differences")
    assert "One family fitted: no other to disagree with." in _section(page, "disagreements")


def test_labels_and_cells_from_the_data_are_escaped(comparison):
    hostile = "<script>alert(1)</script>"
    split, found = next(iter(comparison.disagreements.items()))
    table = pd.DataFrame({"true class": [hostile], f"{hostile} p": [0.5], "<img src=x>": ["<b>cell</b>"]},
                         index=pd.Index([7], name="row"))  # fmt: skip
    tampered = dataclasses.replace(
        comparison,
        fits=(*comparison.fits, FamilyFit(hostile, "<i>nuts</i>", reason="<b>refused</b>")),
        disagreements={split: Disagreement(split, found.n_rows, 1, table)},
    )
    page = render_model_comparison(tampered, title=hostile)
    assert "<script" not in page and "<img src=x>" not in page and "<b>" not in page and "<i>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;cell&lt;/b&gt;" in page


def test_the_elpd_difference_figure_names_every_family_and_its_bars():
    svg = elpd_difference_plot({"logistic": (0.0, 0.0), "naive_bayes": (8.2, 5.5), "gcc": (20.0, 1.0)}, multiple=2)
    assert svg.startswith("<svg") and all(f">{name}<" in svg for name in ("logistic", "naive_bayes", "gcc"))
    assert "bars: +-2 dse" in svg
    # the same numbers, the same bytes
    assert svg == elpd_difference_plot({"logistic": (0.0, 0.0), "naive_bayes": (8.2, 5.5), "gcc": (20.0, 1.0)})


def test_the_cli_page_in_a_real_browser(browser, tmp_path):
    path = tmp_path / "models.html"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = run("compare", "--model", "logistic,naive_bayes,gcc", "--data", "penguins", "--missing", "drop",
                   "--standardize", *SHORT, "--report", str(path))  # fmt: skip
    assert code == 0, stderr.getvalue()
    assert f"wrote {path} (" in stdout.getvalue() and "Traceback" not in stderr.getvalue()
    page = path.read_text(encoding="utf-8")
    seen = browser.inspect(path, screenshot=tmp_path / "models.png")
    assert seen.console_errors == () and seen.foreign_requests == ()
    assert not seen.ran_script and seen.script_hook_count == 0
    assert seen.heading_texts[1:] == HEADINGS
    # the elpd differences and a calibration figure per held-out split, every one decoded and drawn
    assert len(seen.images) == page.count("<img ") == 3 and seen.broken_images == ()
    assert all(image.natural_width > 100 and image.natural_height > 50 for image in seen.images)


@pytest.mark.slow
def test_every_family_on_breast_cancer_in_a_real_browser(browser, tmp_path):
    """The issue's command (``compare --model all --data breast_cancer --standardize --report``), with short chains:
    the four families (the GP among them) on 30 features, two classes."""
    path = tmp_path / "models.html"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = run("compare", "--model", "all", "--data", "breast_cancer", "--standardize", *SHORT, "--report",
                   str(path))  # fmt: skip
    assert code == 0, stderr.getvalue()
    page = path.read_text(encoding="utf-8")
    seen = browser.inspect(path, screenshot=tmp_path / "models.png")
    assert seen.console_errors == () and seen.foreign_requests == () and not seen.ran_script
    assert seen.heading_texts[1:] == HEADINGS
    # + the elpd differences without a family far off the others (the gp's Laplace draws), when there is one
    assert len(seen.images) == page.count("<img ") == 3 + ("The same without" in page) and not seen.broken_images
    summary = _section(page, "summary")
    for family in ("logistic", "naive_bayes", "gcc", "gp"):
        assert f"<td>{family}</td>" in summary
    assert "<th>why this method</th>" in summary  # the gp's default on 30 inputs is laplace, and the page says why


def test_the_conclusion_says_its_best_is_the_best_posterior_not_the_best_of_the_ranking(comparison):
    """The held-out sentence compares the families' posteriors only; on breast_cancer the MAP plug-in and the stack
    rank above the best posterior, so "scores best" alone contradicted the ranking printed above it."""
    sentences = comparison_sentences(comparison)
    for split, rows in comparison.heldout.items():
        posteriors = [row for row in rows if row.label.endswith(": posterior")]
        best = min(posteriors, key=lambda row: row.log_loss)
        ranking = next(r for r in comparison.rankings if r.split == split)
        covered = " and ".join(ranking.families) if len(ranking.families) < 3 else None
        lead = f"On {split} ({comparison.n_rows[split]} rows), among the posteriors of {covered}"
        assert any(sentence.startswith(lead) and f"the {best.label} scores best" in sentence for sentence in sentences)
        assert any("(left out: gcc, not fitted" in sentence for sentence in sentences if sentence.startswith(lead))


def test_a_family_far_off_the_others_is_drawn_apart_and_a_p_loo_above_the_rows_is_explained(comparison):
    """breast_cancer's Laplace gp has elpd_diff -7850 (dse 444, p_loo 7838 on 341 rows): one point squeezes the
    others against the best's line. The page keeps it in the full figure and the table, adds the others on their
    own scale, and says why that estimate is no evidence; families on one scale get one figure and no note."""
    n_train = comparison.n_rows["train"]
    far = LooRow("far_family", -7900.0, 440.0, 7850.0, 443.6, n_train + 100.0, n_train - 5, 25.0)
    page = render_model_comparison(dataclasses.replace(comparison, loo=(*comparison.loo, far)))
    section = _section(page, "differences")
    assert section.count("<img ") == 2
    assert "The same without far_family, whose difference is over 10 times the others&#39;" in section
    assert section.count(">far_family (k&gt;0.7 on") == 1  # in the table only (figures are images)
    assert f"far_family: p_loo {n_train + 100:.2f} exceeds the {n_train} training rows" in section
    plain = _section(render_model_comparison(comparison), "differences")
    assert plain.count("<img ") == 1 and "The same without" not in plain and "exceeds the" not in plain


def test_an_infinite_log_loss_is_explained_under_its_table(comparison):
    rows = tuple(row for row in comparison.heldout["test"] if row.log_loss != float("inf"))
    zero = HeldoutRow("baseline: decision tree", float("inf"), 0.1, 0.9, float("inf"), float("nan"), "real")
    page = render_model_comparison(dataclasses.replace(comparison, heldout={"test": (*rows, zero)}))
    assert "inf: the estimate gave some held-out row&#39;s observed class probability 0" in _section(page, "ranking")
    assert "inf: the estimate gave" not in render_model_comparison(
        dataclasses.replace(comparison, heldout={"test": rows})
    )
