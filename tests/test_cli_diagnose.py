"""``bayesclass diagnose`` of a latent GP (issue 40): the hyperparameters and one row per latent block; ``--full``
lists every element; and ``compare`` prints no blank lines where its progress bars were."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from bayesclass.inference import diagnose
from bayesclass.inference import load as load_result
from bayesclass.inference.engines import _blackjax
from tests.bad_inputs.harness import run

GP_RUN = ("--model", "gp", "--data", "seed004_gp", "--rows", "60", "--draws", "200", "--chains", "2", "--seed", "1")


@pytest.fixture(scope="module")
def gp_file(tmp_path_factory):
    """A saved latent GP: 3 hyperparameter elements and 60 latent values."""
    out = tmp_path_factory.mktemp("gp") / "gp.nc"
    assert run("fit", *GP_RUN, "--no-progress", "--out", str(out)) == 0
    return out


def _table_labels(stdout: str) -> list[str]:
    """The row labels of the printed table: the lines after the column header (a line starting with spaces)."""
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "ess_bulk" in line and "mcse_mean" in line)
    return [re.split(r"\s{2,}", line)[0] for line in lines[header + 1 :] if not line.startswith("(")]


def test_diagnose_prints_the_hyperparameters_and_one_row_for_the_latent_block(gp_file, capsys):
    assert run("diagnose", "--run", str(gp_file)) == 0
    out = capsys.readouterr().out
    assert _table_labels(out) == ["lengthscale[x]", "amplitude", "constant", "latent (60 elements)"]
    report = diagnose(load_result(gp_file))
    row = report.table.loc["latent (60 elements)"]
    (line,) = [line for line in out.splitlines() if line.startswith("latent (60 elements)")]
    assert line.split()[-2:] == [row["worst_element"], row["lowest_ess_element"]]
    assert line.split()[3:7] == ["n/a"] * 4  # no mean, sd or interval of a block
    assert out.splitlines()[-1].endswith("--full lists every element)")
    assert out.splitlines()[:2] == str(report).splitlines()[:2]  # the verdict, judged on every element, first


def test_diagnose_full_prints_every_element(gp_file, capsys):
    assert run("diagnose", "--run", str(gp_file), "--full") == 0
    out = capsys.readouterr().out
    assert _table_labels(out) == ["lengthscale[x]", "amplitude", "constant", *(f"latent[{i}]" for i in range(60))]
    assert "elements)" not in out
    verdict = str(diagnose(load_result(gp_file))).splitlines()[:2]
    assert out.splitlines()[:2] == verdict  # the same verdict and worst values as with the condensed table


def test_diagnose_full_takes_no_value(gp_file, capsys):
    assert run("diagnose", "--run", str(gp_file), "--full=yes") == 2
    assert "argument --full: ignored explicit argument 'yes'" in capsys.readouterr().err


def test_compare_leaves_no_blank_lines_where_the_progress_bar_was(capsys):
    """rich ends a progress bar on a file or pipe with a blank line: compare left one per fit (four with
    ``--model all``). Standard error here is no terminal, as in a log file: no bar, no line."""
    assert run("compare", *GP_RUN) == 0  # the progress bar is on by default
    captured = capsys.readouterr()
    assert captured.err == ""
    blank = [not line.strip() for line in captured.out.splitlines()]
    assert not any(a and b for a, b in zip(blank, blank[1:], strict=False)), captured.out  # no run of blank lines
    assert captured.out.splitlines()[0].startswith("seed004_gp: 36 training")


@pytest.mark.slow
@pytest.mark.parametrize("model", [("--model", "all"), ("--model", "logistic", "--backend", "pymc")], ids=str)
def test_compare_of_every_family_or_by_pymc_leaves_no_blank_lines(model, capsys):
    """The issue's four blank lines: one per family's bar (blackjax's three, the GP's Gibbs); PyMC's own bar drew its
    final table and blank lines on standard output."""
    data = ("--data", "seed004_gp", "--rows", "60", "--draws", "200", "--tune", "200", "--chains", "2", "--seed", "1")
    assert run("compare", *model, *data) == 0
    captured = capsys.readouterr()
    assert "\n\n" not in "\n" + captured.err  # no blank line among the notes and warnings
    blank = [not line.strip() for line in captured.out.splitlines()]
    assert not any(a and b for a, b in zip(blank, blank[1:], strict=False)), captured.out
    assert captured.out.splitlines()[0].startswith("seed004_gp: 36 train")
    assert "Progress" not in captured.out


def test_the_sampling_progress_bar_is_drawn_on_a_terminal_and_cleared(monkeypatch):
    terminal = io.StringIO()
    monkeypatch.setattr(_blackjax, "_progress_console", lambda: Console(file=terminal, force_terminal=True))
    bar = _blackjax._Progress(4, enabled=True, label="Gibbs (data augmentation)")
    bar.advance(4)
    bar.close()
    assert "Gibbs (data augmentation)" in terminal.getvalue()
    assert terminal.getvalue().endswith("\x1b[1A\x1b[2K")  # transient: the bar's line is erased, none left
    terminal.truncate(0)
    _blackjax._Progress(4, enabled=False).close()
    assert terminal.getvalue() == ""
