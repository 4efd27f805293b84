"""One door for tables: DataFrame, CSV, TSV and parquet give the same Dataset; blank cells; categorical coding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesclass.data import Dataset, MissingRecord, load, load_csv
from bayesclass.data.coding import categorical_levels, treatment_code


def _frame() -> pd.DataFrame:
    """Text, category, bool, float with blanks, integers and a text column with a blank, as an analyst has them."""
    return pd.DataFrame(
        {
            "species": ["Adelie", "Gentoo", "Adelie", "Chinstrap", "Gentoo", "Adelie", "Chinstrap", "Gentoo"],
            "island": pd.Categorical(
                ["Dream", "Biscoe", "Torgersen", "Dream", "Biscoe", "Dream", "Torgersen", "Biscoe"]
            ),
            "mass": [3750.0, 5400.0, np.nan, 3500.0, 5100.5, 3300.25, 3650.0, 4875.0],
            "tagged": [True, False, True, True, False, False, True, False],
            "year": [2007, 2008, 2009, 2007, 2008, 2009, 2007, 2009],
            "sex": ["male", "female", "female", None, "male", "female", "male", "female"],
            "note": ["a", None, "c", "d", "e", "f", "g", "h"],  # a blank in a column the fit does not use
        }
    )


def _same(a: Dataset, b: Dataset) -> None:
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert (a.feature_names, a.class_names, a.feature_kinds) == (b.feature_names, b.class_names, b.feature_kinds)
    assert dict(a.category_names) == dict(b.category_names)
    assert a.missing == b.missing


def _options():
    return {
        "target": "species",
        "features": ["island", "mass", "tagged", "year", "sex"],
        "feature_kinds": {"year": "categorical"},
        "missing": "drop",
    }


def test_csv_tsv_parquet_and_dataframe_give_the_same_dataset(tmp_path):
    frame = _frame()
    frame.to_csv(tmp_path / "t.csv", index=False)  # NaN/None written as empty cells
    frame.to_csv(tmp_path / "t.TSV", index=False, sep="\t", na_rep="NA")  # the suffix in any case; NA spelled out
    frame.to_parquet(tmp_path / "t.parquet")
    reference = Dataset.from_frame(frame, **_options())
    for path in ("t.csv", "t.TSV", "t.parquet"):
        _same(load(tmp_path / path, **_options()), reference)
    # what the coder made, independently: rows 2 (mass) and 3 (sex) dropped, 'note' never looked at
    kept = frame.drop(index=[2, 3]).reset_index(drop=True)
    assert reference.missing == MissingRecord("drop", 2, (("mass", 1), ("sex", 1)))
    assert reference.class_names == ("Adelie", "Chinstrap", "Gentoo")
    np.testing.assert_array_equal(reference.y, pd.Categorical(kept["species"], categories=reference.class_names).codes)
    assert reference.feature_kinds == ("categorical", "continuous", "binary", "categorical", "binary")
    assert dict(reference.category_names) == {
        "island": ("Biscoe", "Dream", "Torgersen"),
        "tagged": ("False", "True"),
        "year": ("2007", "2008", "2009"),
        "sex": ("female", "male"),
    }
    np.testing.assert_array_equal(reference.X[:, 1], kept["mass"])
    np.testing.assert_array_equal(reference.X[:, 2], kept["tagged"].astype(float))
    np.testing.assert_array_equal(reference.X[:, 3], kept["year"] - 2007)  # codes of the levels, not the years
    np.testing.assert_array_equal(reference.X[:, 4], (kept["sex"] == "male").astype(float))


def test_an_ordered_category_keeps_its_order_and_an_unordered_one_is_sorted():
    frame = pd.DataFrame({"y": ["a", "b", "a", "b"], "size": ["small", "large", "medium", "small"]})
    frame["size"] = pd.Categorical(frame["size"], categories=["small", "medium", "large", "huge"], ordered=True)
    data = Dataset.from_frame(frame, target="y")
    assert data.category_names["size"] == ("small", "medium", "large")  # unused 'huge' is no level
    np.testing.assert_array_equal(data.X[:, 0], [0, 2, 1, 0])
    frame["size"] = frame["size"].cat.as_unordered()
    assert Dataset.from_frame(frame, target="y").category_names["size"] == ("large", "medium", "small")


def test_blanks_are_counted_per_used_column_with_the_fix(tmp_path):
    frame = _frame()
    frame.loc[[0, 5], "mass"] = np.nan
    message = (
        r"DataFrame has 4 blank cell\(s\) in the columns used: column 'mass' 3 \(first: "
        r"blank cell at row 0\), column 'sex' 1 \(first: blank cell at row 3\); 4 of 8 rows are "
        r"incomplete\. Pass missing='drop' to drop them"
    )
    with pytest.raises(ValueError, match=message):
        Dataset.from_frame(frame, target="species", features=["island", "mass", "sex"])
    frame.to_csv(tmp_path / "t.csv", index=False, na_rep="N/A")
    with pytest.raises(ValueError, match=r"column 'mass' 3 \(first: blank cell 'N/A' at line 2\), column 'sex' 1"):
        load(tmp_path / "t.csv", target="species", features="island,mass,sex")


def test_only_the_used_columns_are_checked_for_blanks():
    frame = _frame()
    data = Dataset.from_frame(frame, target="species", features=["island", "tagged"])  # no blank in these
    assert data.n_obs == 8 and data.missing == MissingRecord()
    with pytest.raises(ValueError, match=r"column 'note' 1 \(first: blank cell at row 1\)"):
        Dataset.from_frame(frame, target="species", features=["island", "note"])
    dropped = Dataset.from_frame(frame, target="species", features=["note"], missing="drop")
    assert dropped.n_obs == 7 and dropped.missing.blanks_per_column == (("note", 1),)


def test_a_numeric_column_declared_categorical_is_coded_by_its_distinct_values():
    years = np.array([2007, 2009, 2007, 2008, 2009, 2009, 2007, 2008])
    frame = pd.DataFrame({"y": list("abababab"), "year": years})
    data = Dataset.from_frame(frame, target="y", feature_kinds={"year": "categorical"})
    assert data.category_names["year"] == tuple(str(v) for v in np.unique(years))
    levels = categorical_levels(data.X, data.feature_names, data.feature_kinds, data.category_names)
    coded, names, _ = treatment_code(data.X, data.feature_names, levels)
    assert names == ("year=2008", "year=2009") and coded.shape == (8, len(np.unique(years)) - 1)
    np.testing.assert_array_equal(coded, np.stack([years == 2008, years == 2009], axis=1).astype(float))
    # the same for a built-in and for Dataset.with_feature_kinds: codes of the sorted values, never the values
    penguins = load("penguins", missing="drop", feature_kinds={"year": "categorical"})
    assert penguins.category_names["year"] == ("2007", "2008", "2009")
    plain = load("penguins", missing="drop")
    declared = plain.with_feature_kinds({"year": "categorical"})
    np.testing.assert_array_equal(declared.X, penguins.X)
    assert declared.category_names["year"] == ("2007", "2008", "2009")


def test_too_many_levels_are_refused_naming_the_column_the_count_and_the_limit():
    frame = pd.DataFrame({"y": ["a", "b"] * 40, "code": [f"c{i % 60}" for i in range(80)]})
    with pytest.raises(ValueError, match=r"column 'code' has 60 distinct levels, more than max_levels=50.*levels=60"):
        Dataset.from_frame(frame, target="y")
    assert len(Dataset.from_frame(frame, target="y", max_levels=60).category_names["code"]) == 60
    numbers = pd.DataFrame({"y": ["a", "b"] * 40, "id": np.arange(80)})
    too_many = r"80 distinct levels.*\(features=\.\.\.\), or raise the limit with max_levels=80$"
    with pytest.raises(ValueError, match=too_many):
        Dataset.from_frame(numbers, target="y", feature_kinds={"id": "categorical"})
    with pytest.raises(ValueError, match=r"column 'id' has 80 distinct values, more than max_levels=50"):
        Dataset.from_frame(numbers, target="y").with_feature_kinds({"id": "categorical"})
    with pytest.raises(ValueError, match=r"max_levels must be an integer >= 2"):
        Dataset.from_frame(numbers, target="y", max_levels=1)


def test_a_two_level_text_column_is_named_by_its_second_level_like_the_others():
    penguins = load("penguins", missing="drop", features=["island", "sex", "bill_depth_mm"])
    levels = categorical_levels(penguins.X, penguins.feature_names, penguins.feature_kinds, penguins.category_names)
    coded, names, indicator = treatment_code(penguins.X, penguins.feature_names, levels)
    assert names == ("island=Dream", "island=Torgersen", "sex=male", "bill_depth_mm")
    assert indicator.tolist() == [True, True, True, False]
    np.testing.assert_array_equal(coded[:, 2], penguins.X[:, 1])  # the 0/1 codes themselves, male = 1
    # a 0/1 column of numbers has no level names and keeps its name
    numbers = Dataset.from_frame(pd.DataFrame({"y": list("abab"), "flag": [0, 1, 1, 0]}), target="y")
    assert categorical_levels(numbers.X, numbers.feature_names, numbers.feature_kinds, numbers.category_names) == {}


def test_penguins_builtin_refuses_blanks_drops_them_on_request_and_takes_another_target():
    with pytest.raises(ValueError, match=r"19 blank cell\(s\).*column 'sex' 11.*11 of 344 rows are incomplete"):
        load("penguins")
    penguins = load("penguins", missing="drop")
    assert (penguins.n_obs, penguins.n_features, penguins.class_names) == (333, 7, ("Adelie", "Chinstrap", "Gentoo"))
    assert penguins.missing.dropped_rows == 11
    sex = load("penguins", target="sex", features="bill_depth_mm,body_mass_g", missing="drop")
    assert sex.class_names == ("female", "male") and sex.n_obs == 333  # the 11 without sex; 2 of them unmeasured
    assert sex.missing.blanks_per_column == (("sex", 11), ("bill_depth_mm", 2), ("body_mass_g", 2))
    again = load(sex.origin.source, **dict(sex.origin.arguments))  # the origin makes the rows again
    assert again.fingerprint() == sex.fingerprint()
    with pytest.raises(ValueError, match=r"only the built-in tables \(transport, penguins\) take another target"):
        load("iris", target="species")


def test_the_shipped_penguins_file_is_the_original_with_na_written_blank():
    from importlib import resources

    shipped = resources.files("bayesclass.data") / "files" / "penguins.csv"
    frame = pd.read_csv(shipped, keep_default_na=False, dtype=str)
    assert frame.shape == (344, 8) and int((frame == "").to_numpy().sum()) == 19
    assert int((frame == "NA").to_numpy().sum()) == 0


def test_from_frame_rejects_what_it_cannot_read():
    frame = pd.DataFrame({"y": ["a", "b"], "x": [1.0, 2.0]})
    with pytest.raises(TypeError, match="frame must be a pandas DataFrame"):
        Dataset.from_frame(frame.to_numpy(), target="y")
    with pytest.raises(ValueError, match=r"target column 'label' is not in DataFrame; its columns are \['y', 'x'\]"):
        Dataset.from_frame(frame, target="label")
    with pytest.raises(ValueError, match=r"missing must be one of 'error', 'drop'|missing must be 'error' or 'drop'"):
        Dataset.from_frame(frame, target="y", missing="impute")
    with pytest.raises(ValueError, match=r"mixes text and numbers \(text 'one' at row 1, a number '1' at row 0\)"):
        Dataset.from_frame(pd.DataFrame({"y": ["a", "b"], "x": ["1", "one"]}), target="y")
    with pytest.raises(ValueError, match=r"value 'inf' at row 1, column 'x' is not finite"):
        Dataset.from_frame(pd.DataFrame({"y": ["a", "b"], "x": [1.0, np.inf]}), target="y")
    with pytest.raises(ValueError, match=r"every one of its 2 rows has a blank cell"):
        Dataset.from_frame(pd.DataFrame({"y": ["a", "b"], "x": [None, None]}), target="y", missing="drop")


def test_load_csv_stays_a_thin_wrapper_with_line_numbers(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("y,x,z\na,1,u\n\nb,2,\na,oops,w\n")
    with pytest.raises(ValueError, match=r"mixes text and numbers \(text 'oops' at line 5, a number '1' at line 2\)"):
        load_csv(path, target="y")
    with pytest.raises(ValueError, match=r"column 'z' 1 \(first: blank cell at line 4\)"):
        load_csv(path, target="y", features=["z"])


# -- the analyst's own test table, coded as the training data (load_test, Dataset.coded_as) ----------------------


def _training() -> Dataset:
    frame = pd.DataFrame(
        {
            "island": ["Biscoe", "Dream", "Torgersen", "Dream", "Biscoe", "Torgersen"],
            "mass": [3750.0, 5400.0, 3300.0, 3500.0, 5100.0, 3650.0],
            "species": ["Adelie", "Gentoo", "Chinstrap", "Adelie", "Gentoo", "Chinstrap"],
        }
    )
    return Dataset.from_frame(frame, target="species", name="train")


def test_a_test_table_lacking_a_level_and_a_class_gets_the_training_codes(tmp_path):
    """On its own the test table codes Dream 0 and Gentoo 1; coded as the training data, Dream is 1 and Gentoo 2,
    whichever container it comes in (Dataset, DataFrame, CSV, parquet); unused columns are left out."""
    from bayesclass.data import load_test

    training = _training()
    frame = pd.DataFrame(
        {
            "id": [7, 8, 9],
            "species": ["Gentoo", "Adelie", "Gentoo"],
            "mass": [5000.0, 3600.0, 4900.0],
            "island": ["Torgersen", "Dream", "Dream"],
        }  # fmt: skip
    )
    alone = Dataset.from_frame(frame, target="species", features=["island", "mass"])
    assert alone.category_names["island"] == ("Dream", "Torgersen") and alone.class_names == ("Adelie", "Gentoo")
    frame.to_csv(tmp_path / "test.csv", index=False)
    frame.to_parquet(tmp_path / "test.parquet")
    for table in (alone, frame, tmp_path / "test.csv", str(tmp_path / "test.parquet")):
        coded = load_test(table, training, target="species")
        np.testing.assert_array_equal(coded.X, [[2, 5000.0], [1, 3600.0], [1, 4900.0]])
        np.testing.assert_array_equal(coded.y, [2, 0, 2])
        assert coded.class_names == training.class_names and coded.feature_names == training.feature_names
        assert dict(coded.category_names) == dict(training.category_names)
    assert load_test(tmp_path / "test.csv", training, target="species").name == "test.csv"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"island": ["Mars", "Dream"]}, "level 'Mars' at row 0, column 'island' was not seen in training"),
        ({"species": ["Emperor", "Adelie"]}, "label 'Emperor' at row 0, column 'species' was not seen in training"),
        ({"mass": ["heavy", "light"]}, "column 'mass' holds text levels but the training data hold numbers"),
        ({"island": None}, "lacks the fitted feature column(s) ['island']"),
        ({"mass": [np.nan, 3600.0]}, "blank cell"),
    ],
)
def test_a_test_table_coded_unlike_the_training_data_is_refused_naming_argument_and_column(change, message):
    from bayesclass.data import load_test

    frame = pd.DataFrame({"island": ["Dream", "Dream"], "mass": [5000.0, 3600.0], "species": ["Gentoo", "Adelie"]})
    for column, values in change.items():
        frame = frame.drop(columns=column) if values is None else frame.assign(**{column: values})
    with pytest.raises(ValueError) as error:
        load_test(frame, _training(), argument="--test-data", target="species")
    assert str(error.value).startswith("--test-data (a DataFrame): ") and message in str(error.value)
    assert "coded as the training data 'train'" in str(error.value)


def test_blank_cells_of_a_test_table_are_dropped_on_request_and_counted():
    from bayesclass.data import load_test

    frame = pd.DataFrame({"island": ["Dream", None], "mass": [5000.0, 3600.0], "species": ["Gentoo", "Adelie"]})
    coded = load_test(frame, _training(), target="species", missing="drop")
    assert coded.n_obs == 1 and coded.missing.dropped_rows == 1
    with pytest.raises(TypeError, match="must be a Dataset, a pandas DataFrame or the path"):
        load_test([[1, 2]], _training(), target="species")
    with pytest.raises(ValueError, match="name the class column"):
        load_test(frame, _training())
