"""``bayesclass compare --model all`` (or a comma list): every family on one split, ranked, one file per family."""

from __future__ import annotations

import pytest

from bayesclass.inference import load as load_result
from bayesclass.inference.result import result_info
from tests.bad_inputs.harness import run

SHORT = ("--draws", "100", "--tune", "100", "--chains", "2", "--no-progress", "--seed", "0")


@pytest.fixture(scope="module")
def iris_all(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare_all") / "fits"
    import contextlib
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = run(
            "compare",
            "--model",
            "all",
            "--data",
            "iris",
            "--standardize",
            *SHORT,
            "--baselines",
            "knn",
            "--out",
            str(out),
        )
    return code, stdout.getvalue(), stderr.getvalue(), out


def test_all_fits_every_family_that_takes_the_data_and_lists_the_others(iris_all):
    code, text, error, out = iris_all
    assert code == 0, error
    assert "Traceback" not in error
    assert "gp           NOT fitted: the gp model is binary, but 'iris[train]' has 3 classes" in text
    for family in ("logistic", "naive_bayes", "gcc"):
        assert f"  {family:<12} fitted by nuts" in text
    side_by_side = next(line for line in text.splitlines() if line.startswith("ranking by PSIS-LOO"))
    assert "| ranking by held-out log loss (validation, 30 rows)" in side_by_side
    assert "ranking by held-out log loss (test, 30 rows)" in text
    assert "baseline: k nearest neighbours" in text
    assert "conclusion:\n  Recommended: " in text and "By PSIS-LOO on the " in text


def test_out_holds_one_result_per_fitted_family_on_the_same_rows(iris_all):
    code, _, _, out = iris_all
    assert code == 0
    assert sorted(path.name for path in out.iterdir()) == ["gcc.nc", "logistic.nc", "naive_bayes.nc"]
    infos = [result_info(load_result(path)) for path in sorted(out.iterdir())]
    assert {info.model.name for info in infos} == {"gcc", "logistic", "naive_bayes"}
    assert len({(info.data.fingerprint, info.data.target_fingerprint) for info in infos}) == 1  # the same rows


@pytest.mark.parametrize(("flag", "expected"), [((), "all"), (("--baselines", "none"), "none")])
def test_a_comparison_scores_every_seed_baseline_unless_told_otherwise(capsys, flag, expected):
    from bayesclass.models.baselines import BASELINES, get_baseline

    code = run("compare", "--model", "logistic,naive_bayes", "--data", "seed001_gaussians", *SHORT, *flag)
    text = capsys.readouterr().out
    assert code == 0
    labels = [get_baseline(name).label for name in BASELINES]
    shown = [label for label in labels if f"baseline: {label}" in text]
    assert (len(shown) >= 5) if expected == "all" else (shown == [])
