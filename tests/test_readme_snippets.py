"""Every Python snippet of README.md runs exactly as written, as a new user runs it.

Each ```` ```python ```` block is written unchanged to its own file in a fresh temporary directory and run as
``python snippet.py`` in a subprocess with a new, empty ``HOME`` (no cache of compiled samplers or data; the cache
variables of this session removed): a plain script without an ``if __name__ == "__main__":`` guard, which is how
the README's snippets are written (the Gibbs chains and Dask workers must not run it again). It must exit 0 with no
traceback, and what it prints must hold: no printed line says ``FAIL``, and a printed convergence verdict
(``print(bc.diagnose(...))``) says ``PASS``.

A snippet that fits the latent GP or runs a study is marked ``slow`` (minutes); the others, the main job's NUTS
fit of the logistic model among them, stay in the default run (seconds each). The snippets are read from README.md
at collection time: a snippet added there is tested without touching this file. The values the README states in
comments beside bare expressions are not printed by the snippets, so they are not checked here (the tests of
each family check those numbers).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
#: a fenced Python block: its opening line is exactly ```python, its closing line ```
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
#: environment variables that would point the snippet at this session's caches instead of the new HOME's
CACHE_VARIABLES = ("BAYESCLASS_CACHE_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "JAX_CACHE_DIR")
#: what a slow snippet names: the latent GP (Gibbs and NUTS runs, HSGP on 10,000 rows: 875 s on a loaded 2-core
#: machine from a new HOME) and studies (a grid of fits); the others took 3-14 s there (the NUTS logistic fit, XLA
#: compiling from nothing, the longest)
SLOW_NAMES = ("LatentGaussianProcess", "bayesclass.study", "bs.run(", "run_study(")
#: the wall-time limit of one snippet (a fresh HOME compiles everything once)
TIMEOUT_S = 1800


def readme_snippets(text: str) -> list[tuple[int, str]]:
    """(line number of the opening fence, code) of every ```python block of ``text``."""
    return [(text.count("\n", 0, match.start()) + 1, match.group(1)) for match in FENCE.finditer(text)]


def is_slow(code: str) -> bool:
    """Whether the snippet fits a latent GP or runs a study (the rule of the module docstring)."""
    return any(name in code for name in SLOW_NAMES)


SNIPPETS = readme_snippets(README.read_text(encoding="utf-8"))


def _parameters() -> list:
    parameters = []
    for line, code in SNIPPETS:
        marks = [pytest.mark.slow] if is_slow(code) else []
        parameters.append(pytest.param(code, id=f"README.md:{line}", marks=marks))
    return parameters


def test_the_readme_has_python_snippets_and_the_extraction_is_exact():
    """The fence pattern finds every block (none is skipped by a spelling of the fence) and keeps it verbatim."""
    text = README.read_text(encoding="utf-8")
    assert len(SNIPPETS) == text.count("```python") >= 1
    sample = "x\n```python\nimport a\n\nprint(a)  # 1\n```\ny\n```bash\nls\n```\n"
    assert readme_snippets(sample) == [(2, "import a\n\nprint(a)  # 1\n")]
    assert is_slow("gp = bc.LatentGaussianProcess()") and is_slow("import bayesclass.study as bs")
    assert not is_slow('bc.fit(nb, transport, method="exact", random_seed=0)')


@pytest.mark.parametrize("code", _parameters())
def test_a_readme_snippet_runs_as_a_plain_script(code, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    script = work / "snippet.py"
    script.write_text(code, encoding="utf-8")
    environment = {name: value for name, value in os.environ.items() if name not in CACHE_VARIABLES}
    environment["HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, script.name], capture_output=True, text=True, cwd=work, env=environment, timeout=TIMEOUT_S
    )
    report = f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-5000:]}"
    assert done.returncode == 0, report
    assert "Traceback" not in done.stderr, report
    assert not [row for row in done.stdout.splitlines() if "FAIL" in row], report
    if "print(bc.diagnose(" in code:
        assert done.stdout.count("convergence PASS") == code.count("print(bc.diagnose("), report
