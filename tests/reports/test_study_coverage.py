"""Interval coverage in a study: each cell records it per estimate, the report draws it against the nominal
levels, tabulates it and states its conclusion; a record written before coverage was measured still reads."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

import bayesclass.study as bs
from bayesclass.inference.studies.records import seal
from bayesclass.reports.html import write_report

SPEC = """
name = "coverage"
seed = 5
training_sizes = [20, 80]
repeats = 2
test_fraction = 0.3

[sampler]
draws = 300
chains = 2

[[models]]
family = "logistic"
method = "laplace"
point_estimates = ["mle", "map"]
baselines = ["knn"]

[[models]]
family = "naive_bayes"
method = "exact"
point_estimates = ["mle", "map", "posterior_mean"]

[[datasets]]
name = "logistic_known_weights"
generator = { n = 400, random_seed = 2 }
models = ["logistic"]

[[datasets]]
name = "seed001_gaussians"
generator = { n = 400, random_seed = 1 }
models = ["naive_bayes"]
"""
COVERAGE = ("coverage_89", "coverage_95", "parameter_coverage_89", "parameter_coverage_95")


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, object]:
    folder = tmp_path_factory.mktemp("coverage")
    (folder / "spec.toml").write_text(SPEC, encoding="utf-8")
    table = bs.run(bs.read_spec(folder / "spec.toml"), folder / "out", serial=True, progress=False)
    return folder, table


def test_each_cell_records_coverage_per_estimate(study) -> None:
    _, table = study
    assert set(table["status"]) == {"ok"}
    logistic = table[table["model"] == "logistic"]
    measured = logistic[logistic["metric"].isin(COVERAGE)]
    # every estimate with an interval, at both levels, of both truths; values are shares
    assert set(measured["estimate"]) == {"posterior", "MLE plug-in", "MAP plug-in"}
    assert measured.groupby("key")["metric"].nunique().eq(4).all()
    values = measured["value"].dropna()
    assert len(values) > 0 and values.between(0, 1).all()
    assert measured.loc[measured["estimate"] == "posterior", "value"].notna().all()
    # a baseline has no interval: no coverage row
    assert not table[table["estimate"].str.startswith("baseline", na=False) & table["metric"].isin(COVERAGE)].shape[0]
    # naive Bayes: the posterior and the MLE/MAP (Wald) are measured; estimates without an interval: NaN, not 0
    bayes = table[(table["model"] == "naive_bayes") & table["metric"].isin(COVERAGE)]
    assert set(bayes["metric"]) == {"coverage_89", "coverage_95"}  # its parameters are not log-odds coefficients
    with_interval = bayes["estimate"].isin(["posterior", "MLE plug-in", "MAP plug-in"])
    assert bayes.loc[with_interval, "value"].notna().all()
    assert bayes.loc[~with_interval, "value"].isna().all()
    # the 95% interval contains the 89% one: it covers at least as much, cell by cell
    wide = measured.pivot_table(index=["key", "estimate"], columns="metric", values="value")
    assert (wide["coverage_95"] >= wide["coverage_89"] - 1e-12).all()


def test_the_report_shows_coverage_curves_a_table_and_its_conclusion(study, tmp_path) -> None:
    folder, table = study
    page = bs.report(folder / "out")
    assert "<h2>Interval coverage of the truth</h2>" in page
    section = page[page.index("<h2>Interval coverage of the truth</h2>") :]
    section = section[: section.index("<h2>", 10)]
    sources = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', section)
    images = [base64.b64decode(source).decode() for source in sources]
    assert len(images) == 2  # one figure per (data set, model)
    logistic = next(svg for svg in images if "true coefficients: 95% intervals" in svg)
    assert "nominal 89%" in logistic and "nominal 95%" in logistic  # the levels drawn, labelled
    assert "true P(class | x): 89% intervals" in logistic and "MLE plug-in" in logistic
    assert "Coverage of the truth per training size: mean over the cells" in section
    bayes = next(svg for svg in images if svg is not logistic)  # naive Bayes: its MLE's Wald intervals are measured
    assert "MLE plug-in" in bayes and "true coefficients" not in bayes
    assert "not available" in section  # the naive Bayes posterior mean
    # the conclusion states the posterior's coverage at the smallest size, as in the table
    posterior = table[(table["model"] == "logistic") & (table["estimate"] == "posterior")
                      & (table["metric"] == "coverage_95") & (table["size"] == 20)]["value"].mean()  # fmt: skip
    sentence = re.search(r"On logistic_known_weights \(logistic\), 95% intervals covered the true P\(class \| x\): "
                         r"[^<]*?posterior ([0-9.]+)% at n = 20", section)  # fmt: skip
    assert sentence is not None, section[-3000:]
    assert float(sentence.group(1)) == pytest.approx(100 * posterior, abs=0.051)
    assert "coverage is not available for post. mean plug-in" in section  # no extremum: no Wald interval
    write_report(tmp_path / "study.html", page)


def test_a_record_written_before_coverage_still_reads(study, tmp_path) -> None:
    folder, table = study
    import shutil

    out = tmp_path / "out"
    shutil.copytree(folder / "out", out)
    for path in (out / "cells").glob("*.json"):
        record = json.loads(path.read_text())
        record["rows"] = [row for row in record["rows"] if "coverage_" not in row["metric"]]
        record["timings"].pop("coverage_seconds", None)
        path.write_text(json.dumps(seal({k: v for k, v in record.items() if k != "checksum"})), encoding="utf-8")
    older = bs.load(out)
    assert older.attrs["rejected"] == [] and older["key"].nunique() == table["key"].nunique()
    assert not older["metric"].isin(COVERAGE).any()
    page = bs.report(out)
    assert "its records hold no interval coverage: they were written by a bayesclass that did not measure it" in page
    assert np.isfinite(older.loc[older["metric"] == "log_loss", "value"]).any()
