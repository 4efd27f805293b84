"""Bad input of issue 41: each case once silently wrong, a traceback or vague, now a clear error (or the right answer).

What a fit accepts and what its result schema accepts are one set of constraints: no fit writes a file its own
reader refuses.
"""

from __future__ import annotations

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
