"""read_csv_chunks: a CSV file of any size read in chunks, with the format, coding and errors of load_csv, and the
exact line of every row."""

from __future__ import annotations

import numpy as np
import pytest

from bayesclass.data import CsvFormat, count_csv_rows, features_from_csv, load_csv, read_csv_chunks

TEXT = "size,colour,label,note\n" + "".join(
    f"{0.25 * i:.2f},{('blue', 'green', 'red')[i % 3]},{('no', 'yes')[i % 2]},n{i % 4}\n" for i in range(23)
)


def _read_all(path, chunk_rows, **kwargs):
    chunks = list(read_csv_chunks(path, chunk_rows=chunk_rows, **kwargs))
    return (
        np.concatenate([chunk.X for chunk in chunks]),
        None if chunks[0].y is None else np.concatenate([chunk.y for chunk in chunks]),
        np.concatenate([chunk.lines for chunk in chunks]),
        [len(chunk) for chunk in chunks],
    )


@pytest.mark.parametrize("chunk_rows", [1, 5, 23, 1000])
def test_chunks_equal_the_whole_file_loaders(tmp_path, chunk_rows):
    path = tmp_path / "new.csv"
    path.write_text(TEXT)
    reference = load_csv(path, target="label")
    schema = {"feature_names": ("size", "colour"), "category_names": reference.category_names}
    X, y, lines, sizes = _read_all(path, chunk_rows, **schema, target="label", class_names=reference.class_names)
    np.testing.assert_array_equal(X, reference.select_features(["size", "colour"]).X)
    np.testing.assert_array_equal(y, reference.y)
    np.testing.assert_array_equal(lines, np.arange(2, 25))
    assert sum(sizes) == 23 and max(sizes) <= chunk_rows
    X_only, none, _, _ = _read_all(path, chunk_rows, **schema)
    assert none is None
    np.testing.assert_array_equal(X_only, features_from_csv(path, **schema))


def test_columns_follow_the_requested_order_and_other_columns_are_ignored(tmp_path):
    path = tmp_path / "new.csv"
    path.write_text("note,b,a\nfree text,2,1\n,4,3\n")  # an empty cell in an unused column is no error
    X, _, _, _ = _read_all(path, 10, feature_names=("a", "b"))
    np.testing.assert_array_equal(X, [[1.0, 2.0], [3.0, 4.0]])


def test_lines_are_exact_with_blank_lines_and_quoted_line_breaks(tmp_path):
    path = tmp_path / "new.csv"
    path.write_text('\na,note\n1,"two\nlines"\n\n\n2,x\n3,"y"\n')
    _, _, lines, _ = _read_all(path, 2, feature_names=("a",))
    assert lines.tolist() == [3, 7, 8]
    assert count_csv_rows(path) == 4  # an estimate: a quoted line break counts as a row


def test_format_bom_latin1_semicolon_and_decimal_comma(tmp_path):
    path = tmp_path / "new.csv"
    path.write_bytes("\ufeffpoids;ville\n1,5;Besançon\n2,25;Orléans\n".encode("utf-8"))
    known = {"ville": ("Besançon", "Orléans")}
    columns = {"feature_names": ("poids", "ville"), "category_names": known}
    X, _, _, _ = _read_all(path, 1, **columns, csv_format=CsvFormat(decimal=","))
    np.testing.assert_array_equal(X, [[1.5, 0.0], [2.25, 1.0]])
    latin = tmp_path / "latin.csv"
    latin.write_bytes("poids;ville\n1,5;Besançon\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"is not utf-8 text .*e\.g\. CsvFormat\(encoding='latin-1'\)$"):
        _read_all(latin, 1, **columns, csv_format=CsvFormat(decimal=","))
    X, _, _, _ = _read_all(latin, 1, **columns, csv_format=CsvFormat(decimal=",", encoding="latin-1"))
    np.testing.assert_array_equal(X, [[1.5, 0.0]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "has no header"),
        ("\n\n", "has no header"),
        ("a,b\n", "has a header but no data rows; it needs at least one data row to predict"),
        ("a,b\n\n\n", "has a header but no data rows"),
        ("a,a\n1,2\n", "empty or duplicate column names"),
        ("a,c\n1,2\n", r"lacks the fitted feature column\(s\) \['b'\]; its columns are \['a', 'c'\]"),
        ("a;b\n1;2\n", None),  # the delimiter is detected
        ("a,b\n1,2\n3,4,5\n", "line 3 has 3 cells but the header has 2"),
        ("a,b\n1,2\n3\n", "line 3 has 1 cells but the header has 2"),
        ("a,b\n1,2\n3,\n", r"column 'b' 1 \(first: blank cell at line 3\); pass missing='drop'"),
        ("a,b\n1,2\n3, NA \n", r"column 'b' 1 \(first: blank cell 'NA' at line 3\)"),
        ("a,b\n1,2\n3,x\n", r"column 'b' holds text \('x' at line 3, column 'b'\) but the model was fitted on numbers"),
        ("a,b\n1,2\n3,nan\n", "blank cell 'nan' at line 3"),
        ("a,b\n1,2\n3,-inf\n", "value '-inf' at line 3, column 'b' is not finite"),
    ],
)
def test_bad_files_are_clear_errors(tmp_path, text, message):
    path = tmp_path / "new.csv"
    path.write_text(text)
    if message is None:
        X, _, _, _ = _read_all(path, 1, feature_names=("a", "b"))
        np.testing.assert_array_equal(X, [[1.0, 2.0]])
        return
    with pytest.raises(ValueError, match=message):
        _read_all(path, 1, feature_names=("a", "b"))


def test_unseen_levels_and_labels_name_value_column_and_line(tmp_path):
    path = tmp_path / "new.csv"
    path.write_text("size,colour,label\n1,red,yes\n2,blue,no\n\n3,purple,no\n")
    known = {"colour": ("blue", "red")}
    with pytest.raises(ValueError, match=r"level 'purple' at line 5, column 'colour' was not seen in training"):
        _read_all(path, 1, feature_names=("size", "colour"), category_names=known)
    path.write_text("size,colour,label\n1,red,yes\n2,blue,maybe\n")
    with pytest.raises(ValueError, match=r"label 'maybe' at line 3, column 'label' was not seen in training"):
        columns = {"feature_names": ("size", "colour"), "category_names": known}
        _read_all(path, 1, **columns, target="label", class_names=("no", "yes"))


def test_arguments_are_checked(tmp_path):
    path = tmp_path / "new.csv"
    path.write_text("a\n1\n")
    with pytest.raises(ValueError, match="chunk_rows must be a positive integer"):
        _read_all(path, 0, feature_names=("a",))
    with pytest.raises(ValueError, match="class_names .* must be given with target"):
        _read_all(path, 1, feature_names=("a",), target="a")
    with pytest.raises(ValueError, match="is not an existing file"):
        _read_all(tmp_path / "absent.csv", 1, feature_names=("a",))
    with pytest.raises(ValueError, match="'no-such-codec' is not a known text encoding"):
        _read_all(path, 1, feature_names=("a",), csv_format=CsvFormat(encoding="no-such-codec"))
