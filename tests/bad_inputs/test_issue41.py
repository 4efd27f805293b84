"""Bad input of issue 41: each case once silently wrong, a traceback or vague, now a clear error (or the right answer).

What a fit accepts and what its result schema accepts are one set of constraints: no fit writes a file its own
reader refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bayesclass as bc
from tests.bad_inputs.harness import assert_one_line_error, run

N = 12


def _frame(**columns: Any) -> pd.DataFrame:
    return pd.DataFrame({"a": np.arange(N) * 1.0, **columns, "y": ["p", "q"] * (N // 2)})


def _fit(frame: pd.DataFrame) -> Any:
    return bc.fit(bc.LogisticRegression(), frame, target="y", method="map")


# -- 1. columns that are not numbers, text, categories or booleans --------------------------------------------------

READS = "bayesclass reads numbers, text, categories and booleans"
UNREADABLE_COLUMNS = [
    ("datetime64", pd.date_range("2020", periods=N), "column 'b' holds dates/times (dtype datetime64", "days since"),
    ("tz-aware dates", pd.date_range("2020", periods=N, tz="UTC"), "holds dates/times (dtype datetime64", "to text"),
    ("timedelta64", pd.to_timedelta(np.arange(N), unit="s"), "column 'b' holds durations", "total_seconds()"),
    ("complex", np.arange(N) + 1j, "column 'b' holds complex numbers (dtype complex128", "numpy.real, numpy.imag"),
    ("bytes", [b"x", b"y"] * (N // 2), "column 'b' holds bytes", "decode them to text first"),
    ("lists", [[i] for i in range(N)], "e.g. list '[0]' at row 0", "one column per element"),
    ("records", [{"u": i} for i in range(N)], "e.g. dict \"{'u': 0}\" at row 0", "one column per element"),
    ("a list among numbers", [0.5, *range(N - 2), [1]], "e.g. list '[1]' at row 11", "one column per element"),
]


@pytest.mark.parametrize(
    ("values", "message", "fix"), [case[1:] for case in UNREADABLE_COLUMNS], ids=[c[0] for c in UNREADABLE_COLUMNS]
)
def test_columns_of_other_types_are_refused_naming_column_type_and_fix(values, message, fix):
    with pytest.raises(ValueError) as caught:
        _fit(_frame(b=values))
    assert message in str(caught.value) and READS in str(caught.value) and fix in str(caught.value), caught.value
    fitted = _fit(_frame(b=np.arange(N) * 2.0 % 5))
    with pytest.raises(ValueError, match="DataFrame X: column 'b' holds"):
        bc.predict(fitted, _frame(b=values).drop(columns="y"))


def test_numbers_text_booleans_and_decimals_in_object_columns_still_read():
    for values in ([True, False] * (N // 2), list(range(N)), ["1", "2.5"] * (N // 2), ["r", "s"] * (N // 2)):
        assert _fit(_frame(b=pd.Series(values, dtype=object))).attrs["feature_names"] == '["a", "b"]'


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("s", "parquet file {dir}/t.parquet: column 's' holds values that are not numbers, text or booleans"),
        ("l", "column 'l' holds values that are not numbers, text or booleans (dtype object, e.g. ndarray '[1 2]'"),
        ("d", "column 'd' holds dates/times (dtype datetime64"),
    ],
)
def test_parquet_structs_nested_lists_and_dates_are_refused(tmp_path, capsys, column, message):
    table = pa.table(
        {
            "s": pa.array([{"u": 1, "v": 2.0}] * 4),
            "l": pa.array([[1, 2], [3], [4], [5]]),
            "d": pa.array(pd.date_range("2020", periods=4)),
            "y": ["a", "b", "a", "b"],
        }
    )
    pq.write_table(table, tmp_path / "t.parquet")
    argv = ("fit", "--method", "map", "--data", f"{tmp_path}/t.parquet", "--target", "y", "--features", column)
    assert run(*argv, "--out", str(tmp_path / "r.nc")) == 2
    assert_one_line_error(capsys.readouterr().err, message.format(dir=tmp_path))
    assert not (tmp_path / "r.nc").exists()


# -- 2. magnitudes that overflow ------------------------------------------------------------------------------------

BEYOND = "beyond 1e+30 in magnitude, where its squares and its posterior-predictive replicates (float32) overflow"
MAGNITUDE_FITS = [
    ("logistic standardised, 1e307", bc.LogisticRegression(), "map", {"standardize": True}, 1e307),
    ("logistic, 1e200", bc.LogisticRegression(), "map", {}, 1e200),
    ("gcc MAP, 1e200", bc.GaussianClassConditional(), "map", {}, 1e200),
    ("naive Bayes, 1e200 (a variance of 1e400)", bc.NaiveBayes(), "exact", {}, 1e200),
    ("naive Bayes, 1e50 (float32 replicates)", bc.NaiveBayes(), "exact", {}, 1e50),
]


@pytest.mark.parametrize(
    ("model", "method", "options", "scale"), [c[1:] for c in MAGNITUDE_FITS], ids=[c[0] for c in MAGNITUDE_FITS]
)
def test_overflowing_magnitudes_are_refused_before_any_fit_naming_the_column(model, method, options, scale):
    frame = _frame(b=np.linspace(-1.0, 1.0, N) * scale)
    with pytest.raises(ValueError) as caught:
        bc.fit(model, frame, target="y", method=method, **options)
    assert f"X holds {-scale:g} at row 0, column 'b', {BEYOND}" in str(caught.value)
    assert "divide it by a power of ten or take its logarithm" in str(caught.value)


def test_the_largest_magnitude_fits_saves_and_reads(tmp_path):
    """At the bound itself every family's result is written and read back (the posterior predictive included)."""
    frame = _frame(b=np.random.default_rng(0).uniform(-1.0, 1.0, N) * 1e30)
    for model, method in ((bc.NaiveBayes(), "exact"), (bc.GaussianClassConditional(), "map")):
        bc.save_result(bc.fit(model, frame, target="y", method=method), tmp_path / "r.nc")
        assert bc.load_result(tmp_path / "r.nc").attrs["feature_names"] == '["a", "b"]'


