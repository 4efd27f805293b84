"""A legal result whose NUTS chain is stuck (its whole state repeats in every draw), read by ``diagnose`` and
``report`` (issue 29, item 1).

Before: the verdict failed on r_hat and ESS alone and advised the same warm-up and draws as any short run; the
stuck chain was not named. Now the failure names the chain and how often its state repeats, and the advice adds
another seed, each line with its CLI flag and API keyword. Each row: the command, its exit code, a fragment of
its output (stdout or the written page), never a traceback.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.inference.result import result_info, write_info
from tests.bad_inputs.harness import run

FIT = "--data iris --standardize --method nuts --chains 2 --draws 40 --tune 40 --seed 5 -q --no-progress".split()

#: (name, argv with {stuck} and {out}, exit code, fragment, where: "stdout" or "out")
STUCK_CHAIN_CASES: list[tuple[str, tuple[str, ...], int, str, str]] = [
    ("diagnose names the stuck chain", ("diagnose", "--run", "{stuck}"), 0,
     "stuck chain 1 (state repeats in 100% of its draws)", "stdout"),
    ("diagnose advises another seed with its flag and keyword", ("diagnose", "--run", "{stuck}"), 0,
     "another seed (--seed 6, was 5)", "stdout"),
    ("diagnose --strict of a stuck chain exits 3", ("diagnose", "--run", "{stuck}", "--strict"), 3,
     "stuck chain 1", "stdout"),
    ("report's advice box names the seed", ("report", "--run", "{stuck}", "--out", "{out}"), 0,
     "another seed (--seed 6, was 5)", "out"),
]  # fmt: skip


@pytest.fixture(scope="module")
def stuck(tmp_path_factory) -> Path:
    """A short logistic NUTS fit of iris whose chain 1 repeats its first draw (posterior and log-likelihood)."""
    folder = tmp_path_factory.mktemp("stuck_chain")
    path = folder / "moving.nc"
    assert run("fit", *FIT, "--out", str(path)) == 0
    result = bc.load_result(path)
    for group in ("posterior", "log_likelihood"):
        dataset = result[group].to_dataset()
        frozen = {}
        for name, variable in dataset.data_vars.items():
            values = variable.values.copy()
            values[1] = np.broadcast_to(values[1, :1], values[1].shape)
            frozen[name] = values
        result[group] = dataset.copy(data=frozen)
    write_info(result, result_info(result))  # the edited arrays' digest
    return bc.save_result(result, folder / "stuck.nc")


@pytest.mark.parametrize("case", STUCK_CHAIN_CASES, ids=[case[0] for case in STUCK_CHAIN_CASES])
def test_a_stuck_chain_is_named_with_its_advice(case, stuck, tmp_path, capsys):
    _, argv, code, fragment, where = case
    out = tmp_path / "page.html"
    assert run(*(argument.format(stuck=stuck, out=out) for argument in argv)) == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    text = out.read_text(encoding="utf-8") if where == "out" else captured.out
    assert fragment in text.replace("&#39;", "'"), text[-2000:]
