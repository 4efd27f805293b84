"""``bayesclass predict`` streams a CSV file: read, predicted and written in chunks, the same numbers as the API
on all rows at once, a progress bar over rows, per-draw probabilities chunk by chunk, and nothing written on
an error or an interrupt (a header-only file, a ragged row in a later chunk, an unseen level in a later chunk)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayesclass import data, inference
from bayesclass.cli import main
from bayesclass.inference import SamplerSettings, predict
from bayesclass.inference.prediction import tiles as chunks_module
from bayesclass.inference.prediction.predict import Predictor

TINY_NUTS = SamplerSettings(draws=100, tune=150, chains=2, progressbar=False)
COLOURS = ("blue", "green", "red")


def run(*argv: str) -> int:
    try:
        return main(list(argv))
    except SystemExit as exit_:
        return int(exit_.code)


def read_rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as stream:
        return list(csv.reader(stream))


def leftovers(directory: Path) -> list[str]:
    """Temporary files an atomic write would leave behind if it failed to clean up."""
    return sorted(path.name for path in directory.iterdir() if path.name.startswith("."))


def write_rows(path: Path, rows: list[list[object]], header=("size", "colour", "label")) -> Path:
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def synthetic_rows(n: int, seed: int) -> list[list[object]]:
    rng = np.random.default_rng(seed)
    size = rng.normal(size=n)
    colour = rng.integers(0, 3, n)
    label = np.where(size + 0.5 * colour + rng.normal(size=n) > 0.5, "big", "small")
    return [[repr(float(s)), COLOURS[c], lab] for s, c, lab in zip(size, colour, label, strict=True)]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A NUTS logistic regression (treatment-coded text column) saved as a run file, and its training CSV."""
    folder = tmp_path_factory.mktemp("stream")
    training = write_rows(folder / "train.csv", synthetic_rows(300, seed=1))
    dataset = data.load_csv(training, target="label")
    result = inference.fit("logistic", dataset, method="nuts", sampler=TINY_NUTS, standardize=True, random_seed=3)
    run_file = folder / "run.nc"
    inference.save(result, run_file)
    return run_file, dataset, inference.load(run_file)


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 16 rows, so that a few hundred rows cross many tiles and chunks."""
    monkeypatch.setattr(chunks_module, "MAX_TILE_ROWS", 16)


def test_streamed_csv_equals_the_api_on_all_rows_for_any_chunk_size(fitted, tmp_path, small_tiles):
    run_file, dataset, result = fitted
    rows = synthetic_rows(203, seed=2)
    new = write_rows(tmp_path / "new.csv", rows)
    expected = predict(result, data.load_csv(new, target="label", category_names=dataset.category_names).X)
    outputs = []
    for chunk_rows in ("1", "7", "50", "1000"):
        out = tmp_path / f"p{chunk_rows}.csv"
        argv = ["predict", "--run", str(run_file), "--data", str(new), "--target", "label", "--out", str(out)]
        assert run(*argv, "--chunk-rows", chunk_rows, "--no-progress") == 0
        outputs.append(read_rows(out))
    assert all(output == outputs[0] for output in outputs[1:])  # byte for byte, whatever the chunk size
    header, *table = outputs[0]
    assert sorted(header) == sorted(
        [
            "p_big",
            "p_big_low",
            "p_big_high",
            "p_big_map",
            "p_big_map_low",
            "p_big_map_high",
            "p_big_mle",
            "p_big_mle_low",
            "p_big_mle_high",
            "p_small",
            "p_small_low",
            "p_small_high",
            "p_small_map",
            "p_small_map_low",
            "p_small_map_high",
            "p_small_mle",
            "p_small_mle_low",
            "p_small_mle_high",
            "predicted",
            "observed",
        ]
    )  # the point estimates in the order of the result's groups
    assert header[:3] == ["p_big", "p_big_low", "p_big_high"] and header[-2:] == ["predicted", "observed"]
    assert len(table) == 203
    columns = {name: [row[i] for row in table] for i, name in enumerate(header)}
    for k, name in enumerate(("big", "small")):
        for suffix, variable in (("", "class_proba"), ("_low", "class_proba_low"), ("_high", "class_proba_high")):
            # the same floats: the CSV holds repr(float), which round-trips exactly
            assert columns[f"p_{name}{suffix}"] == [repr(float(v)) for v in expected[variable].values[:, k]]
        for kind in ("map", "mle"):  # each point estimate and its Wald (delta-method) interval
            for suffix in ("", "_low", "_high"):
                variable = f"class_proba_{kind}{suffix}"
                assert columns[f"p_{name}_{kind}{suffix}"] == [repr(float(v)) for v in expected[variable].values[:, k]]
    assert columns["predicted"] == expected["predicted"].values.tolist()
    assert columns["observed"] == [row[2] for row in rows]


def test_draws_out_writes_the_per_draw_probabilities_chunk_by_chunk(fitted, tmp_path, small_tiles):
    run_file, dataset, result = fitted
    new = write_rows(tmp_path / "new.csv", [row[:2] for row in synthetic_rows(41, seed=4)], header=("size", "colour"))
    out, draws_out = tmp_path / "p.csv", tmp_path / "draws.nc"
    argv = ["predict", "--run", str(run_file), "--data", str(new), "--out", str(out), "--draws-out", str(draws_out)]
    assert run(*argv, "--chunk-rows", "9", "--no-progress") == 0
    X = data.features_from_csv(new, feature_names=dataset.feature_names, category_names=dataset.category_names)
    expected = predict(result, X, return_draws=True)["class_proba_draws"]
    with xr.open_dataset(draws_out) as written:
        draws = written["class_proba_draws"].load()
    assert draws.dims == ("chain", "draw", "obs", "class")
    assert draws["class"].values.tolist() == ["big", "small"]
    np.testing.assert_array_equal(draws["obs"].values, np.arange(41))
    np.testing.assert_array_equal(draws.values, expected.values)
    assert leftovers(tmp_path) == []


def test_header_only_csv_is_an_error_and_writes_nothing(fitted, tmp_path, capsys):
    run_file, _, _ = fitted
    new = tmp_path / "empty.csv"
    new.write_text("size,colour\n\n")
    out = tmp_path / "p.csv"
    assert run("predict", "--run", str(run_file), "--data", str(new), "--out", str(out)) == 2
    error = capsys.readouterr().err
    assert "has a header but no data rows; it needs at least one data row to predict" in error
    assert error.count("\n") == 1  # one line
    assert not out.exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("bad_row", "message"),
    [
        (["0.5", "red", "big", "extra"], "line 26 has 4 cells but the header has 3"),
        (["0.5", "red"], "line 26 has 2 cells but the header has 3"),
    ],
)
def test_ragged_row_in_the_third_chunk_names_its_line_and_writes_nothing(
    fitted, tmp_path, capsys, small_tiles, bad_row, message
):
    run_file, _, _ = fitted
    rows = synthetic_rows(40, seed=5)
    rows[24] = bad_row  # line 26: the header is line 1; with 10 rows per chunk, in chunk 3
    new = write_rows(tmp_path / "new.csv", rows)
    out = tmp_path / "p.csv"
    out.write_text("an earlier file\n")
    argv = ["predict", "--run", str(run_file), "--data", str(new), "--target", "label", "--out", str(out)]
    assert run(*argv, "--chunk-rows", "10", "--draws-out", str(tmp_path / "d.nc")) == 2
    error = capsys.readouterr().err
    assert message in error and error.startswith("bayesclass predict: error: CSV file")
    assert out.read_text() == "an earlier file\n"  # left as it was
    assert not (tmp_path / "d.nc").exists() and leftovers(tmp_path) == []


def test_unseen_level_in_a_later_chunk_names_value_column_and_line(fitted, tmp_path, capsys, small_tiles):
    run_file, _, _ = fitted
    rows = synthetic_rows(30, seed=6)
    rows[21][1] = "purple"  # line 23, chunk 5 of 5-row chunks
    new = write_rows(tmp_path / "new.csv", rows)
    out = tmp_path / "p.csv"
    argv = ["predict", "--run", str(run_file), "--data", str(new), "--out", str(out), "--chunk-rows", "5"]
    assert run(*argv) == 2
    error = capsys.readouterr().err
    assert "level 'purple' at line 23, column 'colour' was not seen in training" in error
    assert "known: ['blue', 'green', 'red']" in error
    assert not out.exists() and leftovers(tmp_path) == []


def test_text_missing_cells_and_decimal_commas_in_a_later_chunk_are_clear_errors(fitted, tmp_path, capsys):
    run_file, _, _ = fitted
    out = tmp_path / "p.csv"
    for cell, message in (
        ("large", "column 'size' holds text ('large' at line 9, column 'size') but the model was fitted on numbers"),
        ("NA", "column 'size' 1 (first: blank cell 'NA' at line 9)"),
        ("0,5", "is a number written with the decimal mark ','"),
        ("inf", "value 'inf' at line 9, column 'size' is not finite"),
    ):
        rows = synthetic_rows(12, seed=7)
        rows[7][0] = cell
        new = write_rows(tmp_path / "new.csv", rows)
        assert run("predict", "--run", str(run_file), "--data", str(new), "--out", str(out), "--chunk-rows", "3") == 2
        assert message in capsys.readouterr().err, cell
        assert not out.exists() and leftovers(tmp_path) == []


def test_blank_lines_and_quoted_line_breaks_keep_line_numbers_exact(fitted, tmp_path, capsys):
    run_file, _, _ = fitted
    new = tmp_path / "new.csv"
    new.write_text('size,colour,note\n0.1,red,"two\nlines"\n\n0.2,blue,ok\n0.3,purple,ok\n')
    out = tmp_path / "p.csv"
    assert run("predict", "--run", str(run_file), "--data", str(new), "--out", str(out), "--chunk-rows", "1") == 2
    assert "level 'purple' at line 6, column 'colour'" in capsys.readouterr().err


def test_progress_bar_over_rows_on_a_terminal(fitted, tmp_path, capsys, monkeypatch):
    import io

    from rich.console import Console

    from bayesclass.inference.prediction import progress as writers

    run_file, _, _ = fitted
    new = write_rows(tmp_path / "new.csv", synthetic_rows(25, seed=8))
    out = tmp_path / "p.csv"
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, color_system=None)
    monkeypatch.setattr(writers, "_progress_console", lambda: console)
    assert run("predict", "--run", str(run_file), "--data", str(new), "--out", str(out)) == 0
    assert "predicting" in terminal.getvalue() and "25/25 rows" in terminal.getvalue()
    assert "wrote 25 predictions to" in capsys.readouterr().out
    terminal.truncate(0)
    assert run("predict", "--run", str(run_file), "--data", str(new), "--out", str(out), "--no-progress") == 0
    assert terminal.getvalue() == ""
    monkeypatch.undo()  # stderr is not a terminal under pytest: no bar, nothing but the summary
    assert run("predict", "--run", str(run_file), "--data", str(new), "--out", str(out)) == 0
    assert capsys.readouterr().err == ""


def test_an_interrupt_in_a_later_tile_writes_nothing(fitted, tmp_path, capsys, monkeypatch, small_tiles):
    run_file, _, _ = fitted
    new = write_rows(tmp_path / "new.csv", synthetic_rows(100, seed=9))
    out, draws_out = tmp_path / "p.csv", tmp_path / "d.nc"
    summarise = Predictor.summarise
    calls = []

    def interrupted(self, tile):
        calls.append(len(tile))
        if len(calls) == 4:
            raise KeyboardInterrupt
        return summarise(self, tile)

    monkeypatch.setattr(Predictor, "summarise", interrupted)
    argv = ["predict", "--run", str(run_file), "--data", str(new), "--out", str(out), "--draws-out", str(draws_out)]
    with pytest.raises(KeyboardInterrupt):  # main() in-process: the interrupt goes on to its caller
        run(*argv, "--chunk-rows", "10", "--no-progress")
    assert "interrupted; nothing was written" in capsys.readouterr().err
    assert not out.exists() and not draws_out.exists() and leftovers(tmp_path) == []


def test_predict_argument_errors(fitted, tmp_path, capsys):
    run_file, _, _ = fitted
    new = write_rows(tmp_path / "new.csv", synthetic_rows(5, seed=10))
    base = ["predict", "--run", str(run_file), "--data", str(new), "--out", str(tmp_path / "p.csv")]
    for extra, message in (
        (["--chunk-rows", "0"], "--chunk-rows must be a positive number of rows"),
        (["--draws-out", str(tmp_path / "d.csv")], "d.csv' must end in .nc"),
        (["--interval-prob", "1.5"], "interval_prob must be in (0, 1)"),
    ):
        assert run(*base, *extra) == 2
        assert message in capsys.readouterr().err
    map_run = tmp_path / "map.nc"
    training = write_rows(tmp_path / "train.csv", synthetic_rows(60, seed=11))
    assert run("fit", "--data", str(training), "--target", "label", "--method", "map", "--out", str(map_run)) == 0
    capsys.readouterr()
    argv = ["predict", "--run", str(map_run), "--data", str(new), "--out", str(tmp_path / "p.csv")]
    assert run(*argv, "--draws-out", str(tmp_path / "d.nc")) == 2
    assert "--draws-out needs posterior draws" in capsys.readouterr().err
    assert leftovers(tmp_path) == []
