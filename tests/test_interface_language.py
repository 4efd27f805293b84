"""Each interface speaks its own language: the same bad input, refused from the command line and from Python.

The command line's message names flags (``--missing drop``) and no Python argument (``missing='drop'``); the
Python message names arguments and no flag. Both come from one check and one wording
(:func:`bayesclass.data.arguments.spelled`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.cli import main
from bayesclass.data.arguments import interface, speaking

#: a Python spelling of an argument: ``name=value``, ``Class(name=value)``
PYTHON_ARGUMENT = re.compile(r"\b[a-z_]+=")
#: a command-line flag
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _csv(rows: int, columns: Callable[[int, np.random.Generator], dict[str, str]]) -> Callable[[Path], Path]:
    """A writer of a CSV file of ``rows`` rows (the class ``y`` alternates), each row's cells from ``columns``."""

    def write(folder: Path) -> Path:
        rng = np.random.default_rng(0)
        lines = []
        for i in range(rows):
            cells = {**columns(i, rng), "y": "a" if i % 2 else "b"}
            lines.append(",".join(cells.values()))
        path = folder / "table.csv"
        path.write_text(",".join({**columns(0, rng), "y": ""}) + "\n" + "\n".join(lines) + "\n")
        return path

    return write


@dataclass(frozen=True)
class Case:
    """One bad input: the command's arguments (``{data}``: the file), the Python call, each one's fragments."""

    name: str
    write: Callable[[Path], Path] | None
    argv: tuple[str, ...]
    python: Callable[[str], object]
    cli_says: tuple[str, ...]
    python_says: tuple[str, ...]


def _table(path: str) -> bc.Dataset:
    return bc.load(path, target="y")


CASES = [
    Case(
        "a blank cell without a missing policy",
        _csv(30, lambda i, rng: {"x1": "" if i == 11 else f"{rng.normal():.3f}", "x2": f"{rng.normal():.3f}"}),
        ("fit", "--data", "{data}", "--target", "y", "--method", "map"),
        _table,
        ("column 'x1' 1 (first: blank cell at line 13)", "Pass --missing drop to drop them"),
        ("column 'x1' 1 (first: blank cell at line 13)", "Pass missing='drop' to drop them"),
    ),
    Case(
        "too many levels",
        _csv(80, lambda i, rng: {"x1": f"{rng.normal():.3f}", "code": f"c{i:02d}"}),
        ("fit", "--data", "{data}", "--target", "y", "--method", "map"),
        _table,
        ("80 distinct levels, more than --max-levels 50", "without it (--features ...)", "limit with --max-levels 80"),
        ("80 distinct levels, more than max_levels=50", "without it (features=...)", "limit with max_levels=80"),
    ),
    Case(
        "exact draws of the gcc under the LKJ prior",
        None,
        ("fit", "--model", "gcc", "--data", "iris", "--method", "exact"),
        lambda _: bc.fit(bc.GaussianClassConditional(), bc.load("iris"), method="exact"),
        ("--method exact is not available", "it needs the conjugate prior --covariance-prior inverse_wishart"),
        (
            "method='exact' is not available",
            "it needs the conjugate prior GaussianClassConditionalPrior(covariance_prior='inverse_wishart')",
        ),
    ),
    Case(
        "a logistic MLE of separable classes",
        _csv(
            30, lambda i, rng: {"x1": f"{(3 if i % 2 else -3) + rng.normal(0, 0.5):.3f}", "x2": f"{rng.normal():.3f}"}
        ),
        ("fit", "--data", "{data}", "--target", "y", "--method", "mle"),
        lambda path: bc.fit(bc.LogisticRegression(), _table(path), method="mle"),
        ("Use --method map (the Gaussian prior", "sample the posterior (--method nuts)"),
        ("Use kind='map' (the Gaussian prior", "sample the posterior (method='nuts')"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_command_line_names_flags_and_python_names_arguments(case, tmp_path, capsys):
    data = str(case.write(tmp_path)) if case.write else ""
    argv = [part.format(data=data) for part in case.argv]
    assert main([*argv, "--out", str(tmp_path / "r.nc")]) in (1, 2)
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1, error
    for fragment in case.cli_says:
        assert fragment in error
    assert not PYTHON_ARGUMENT.search(error), error
    assert interface() == "python"  # the command's language ended with it
    with pytest.raises(ValueError) as raised:
        case.python(data)
    message = str(raised.value)
    for fragment in case.python_says:
        assert fragment in message
    assert not FLAG.search(message), message


def test_an_in_process_command_restores_the_python_interface(monkeypatch, capsys):
    """After ``main()`` returns, raises or exits (argparse), messages name Python arguments again."""
    assert main(["fit", "--data", "iris", "--target", "species", "--out", "x.nc"]) == 2  # a usage error
    assert "--target applies to" in capsys.readouterr().err and interface() == "python"
    with pytest.raises(SystemExit):
        main(["fit", "--method", "no-such-method"])
    assert interface() == "python"

    def fails(args):
        assert interface() == "cli"  # inside the command
        raise RuntimeError("a bug")

    import bayesclass.cli as cli

    monkeypatch.setattr(cli, "_datasets", fails)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["datasets"])
    assert interface() == "python"
    with speaking("cli"):  # a caller's own choice is restored as it was, too
        assert main(["fit", "--data", "iris", "--target", "species", "--out", "x.nc"]) == 2
        assert interface() == "cli"
    assert interface() == "python"