def test_a_csv_of_1e307_with_standardisation_is_refused_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "big.csv").write_text("x,y\n1e307,a\n-1e307,b\n1e307,a\n2e307,b\n")
    out = tmp_path / "big.nc"
    assert run("fit", "--data", f"{tmp_path}/big.csv", "--target", "y", "--standardize", "--method", "map",
               "--out", str(out)) == 2  # fmt: skip
    assert_one_line_error(capsys.readouterr().err, f"X holds 1e+307 at row 0, column 'x', {BEYOND}")
    assert not out.exists()


def test_a_result_whose_training_rows_exceed_the_bound_is_refused(tmp_path, capsys):
    """The schema takes the same bound as the fit: a file edited beyond it is no result."""
    import netCDF4

    path = tmp_path / "r.nc"
    bc.save_result(_fit(_frame(b=np.linspace(-1.0, 1.0, N))), path)
    with netCDF4.Dataset(path, "a") as dataset:
        dataset["constant_data"]["X"][0, 1] = 1e31
    with pytest.raises(ValueError, match="constant_data X holds values beyond 1e"):
        bc.load_result(path)


# -- 3. a DataFrame to predict whose column names are not all text --------------------------------------------------


@pytest.fixture(scope="module")
def fitted_ab() -> tuple[Any, pd.DataFrame]:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=30), "b": rng.normal(size=30), "y": ["p", "q", "q"] * 10})
    return _fit(frame), frame[["a", "b"]]


@pytest.mark.parametrize(
    ("relabel", "message"),
    [
        (lambda X: X[["b", "a"]].set_axis(["b", 0], axis=1), "has column names that are not text, [0] (of ['b', 0])"),
        (lambda X: X.set_axis(pd.MultiIndex.from_tuples([("x", "a"), ("x", "b")]), axis=1), "[('x', 'a'), ('x', 'b')]"),
        (lambda X: X.set_axis([1, 0], axis=1), "has column names that are not text, [1, 0] (of [1, 0])"),
        (lambda X: X.iloc[0].set_axis(["a", 0]), "has column names that are not text, [0] (of ['a', 0])"),
    ],
    ids=["mixed ['b', 0]", "MultiIndex", "integers other than positions", "a Series row"],
)
def test_predict_refuses_columns_named_by_other_than_text(fitted_ab, relabel, message):
    result, X = fitted_ab
    with pytest.raises(ValueError) as caught:
        bc.predict(result, relabel(X))
    assert message in str(caught.value), caught.value
    assert "name them as fitted, ['a', 'b'], or pass X.to_numpy() to take them by position" in str(caught.value)


