"""The command line's verdict handling: ``--strict`` (exit code 3), ``-q``/``-v`` and warnings as one-line notes."""

from __future__ import annotations

import logging
import re
import warnings

import pytest

import bayesclass.cli as cli
from bayesclass.cli import main
from bayesclass.inference import diagnose
from bayesclass.inference import load as load_result

#: a NUTS fit too short to pass: 100 draws of 2 chains cannot hold 400 effective draws
SHORT = ("--model", "logistic", "--data", "seed001_gaussians", "--rows", "60", "--draws", "100", "--tune", "50")
SHORT_RUN = (*SHORT, "--chains", "2", "--no-progress", "--seed", "1")


def run(*argv: str) -> int:
    try:
        return main(list(argv))
    except SystemExit as exit_:  # argparse's own errors
        return int(exit_.code)


@pytest.fixture(scope="module")
def short_fit(tmp_path_factory):
    """A saved fit whose verdict fails (and the stderr of its non-strict run)."""
    out = tmp_path_factory.mktemp("short") / "short.nc"
    assert run("fit", *SHORT_RUN, "--out", str(out)) == 0  # without --strict, a failed verdict still exits 0
    assert not diagnose(load_result(out)).passed
    return out


def test_strict_fit_exits_3_after_writing_the_result(short_fit, tmp_path, capsys):
    out = tmp_path / "again.nc"
    assert run("fit", *SHORT_RUN, "--strict", "-v", "--out", str(out)) == 3
    captured = capsys.readouterr()
    assert out.is_file() and load_result(out).attrs["method"] == "nuts"  # written before the exit code
    assert "convergence FAIL" in captured.out  # the verdict and its advice, as without --strict
    assert re.search(r"^bayesclass: debug: nuts: compile seconds \S+ s, sampling seconds \S+ s \(backend blackjax\)$",
                     captured.err, flags=re.MULTILINE)  # fmt: skip
    (line,) = [line for line in captured.err.splitlines() if not line.startswith("bayesclass: debug:")]
    assert line.startswith(f"bayesclass fit: --strict: convergence FAIL: {out}: ")
    assert "bulk ESS" in line and line.endswith("(the outputs were written)")


def test_strict_diagnose_and_report_exit_3(short_fit, tmp_path, capsys):
    assert run("diagnose", "--run", str(short_fit)) == 0
    assert run("diagnose", "--run", str(short_fit), "--strict") == 3
    assert capsys.readouterr().err.startswith(f"bayesclass diagnose: --strict: convergence FAIL: {short_fit}: ")
    page = tmp_path / "page.html"
    assert run("report", "--run", str(short_fit), "--out", str(page), "--strict") == 3
    assert page.is_file() and "Convergence FAIL" in page.read_text()


def test_strict_compare_exits_3_after_writing_its_outputs(tmp_path, capsys):
    page, out = tmp_path / "c.html", tmp_path / "c.nc"
    code = run("compare", *SHORT_RUN, "--strict", "--report", str(page), "--out", str(out))
    assert code == 3 and page.is_file() and out.is_file()
    assert capsys.readouterr().err.startswith("bayesclass compare: --strict: convergence FAIL: the posterior: ")


def test_strict_passes_a_verdict_that_passes_and_exact_draws(tmp_path, capsys):
    """Exact conjugate draws have no Markov chain and no verdict: --strict never fails them; a MAP has no draws."""
    out = tmp_path / "nb.nc"
    exact = ("--model", "naive_bayes", "--data", "transport", "--method", "exact", "--draws", "100", "--seed", "0")
    assert run("fit", *exact, "--strict", "--out", str(out)) == 0
    assert not diagnose(load_result(out)).applies
    assert run("fit", "--data", "iris", "--method", "map", "--strict", "--out", str(tmp_path / "map.nc")) == 0
    assert capsys.readouterr().err == ""


def test_strict_is_only_on_the_commands_with_a_verdict(tmp_path):
    assert run("predict", "--run", "x.nc", "--data", "iris", "--out", str(tmp_path / "p.csv"), "--strict") == 2


# -- -q / -v and warnings as notes --------------------------------------------------------------------------------


def _noisy(args) -> None:
    """A command that warns like a library, notes and debugs."""
    warnings.simplefilter("always")
    warnings.warn_explicit(
        "Estimated shape parameter of Pareto distribution is greater than 0.70\nfor one or more samples.",
        UserWarning,
        "/somewhere/site-packages/arviz_stats/loo/helper_loo.py",
        1000,
    )
    logging.getLogger("bayesclass").info("a note")
    logging.getLogger("bayesclass").debug("a debug line")
    print("the result")


PARETO = "bayesclass: warning: Estimated shape parameter of Pareto distribution is greater than 0.70"
ORIGIN = " (UserWarning at /somewhere/site-packages/arviz_stats/loo/helper_loo.py:1000)"


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ((), [PARETO, "bayesclass: note: a note"]),
        (("-q",), [PARETO]),
        (
            ("-v",),
            [
                "bayesclass: debug: datasets with quiet=False, verbose=True",  # the parsed arguments
                PARETO + ORIGIN,
                "bayesclass: note: a note",
                "bayesclass: debug: a debug line",
            ],
        ),
    ],
)
def test_warnings_notes_and_debug_are_one_line_each(flags, expected, monkeypatch, capsys):
    monkeypatch.setattr(cli, "_datasets", _noisy)
    assert run(*flags, "datasets") == 0
    captured = capsys.readouterr()
    assert captured.out == "the result\n"  # results on stdout, whatever the verbosity
    assert captured.err.splitlines() == expected
    # after the command: warnings are Python's again, the logger as it was
    assert logging.getLogger("bayesclass").handlers == [] and not logging.getLogger("py.warnings").handlers
    assert logging._warnings_showwarning is None  # type: ignore[attr-defined]


def test_verbosity_flags_go_before_or_after_the_subcommand(monkeypatch, capsys):
    monkeypatch.setattr(cli, "_datasets", _noisy)
    assert run("datasets", "-q") == 0
    assert "note" not in capsys.readouterr().err
    assert run("-q", "datasets", "-v") == 2
    assert "-q/--quiet: not allowed with argument -v/--verbose" in capsys.readouterr().err


def test_quiet_hides_the_progress_bars(monkeypatch):
    seen = {}
    monkeypatch.setattr(cli, "_fit", lambda args: seen.update(no_progress=args.no_progress))
    assert run("-q", "fit", "--data", "iris", "--out", "x.nc") == 0
    assert seen == {"no_progress": True}
    assert run("fit", "--data", "iris", "--out", "x.nc") == 0
    assert seen == {"no_progress": False}


def test_chains_default_to_4():
    args = cli._parser().parse_args(["fit", "--data", "iris", "--out", "x.nc"])
    from bayesclass.inference import SamplerSettings

    assert args.chains == 4 == SamplerSettings().chains
