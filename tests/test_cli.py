"""The command line: exit codes, output files, and the predictions CSV layout."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from bayesclass.cli import main
from inference import load as load_result


def run(*argv: str) -> int:
    try:
        return main(list(argv))
    except SystemExit as exit_:  # argparse rejects unknown choices itself
        return int(exit_.code)


def read_csv(path) -> list[dict[str, str]]:
    with open(path, newline="") as stream:
        return list(csv.DictReader(stream))


def test_datasets_lists_every_builtin(capsys):
    assert run("datasets") == 0
    listed = capsys.readouterr().out
    for name in ("iris", "wine", "breast_cancer", "digits", "transport", "seed001_gaussians", "seed000_separable"):
        assert name in listed


@pytest.mark.parametrize(
    ("data", "options", "message"),
    [
        ("iris", ("--method", "vb"), "invalid choice"),
        ("iris", ("--prior-sigma", "-1"), "weight_sigma"),
        ("iris", ("--draws", "0"), "draws"),
        ("no_such_data", (), "unknown dataset"),
    ],
)
def test_invalid_arguments_exit_2_with_one_line(tmp_path, capsys, data, options, message):
    assert run("fit", "--data", data, "--out", str(tmp_path / "run.nc"), *options) == 2
    assert message in capsys.readouterr().err.strip()
    assert not (tmp_path / "run.nc").exists()


def test_mle_on_separable_data_is_a_failed_fit_exit_1(tmp_path, capsys):
    assert run("fit", "--data", "seed000_separable", "--method", "mle", "--out", str(tmp_path / "run.nc")) == 1
    assert "MLE does not exist" in capsys.readouterr().err
    assert not (tmp_path / "run.nc").exists()


def test_fit_map_then_predict_csv_with_schema(tmp_path):
    training = tmp_path / "train.csv"
    rows = ["size,colour,label"] + [f"{x:.3f},{c},{lab}" for x, c, lab in zip(
        np.linspace(0, 3, 30), ["red", "green", "blue"] * 10, ["small"] * 12 + ["big"] * 18, strict=True)]
    training.write_text("\n".join(rows) + "\n")
    run_file = tmp_path / "run.nc"
    assert run("fit", "--data", str(training), "--target", "label", "--method", "map", "--out", str(run_file)) == 0
    # new rows lack the level "green" and put columns in another order: codes must follow training
    new = tmp_path / "new.csv"
    new.write_text("colour,size\nblue,0.5\nred,2.5\n")
    out = tmp_path / "predictions.csv"
    assert run("predict", "--run", str(run_file), "--data", str(new), "--out", str(out)) == 0
    table = read_csv(out)
    assert list(table[0]) == ["p_big", "p_small", "predicted"]
    assert len(table) == 2
    for row in table:
        assert float(row["p_big"]) + float(row["p_small"]) == pytest.approx(1.0, abs=1e-12)
    # same answer as predicting the training rows with the same values
    from data import load_csv
    from inference import predict

    result = load_result(run_file)
    reference = load_csv(training, target="label")
    level = reference.category_names["colour"].index("blue")
    expected = predict(result, np.array([[0.5, level]]))["class_proba"].values[0]
    assert float(table[0]["p_big"]) == pytest.approx(expected[0], abs=1e-12)


def test_predict_rejects_unseen_label(tmp_path, capsys):
    run_file = tmp_path / "run.nc"
    assert run("fit", "--data", "seed001_gaussians", "--method", "map", "--out", str(run_file)) == 0
    new = tmp_path / "new.csv"
    new.write_text("x1,x2,label\n1.0,2.0,C3\n")
    assert run("predict", "--run", str(run_file), "--data", str(new), "--target", "label", "--out", str(tmp_path / "p.csv")) == 2
    assert "not seen in training" in capsys.readouterr().err


def test_nuts_fit_predict_has_interval_columns(tmp_path):
    run_file = tmp_path / "run.nc"
    code = run("fit", "--data", "seed001_gaussians", "--method", "nuts", "--draws", "200", "--tune", "200",
               "--no-progress", "--seed", "3", "--out", str(run_file))  # fmt: skip
    assert code == 0
    result = load_result(run_file)
    assert result.attrs["random_seed"] == 3
    out = tmp_path / "p.csv"
    assert run("predict", "--run", str(run_file), "--data", "seed001_gaussians", "--out", str(out)) == 0
    table = read_csv(out)
    assert set(table[0]) == {
        "p_C1", "p_C1_low", "p_C1_high", "p_C1_map", "p_C2", "p_C2_low", "p_C2_high", "p_C2_map", "predicted", "observed"
    }  # fmt: skip
    assert len(table) == 500
    for row in table:
        assert float(row["p_C1_low"]) <= float(row["p_C1"]) <= float(row["p_C1_high"])
