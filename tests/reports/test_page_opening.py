"""What a page opens with, and the numbers behind it: the headline comparison's intervals against scipy, the
study's paired posterior - plug-in differences against a hand computation, figures above their tables, folds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayesclass as bc
from bayesclass.inference.evaluation import report_data as rd
from bayesclass.inference.evaluation.report_evaluation import evaluate_for_report
from bayesclass.inference.studies.differences import DIFFERENCE_COLUMNS, posterior_differences
from bayesclass.reports.html import figures_first
from bayesclass.reports.sections import FOLD_ROWS, FOLDED_ROWS_SHOWN, Figure, Table, Text, conclusion_section


@pytest.fixture(scope="module")
def map_evaluation():
    """A MAP fit of logistic regression on penguins' training rows, evaluated on its validation rows."""
    train, validation, _ = bc.train_validation_test_split(bc.load("penguins", missing="drop"), random_seed=0)
    result = bc.fit("logistic", train, method="map", standardize=True, random_seed=0)
    data = evaluate_for_report([result], {"validation": validation})
    return data.runs[0], result, validation


def test_the_headline_intervals_are_the_mean_score_plus_minus_z_standard_errors(map_evaluation):
    run, result, validation = map_evaluation
    scores = run.heldout[0]
    assert scores.own_estimates == ("MAP plug-in",)  # the run's own estimates, not the baselines
    proba = bc.predict(result, validation)["class_proba_map"].transpose("obs", "class").values
    assert tuple(validation.class_names) == tuple(run.summary.class_names)
    codes = np.asarray(validation.y)
    per_row = -np.log(proba[np.arange(codes.size), codes])
    z = stats.norm.ppf(0.975)
    low, high = scores.interval("MAP plug-in", "log_loss")
    assert per_row.mean() == pytest.approx(scores.table.loc["MAP plug-in", "log_loss"], rel=1e-9)
    assert low == pytest.approx(max(0.0, per_row.mean() - z * stats.sem(per_row)), rel=1e-9)
    assert high == pytest.approx(per_row.mean() + z * stats.sem(per_row), rel=1e-9)
    accuracy = scores.interval("MAP plug-in", "accuracy")
    assert 0.0 <= accuracy[0] <= accuracy[1] <= 1.0
    assert scores.interval("no such estimate", "log_loss") is None


def test_the_opening_holds_the_headline_table_before_the_sentences(map_evaluation):
    run, _, _ = map_evaluation
    section = conclusion_section(run)
    assert section is not None and section.key == "conclusion"
    kinds = [type(block).__name__ for block in section.blocks]
    assert kinds[0] == "Table" and "Posterior vs point estimates on validation" in section.blocks[0].caption
    assert section.blocks[0].rows[0][0] == "MAP plug-in" and "[" in section.blocks[0].rows[0][1]
    assert all(kind == "Text" for kind in kinds[1:])  # the conclusion's sentences follow the table


def test_a_point_estimate_page_says_there_is_no_verdict_once(map_evaluation):
    run, _, _ = map_evaluation
    page = bc.reports.html.render_report(rd.ReportData((run,), None, 0.89, (), "test"))
    opening = page[page.index('id="run0-conclusion"') : page.index("<nav>")]
    assert opening.count("point estimate (method map)") == 1
    assert "Verdict:" not in opening  # the conclusion's own sentence says it, not a second line


def test_figures_move_above_the_tables_right_before_them_only():
    text, advice = Text("intro"), Table("advice", ("a",), (("x",),), kind="advice")
    first, second = Table("first", ("a",), ()), Table("second", ("a",), ())
    figure, other = Figure("<svg/>", "figure"), Figure("<svg/>", "other")
    assert figures_first([text, advice, first, second, figure, other]) == (text, advice, figure, other, first, second)
    assert figures_first([first, figure, text, second, other]) == (figure, first, text, other, second)
    assert figures_first([text, figure, first]) == (text, figure, first)


def test_a_long_table_is_folded_after_its_first_rows():
    rows = tuple((str(i),) for i in range(FOLD_ROWS + 1))
    table = Table("long", ("i",), rows)
    assert (
        table.folded and table.shown_rows == rows[:FOLDED_ROWS_SHOWN] and table.folded_rows == rows[FOLDED_ROWS_SHOWN:]
    )
    short = Table("short", ("i",), rows[:FOLD_ROWS])
    assert not short.folded and short.shown_rows == short.rows and short.folded_rows == ()
    assert not Table("confusion", ("i",), rows, compact=True).folded


def _cells(posterior, plugin, sizes, plugin_kind="mle"):
    rows = []
    for key, (p, q, size) in enumerate(zip(posterior, plugin, sizes, strict=True)):
        base = {"dataset": "d", "model": "m", "metric": "log_loss", "size": size, "key": f"k{key}"}
        rows.append({**base, "estimate": "posterior", "kind": "posterior", "value": p})
        rows.append({**base, "estimate": "MLE plug-in", "kind": plugin_kind, "value": q})
    return pd.DataFrame(rows)


