"""Settings whose arrays would not fit in memory: refused before any work, in one line, never a traceback.

Each row runs with ``BAYESCLASS_MEMORY_LIMIT`` set (16 GiB unless the row says otherwise), so the rows refuse
the same settings on any machine; the fits that must pass run against the machine's real available memory.
"""

from __future__ import annotations

import shutil
import time
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.inference._memory import (
    MEMORY_LIMIT_VARIABLE,
    InsufficientMemoryError,
    MemoryCheckError,
    available_bytes,
    format_bytes,
)
from bayesclass.inference.engines.fit import fit_bytes, with_sampling_defaults
from bayesclass.inference.engines.methods import SAMPLERS, methods_of
from bayesclass.models import REGISTRY, get_model
from tests.bad_inputs.harness import assert_one_line_error, run

BILLION = str(10**9)
NEEDS = "of memory, but 16.0 GiB is available: at most"


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    message: str
    limit: str = "16GiB"
    disk_free: int | None = None  # bytes free on the disk of --draws-out, where the row fakes it


def _fit(*argv: str) -> tuple[str, ...]:
    return ("fit", *argv, "--out", "{dir}/r.nc")


MEMORY_CASES = [
    Case("gp: huge --draws (gibbs)", _fit("--model", "gp", "--data", "seed004_gp", "--draws", BILLION), NEEDS),
    Case(
        "gp: huge --draws by NUTS (refused before nutpie compiles)",
        _fit("--model", "gp", "--data", "seed004_gp", "--method", "nuts", "--draws", BILLION),
        "the nuts fit (4 chains x 1,000,000,000 draws and tune=1,000, 100 rows) needs about",
    ),
    Case(
        "logistic: huge --draws", _fit("--data", "iris", "--draws", BILLION), "draws with 4 chains and tune=1,000 fit"
    ),
    Case(
        "naive_bayes: huge --draws by NUTS",
        _fit("--model", "naive_bayes", "--data", "transport", "--method", "nuts", "--draws", BILLION),
        NEEDS,
    ),
    Case(
        "naive_bayes: huge --draws, exact",
        _fit("--model", "naive_bayes", "--data", "transport", "--method", "exact", "--draws", BILLION),
        "the exact fit (4 chains x 1,000,000,000 draws, 10 rows)",
    ),
    Case("gcc: huge --draws", _fit("--model", "gcc", "--data", "iris", "--draws", BILLION), NEEDS),
    Case(
        "gcc: huge --draws, exact",
        _fit(
            "--model",
            "gcc",
            "--covariance-prior",
            "inverse_wishart",
            "--data",
            "iris",
            "--method",
            "exact",
            "--draws",
            BILLION,
        ),
        "draws with 4 chains fit; lower draws",
    ),
    Case("huge --chains", _fit("--data", "iris", "--chains", str(10**8)), "chains of 1,000 draws and tune=1,000 fit"),
    Case("huge --tune", _fit("--data", "iris", "--tune", str(10**10)), "with 4 chains of 1,000 draws fit; lower tune"),
    Case(
        "huge --chains and --draws",
        _fit("--data", "iris", "--chains", str(10**12), "--draws", BILLION),
        "draws with 1 chain and tune=0 fit; lower draws, tune and chains",
    ),
    Case(
        "compare: huge --draws",
        ("compare", "--data", "iris", "--draws", BILLION),
        NEEDS,
    ),
    Case(
        "check: huge --replicates",
        ("check", "--run", "{dir}/nb.nc", "--replicates", str(10**11)),
        "replicates fit; lower --replicates",
    ),
    Case(
        "predict: a result whose one-row tile exceeds the memory",
        ("predict", "--run", "{dir}/exact.nc", "--data", "iris", "--out", "{dir}/p.csv"),
        "prediction in tiles of 1 rows x 12,000 values",
        limit="100KiB",
    ),
    Case(
        "predict: --draws-out larger than its disk",
        ("predict", "--run", "{dir}/exact.nc", "--data", "iris", "--out", "{dir}/p.csv", "--draws-out", "{dir}/d.nc"),
        "take about 13.7 MiB, but 1.0 MiB is free where",
        disk_free=2**20,
    ),
    Case(
        "BAYESCLASS_MEMORY_LIMIT not a size",
        _fit("--data", "iris"),
        "BAYESCLASS_MEMORY_LIMIT='lots' is not a size",
        limit="lots",
    ),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A MAP naive Bayes result and exact gcc draws (4 chains x 1,000) on iris."""
    folder = tmp_path_factory.mktemp("memory")
    nb = ("fit", "--model", "naive_bayes", "--data", "transport", "--method", "map", "--out", str(folder / "nb.nc"))
    assert run(*nb) == 0
    exact = ("fit", "--model", "gcc", "--covariance-prior", "inverse_wishart", "--data", "iris", "--method", "exact")
    assert run(*exact, "--out", str(folder / "exact.nc")) == 0
    return folder


@pytest.mark.parametrize("case", MEMORY_CASES, ids=[case.name for case in MEMORY_CASES])
def test_settings_too_large_for_the_memory_are_one_line_usage_errors(results, capsys, monkeypatch, case):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, case.limit)
    if case.disk_free is not None:
        usage = namedtuple("usage", "total used free")
        monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(2**40, 2**40 - case.disk_free, case.disk_free))
    capsys.readouterr()
    start = time.perf_counter()
    assert run(*(part.format(dir=results) for part in case.argv)) == 2
    error = capsys.readouterr().err
    assert_one_line_error(error, case.message)
    assert error.count("\n") == 1 and error.startswith(f"bayesclass {case.argv[0]}: error: "), error
    assert time.perf_counter() - start < 60  # refused before compiling or sampling
    for name in ("r.nc", "p.csv", "d.nc"):
        assert not (results / name).exists()


def _huge_predict(results: Path) -> None:
    result = bc.load_result(results / "exact.nc")
    X = np.resize(bc.load("iris").X, (10**6, 4))  # 10**6 rows x 4,000 draws x 3 classes: 96 GB of draws
    bc.predict(result, X, return_draws=True)


def _huge_prior_draws(results: Path) -> None:
    from bayesclass.inference.criticism.sbc import prior_draws

    prior_draws(get_model("naive_bayes"), bc.load("transport"), 10**12, random_seed=0)


def _huge_check(results: Path) -> None:
    bc.posterior_predictive_check(bc.load_result(results / "nb.nc"), n_replicates=10**12)


def _huge_fit(results: Path) -> None:
    bc.fit("logistic", bc.load("iris"), sampler=bc.SamplerSettings(draws=10**9))


def _huge_exact_fit(results: Path) -> None:
    bc.fit("naive_bayes", bc.load("transport"), method="exact", sampler=bc.SamplerSettings(draws=10**9))


MEMORY_API_CASES = [
    ("fit(SamplerSettings(draws=10**9))", _huge_fit, "at most"),
    ("fit(method='exact', draws=10**9)", _huge_exact_fit, "draws with 4 chains fit"),
    ("predict(return_draws=True) on 10**6 rows", _huge_predict, "rows fit in one call"),
    ("prior_draws(n=10**12)", _huge_prior_draws, "prior draws fit; lower n"),
    ("posterior_predictive_check(n_replicates=10**12)", _huge_check, "replicates fit; lower n_replicates"),
]


@pytest.mark.parametrize(("case", "call", "message"), MEMORY_API_CASES, ids=[case for case, *_ in MEMORY_API_CASES])
def test_the_api_raises_insufficient_memory_before_any_work(results, monkeypatch, case, call, message):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "16GiB")
    with pytest.raises(InsufficientMemoryError, match="needs about .* of memory, but 16.0 GiB is available") as caught:
        call(results)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, MemoryError)


def test_a_modest_fit_and_prediction_pass_against_the_real_memory(results, tmp_path, monkeypatch):
    monkeypatch.delenv(MEMORY_LIMIT_VARIABLE, raising=False)
    path = tmp_path / "r.nc"
    assert run("fit", "--data", "iris", "--draws", "100", "--tune", "100", "--chains", "2", "--out", str(path)) == 0
    prediction = bc.predict(bc.load_result(results / "exact.nc"), bc.load("iris"), return_draws=True)
    assert prediction["class_proba_draws"].shape == (4, 1000, 150, 3)


@pytest.mark.parametrize("family", sorted(REGISTRY))
def test_every_default_fit_of_the_built_in_data_is_estimated_under_1_gib(family):
    """The check never refuses the README's fits: their estimates fit in 1 GiB (a small container)."""
    model = get_model(family)
    for name in ("iris", "breast_cancer", "transport", "seed004_gp"):
        data = bc.load(name)
        try:
            model.check_training_data(data)
        except ValueError:
            continue  # a family that cannot take these data (e.g. the GP, binary only, on iris)
        for method in (m for m in methods_of(model) if m in SAMPLERS):
            sampler = with_sampling_defaults(model, method, bc.SamplerSettings(), data.n_obs)
            needed = fit_bytes(model, data, method, sampler)()
            assert 1_000_000 < needed < 2**30, (family, name, method, format_bytes(needed))


def test_the_estimate_grows_with_every_setting():
    model, data = get_model("logistic"), bc.load("iris")
    needed = fit_bytes(model, data, "nuts", bc.SamplerSettings(draws=1000, tune=1000))
    assert needed(draws=2000) > needed() and needed(tune=2000) > needed() and needed(chains=8) > needed()
    assert needed(draws=2000) > 1.9 * needed(draws=1000, tune=0) - needed(draws=1, tune=0)


@pytest.mark.parametrize(
    ("setting", "expected"), [("8GiB", 8 * 2**30), ("500MB", 500 * 10**6), ("1024", 1024), (" 1.5 gib ", 3 * 2**29)]
)
def test_memory_limit_sizes(monkeypatch, setting, expected):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, setting)
    assert available_bytes() == expected


