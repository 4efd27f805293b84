"""The streaming writers of predictions from the Python API, without the command line: a CSV file in, the
predictions CSV out, the same bytes as ``bayesclass predict``; the per-draw netCDF file; a built-in dataset."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayesclass import data, inference
from bayesclass.cli import main
from bayesclass.inference.prediction.predict import Predictor
from bayesclass.inference.prediction.writers import (
    PredictionRows,
    PredictionSummary,
    prediction_header,
    write_predictions,
)

COLOURS = ("blue", "green", "red")


def write_rows(path: Path, n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    size = rng.normal(size=n)
    colour = rng.integers(0, 3, n)
    label = np.where(size + 0.5 * colour + rng.normal(size=n) > 0.5, "big", "small")
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["size", "colour", "label"])
        writer.writerows([repr(float(s)), COLOURS[c], lab] for s, c, lab in zip(size, colour, label, strict=True))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An exact naive Bayes posterior and a MAP logistic regression of a small CSV, saved as run files."""
    folder = tmp_path_factory.mktemp("writers")
    dataset = data.load_csv(write_rows(folder / "train.csv", 120, seed=1), target="label")
    files = {}
    for family, method in (("naive_bayes", "exact"), ("logistic", "map")):
        files[method] = folder / f"{method}.nc"
        inference.save(inference.fit(family, dataset, method=method, random_seed=0), files[method])
    return files


@pytest.mark.parametrize("method", ["exact", "map"])
@pytest.mark.parametrize("target", [None, "label"])
def test_the_api_writes_the_same_bytes_as_the_cli(runs, tmp_path, method, target, capsys):
    new = write_rows(tmp_path / "new.csv", 45, seed=2)
    result = inference.load(runs[method])
    predictor = Predictor.of(result)
    rows = PredictionRows.open(new, result, chunk_rows=7, target=target)
    summary = write_predictions(predictor, rows, tmp_path / "api.csv", progress=False)
    assert summary == PredictionSummary(written=45, undefined=0)

    argv = ["predict", "--run", str(runs[method]), "--data", str(new), "--out", str(tmp_path / "cli.csv")]
    assert main([*argv, "--chunk-rows", "7", *(["--target", target] if target else [])]) == 0
    assert (tmp_path / "api.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    header = (tmp_path / "api.csv").read_text().splitlines()[0].split(",")
    assert header == prediction_header(predictor, labelled=target is not None)
    assert header[-1] == ("observed" if target else "predicted")
    assert "argparse" not in sys.modules["bayesclass.inference.prediction.writers"].__dict__


def test_the_per_draw_file_and_a_built_in_dataset(runs, tmp_path):
    result = inference.load(runs["exact"])
    predictor = Predictor.of(result, return_draws=True)
    new = write_rows(tmp_path / "new.csv", 30, seed=3)
    rows = PredictionRows.open(str(new), result, chunk_rows=11)
    out, draws_out = tmp_path / "p.csv", tmp_path / "d.nc"
    write_predictions(predictor, rows, out, draws_out=draws_out, result=result, run=runs["exact"], progress=False)
    with xr.open_dataset(draws_out) as written:
        draws = written["class_proba_draws"]
        assert draws.dims == ("chain", "draw", "obs", "class") and draws.sizes["obs"] == 30
        assert written.attrs["method"] == "exact" and written.attrs["run"] == str(runs["exact"])
        mean = draws.mean(("chain", "draw")).values
        classes = written["class"].values.tolist()
    with open(out, newline="") as stream:
        table = list(csv.DictReader(stream))
    for index, name in enumerate(classes):
        np.testing.assert_allclose([float(row[f"p_{name}"]) for row in table], mean[:, index], rtol=1e-12)


def test_a_target_with_a_built_in_dataset_is_refused(runs):
    result = inference.load(runs["map"])
    with pytest.raises(ValueError, match="applies to CSV files"):
        PredictionRows.open("iris", result, target="species")
