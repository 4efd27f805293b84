"""One table, two doors: a pandas DataFrame through the Python API and the same table as a parquet file through
the command line, each through fit, predict, report and a study.

The table is the Palmer penguins file shipped with the package (blank cells, text columns ``island`` (3 levels)
and ``sex`` (2, with most of the blanks)), plus a ``bool`` column ``heavy`` (body mass above 4 kg, blank where
the mass is) and the numeric column ``year`` declared categorical. Every expectation is computed here
independently with pandas (rows with a blank, level frequencies, indicator columns) or by the other door: the
DataFrame and the parquet file must give the same Dataset and the same estimates.
"""

from __future__ import annotations

import html
import json
import math
import re
from importlib import resources

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayesclass as bc
from bayesclass.cli import main

TARGET = "species"
KINDS = {"year": "categorical"}
SEED = 3


def run(*argv: str) -> int:
    try:
        return main([str(arg) for arg in argv])
    except SystemExit as exit_:  # argparse refuses a bad choice itself
        return int(exit_.code)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    frame = pd.read_csv(resources.files("bayesclass.data") / "files" / "penguins.csv")  # blanks read as NaN
    mass = frame["body_mass_g"]
    frame["heavy"] = pd.array(np.where(mass.isna(), None, mass > 4000), dtype="boolean")  # bool, blank with mass
    return frame


@pytest.fixture(scope="module")
def folder(tmp_path_factory, table):
    """The table as ``table.parquet``; ``new.parquet``: its features in reverse row order, with an id column first."""
    path = tmp_path_factory.mktemp("tables")
    table.to_parquet(path / "table.parquet")
    new = table.drop(columns=TARGET).iloc[::-1].reset_index(drop=True)
    new.insert(0, "tag", [f"penguin-{i}" for i in range(len(table) - 1, -1, -1)])  # the row's place in the table
    new.to_parquet(path / "new.parquet")
    return path


@pytest.fixture(scope="module")
def frame_data(table) -> bc.Dataset:
    return bc.Dataset.from_frame(table, target=TARGET, missing="drop", feature_kinds=KINDS)


@pytest.fixture(scope="module")
def used_blank(table) -> np.ndarray:
    """Rows with a blank in a used column (every column is used: the target and all features), by pandas."""
    return table.isna().any(axis=1).to_numpy()


@pytest.fixture(scope="module")
def logistic_frame(frame_data):
    return bc.fit(bc.LogisticRegression(), frame_data, method="map", random_seed=SEED)


@pytest.fixture(scope="module")
def logistic_file(folder, frame_data):
    out = folder / "logistic.nc"
    options = ("--missing", "drop", "--feature-kind", "year=categorical", "--method", "map", "--seed", SEED)
    assert run("fit", "--data", folder / "table.parquet", "--target", TARGET, *options, "--out", out) == 0
    return bc.load_result(out)


@pytest.fixture(scope="module")
def naive_bayes_frame(table):
    """The DataFrame door of ``fit`` itself (no declared kinds: ``year`` stays a number)."""
    return bc.fit(bc.NaiveBayes(), table, target=TARGET, missing="drop", method="map", random_seed=SEED)


@pytest.fixture(scope="module")
def naive_bayes_file(folder):
    out = folder / "naive_bayes.nc"
    options = ("--missing", "drop", "--method", "map", "--seed", SEED)
    assert (
        run(
            "fit",
            "--model",
            "naive_bayes",
            "--data",
            folder / "table.parquet",
            "--target",
            TARGET,
            *options,
            "--out",
            out,
        )
        == 0
    )
    return bc.load_result(out)


# --------------------------------------------------------------------------- one Dataset whatever the door


