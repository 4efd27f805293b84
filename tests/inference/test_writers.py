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


# -- blank cells (--missing drop), an id column, TSV and parquet ------------------------------------------------------


def _with_blanks(path: Path, blanks: dict[int, str]) -> tuple[Path, list[list[str]]]:
    """``path`` with some cells blanked (row -> column) and an id column; the rows as written."""
    with open(path, newline="") as stream:
        rows = list(csv.reader(stream))
    header, body = rows[0], rows[1:]
    for row, column in blanks.items():
        body[row][header.index(column)] = "NA" if row % 2 else ""
    table = [["id", *header], *[[f"r{i:03d}", *row] for i, row in enumerate(body)]]
    with open(path, "w", newline="") as stream:
        csv.writer(stream).writerows(table)
    return path, table


@pytest.mark.parametrize("method", ["exact", "map"])
def test_missing_drop_keeps_row_order_and_writes_empty_rows(runs, tmp_path, method):
    blanks = {0: "size", 7: "colour", 8: "size", 9: "colour", 29: "size", 30: "label"}  # 30: only the label
    new, table = _with_blanks(write_rows(tmp_path / "new.csv", 31, seed=4), blanks)
    result = inference.load(runs[method])
    predictor = Predictor.of(result)
    with pytest.raises(ValueError, match=r"column 'size' 1 \(first: blank cell at line 2\); pass missing='drop'"):
        PredictionRows.open(new, result, chunk_rows=4)
    rows = PredictionRows.open(new, result, chunk_rows=4, target="label", missing="drop", id_column="id")
    summary = write_predictions(predictor, rows, tmp_path / "p.csv", progress=False)
    assert summary == PredictionSummary(written=31, undefined=0, incomplete=5)
    with open(tmp_path / "p.csv", newline="") as stream:
        written = list(csv.DictReader(stream))
    assert [row["id"] for row in written] == [row[0] for row in table[1:]]  # every row, in the input's order
    assert list(written[0])[0] == "id"
    incomplete = {row for row, column in blanks.items() if column != "label"}
    for index, row in enumerate(written):
        assert (row["predicted"] == "") == (index in incomplete)
        assert row["observed"] == ("" if index == 30 else table[index + 1][3])
    # the complete rows get exactly the probabilities of predicting them alone
    complete = [index for index in range(31) if index not in incomplete]
    X = data.features_from_csv(
        write_rows(tmp_path / "again.csv", 31, seed=4), feature_names=("size", "colour"),
        category_names={"colour": COLOURS},
    )[complete]  # fmt: skip
    alone = inference.predict(result, X)
    for index, name in enumerate(result_class_names(result)):
        np.testing.assert_allclose(
            [float(written[row][f"p_{name}"]) for row in complete], alone["class_proba"].values[:, index], rtol=1e-12
        )


@pytest.mark.parametrize("method", ["exact", "map"])
def test_predict_of_a_frame_with_missing_drop_agrees_with_the_command_line(runs, tmp_path, method, capsys):
    """``bc.predict(result, frame, missing="drop")`` keeps every row: NaN probabilities and an empty ``predicted``
    where ``bayesclass predict --missing drop`` writes empty cells, the CLI's numbers elsewhere."""
    import pandas as pd

    blanks = {0: "size", 7: "colour", 8: "size", 9: "colour", 29: "size"}  # "" at even rows, "NA" at odd ones
    new, _ = _with_blanks(write_rows(tmp_path / "new.csv", 31, seed=4), blanks)
    argv = ["predict", "--run", str(runs[method]), "--data", str(new), "--missing", "drop", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "cli.csv")]) == 0
    with open(tmp_path / "cli.csv", newline="") as stream:
        written = list(csv.DictReader(stream))
    result = inference.load(runs[method])
    frame = pd.read_csv(new)  # blank and NA cells read as NaN; the id and label columns are left out
    with pytest.raises(ValueError, match=r"column 'size' 3 \(first: blank cell at row 0\), column 'colour' 2"):
        inference.predict(result, frame)
    predicted = inference.predict(result, frame, missing="drop")
    assert predicted.sizes["obs"] == 31
    assert [row["predicted"] for row in written] == list(predicted["predicted"].values)
    assert {index for index, row in enumerate(written) if not row["predicted"]} == set(blanks)
    suffixes = ("", "_low", "_high") if method == "exact" else ("",)
    for index, name in enumerate(result_class_names(result)):
        for suffix in suffixes:
            cells = [float(row[f"p_{name}{suffix}"] or "nan") for row in written]
            np.testing.assert_array_equal(predicted[f"class_proba{suffix}"].values[:, index], cells)


