"""Bad input tables, frames, arrays, options and result files (issue 26): input -> error and message, never a traceback.

Four tables:

* ``API_CASES``: the Python API (``bc.fit`` / ``bc.predict`` with DataFrames, ``Dataset``, ``BayesianClassifier``);
* ``CLI_CASES``: command lines, each a one-line usage error (exit 2) before any work;
* ``TABLE_FILE_CASES``: CSV/TSV/parquet files whose names or labels hold control characters;
* ``RESULT_FILE_CASES``: result files edited to hold absurd but well-formed values, refused on reading.

Besides the tables, a few properties of legal input: a DataFrame's columns are matched by name whatever their
order, its level names are coded as at fit time, and a sampling flag the method reads is still accepted.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import pandas as pd
import pytest

import bayesclass as bc
from bayesclass.data import Dataset
from bayesclass.inference.estimator import BayesianClassifier
from tests.bad_inputs.harness import assert_one_line_error, run


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": 3.0 * rng.normal(size=n),
            "colour": np.where(rng.normal(size=n) > 0, "red", "blue"),
            "y": np.where(rng.normal(size=n) > 0, "p", "q"),
        }
    )


@dataclass(frozen=True)
class Fitted:
    """What the API cases act on: a training frame, its MAP result, and a fitted BayesianClassifier."""

    frame: pd.DataFrame
    result: Any
    estimator: BayesianClassifier


@pytest.fixture(scope="module")
def fitted() -> Fitted:
    frame = _frame()
    result = bc.fit(bc.LogisticRegression(), frame, target="y", method="map")
    estimator = BayesianClassifier(method="map").fit(frame[["a", "b"]], frame["y"])
    return Fitted(frame, result, estimator)


def _with(frame: pd.DataFrame, **columns: Any) -> pd.DataFrame:
    out = frame.copy()
    for name, values in columns.items():
        out[name] = values
    return out


def _renamed(frame: pd.DataFrame, old: str, new: str) -> pd.DataFrame:
    return frame.rename(columns={old: new})


def _fit(frame: pd.DataFrame, target: Any = "y") -> Any:
    return bc.fit(bc.LogisticRegression(), frame, target=target, method="map")


def _dataset(**changes: Any) -> Dataset:
    arguments: dict[str, Any] = {
        "name": "toy",
        "X": np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]),
        "y": np.array([0, 1, 0]),
        "feature_names": ("a", "b"),
        "class_names": ("p", "q"),
        "feature_kinds": ("continuous", "binary"),
    }
    return Dataset(**{**arguments, **changes})


@dataclass(frozen=True)
class ApiCase:
    name: str
    call: Callable[[Fitted], Any]
    error: type[Exception]
    message: str


API_CASES = [
    # control characters in names, labels and levels: refused at load time, named escaped
    ApiCase(
        "NUL in a DataFrame column name",
        lambda f: _fit(_renamed(f.frame, "a", "a\x00")),
        ValueError,
        r"DataFrame: column name 'a\x00' holds the control character '\x00'",
    ),
    ApiCase(
        "NUL in a class label",
        lambda f: _fit(_with(f.frame, y=f.frame["y"].replace({"p": "p\x00"}))),
        ValueError,
        r"column 'y': class label 'p\x00' holds the control character",
    ),
    ApiCase(
        "BEL in a category level",
        lambda f: _fit(_with(f.frame, colour=f.frame["colour"].replace({"red": "re\x07d"}))),
        ValueError,
        r"column 'colour': level 're\x07d' holds the control character '\x07'",
    ),
    ApiCase(
        "tab in a column name, Dataset.from_frame",
        lambda f: Dataset.from_frame(_renamed(f.frame, "b", "b\tc"), target="y"),
        ValueError,
        r"column name 'b\tc' holds the control character '\t'",
    ),
    ApiCase(
        "ESC in a feature name of arrays",
        lambda f: _dataset(feature_names=("a\x1b[31m", "b")),
        ValueError,
        r"feature_names[0]: feature name 'a\x1b[31m' holds the control character '\x1b'",
    ),
    ApiCase(
        "newline in a class name of arrays",
        lambda f: _dataset(class_names=("p", "q\n")),
        ValueError,
        r"class_names[1]: class label 'q\n' holds the control character",
    ),
    ApiCase(
        "DEL in a category name of arrays",
        lambda f: _dataset(category_names={"b": ("no", "yes\x7f")}),
        ValueError,
        r"level 'yes\x7f' holds the control character '\x7f'",
    ),
    # a DataFrame at prediction: its columns are matched by name
    ApiCase(
        "predict: a fitted column missing",
        lambda f: bc.predict(f.result, f.frame[["a", "colour"]]),
        ValueError,
        "DataFrame X lacks the fitted column(s) ['b']",
    ),
    ApiCase(
        "predict: a column renamed",
        lambda f: bc.predict(f.result, _renamed(f.frame[["a", "b", "colour"]], "b", "bb")),
        ValueError,
        "lacks the fitted column(s) ['b'] (it has column(s) ['bb'] the model was not fitted on)",
    ),
    ApiCase(
        "predict: text in a numeric column",
        lambda f: bc.predict(f.result, _with(f.frame[["a", "b", "colour"]], b="many")),
        ValueError,
        "column 'b' holds text",
    ),
    ApiCase(
        "predict: a level unseen in training",
        lambda f: bc.predict(f.result, _with(f.frame[["a", "b", "colour"]], colour="purple")),
        ValueError,
        "level 'purple' at row 0, column 'colour' was not seen in training",
    ),
    ApiCase(
        "predict: a blank cell",
        lambda f: bc.predict(f.result, _with(f.frame[["a", "b", "colour"]], a=np.nan)),
        ValueError,
        "DataFrame X has 40 blank cell(s) in the columns used: column 'a' 40 (first: blank cell at row 0); pass "
        "missing='drop' to leave the probabilities of their rows empty, or fill the cells in",
    ),
    ApiCase(
        "predict: duplicate column names",
        lambda f: bc.predict(f.result, pd.concat([f.frame[["a", "b", "colour"]], f.frame[["a"]]], axis=1)),
        ValueError,
        "repeats the column name(s) ['a']",
    ),
    ApiCase(
        "predict: a 3-D array",
        lambda f: bc.predict(f.result, np.zeros((2, 3, 2))),
        ValueError,
        "X must be 2-D (n_rows, n_features), got shape (2, 3, 2)",
    ),
    # BayesianClassifier takes numbers, as scikit-learn's own estimators do
    ApiCase(
        "BayesianClassifier: object array of number texts",
        lambda f: BayesianClassifier(method="map").fit(
            np.array([["1", "2"], ["3", "4"], ["5", "6"]], object), [0, 1, 0]
        ),
        ValueError,
        "X[0, 0] is the text '1' (column 0); BayesianClassifier takes numbers",
    ),
    ApiCase(
        "BayesianClassifier: a text column in a DataFrame",
        lambda f: BayesianClassifier(method="map").fit(f.frame[["a", "colour"]], f.frame["y"]),
        ValueError,
        "X has column(s) ['colour'] of text or categories",
    ),
    ApiCase(
        "BayesianClassifier: text at predict_proba",
        lambda f: f.estimator.predict_proba(_with(f.frame[["a", "b"]], b="x")),
        ValueError,
        "bayesclass.fit(model, frame, target=COLUMN), which codes text columns",
    ),
    ApiCase(
        "BayesianClassifier: columns in another order",
        lambda f: f.estimator.predict_proba(f.frame[["b", "a"]]),
        ValueError,
        "Feature names must be in the same order as they were in fit",
    ),
    ApiCase(
        "BayesianClassifier: a 3-D array",
        lambda f: BayesianClassifier(method="map").fit(np.zeros((4, 2, 2)), [0, 1, 0, 1]),
        ValueError,
        "Found array with dim 3",
    ),
    # frames as a new user writes them
    ApiCase(
        "a column named 0",
        lambda f: _fit(_renamed(f.frame, "a", 0)),
        ValueError,
        "column names that are not non-empty text: [0]; rename them",
    ),
    ApiCase(
        "duplicate column names in the training frame",
        lambda f: _fit(_renamed(f.frame, "b", "a")),
        ValueError,
        "repeats the column name(s) ['a']",
    ),
    ApiCase(
        "an empty frame",
        lambda f: _fit(pd.DataFrame({"a": [], "y": []})),
        ValueError,
        "DataFrame has no rows",
    ),
    ApiCase(
        "a target of one class",
        lambda f: _fit(_with(f.frame, y="p")),
        ValueError,
        "y contains a single class ('p')",
    ),
    ApiCase(
        "a DataFrame without target=",
        lambda f: bc.fit(bc.LogisticRegression(), f.frame, method="map"),
        ValueError,
        "name its class column, e.g. fit(model, frame, target='species')",
    ),
    ApiCase(
        "a list of lists to fit",
        lambda f: bc.fit(bc.LogisticRegression(), [[1.0, 2.0, 0], [3.0, 4.0, 1]], method="map"),
        TypeError,
        "or a pandas DataFrame with target=COLUMN, got list",
    ),
]


@pytest.mark.parametrize("case", API_CASES, ids=[case.name for case in API_CASES])
def test_bad_frames_arrays_and_names_are_clear_errors(fitted, case):
    with pytest.raises(case.error) as caught:
        case.call(fitted)
    assert case.message in str(caught.value), str(caught.value)


def test_a_frame_is_predicted_by_column_name_whatever_the_order(fitted):
    """The defect: columns taken by position gave other probabilities (max diff 0.52); now by name, the same."""
    ordered = bc.predict(fitted.result, fitted.frame[["a", "b", "colour"]])["class_proba"].values
    shuffled = bc.predict(fitted.result, fitted.frame[["colour", "b", "a"]])["class_proba"].values
    np.testing.assert_array_equal(shuffled, ordered)
    coded = Dataset.from_frame(fitted.frame, target="y")  # the level names coded as at fit time
    np.testing.assert_array_equal(bc.predict(fitted.result, coded.X)["class_proba"].values, ordered)
    row = fitted.frame.iloc[3]  # a Series named by its index: one row, by name
    np.testing.assert_array_equal(bc.predict(fitted.result, row[::-1].drop("y"))["class_proba"].values, ordered[3:4])
    unnamed = pd.DataFrame(coded.X)  # columns 0, 1, 2: taken by position, as an array
    np.testing.assert_array_equal(bc.predict(fitted.result, unnamed)["class_proba"].values, ordered)


def test_columns_the_model_was_not_fitted_on_are_left_out_with_a_note(fitted, caplog):
    """As in a CSV file: the training frame itself (target included) or a Series row predicts, with a note."""
    ordered = bc.predict(fitted.result, fitted.frame[["a", "b", "colour"]])["class_proba"].values
    with caplog.at_level("INFO", logger="bayesclass"):
        whole = bc.predict(fitted.result, fitted.frame)["class_proba"].values
    np.testing.assert_array_equal(whole, ordered)
    assert "column(s) ['y'] the model was not fitted on are not used" in caplog.text
    row = bc.predict(fitted.result, fitted.frame.iloc[3])["class_proba"].values
    np.testing.assert_array_equal(row, ordered[3:4])


def test_the_estimator_keeps_the_frame_column_names(fitted):
    assert fitted.estimator.result_.attrs["feature_names"] == json.dumps(["a", "b"])
    assert list(fitted.estimator.feature_names_in_) == ["a", "b"]


# -- command lines: usage errors found before any work --------------------------------------------------------------

FILES = {
    "train.csv": b"x,colour,label\n0.5,red,a\n1.5,blue,b\n2.5,red,a\n3.5,green,b\n0.1,red,b\n",
    "three.csv": b"x1,x2,c\n1,5,a\n2,5,b\n3,5,c\n4,5,a\n5,5,b\n6,5,c\n",
    "nul_header.csv": b"x\x00,label\n1,a\n2,b\n3,a\n",
    "esc_label.csv": b"x,label\n1,a\x1b\n2,b\n3,a\x1b\n",
    "bel_level.csv": b"x,colour,label\n1,re\x07d,a\n2,blue,b\n3,blue,a\n",
    "tab_label.tsv": b"x\tlabel\n1\ta\x0bz\n2\tb\n",
    "loss.toml": b"[loss]\nfalse_negative = 10\n",
    "index.csv": b",x,label\n0,1.5,a\n1,2.5,b\n2,0.5,a\n",
}
FIT_CSV = ("fit", "--method", "map", "--data", "{dir}/train.csv", "--target", "label")
CLI_CASES = [
    # (case, argv with {dir}, message fragment): exit 2, one line, nothing written
    (
        "--loss-matrix a TOML file",
        ("compare", "--data", "{dir}/train.csv", "--target", "label", "--loss-matrix", "{dir}/loss.toml"),
        "--loss-matrix: '{dir}/loss.toml' is not a loss-matrix CSV (its first line is '[loss]'); expected a header",
    ),
    (
        "--feature-kind on the target column",
        (*FIT_CSV, "--feature-kind", "label=continuous", "--out", "{dir}/r.nc"),
        "declares a kind for 'label', the target (class) column",
    ),
    (
        "--link probit on 3 classes",
        (
            "fit",
            "--method",
            "map",
            "--data",
            "{dir}/three.csv",
            "--target",
            "c",
            "--link",
            "probit",
            "--out",
            "{dir}/r.nc",
        ),
        "--link probit is only defined for 2 classes, the data have 3",
    ),
    (
        "--out an existing directory",
        ("fit", "--data", "iris", "--method", "map", "--out", "{dir}/folder.nc"),
        "--out '{dir}/folder.nc' is a directory; give the name of a file",
    ),
    (
        "--target with a built-in data set",
        ("fit", "--data", "iris", "--target", "species", "--method", "map", "--out", "{dir}/r.nc"),
        "--target applies to CSV/TSV/parquet files and the built-in tables (transport, penguins)",
    ),
    (
        "--target-accept with the Gibbs sampler (the GP's default)",
        (
            "fit",
            "--model",
            "gp",
            "--data",
            "{dir}/train.csv",
            "--target",
            "label",
            "--target-accept",
            "0.9",
            "--features",
            "x",
            "--out",
            "{dir}/r.nc",
        ),
        "--target-accept does nothing with --method gibbs (which ignores it); it applies to --method nuts",
    ),
    (
        "--draws with a point estimate",
        ("fit", "--data", "iris", "--method", "map", "--draws", "10", "--out", "{dir}/r.nc"),
        "--draws does nothing with --method map",
    ),
    (
        "--tune with exact draws",
        ("fit", "--data", "iris", "--model", "naive_bayes", "--method", "exact", "--tune", "10", "--out", "{dir}/r.nc"),
        "--tune does nothing with --method exact (which ignores it); it applies to --method nuts or gibbs",
    ),
    (
        "--keep-partial with a point estimate",
        ("fit", "--data", "iris", "--method", "mle", "--keep-partial", "--out", "{dir}/r.nc"),
        "--keep-partial does nothing with --method mle",
    ),
    (
        "--chains with exact draws in compare",
        ("compare", "--data", "iris", "--model", "naive_bayes", "--method", "exact", "--target-accept", "0.95"),
        "--target-accept does nothing with --method exact",
    ),
    (
        "--delimiter with a built-in data set",
        ("fit", "--data", "iris", "--method", "map", "--delimiter", ";", "--out", "{dir}/r.nc"),
        "--delimiter, --decimal and --encoding apply to CSV and TSV files, not to the built-in data set 'iris'",
    ),
    (
        "--encoding with predict on a built-in data set",
        ("predict", "--run", "{dir}/iris.nc", "--data", "iris", "--encoding", "latin-1", "--out", "{dir}/r.csv"),
        "not to the built-in data set 'iris', whose format is fixed",
    ),
    (
        "a CSV with pandas' row index",
        ("fit", "--method", "map", "--data", "{dir}/index.csv", "--target", "label", "--out", "{dir}/r.nc"),
        "its first column has no name, as a row index written by pandas' DataFrame.to_csv",
    ),
    (
        "NUL in a CSV column name",
        ("fit", "--method", "map", "--data", "{dir}/nul_header.csv", "--target", "label", "--out", "{dir}/r.nc"),
        r"column name 'x\x00' holds the control character '\x00' (U+0000)",
    ),
    (
        "ESC in a CSV class label",
        ("fit", "--method", "map", "--data", "{dir}/esc_label.csv", "--target", "label", "--out", "{dir}/r.nc"),
        r"column 'label': class label 'a\x1b' holds the control character '\x1b'",
    ),
    (
        "BEL in a CSV category level",
        ("fit", "--method", "map", "--data", "{dir}/bel_level.csv", "--target", "label", "--out", "{dir}/r.nc"),
        r"column 'colour': level 're\x07d' holds the control character '\x07'",
    ),
    (
        "vertical tab in a TSV class label",
        ("fit", "--method", "map", "--data", "{dir}/tab_label.tsv", "--target", "label", "--out", "{dir}/r.nc"),
        r"class label 'a\x0bz' holds the control character '\x0b'",
    ),
    (
        "NUL in a parquet column name",
        ("fit", "--method", "map", "--data", "{dir}/nul.parquet", "--target", "label", "--out", "{dir}/r.nc"),
        r"column name 'x\x00' holds the control character",
    ),
]


@pytest.fixture(scope="module")
def cli_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("inputs")
    for name, content in FILES.items():
        (folder / name).write_bytes(content)
    (folder / "folder.nc").mkdir()
    assert run("fit", "--data", "iris", "--method", "map", "--out", str(folder / "iris.nc")) == 0
    pd.DataFrame({"x\x00": [1.0, 2.0, 3.0], "label": ["a", "b", "a"]}).to_parquet(folder / "nul.parquet")
    return folder


@pytest.mark.parametrize(("case", "argv", "message"), CLI_CASES, ids=[case for case, *_ in CLI_CASES])
def test_bad_options_are_usage_errors_before_any_work(cli_folder, capsys, case, argv, message):
    capsys.readouterr()
    assert run(*(part.format(dir=cli_folder) for part in argv)) == 2
    error = capsys.readouterr().err
    assert_one_line_error(error, message.format(dir=cli_folder))
    assert error.count("\n") == 1
    assert not (cli_folder / "r.nc").exists() and not (cli_folder / "r.csv").exists()


def test_a_sampling_flag_the_method_reads_is_accepted(cli_folder, capsys):
    """The check is derived from the method registry: exact draws read --draws and --chains."""
    out = cli_folder / "nb.nc"
    assert run("fit", "--data", "iris", "--model", "naive_bayes", "--method", "exact", "--draws", "20", "--chains", "2",
               "--no-progress", "--out", str(out)) == 0  # fmt: skip
    assert out.exists()


# -- result files edited to hold absurd but well-formed values ------------------------------------------------------


@pytest.fixture(scope="module")
def result_files(tmp_path_factory) -> dict[str, Path]:
    """A MAP result (logistic) and exact draws (naive Bayes) on iris."""
    folder = tmp_path_factory.mktemp("results")
    files = {"map": folder / "map.nc", "draws": folder / "draws.nc"}
    assert run("fit", "--data", "iris", "--method", "map", "--standardize", "--out", str(files["map"])) == 0
    assert (
        run("fit", "--data", "iris", "--model", "naive_bayes", "--method", "exact", "--draws", "30", "--chains", "2",
            "--out", str(files["draws"]))
        == 0
    )  # fmt: skip
    return files


def _attrs(**attrs: Any) -> Callable[[netCDF4.Dataset], None]:
    def edit(dataset: netCDF4.Dataset) -> None:
        for name, value in attrs.items():
            dataset.setncattr(name, value)

    return edit


def _values(group: str, variable: str, change: Callable[[np.ndarray], np.ndarray]):
    def edit(dataset: netCDF4.Dataset) -> None:
        target = dataset[group][variable]
        target[:] = change(np.array(target[:]))

    return edit


def _first(value: float) -> Callable[[np.ndarray], np.ndarray]:
    def change(array: np.ndarray) -> np.ndarray:
        flat = array.astype(float).ravel()
        flat[0] = value
        return flat.reshape(array.shape)

    return change


def _rename_variable(dataset: netCDF4.Dataset) -> None:
    dataset["point_estimate_map"].renameVariable("weights", "weightz")


@dataclass(frozen=True)
class ResultCase:
    name: str
    result: str  # "map" or "draws"
    edit: Callable[[netCDF4.Dataset], None]
    message: str


EDITED = "the file was edited"
RESULT_FILE_CASES = [
    ResultCase(
        "GP jitter 1e300",
        "map",
        _attrs(model="gp", model_hyperparameters=json.dumps({"model": "gp", "jitter": 1e300})),
        "jitter must be a number in (0, 0.01]",
    ),
    ResultCase("NaN in the posterior", "draws", _values("posterior", "gaussian_mean", _first(np.nan)), "not finite"),
    ResultCase(
        "inf in the posterior", "draws", _values("posterior", "gaussian_variance", _first(np.inf)), "not finite"
    ),
    ResultCase(
        "a negative variance", "draws", _values("posterior", "gaussian_variance", np.negative), "parameters_digest"
    ),
    ResultCase(
        "class probabilities not summing to 1", "draws", _values("posterior", "class_prior", lambda a: 5 * a), "SHA-256"
    ),
    ResultCase("weights of 1e300", "map", _values("point_estimate_map", "weights", lambda a: a * 0 + 1e300), EDITED),
    ResultCase("NaN weights", "map", _values("point_estimate_map", "weights", _first(np.nan)), "not finite"),
    ResultCase("NaN in the training rows", "map", _values("constant_data", "X", _first(np.nan)), "X must be finite"),
    ResultCase("a training row changed", "map", _values("constant_data", "X", _first(1e6)), "data_fingerprint"),
    ResultCase(
        "a shifted standardisation mean",
        "map",
        _values("constant_data", "feature_center", lambda a: a + 1e300),
        "are not the mean/std of the training columns",
    ),
    ResultCase(
        "a standardisation scale of 1e-300",
        "map",
        _values("constant_data", "feature_scale", lambda a: a * 0 + 1e-300),
        "are not the mean/std of the training columns",
    ),
    ResultCase("a zero scale", "map", _values("constant_data", "feature_scale", _first(0.0)), "must be positive"),
    ResultCase(
        "class codes beyond the classes", "map", _values("observed_data", "y", lambda a: a + 7), "class codes 0..2"
    ),
    ResultCase(
        "class coordinates renamed",
        "map",
        _values("point_estimate_map", "class", lambda a: np.array(["a", "b", "c"], dtype=object)),
        "has class coordinates other than the attrs'",
    ),
    ResultCase("a parameter renamed", "map", _rename_variable, "should list parameters of the point estimate"),
    ResultCase(
        "draws other than recorded",
        "draws",
        _attrs(sampler_settings=json.dumps({"draws": 10, "chains": 2})),
        "group posterior has 2 chains of 30 draws, but attr sampler_settings records 2 of 10",
    ),
    ResultCase(
        "standardised columns that do not exist",
        "map",
        _attrs(standardized_features=json.dumps(["nonexistent"])),
        "standardized_features names columns that are not in model_feature_names",
    ),
    ResultCase("repeated class names", "map", _attrs(class_names=json.dumps(["a", "a", "b"])), "must list distinct"),
    ResultCase(
        "feature names renamed", "map", _attrs(feature_names=json.dumps(["a", "b", "c", "d"])), "data_fingerprint"
    ),
    ResultCase(
        "levels of an unknown column",
        "map",
        _attrs(category_names=json.dumps({"zz": ["a", "b"]})),
        "attr category_names names ['zz']",
    ),
    ResultCase(
        "an unknown estimate kind",
        "map",
        _attrs(point_estimate_status=json.dumps({"map": "exists", "zz": "exists"})),
        "unknown estimate kinds ['zz']",
    ),
    ResultCase("a creation time that is no time", "map", _attrs(created_at="yesterday"), "is not an ISO 8601 time"),
    ResultCase("partial point estimate", "map", _attrs(partial=1), "draws nothing that an interrupt could cut"),
    ResultCase(
        "NUL in a class name",
        "map",
        _attrs(class_names=json.dumps(["setosa\x00", "versicolor", "virginica"])),
        r"attr class_names holds 'setosa\x00', with the control character",
    ),
    ResultCase("a digest that is no digest", "map", _attrs(parameters_digest="abc"), "should be a SHA-256 hex digest"),
]


@pytest.mark.parametrize("case", RESULT_FILE_CASES, ids=[case.name for case in RESULT_FILE_CASES])
def test_edited_result_files_are_refused_on_reading(result_files, tmp_path, capsys, case):
    path = tmp_path / "edited.nc"
    shutil.copy(result_files[case.result], path)
    with netCDF4.Dataset(path, "a") as dataset:
        case.edit(dataset)
    capsys.readouterr()
    assert run("predict", "--run", str(path), "--data", "iris", "--out", str(tmp_path / "p.csv")) == 2
    error = capsys.readouterr().err
    assert_one_line_error(error, case.message)
    assert "not a readable bayesclass result" in error and error.count("\n") == 1
    assert not (tmp_path / "p.csv").exists()


def test_the_unedited_result_files_read(result_files, tmp_path):
    """The cases fail because of their edit, not because the fixtures are unreadable."""
    for kind, path in result_files.items():
        assert run("predict", "--run", str(path), "--data", "iris", "--out", str(tmp_path / f"{kind}.csv")) == 0