def test_memory_limit_off_and_unset(monkeypatch):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "off")
    assert available_bytes() is None
    monkeypatch.delenv(MEMORY_LIMIT_VARIABLE)
    assert 0 < available_bytes() <= __import__("psutil").virtual_memory().total
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "-3GB")
    with pytest.raises(MemoryCheckError, match="is not a size"):
        available_bytes()


def test_format_bytes():
    assert [format_bytes(n) for n in (512, 1536, 745.1 * 2**30, 3 * 2**50)] == [
        "512 B",
        "1.5 KiB",
        "745.1 GiB",
        "3.0 PiB",
    ]


STUDY_SPEC = """name = "huge draws"
seed = 0
training_sizes = [20]
repeats = 1
test_fraction = 0.3

[sampler]
draws = {draws}
chains = 2

[[models]]
family = "naive_bayes"
method = "exact"
point_estimates = ["mle"]

[[datasets]]
name = "iris"
"""
#: a study cell whose fit is too large is refused by the memory check and recorded as failed, in seconds
STUDY_MEMORY_CASES = [("study cell with draws = 10**9", str(10**9), "InsufficientMemoryError: the exact fit")]


@pytest.mark.parametrize(("case", "draws", "message"), STUDY_MEMORY_CASES, ids=[c for c, *_ in STUDY_MEMORY_CASES])
def test_a_study_cell_too_large_for_the_memory_is_a_recorded_failure(
    tmp_path, monkeypatch, capsys, case, draws, message
):
    import json

    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "16GiB")
    spec = tmp_path / "spec.toml"
    spec.write_text(STUDY_SPEC.format(draws=draws))
    start = time.perf_counter()
    assert run("study", str(spec), "--out", str(tmp_path / "out"), "--serial", "--no-progress") == 0
    assert time.perf_counter() - start < 60
    assert "1 failed" in capsys.readouterr().out
    (record,) = [json.loads(path.read_text()) for path in (tmp_path / "out" / "cells").glob("*.json")]
    assert record["status"] == "error" and message in record["error"], record["error"]
    assert "needs about" in record["error"] and "at most" in record["error"]
