"""The package installs under ONE namespace: an analyst's own ``data/``, ``models/`` ... never collide with ours.

Each test runs Python in a subprocess whose working directory holds decoy ``data/``,
``models/``, ``inference/`` and ``reports/`` packages and a ``models.py`` that raise
when imported. A fit and a CLI call must work there, import none of the decoys and
leave no top-level ``data``/``models``/``inference``/``reports`` module behind; once
for the install the tests run under (editable in CI, see ``.ci/run``) and once for a
regular wheel install into a separate target directory.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
TOP_LEVEL_NAMES = ("data", "models", "inference", "reports")

#: fits a model by the API and checks which modules were imported from where
PROBE = textwrap.dedent(
    """
    import json, sys
    import bayesclass as bc

    result = bc.fit("logistic", bc.load("breast_cancer"), method="map", standardize=True, random_seed=0)
    nb = bc.fit("naive_bayes", bc.load("transport"), method="exact", random_seed=0)
    print(json.dumps({
        "bayesclass": bc.__file__,
        "data": bc.data.__file__,
        "top_level": sorted(name for name in ("data", "models", "inference", "reports") if name in sys.modules),
        "groups": sorted(result.children),
        "nb_groups": sorted(nb.children),
    }))
    """
)


def _decoy_folder(root: Path) -> Path:
    """A working directory such as an analyst's: own data/, models/ ... packages and a models.py."""
    root.mkdir(parents=True, exist_ok=True)
    for name in TOP_LEVEL_NAMES:
        package = root / name
        package.mkdir()
        (package / "__init__.py").write_text(f"raise ImportError('the user\\'s own {name} package was imported')\n")
        (package / "notes.csv").write_text("a,b\n1,2\n")
    (root / "models.py").write_text("raise ImportError('the user\\'s own models.py was imported')\n")
    return root


def _run(arguments: list[str], *, cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if pythonpath is not None:
        environment["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(arguments, cwd=cwd, env=environment, capture_output=True, text=True, timeout=600)


def _check_probe(completed: subprocess.CompletedProcess, *, package_root: Path) -> None:
    import json

    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["top_level"] == [], f"top-level modules imported: {report['top_level']}"
    assert Path(report["bayesclass"]).resolve().is_relative_to(package_root.resolve())
    assert Path(report["data"]).resolve().is_relative_to(package_root.resolve())
    assert "point_estimate_map" in report["groups"]
    assert "posterior" in report["nb_groups"]


def test_installed_package_works_beside_the_users_own_data_and_models_folders(tmp_path: Path) -> None:
    """The install the tests run under (editable in CI): fit by the API and by the CLI among decoys."""
    folder = _decoy_folder(tmp_path / "analysis")
    _check_probe(_run([sys.executable, "-c", PROBE], cwd=folder), package_root=REPOSITORY)
    cli = _run(
        [sys.executable, "-m", "bayesclass.cli", "fit", "--model", "logistic", "--data", "breast_cancer"]
        + ["--standardize", "--method", "map", "--seed", "0", "--out", "run.nc"],
        cwd=folder,
    )
    assert cli.returncode == 0, cli.stderr
    assert (folder / "run.nc").stat().st_size > 0


def test_nothing_but_bayesclass_is_importable_at_top_level(tmp_path: Path) -> None:
    """From a folder without decoys, data/models/inference/reports are not importable: we install none."""
    empty = tmp_path / "empty"
    empty.mkdir()
    code = (
        "import importlib.util as u; print([n for n in ('data', 'models', 'inference', 'reports') if u.find_spec(n)])"
    )
    completed = _run([sys.executable, "-c", code], cwd=empty)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
    assert importlib.util.find_spec("bayesclass.data") is not None


def test_wheel_installs_only_the_bayesclass_namespace(tmp_path: Path) -> None:
    """A regular (non-editable) wheel: its only top-level package is bayesclass, and it works among decoys."""
    wheels = tmp_path / "wheels"
    source = tmp_path / "source"  # a copy: building in place would leave build/ in the checkout
    shutil.copytree(
        REPOSITORY,
        source,
        ignore=shutil.ignore_patterns(".git", ".venv", ".ci", "build", "*.egg-info", "__pycache__", "*.nc"),
    )
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            *isolation,
            "--wheel-dir",
            str(wheels),
            str(source),
        ],
        cwd=tmp_path,
    )
    if built.returncode != 0:
        pytest.fail(f"pip wheel failed: {built.stderr[-2000:]}")
    (wheel,) = wheels.glob("bayesclass-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        top_level = {name.split("/")[0] for name in archive.namelist()}
        names = archive.namelist()
    assert {name for name in top_level if not name.endswith(".dist-info")} == {"bayesclass"}
    for subpackage in TOP_LEVEL_NAMES:
        assert f"bayesclass/{subpackage}/__init__.py" in names
    assert "bayesclass/data/files/transport.csv" in names  # package data travels with the namespace

    target = tmp_path / "site"
    installed = _run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        cwd=tmp_path,
    )
    assert installed.returncode == 0, installed.stderr
    folder = _decoy_folder(tmp_path / "analysis")
    _check_probe(_run([sys.executable, "-c", PROBE], cwd=folder, pythonpath=target), package_root=target)