def test_the_frame_and_the_parquet_file_give_the_same_dataset(folder, frame_data):
    file_data = bc.load(folder / "table.parquet", target=TARGET, missing="drop", feature_kinds=KINDS)
    np.testing.assert_array_equal(file_data.X, frame_data.X)
    np.testing.assert_array_equal(file_data.y, frame_data.y)
    for attribute in ("feature_names", "class_names", "feature_kinds", "category_names", "missing"):
        assert getattr(file_data, attribute) == getattr(frame_data, attribute), attribute
    assert frame_data.fingerprint() == file_data.fingerprint()


def test_the_dropped_rows_are_the_rows_with_a_blank_in_a_used_column(table, frame_data, used_blank):
    assert frame_data.n_obs == len(table) - used_blank.sum()
    assert frame_data.missing.policy == "drop" and frame_data.missing.dropped_rows == used_blank.sum() == 11
    blanks = table.isna().sum()
    assert dict(frame_data.missing.blanks_per_column) == {name: int(n) for name, n in blanks.items() if n}
    kept = table[~used_blank]
    np.testing.assert_array_equal(
        frame_data.X[:, frame_data.feature_names.index("bill_depth_mm")], kept["bill_depth_mm"]
    )
    assert [frame_data.class_names[code] for code in frame_data.y] == kept[TARGET].tolist()
    # only the used columns count: without sex and heavy, the 2 rows blank in every measurement are dropped
    few = bc.Dataset.from_frame(table, target=TARGET, features=["island", "bill_length_mm", "year"], missing="drop")
    assert few.missing.dropped_rows == table[[TARGET, "island", "bill_length_mm", "year"]].isna().any(axis=1).sum()
    assert few.missing.dropped_rows == 2


def test_year_gives_three_levels_and_two_dummies_and_binary_columns_name_their_level(
    table, frame_data, used_blank, logistic_frame
):
    assert frame_data.category_names["year"] == ("2007", "2008", "2009")
    assert frame_data.category_names["sex"] == ("female", "male")
    assert frame_data.category_names["heavy"] == ("False", "True")
    assert frame_data.feature_kinds[frame_data.feature_names.index("year")] == "categorical"
    info = bc.result_info(logistic_frame)
    names = info.model_feature_names
    assert [name for name in names if name.startswith("year")] == ["year=2008", "year=2009"]
    assert [name for name in names if name.startswith(("sex", "heavy"))] == ["sex=male", "heavy=True"]
    # the coded columns the model saw are the indicators of those levels, computed from the table
    coded = logistic_frame["constant_data"]["X"].values
    kept = table[~used_blank]
    column = {name: frame_data.feature_names.index(name) for name in ("year", "sex", "heavy")}
    np.testing.assert_array_equal(coded[:, column["year"]], kept["year"].map({2007: 0, 2008: 1, 2009: 2}))
    np.testing.assert_array_equal(coded[:, column["sex"]], kept["sex"] == "male")
    np.testing.assert_array_equal(coded[:, column["heavy"]], kept["heavy"].astype(bool))


def test_fit_on_the_frame_and_on_the_parquet_file_gives_the_same_map(logistic_frame, logistic_file):
    for name in ("intercept", "weights"):
        xr.testing.assert_allclose(
            logistic_file["point_estimate_map"][name], logistic_frame["point_estimate_map"][name], rtol=0, atol=1e-10
        )
    frame_info, file_info = bc.result_info(logistic_frame), bc.result_info(logistic_file)
    assert file_info.data.fingerprint == frame_info.data.fingerprint
    assert file_info.data.missing == frame_info.data.missing and file_info.data.missing.dropped_rows == 11
    assert file_info.model_feature_names == frame_info.model_feature_names


