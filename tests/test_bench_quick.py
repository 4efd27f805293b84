"""Benchmarks that cannot rot: every script in bench/ runs its ``--quick`` smoke test in CI (issue 30 item 6).

The scripts are found by globbing ``bench/bench_*.py``, so a new script is covered without editing this module:

- default run (cheap): each script has a module docstring and ``--quick`` in its ``--help``;
- ``-m bench`` (also ``slow``, run after the default tests by .ci/run): each script's ``--quick --json PATH`` exits
  0 with no traceback on standard error, judges no target (no PASS/MISS on standard output), and writes a report
  valid against the harness's schema (``bench/harness.py``: ``SCHEMA``, ``RECORD_KEYS``, ``report_problems``).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "bench").glob("bench_*.py"))
IDS = [script.stem for script in SCRIPTS]


def _harness():
    """bench/harness.py, loaded by path (the scripts put bench/ on sys.path by running as files; tests do not)."""
    spec = importlib.util.spec_from_file_location("bench_harness", ROOT / "bench" / "harness.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_glob_finds_the_scripts():
    assert len(SCRIPTS) >= 16, [script.name for script in SCRIPTS]


@pytest.mark.parametrize("script", SCRIPTS, ids=IDS)
def test_script_has_a_docstring_and_a_quick_option(script: Path):
    docstring = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8")))
    assert docstring and len(docstring.split()) >= 10, f"{script.name} has no module docstring saying what it measures"
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )  # a script without an argument parser would run the whole benchmark here: the timeout stops it
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--quick" in done.stdout, f"{script.name} --help does not offer --quick:\n{done.stdout}"
    assert "--json" in done.stdout, f"{script.name} --help does not offer --json:\n{done.stdout}"


def test_report_problems_catches_a_judged_quick_record():
    harness = _harness()
    record = dict.fromkeys(harness.RECORD_KEYS) | {"bench": "x", "case": "c", "verdict": "info"}
    report = {
        "schema": harness.SCHEMA, "bench": "x", "settings": {"quick": True}, "records": [record], "details": {},
        "versions": {}, "machine": {}, "total_seconds": 1.0,
    }  # fmt: skip
    assert harness.report_problems(report) == []
    judged = record | {"target": ">= 3", "verdict": "PASS"}
    assert "judged PASS in a --quick run" in " ".join(harness.report_problems(report | {"records": [judged]}))
    assert harness.report_problems(report | {"schema": "bayesclass-bench/1"})
    assert harness.report_problems(report | {"records": [{"bench": "x"}]})


def test_verdicts_in_a_quick_run_judge_nothing(capsys):
    verdicts = _harness().Verdicts("x", quick=True)
    assert verdicts.check("ratio", 0.5, 3.0, ">=", baseline="them") is True
    line = capsys.readouterr().out
    assert "MISS" not in line and "PASS" not in line and "information" in line
    assert verdicts.records[0]["verdict"] == "info" and verdicts.records[0]["target"] is None
    full = _harness().Verdicts("x")
    assert full.check("ratio", 0.5, 3.0, ">=", baseline="them") is False
    assert full.records[0]["verdict"] == "MISS"


@pytest.mark.slow
@pytest.mark.bench
@pytest.mark.parametrize("script", SCRIPTS, ids=IDS)
def test_quick_run(script: Path, tmp_path: Path):
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, str(script), "--quick", "--json", str(report_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, f"{script.name} --quick exited {done.returncode}:\n{done.stderr[-4000:]}"
    assert "Traceback (most recent call last)" not in done.stderr, done.stderr[-4000:]
    judged = re.findall(r".*\b(?:PASS|MISS)\b.*", done.stdout)
    assert not judged, f"{script.name} --quick judged a target:\n" + "\n".join(judged)
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert _harness().report_problems(report) == []
    assert report["bench"] == script.stem.removeprefix("bench_")
    assert report["settings"]["quick"] is True