def test_paired_differences_against_a_hand_computation():
    posterior = [0.30, 0.31, 0.29, 0.20, 0.25]
    plugin = [0.50, 0.52, 0.47, 0.21, 0.24]
    table = posterior_differences(_cells(posterior, plugin, [10, 10, 10, 50, 50]))
    assert list(table.columns) == DIFFERENCE_COLUMNS
    small, large = table.iloc[0], table.iloc[1]
    differences = np.array(posterior[:3]) - np.array(plugin[:3])
    assert small["mean"] == pytest.approx(differences.mean()) and small["se"] == pytest.approx(stats.sem(differences))
    assert (small["low"], small["high"]) == pytest.approx((differences.min(), differences.max()))
    assert small["verdict"] == "posterior better" and small["posterior_better"] == 3 and small["compared"] == 3
    assert large["verdict"] == "no clear difference" and large["posterior_better"] == 1


def test_a_study_difference_beyond_its_noise_but_under_the_threshold_is_negligible():
    """The study page's verdict follows the same rule as a run's: 2 SE AND 0.01 nats per row."""
    posterior = [0.300, 0.301, 0.299, 0.300]
    plugin = [0.303, 0.3041, 0.3019, 0.3031]  # the posterior lower by 0.003 per row, se 0.00003: 100 SE
    row = posterior_differences(_cells(posterior, plugin, [10, 10, 10, 10])).iloc[0]
    assert abs(row["mean"]) > 2 * row["se"] and abs(row["mean"]) < 0.01
    assert row["verdict"] == "negligible difference"
    bigger = posterior_differences(_cells(posterior, [p + 0.03 for p in posterior], [10] * 4)).iloc[0]
    assert bigger["verdict"] == "posterior better"  # 0.03 nats per row, no spread: real


def test_paired_differences_with_an_infinite_plugin_and_no_probabilities():
    table = posterior_differences(_cells([0.3, 0.4], [math.inf, 0.5], [10, 10]))
    row = table.iloc[0]
    assert row["infinite"] == 1 and row["mean"] == -math.inf and row["verdict"] == "posterior better"
    assert math.isnan(row["se"])
    missing = posterior_differences(_cells([0.3, 0.4], [math.nan, math.nan], [10, 10], plugin_kind="baseline"))
    assert missing.iloc[0]["verdict"] == "not compared" and missing.iloc[0]["kind"] == "baseline"
    equal = posterior_differences(_cells([0.3, 0.4], [0.3, 0.4], [10, 10]))
    assert equal.iloc[0]["verdict"] == "equal"


def test_cells_that_failed_the_convergence_verdict_are_left_out_of_the_comparisons_and_counted():
    """Five NUTS cells, the one at n = 50 with the lower posterior log loss failed the verdict: the paired
    differences are those of the four others, and the opening counts it."""
    from bayesclass.reports.study_report import study_conclusion

    table = _cells([0.25, 0.25, 0.5, 0.5, 0.125], [0.5, 0.5, 0.5, 0.25, 0.375], [10, 10, 50, 50, 50])
    table = table.assign(status="ok", method="nuts", converged=table["key"].ne("k4"))
    differences = posterior_differences(table)
    at_50 = differences[differences["size"] == 50].iloc[0]
    assert (at_50["cells"], at_50["compared"], at_50["mean"]) == (2, 2, pytest.approx(0.125))  # (0 + 0.25) / 2
    assert at_50["posterior_better"] == 0  # k4, the only cell where it was, is left out
    kept = posterior_differences(table[table["key"] != "k4"])
    assert differences.equals(kept)
    assert study_conclusion(table, differences)[0] == (
        "5 of 5 cells finished; 1 of 5 cells sampled by MCMC failed the convergence verdict and are left out of "
        "the comparisons (paired differences, stack, coverage)."
    )


def test_the_study_conclusion_names_the_sizes_of_each_verdict():
    from bayesclass.reports.study_report import study_conclusion

    table = _cells([0.25, 0.25, 0.25, 0.5, 0.125], [0.5, 0.5, 0.5, 0.25, 0.125], [10, 10, 10, 50, 50])
    table = table.assign(status="ok", converged=None, method="exact")  # exact draws: no MCMC verdict
    sentences = study_conclusion(table, posterior_differences(table[table["status"] == "ok"]))
    assert sentences[0] == "5 of 5 cells finished."
    assert sentences[1] == (
        "On d (m), held-out log loss of the posterior vs the MLE plug-in, paired by cell: the posterior's lower by "
        "more than 2 SE and 0.01 nats per row at n = 10; within 2 SE at n = 50 (mean differences from -0.25 to "
        "0.125)."
    )