def test_naive_bayes_through_both_doors_labels_binary_levels_and_gives_the_same_map(
    table, used_blank, naive_bayes_frame, naive_bayes_file
):
    frame_map = naive_bayes_frame["point_estimate_map"].to_dataset()
    xr.testing.assert_allclose(naive_bayes_file["point_estimate_map"].to_dataset(), frame_map, rtol=0, atol=1e-10)
    assert list(frame_map["binary_feature"].values) == ["sex=male", "heavy=True"]
    assert "year" in frame_map["continuous_feature"].values  # not declared categorical on this door
    # P(sex = male | species) with the uniform Beta(1, 1) prior: the MAP is the share of males (kept rows)
    kept = table[~used_blank]
    share = (kept["sex"] == "male").groupby(kept[TARGET]).mean()
    np.testing.assert_allclose(
        frame_map["binary_proba"].sel(binary_feature="sex=male").values,
        share[list(frame_map["class"].values)].values,
        rtol=0,
        atol=1e-12,
    )


# --------------------------------------------------------------------------- predict: rows in place, ids copied


def test_predict_writes_every_row_in_order_with_empty_probabilities_where_a_feature_is_blank(
    folder, table, frame_data, logistic_frame, logistic_file
):
    out = folder / "predictions.csv"
    arguments = ("--run", folder / "logistic.nc", "--data", folder / "new.parquet", "--out", out)
    assert run("predict", *arguments, "--missing", "drop", "--id-column", "tag", "--no-progress") == 0
    written = pd.read_csv(out, keep_default_na=False, dtype=str)
    new = pd.read_parquet(folder / "new.parquet")
    assert len(written) == len(new) == len(table)
    assert written.columns[0] == "tag" and written["tag"].tolist() == new["tag"].tolist()
    classes = [f"p_{name}" for name in frame_data.class_names]
    blank_feature = new.drop(columns="tag").isna().any(axis=1).to_numpy()
    empty = (written[classes] == "").to_numpy()
    np.testing.assert_array_equal(empty, np.repeat(blank_feature[:, np.newaxis], len(classes), axis=1))
    # the complete rows are the kept training rows in reverse order: the Python API predicts the same numbers
    expected = bc.predict(logistic_frame, frame_data)["class_proba"].values[::-1]
    np.testing.assert_allclose(
        written.loc[~blank_feature, classes].astype(float).to_numpy(), expected, rtol=0, atol=1e-12
    )
    row_of = np.array([int(tag.split("-")[1]) for tag in written.loc[~blank_feature, "tag"]])
    kept_rows = np.flatnonzero(~table.isna().any(axis=1).to_numpy())
    np.testing.assert_array_equal(row_of, kept_rows[::-1])
    # without --missing drop a blank feature is refused, and nothing is written
    assert run("predict", *arguments[:-1], folder / "refused.csv", "--no-progress") == 2
    assert not (folder / "refused.csv").exists()


# --------------------------------------------------------------------------- report


def summary_cell(page: str, heading: str) -> str:
    match = re.search(rf"<t[hd][^>]*>{re.escape(heading)}</t[hd]>\s*<td[^>]*>(.*?)</td>", page, flags=re.S)
    assert match is not None, heading
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1)))


def test_the_report_of_either_door_shows_the_dropped_rows_and_the_level_labels(folder, naive_bayes_frame):
    page = bc.report(naive_bayes_frame)
    dropped = summary_cell(page, "rows dropped for blank cells")
    assert dropped.startswith("11 (missing='drop'; blanks per column: ")
    assert "sex 11" in dropped and "heavy 2" in dropped
    for label in ("binary_proba[Adelie, sex=male]", "binary_proba[Gentoo, heavy=True]"):
        assert label in html.unescape(page)
    out = folder / "report.html"
    assert run("report", "--run", folder / "naive_bayes.nc", "--out", out) == 0
    assert summary_cell(out.read_text(encoding="utf-8"), "rows dropped for blank cells") == dropped


# --------------------------------------------------------------------------- a study over the parquet file

STUDY = """
name = "penguins from a parquet file"
seed = 0
training_sizes = [30, 60]
repeats = 1
test_fraction = 0.3

[sampler]
draws = 50
chains = 2

[[models]]
family = "naive_bayes"
method = "exact"
point_estimates = ["map"]

[[datasets]]
path = "table.parquet"
target = "species"
missing = "drop"
"""