def result_class_names(result) -> tuple[str, ...]:
    from bayesclass.inference.result import result_info

    return result_info(result).class_names


def test_tsv_and_parquet_are_predicted_as_the_same_csv(runs, tmp_path):
    import pandas as pd

    new, _ = _with_blanks(write_rows(tmp_path / "new.csv", 25, seed=5), {3: "size", 11: "colour"})
    frame = pd.read_csv(new, keep_default_na=False, dtype=str).replace({"": None, "NA": None})
    frame["size"] = frame["size"].astype(float)  # a typed column, as a parquet file has it
    frame.to_parquet(tmp_path / "new.parquet")
    frame.to_csv(tmp_path / "new.tsv", sep="\t", index=False)
    result = inference.load(runs["exact"])
    outputs = []
    for path in (new, tmp_path / "new.tsv", tmp_path / "new.parquet"):
        rows = PredictionRows.open(path, result, chunk_rows=6, missing="drop", id_column="id")
        out = tmp_path / f"{path.suffix[1:]}.csv"
        write_predictions(Predictor.of(result), rows, out, progress=False)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    with pytest.raises(ValueError, match=r"parquet file .* lacks the id column \(id_column='weight'\)"):
        PredictionRows.open(tmp_path / "new.parquet", result, id_column="weight")


# -- a DataFrame through fit: the rows dropped are recorded in the result and shown in the report -----------------


def test_a_dataframe_fits_and_its_dropped_rows_reach_the_result_and_the_report(tmp_path):
    from importlib import resources

    import pandas as pd

    from bayesclass._report import report
    from bayesclass.data import MissingRecord
    from bayesclass.inference.result import result_info

    frame = pd.read_csv(resources.files("bayesclass.data") / "files" / "penguins.csv")  # blanks read as NaN
    used = frame[["species", "island", "sex", "bill_depth_mm"]]
    model = "logistic"
    with pytest.raises(ValueError, match=r"name its class column, e.g. fit\(model, frame, target='species'\)"):
        inference.fit(model, used, method="map")
    with pytest.raises(ValueError, match=r"column 'sex' 11 .*missing='drop'"):
        inference.fit(model, used, target="species", method="map")
    result = inference.fit(model, used, target="species", missing="drop", method="map", random_seed=0)
    info = result_info(result)
    assert info.model_feature_names == ("island=Dream", "island=Torgersen", "sex=male", "bill_depth_mm")
    assert info.data.missing == MissingRecord("drop", 11, (("sex", 11), ("bill_depth_mm", 2)))
    assert result["observed_data"]["y"].size == 344 - 11
    inference.save(result, tmp_path / "r.nc")
    again = inference.load(tmp_path / "r.nc")
    assert result_info(again).data.missing == info.data.missing
    page = report(again)
    assert "rows dropped for blank cells" in page and "11 (missing=&#39;drop&#39;; blanks per column: sex 11" in page
    dataset = data.Dataset.from_frame(used, target="species", missing="drop")
    with pytest.raises(ValueError, match=r"target= applies to a DataFrame; data is the Dataset 'frame'"):
        inference.fit(model, dataset, target="species", method="map")


def test_results_written_before_the_missing_record_load_with_none_dropped():
    from bayesclass.data import MissingRecord
    from bayesclass.inference.result import result_info

    folder = Path(__file__).parent / "format1"
    for path in sorted(folder.glob("*.nc")):
        assert result_info(inference.load(path)).data.missing == MissingRecord(), path.name