def test_predict_takes_unnamed_columns_0_1_by_position(fitted_ab):
    result, X = fitted_ab
    by_name = bc.predict(result, X)["class_proba"].values
    np.testing.assert_array_equal(bc.predict(result, pd.DataFrame(X.to_numpy()))["class_proba"].values, by_name)


# -- 4. names a result file cannot hold: refused at input, as its reader refuses them ------------------------------

HOLDS = "more than the 100,000 it holds"
LONG_NAMES = [
    ("a 130,000-character text level", {"t": ["x" * 130_000, "z"] * (N // 2)}, "y", "category_names take 130,016"),
    ("a 1e6-character text level", {"t": ["x" * 1_000_000, "z"] * (N // 2)}, "y", "category_names take 1,000,016"),
    ("a 100,001-character column name", {"n" * 100_001: np.ones(N)}, "y", "feature_names take 100,010"),
    ("a 100,001-character class label", {"c": ["p" * 100_001, "q"] * (N // 2)}, "c", "class_names take 100,010"),
]


@pytest.mark.parametrize(("columns", "target", "message"), [c[1:] for c in LONG_NAMES], ids=[c[0] for c in LONG_NAMES])
def test_names_longer_than_a_result_holds_are_refused_before_fitting(columns, target, message):
    frame = _frame(**columns)
    with pytest.raises(ValueError) as caught:
        bc.fit(bc.LogisticRegression(), frame, target=target, method="map")
    assert message in str(caught.value) and HOLDS in str(caught.value), caught.value


def test_a_long_column_name_times_its_levels_is_refused_as_coded_names():
    """A 10,000-character name of a 12-level column: each attr alone fits, its 11 coded names name=level do not."""
    frame = _frame(**{"c" * 10_000: list("abcdefghijkl")})
    with pytest.raises(ValueError) as caught:
        _fit(frame)
    assert "feature_names and category_names (as coded names 'feature=level') take 120,0" in str(caught.value)


def test_names_up_to_the_limit_fit_save_and_read(tmp_path):
    frame = _frame(t=["x" * 99_000, "z"] * (N // 2))
    bc.save_result(_fit(frame), tmp_path / "r.nc")
    assert len(bc.load_result(tmp_path / "r.nc").attrs["category_names"]) > 99_000


def test_a_csv_with_a_long_text_field_is_a_usage_error_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "long.csv").write_text("x,t,y\n" + "".join(f"{i},{'w' * 130_000 if i % 2 else 'v'},{'ab'[i % 2]}\n"
                                                           for i in range(6)))  # fmt: skip
    out = tmp_path / "r.nc"
    assert run("fit", "--data", f"{tmp_path}/long.csv", "--target", "y", "--method", "map", "--out", str(out)) == 2
    assert_one_line_error(capsys.readouterr().err, f"category_names take 130,016 characters, {HOLDS}")
    assert not out.exists()


# -- 5. one definition of a valid seed, checked on input --------------------------------------------------------------

SEED_RANGE = "must be an integer in 0..4294967295, got 4294967296; a seed is an integer in [0, 2**32), e.g. 0"


@pytest.mark.parametrize("command", ["fit", "check"])
def test_a_seed_of_2_to_the_32_is_refused_on_the_command_line(tmp_path, capsys, command):
    argv = {
        "fit": ("fit", "--data", "iris", "--method", "map", "--out", str(tmp_path / "r.nc")),
        "check": ("check", "--run", str(tmp_path / "absent.nc")),
    }[command]
    assert run(*argv, "--seed", str(2**32)) == 2
    assert_one_line_error(capsys.readouterr().err, f"--seed {SEED_RANGE}")
    assert not (tmp_path / "r.nc").exists()


def test_a_seed_of_2_to_the_32_is_refused_in_python_and_the_largest_seed_is_written_and_read(tmp_path):
    frame = _frame(b=np.random.default_rng(1).normal(size=N))
    with pytest.raises(ValueError) as caught:
        bc.fit(bc.NaiveBayes(), frame, target="y", method="exact", random_seed=2**32)
    assert f"random_seed {SEED_RANGE}" in str(caught.value)
    result = bc.fit(bc.NaiveBayes(), frame, target="y", method="exact", random_seed=2**32 - 1)
    bc.save_result(result, tmp_path / "r.nc")
    assert bc.load_result(tmp_path / "r.nc").attrs["random_seed"] == 2**32 - 1


# -- 6. numeric labels: the same class names from a DataFrame, its CSV and its parquet file --------------------------


@pytest.mark.parametrize(
    ("labels", "names"),
    [
        ([1.0, 2.0, 1.0, 2.0], ("1.0", "2.0")),
        ([1, 2, 1, 2], ("1", "2")),
        ([0.5, 10.0, 0.5, 1e20], ("0.5", "10.0", "1e+20")),
        (pd.array([1, 2, None, 2], dtype="Int64"), ("1", "2")),
    ],
    ids=["float 1.0/2.0", "int 1/2", "floats 0.5/10/1e20", "nullable Int64"],
)
def test_numeric_labels_are_named_alike_whatever_the_container(tmp_path, labels, names):
    from bayesclass.data import Dataset, load_csv

    frame = pd.DataFrame({"x": [0.1, 0.7, 0.3, 0.9], "label": labels})
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    loaded = [
        Dataset.from_frame(frame, target="label", missing="drop"),
        load_csv(tmp_path / "t.csv", target="label", missing="drop"),
        bc.data.load(str(tmp_path / "t.parquet"), target="label", missing="drop"),
    ]
    assert [dataset.class_names for dataset in loaded] == [names] * 3
    for dataset in loaded[1:]:
        np.testing.assert_array_equal(dataset.y, loaded[0].y)


# -- 7. --id-column: an output column's name, a column the file lacks, an empty name ---------------------------------


@pytest.fixture(scope="module")
def id_files(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ids")
    frame = pd.DataFrame({"id": [1, 2, 3, 4], "x": [0.5, 1.5, 2.5, 3.5], "label": ["a", "b", "a", "b"]})
    frame.to_csv(folder / "t.csv", index=False)
    frame.to_parquet(folder / "t.parquet")
    frame.rename(columns={"id": "predicted"}).to_csv(folder / "predicted.csv", index=False)
    frame.rename(columns={"id": "p_a"}).to_parquet(folder / "p_a.parquet")
    fit = ("fit", "--data", str(folder / "t.csv"), "--target", "label", "--features", "x", "--method", "map")
    assert run(*fit, "--out", str(folder / "r.nc")) == 0
    return folder


ID_CASES = [
    ("predicted.csv", "predicted", (), "--id-column predicted is also the name of an output column, so the "
     "predictions would hold two 'predicted' columns; rename that column of the input file"),
    ("p_a.parquet", "p_a", (), "--id-column p_a is also the name of an output column"),
    ("t.csv", "nope", (), "CSV file {dir}/t.csv lacks the id column (--id-column nope); its columns are ['id', 'x', "
     "'label']"),
    ("t.parquet", "nope", (), "parquet file {dir}/t.parquet lacks the id column (--id-column nope); its columns are"),
    ("t.csv", "", (), "--id-column '' names no column; give the name of the file's id column"),
    ("t.parquet", " ", (), "--id-column ' ' names no column"),
    ("t.csv", "nope", ("--target", "lab"), "lacks the target column (--target lab) and the id column (--id-column "
     "nope)"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "id_column", "more", "message"), ID_CASES, ids=[f"{c[0]} {c[1]!r}" for c in ID_CASES])
def test_a_bad_id_column_is_named_as_such_and_nothing_is_written(id_files, capsys, data, id_column, more, message):
    out = id_files / "p.csv"
    argv = ("predict", "--run", str(id_files / "r.nc"), "--data", str(id_files / data), "--id-column", id_column)
    assert run(*argv, *more, "--out", str(out)) == 2
    error = capsys.readouterr().err
    assert_one_line_error(error, message.format(dir=id_files))
    assert "feature column" not in error and not out.exists()


def test_an_id_column_is_copied_first(id_files):
    out = id_files / "ids.csv"
    assert run("predict", "--run", str(id_files / "r.nc"), "--data", str(id_files / "t.parquet"), "--id-column",
               "id", "--out", str(out)) == 0  # fmt: skip
    written = pd.read_csv(out)
    assert list(written.columns[:1]) == ["id"] and list(written["id"]) == [1, 2, 3, 4]


# -- 8. a lone surrogate in a name or a cell ------------------------------------------------------------------------

LONE = "holds the lone surrogate '\\ud800' (U+D800), half of a character that no text file (UTF-8) can hold"


def _object_frame(a: str = "a", b: tuple[Any, Any] = ("r", "s"), y: tuple[str, str] = ("p", "q")) -> pd.DataFrame:
    """A frame of object columns and names (pandas' default string dtype cannot even hold a lone surrogate)."""
    columns = {0: np.arange(N) * 1.0, 1: pd.Series(list(b) * (N // 2), dtype=object)}
    columns[2] = pd.Series(list(y) * (N // 2), dtype=object)
    return pd.DataFrame(columns).set_axis(pd.Index([a, "b", "y"], dtype=object), axis=1)


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (lambda: _object_frame(a="a\ud800"), f"DataFrame: column name 'a\\ud800' {LONE}"),
        (lambda: _object_frame(y=("p\ud800", "q")), f"DataFrame, column 'y', row 0: cell 'p\\ud800' {LONE}"),
        (lambda: _object_frame(b=("r", "s\ud800")), f"DataFrame, column 'b', row 1: cell 's\\ud800' {LONE}"),
        (lambda: _object_frame(b=(1.5, "s\ud800")), f"column 'b', row 1: cell 's\\ud800' {LONE}"),
    ],
    ids=["column name", "class label", "text level", "among numbers"],
)
def test_a_lone_surrogate_is_refused_at_input(frame, message):
    with pytest.raises(ValueError) as caught:
        _fit(frame())
    assert message in str(caught.value) and "decode the text with its source's encoding" in str(caught.value)


def test_a_lone_surrogate_is_refused_at_prediction_and_in_dataset_names():
    from bayesclass.data import Dataset

    result = _fit(_object_frame())
    with pytest.raises(ValueError, match="DataFrame X, column 'b', row 1: cell 's.ud800' holds the lone surrogate"):
        bc.predict(result, _object_frame(b=("r", "s\ud800")).drop(columns="y"))
    with pytest.raises(ValueError, match="feature_names.0.: feature name 'a.ud800' holds the lone surrogate"):
        Dataset(
            name="t", X=np.zeros((2, 1)), y=np.array([0, 1]), feature_names=("a\ud800",), class_names=("p", "q"),
            feature_kinds=("continuous",),
        )  # fmt: skip


# -- 9. vague messages made specific --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vague(tmp_path_factory) -> Path:
    """The files of the vague cases: a fit, blanks that remove a class, damaged and repeated parquet, a .txt CSV."""
    folder = tmp_path_factory.mktemp("vague")
    (folder / "train.csv").write_text("x,label\n1,a\n2,b\n3,a\n4,b\n")
    (folder / "blank_class.csv").write_text("x,z,label\n1,,a\n2,,a\n3,5,b\n4,6,b\n5,7,b\n")
    (folder / "blank.csv").write_text("x,label\n,a\n,b\n")
    (folder / "train.txt").write_text("x,label\n1,a\n2,b\n3,a\n4,b\n")
    assert run("fit", "--data", str(folder / "train.csv"), "--target", "label", "--method", "map",
               "--out", str(folder / "r.nc")) == 0  # fmt: skip
    frame = pd.DataFrame({"x": np.arange(4000) * 1.0, "label": ["a", "b"] * 2000})
    pq.write_table(pa.Table.from_pandas(frame), folder / "big.parquet", row_group_size=1000)
    offset = pq.ParquetFile(folder / "big.parquet").metadata.row_group(2).column(0).data_page_offset
    damaged = bytearray((folder / "big.parquet").read_bytes())
    damaged[offset : offset + 40] = b"\xff" * 40  # the third row group's first page header
    (folder / "damaged.parquet").write_bytes(bytes(damaged))
    columns = [pa.array([1.0, 2, 3, 4]), pa.array([1.0, 2, 3, 4]), pa.array(["a", "b", "a", "b"])]
    pq.write_table(pa.Table.from_arrays(columns, names=["x", "x", "label"]), folder / "dup.parquet")
    return folder


FIT = ("fit", "--method", "map", "--out", "{dir}/out.nc", "--data")
PREDICT = ("predict", "--run", "{dir}/r.nc", "--out", "{dir}/out.csv", "--data")
VAGUE_CASES = [
    ("--missing drop removes a class", (*FIT, "{dir}/blank_class.csv", "--target", "label", "--missing", "drop"),
     "CSV file {dir}/blank_class.csv: --missing drop drops the 2 row(s) with a blank cell (blanks per column: "
     "{{'z': 2}}), among them all 2 row(s) of the class(es) ['a'], which leaves the single class 'b'; fill the blank "
     "cells in, or choose features without them (--features ...)"),
    ("every row blank in predict", (*PREDICT, "{dir}/blank.csv", "--missing", "drop"),
     "every one of the 2 rows has a blank cell in the fitted feature columns, so --missing drop leaves none to "
     "predict; fill the cells in"),
    ("parquet damaged in a later row group", (*PREDICT, "{dir}/damaged.parquet", "--chunk-rows", "1000"),
     "parquet file {dir}/damaged.parquet is damaged: its rows from row 2000 on cannot be read (Couldn't deserialize "
     "thrift"),
    ("fit on a damaged parquet", (*FIT, "{dir}/damaged.parquet", "--target", "label"),
     "parquet file {dir}/damaged.parquet is damaged: its rows from row 0 on cannot be read"),
    ("repeated parquet column names, fit", (*FIT, "{dir}/dup.parquet", "--target", "label"),
     "parquet file {dir}/dup.parquet repeats the column name(s) ['x']; give each column a unique name"),
    ("repeated parquet column names, predict", (*PREDICT, "{dir}/dup.parquet"),
     "parquet file {dir}/dup.parquet repeats the column name(s) ['x']"),
    ("a CSV named .txt, fit", (*FIT, "{dir}/train.txt", "--target", "label"),
     "--data {dir}/train.txt is a file; table files are read by their suffix (.csv, .tsv or .parquet, any case) and "
     "'train.txt' has the suffix '.txt': rename it, e.g. to 'train.csv' for a CSV file, or name a built-in"),
    ("a CSV named .txt, predict", (*PREDICT, "{dir}/train.txt"), "--data {dir}/train.txt is a file;"),
    ("a missing .txt file", (*FIT, "{dir}/nosuch.txt"),
     "--data {dir}/nosuch.txt is neither a built-in data set nor an existing file; table files are read by"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "message"), [c[1:] for c in VAGUE_CASES], ids=[c[0] for c in VAGUE_CASES])
def test_vague_errors_say_what_happened(vague, capsys, argv, message):
    assert run(*(part.format(dir=vague) for part in argv)) == 2
    error = capsys.readouterr().err
    assert_one_line_error(error, message.format(dir=vague))
    assert error.count("\n") == 1
    assert not (vague / "out.nc").exists() and not (vague / "out.csv").exists()


def test_every_row_blank_in_python_predict_says_so(vague):
    result = bc.load_result(vague / "r.nc")
    with pytest.raises(
        ValueError, match=r"every one of the 3 rows of X has a blank cell in the fitted feature columns"
    ):
        bc.predict(result, pd.DataFrame({"x": [np.nan] * 3}), missing="drop")


def test_a_test_table_with_one_class_left_after_blanks_still_codes():
    """The lost-class check is for training: a table coded by a fit's classes may hold one class."""
    from bayesclass.data.table import TableOptions, code_table

    frame = pd.DataFrame({"x": [1.0, np.nan, 3.0], "y": ["p", "q", "p"]})
    coded = code_table(frame, target="y", options=TableOptions(missing="drop"), class_names=("p", "q"))
    np.testing.assert_array_equal(coded.y, [0, 0])