def test_a_study_over_the_parquet_file_records_every_cell_on_the_complete_rows(folder, used_blank):
    spec = folder / "study.toml"
    spec.write_text(STUDY, encoding="utf-8")
    out = folder / "study"
    assert run("study", spec, "--out", out, "--serial", "--no-progress") == 0
    records = [json.loads(path.read_text(encoding="utf-8")) for path in sorted((out / "cells").glob("*.json"))]
    assert sorted((record["cell"]["size"], record["cell"]["repeat"]) for record in records) == [(30, 0), (60, 0)]
    complete = int((~used_blank).sum())
    for record in records:
        assert record["status"] == "ok", record.get("error")
        assert record["cell"]["dataset"] == "table" and record["cell"]["family"] == "naive_bayes"
        assert record["n_train"] == record["cell"]["size"]
        assert record["n_test"] == math.ceil(0.3 * complete)  # the test split of the 333 complete rows
        assert {row["estimate"] for row in record["rows"]} >= {"posterior", "MAP plug-in"}
    tidy = pd.read_parquet(out / "results.parquet")
    assert set(tidy["size"]) == {30, 60} and set(tidy["status"]) == {"ok"}


# --------------------------------------------------------------------------- bad inputs


def test_blanks_are_refused_by_default_with_the_count_of_every_column(table, folder, capsys):
    with pytest.raises(ValueError) as refused:
        bc.Dataset.from_frame(table, target=TARGET)
    message = str(refused.value)
    for name, count in table.isna().sum().items():
        if count:
            assert f"column {name!r} {count} (first: " in message
    assert f"{int(table.isna().sum().sum())} blank cell(s)" in message
    assert f"{int(table.isna().any(axis=1).sum())} of {len(table)} rows are incomplete" in message
    assert "missing='drop'" in message
    assert run("fit", "--data", folder / "table.parquet", "--target", TARGET, "--out", folder / "no.nc") == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "column 'sex' 11 (first: " in error and "--missing drop" in error


def test_too_many_levels_are_refused_naming_the_column_and_the_count(table, folder, capsys, used_blank):
    levels = table.loc[~used_blank, "flipper_length_mm"].nunique()  # the levels of the rows kept
    assert levels > 50
    with pytest.raises(
        ValueError,
        match=rf"column 'flipper_length_mm' has {levels} distinct levels, more than "
        r"max_levels=50",
    ):
        bc.Dataset.from_frame(table, target=TARGET, missing="drop", feature_kinds={"flipper_length_mm": "categorical"})
    raised = bc.Dataset.from_frame(
        table, target=TARGET, missing="drop", feature_kinds={"flipper_length_mm": "categorical"}, max_levels=levels
    )
    assert len(raised.category_names["flipper_length_mm"]) == levels
    options = ("--missing", "drop", "--feature-kind", "flipper_length_mm=categorical", "--method", "map")
    assert run("fit", "--data", folder / "table.parquet", "--target", TARGET, *options, "--out", folder / "x.nc") == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and f"column 'flipper_length_mm' has {levels} distinct levels" in error
    assert error.endswith(f"or raise the limit with --max-levels {levels}") and "max_levels=" not in error


@pytest.mark.parametrize("command", ["fit", "predict"])
def test_a_bad_missing_value_exits_2_naming_the_flag_and_its_choices(folder, capsys, command):
    data = ("--data", folder / "table.parquet")
    arguments = (*data, "--target", TARGET) if command == "fit" else ("--run", folder / "logistic.nc", *data)
    assert run(command, *arguments, "--missing", "sometimes", "--out", folder / "bad.out") == 2
    error = capsys.readouterr().err.strip()
    assert "Traceback" not in error
    assert error == (  # one line: argparse's usage block is not printed
        f"bayesclass {command}: error: argument --missing: invalid choice: 'sometimes' (choose from 'error', 'drop'); "
        f"see 'bayesclass {command} --help'"
    )
    assert not (folder / "bad.out").exists()
