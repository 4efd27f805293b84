"""Legal edge-case results (one chain, one draw, four draws, stuck chains, a constant parameter) read by every
command that reads a result, and the integer flags of those commands (issue 26).

A legal result always gets its page and its diagnosis: a statistic that cannot be computed is shown as
"not available" with why, and the convergence verdict fails with that reason (``--strict``: exit 3). ``loo``
computes nothing else, so a result whose draws are too few for PSIS is a usage error there (exit 2) that says
how many draws it has and how many it needs. Each row: the command, its exit code, a fragment of its output
(stdout, stderr or the written file), never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.inference.criticism.loo import LooUnavailable, loo
from bayesclass.inference.result import result_info, write_info
from tests.bad_inputs.harness import assert_one_line_error, run

#: the edge-case results: name -> the ``bayesclass fit`` arguments (exact draws are fast; one NUTS run)
FITS = {
    name: tuple(arguments.split())
    for name, arguments in {
        "nb_1_chain": "--data iris --model naive_bayes --method exact --chains 1",
        "nb_1_draw": "--data iris --model naive_bayes --method exact --chains 1 --draws 1",
        "nb_4x1_draws": "--data iris --model naive_bayes --method exact --draws 1",
        "nb_4x4_draws": "--data iris --model naive_bayes --method exact --draws 4",
        "nb_4x20_draws": "--data iris --model naive_bayes --method exact --draws 20",
        "gcc_1x20_draws": "--data iris --model gcc --covariance-prior inverse_wishart --method exact --chains 1 "
        "--draws 20",
        "logistic_nuts_1_chain": "--data iris --standardize --method nuts --chains 1 --draws 60 --tune 60 "
        "--no-progress",
        "logistic_nuts_2_chains": "--data iris --standardize --method nuts --chains 2 --draws 60 --tune 60 "
        "--no-progress",
        "logistic_nuts_1_draw": "--data iris --standardize --method nuts --chains 1 --draws 1 --tune 30 --no-progress",
        "logistic_map": "--data iris --standardize --method map",
    }.items()
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Path]:
    """Every result of :data:`FITS`, plus ``stuck`` (4 chains that never moved) and ``constant`` (one element
    of the NUTS posterior set to one value in every draw), as files."""
    folder = tmp_path_factory.mktemp("edge_results")
    paths = {}
    for name, arguments in FITS.items():
        paths[name] = folder / f"{name}.nc"
        assert run("fit", *arguments, "--seed", "1", "-q", "--out", str(paths[name])) == 0, name
    moving = bc.load_result(paths["nb_4x20_draws"])
    for group in ("posterior", "log_likelihood"):  # every chain repeats its first draw: a sampler that is stuck
        dataset = moving[group].to_dataset()
        repeated = {name: np.broadcast_to(v.values[:, :1], v.shape).copy() for name, v in dataset.data_vars.items()}
        moving[group] = dataset.copy(data=repeated)
    write_info(moving, result_info(moving))  # the edited arrays' digest (a fit's own results carry theirs)
    paths["stuck"] = bc.save_result(moving, folder / "stuck.nc")
    constant = bc.load_result(paths["logistic_nuts_2_chains"])
    posterior = constant["posterior"].to_dataset()
    intercept = posterior["intercept"].copy()
    intercept[..., 0] = 0.25
    constant["posterior"] = posterior.assign(intercept=intercept)
    write_info(constant, result_info(constant))
    paths["constant"] = bc.save_result(constant, folder / "constant.nc")
    return paths


@dataclass(frozen=True)
class Case:
    """One row: ``bayesclass ARGV`` (``{name}`` is a result of the fixture, ``{out}`` a file to write), the exit
    code, and a fragment of the output (``where``: "stdout", "stderr" or "out", the written file)."""

    name: str
    argv: tuple[str, ...]
    code: int
    fragment: str
    where: str = "stderr"


ONE_CHAIN_R_HAT = "r_hat not available: the result has 1 chain"
REPORT_CASES = [
    Case("report of 1 chain (exact)", ("report", "--run", "{nb_1_chain}", "--out", "{out}"), 0,
         f"{ONE_CHAIN_R_HAT} of 1000 draws; r_hat compares 2 or more chains", "out"),
    Case("report of 1 chain: no rank plots", ("report", "--run", "{nb_1_chain}", "--out", "{out}"), 0,
         "Rank plots not available: the result has 1 chain of 1000 draws", "out"),
    Case("report --strict of 1 NUTS chain", ("report", "--run", "{logistic_nuts_1_chain}", "--out", "{out}",
         "--strict"), 3, ONE_CHAIN_R_HAT),
    Case("diagnose --strict of 1 NUTS chain", ("diagnose", "--run", "{logistic_nuts_1_chain}", "--strict"), 3,
         f"{ONE_CHAIN_R_HAT} of 60 draws"),
    Case("diagnose of exact draws in 1 chain", ("diagnose", "--run", "{nb_1_chain}"), 0,
         "convergence (no verdict: independent draws, no Markov chain to converge)", "stdout"),
    Case("diagnose of 1 draw", ("diagnose", "--run", "{nb_1_draw}"), 0,
         "bulk and tail ESS not available: the result has 1 chain of 1 draw; ESS needs 4 or more draws per chain",
         "stdout"),
    Case("diagnose of 4 chains of 1 draw", ("diagnose", "--run", "{nb_4x1_draws}"), 0,
         "r_hat and ESS not available: the result has 4 chains of 1 draw", "stdout"),
    Case("report of 1 draw", ("report", "--run", "{nb_1_draw}", "--out", "{out}"), 0,
         "PSIS-LOO not available: the result has 1 draw in all (1 chain of 1 draw)", "out"),
    Case("report of 4 chains of 4 draws", ("report", "--run", "{nb_4x4_draws}", "--out", "{out}"), 0,
         "PSIS-LOO not available: the result has 16 draws in all", "out"),
    Case("report of 1 gcc chain of 20 draws", ("report", "--run", "{gcc_1x20_draws}", "--out", "{out}"), 0,
         "PSIS-LOO not available: the result has 20 draws in all (1 chain of 20 draws); PSIS-LOO needs at least 25",
         "out"),
    Case("report of stuck chains", ("report", "--run", "{stuck}", "--out", "{out}"), 0,
         "PSIS-LOO not available: PSIS cannot fit a Pareto tail", "out"),
    Case("report of a constant parameter, --strict", ("report", "--run", "{constant}", "--out", "{out}", "--strict"),
         3, "intercept[setosa]) take one value in every draw"),
    Case("report of 1 NUTS draw", ("report", "--run", "{logistic_nuts_1_draw}", "--out", "{out}"), 0,
         "E-BFMI not available: the result has 1 chain of 1 draw", "out"),
    Case("report of two runs, one too short for LOO",
         ("report", "--run", "{nb_1_chain}", "--run", "{nb_4x4_draws}", "--out", "{out}"), 0,
         "PSIS-LOO not available: the result has 16 draws in all", "out"),
    Case("report of two runs: the LOO comparison names the short one",
         ("report", "--run", "{nb_1_chain}", "--run", "{nb_4x4_draws}", "--out", "{out}"), 0,
         "No LOO comparison: PSIS-LOO of ", "out"),
    Case("loo of two runs, one too short", ("loo", "--run", "{nb_1_chain}", "--run", "{nb_4x4_draws}"), 2,
         "nb_4x4_draws.nc: PSIS-LOO not available: the result has 16 draws in all"),
    Case("loo of 1 draw", ("loo", "--run", "{nb_1_draw}"), 2,
         "PSIS-LOO not available: the result has 1 draw in all (1 chain of 1 draw); PSIS-LOO needs at least 25"),
    Case("loo of 4 chains of 1 draw", ("loo", "--run", "{nb_4x1_draws}"), 2, "4 draws in all (4 chains of 1 draw)"),
    Case("loo of 4 chains of 4 draws", ("loo", "--run", "{nb_4x4_draws}"), 2, "16 draws in all"),
    Case("loo of 20 draws", ("loo", "--run", "{gcc_1x20_draws}"), 2, "20 draws in all (1 chain of 20 draws)"),
    Case("loo of stuck chains", ("loo", "--run", "{stuck}"), 2,
         "in 150 of 150 rows the largest 16 of the 80 draws have the same log-likelihood"),
    Case("loo of a 1-chain result", ("loo", "--run", "{nb_1_chain}"), 0, "elpd_loo", "stdout"),
    Case("loo of a MAP result", ("loo", "--run", "{logistic_map}"), 2, "LOO needs posterior draws"),
    Case("predict with 1 draw", ("predict", "--run", "{nb_1_draw}", "--data", "iris", "--out", "{out}"), 0,
         "p_setosa_low", "out"),
    Case("check of 1 draw", ("check", "--run", "{nb_1_draw}", "--replicates", "20"), 0,
         "20 replicates from the posterior draws", "stdout"),
    Case("report --seed -1", ("report", "--run", "{nb_1_chain}", "--out", "{out}", "--seed", "-1"), 2,
         "--seed must be an integer in 0..4294967295, got -1"),
    Case("report --seed 1.5", ("report", "--run", "{nb_1_chain}", "--out", "{out}", "--seed", "1.5"), 2,
         "--seed must be an integer in 0..4294967295, got '1.5'"),
    Case("check --seed -1", ("check", "--run", "{nb_1_chain}", "--seed", "-1"), 2,
         "--seed must be an integer in 0..4294967295, got -1"),
    Case("check --replicates 0", ("check", "--run", "{nb_1_chain}", "--replicates", "0"), 2,
         "--replicates must be an integer >= 1, got 0"),
    Case("fit --seed -1", ("fit", "--data", "iris", "--method", "map", "--out", "{out}", "--seed", "-1"), 2,
         "--seed must be an integer in 0..4294967295, got -1"),
    Case("compare --seed -1", ("compare", "--data", "iris", "--seed", "-1"), 2,
         "--seed must be an integer in 0..4294967295, got -1"),
]  # fmt: skip

SUFFIX = {"report": ".html", "predict": ".csv", "fit": ".nc"}


@pytest.mark.parametrize("case", REPORT_CASES, ids=lambda case: case.name)
def test_edge_case_results(case: Case, results, tmp_path, capsys):
    out = tmp_path / f"out{SUFFIX.get(case.argv[0], '')}"
    argv = [argument.format(out=out, **{name: str(path) for name, path in results.items()}) for argument in case.argv]
    code = run(*argv)
    captured = capsys.readouterr()
    assert code == case.code, captured.err
    assert "Traceback" not in captured.err, captured.err
    if case.where == "out":
        assert case.fragment in out.read_text(encoding="utf-8")
    elif case.where == "stdout":
        assert case.fragment in captured.out, captured.out
    else:
        assert_one_line_error(captured.err, case.fragment)
    if case.code == 0 and case.argv[0] == "report":
        page = out.read_text(encoding="utf-8")
        assert "Traces of" in page and "<figure" in page  # the whole page, its figures included


def test_compare_one_chain_writes_its_report(tmp_path, capsys):
    """``compare --method exact --chains 1 --report`` ended in a traceback (the rank plots' multi-chain test)."""
    page = tmp_path / "one.html"
    arguments = ("--model", "naive_bayes", "--data", "iris", "--method", "exact", "--chains", "1", "--draws", "200")
    assert run("compare", *arguments, "--report", str(page)) == 0, capsys.readouterr().err
    assert "Traceback" not in capsys.readouterr().err
    assert "Rank plots not available" in page.read_text(encoding="utf-8")


API_CASES: list[tuple[str, Callable, str]] = [
    ("bc.diagnose of 1 chain fails with why", lambda r: str(bc.diagnose(r["logistic_nuts_1_chain"])), ONE_CHAIN_R_HAT),
    ("bc.report of 1 chain is a page", lambda r: bc.report(r["nb_1_chain"]), "Rank plots not available"),
    ("bc.report of 1 draw is a page", lambda r: bc.report(r["nb_1_draw"]), "PSIS-LOO not available"),
]


@pytest.mark.parametrize(("name", "call", "fragment"), API_CASES, ids=[case[0] for case in API_CASES])
def test_api_edge_case_results(name, call, fragment, results):
    loaded = {key: bc.load_result(results[key]) for key in ("nb_1_chain", "nb_1_draw", "logistic_nuts_1_chain")}
    assert fragment in call(loaded)


def test_the_verdict_fails_when_a_check_cannot_be_computed(results):
    report = bc.diagnose(bc.load_result(results["logistic_nuts_1_chain"]))
    assert not report.passed and report.applies
    assert "r_hat" in report.failed_checks
    assert [item.checks for item in report.unavailable] == [("r_hat",)]
    assert np.isnan(report.max_r_hat)


def test_loo_unavailable_is_a_value_error_with_the_numbers(results):
    with pytest.raises(LooUnavailable, match="16 draws in all") as raised:
        loo(bc.load_result(results["nb_4x4_draws"]))
    assert isinstance(raised.value, ValueError)
    assert raised.value.unavailable.remedy.startswith("fit with more draws")
