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
    for name in ("iris", "wine", "breast_cancer", "digits", "digits_binary", "transport", "seed001_gaussians", "seed000_separable"):
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
        "p_C1", "p_C1_low", "p_C1_high", "p_C1_map", "p_C1_mle",
        "p_C2", "p_C2_low", "p_C2_high", "p_C2_map", "p_C2_mle", "predicted", "observed",
    }  # fmt: skip
    assert len(table) == 500
    for row in table:
        assert float(row["p_C1_low"]) <= float(row["p_C1"]) <= float(row["p_C1_high"])


# -- naive Bayes through the command line -------------------------------------------------------


def test_naive_bayes_exact_fit_with_prior_flags_then_predict(tmp_path, capsys):
    run_file = tmp_path / "nb.nc"
    code = run("fit", "--model", "naive_bayes", "--data", "transport", "--method", "exact", "--binary-alpha", "2",
               "--binary-beta", "3", "--draws", "500", "--seed", "4", "--out", str(run_file))  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "by exact" in printed and "posterior_mean: exists" in printed
    result = load_result(run_file)
    assert result.attrs["model"] == "naive_bayes" and result.attrs["method"] == "exact"
    assert '"binary_alpha": 2.0' in result.attrs["model_hyperparameters"]
    assert '"binary_beta": 3.0' in result.attrs["model_hyperparameters"]
    assert result["posterior"].sizes["draw"] == 500 and "sample_stats" not in result
    out = tmp_path / "p.csv"
    assert run("predict", "--run", str(run_file), "--data", "transport", "--out", str(out)) == 0
    table = read_csv(out)
    assert len(table) == 10
    assert {"p_car", "p_car_low", "p_car_high", "p_car_mle", "p_car_map", "p_car_posterior_mean", "p_car_unbiased"} <= set(table[0])
    for row in table:
        assert sum(float(row[f"p_{name}"]) for name in ("bike", "bus", "car", "walk")) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--model", "logistic", "--binary-alpha", "2"), "--binary-alpha applies to --model naive_bayes, not logistic"),
        (("--model", "naive_bayes", "--prior-sigma", "2"), "--prior-sigma applies to --model logistic, not naive_bayes"),
        (("--model", "logistic", "--no-gaussian-autoscale"), "--no-gaussian-autoscale applies to --model naive_bayes"),
        (("--model", "naive_bayes", "--binary-alpha", "0"), "binary_alpha must be a positive finite number"),
        (("--model", "logistic", "--method", "exact"), "--method exact is not available for --model logistic"),
        (("--model", "no_such_model",), "unknown model 'no_such_model'"),
    ],
)
def test_model_flags_are_checked_per_family(tmp_path, capsys, options, message):
    assert run("fit", "--data", "transport", "--out", str(tmp_path / "run.nc"), *options) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run.nc").exists()


def test_naive_bayes_mle_without_variance_is_a_failed_fit(tmp_path, capsys):
    training = tmp_path / "train.csv"
    training.write_text("x,label\n1.0,a\n1.0,a\n2.0,b\n3.5,b\n")  # x is constant within class a
    run_file = tmp_path / "run.nc"
    assert run("fit", "--model", "naive_bayes", "--data", str(training), "--target", "label", "--method", "mle",
               "--out", str(run_file)) == 1  # fmt: skip
    assert "gaussian_variance['a', 'x']" in capsys.readouterr().err
    assert not run_file.exists()
    # the posterior exists; the fit records why the MLE does not
    assert run("fit", "--model", "naive_bayes", "--data", str(training), "--target", "label", "--method", "exact",
               "--out", str(run_file)) == 0  # fmt: skip
    assert "mle: the MLE of gaussian_variance['a', 'x'] does not exist" in capsys.readouterr().out


def test_compare_naive_bayes_exact_on_binarized_digits(capsys):
    assert run("compare", "--model", "naive_bayes", "--data", "digits_binary", "--method", "exact", "--draws", "400", "--seed", "0") == 0
    printed = capsys.readouterr().out
    assert "exact conjugate draws" in printed
    assert "binary_proba[0, pixel_0_0]" in printed
    assert "posterior (draws)" in printed and "post. mean plug-in" in printed
    # the MLE assigns probability 0 to pixels never seen in a class: some held-out rows are impossible under it
    assert "rows undefined" in printed


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--model", "gcc", "--binary-alpha", "2"), "--binary-alpha applies to --model naive_bayes, not gcc"),
        (("--model", "naive_bayes", "--lkj-eta", "2"), "--lkj-eta applies to --model gcc, not naive_bayes"),
        (("--model", "logistic", "--covariance", "shared"), "--covariance applies to --model gcc, not logistic"),
        (("--model", "gcc", "--no-gaussian-autoscale"), "--no-gaussian-autoscale applies to --model naive_bayes"),
        (("--model", "gcc", "--lkj-eta", "0"), "lkj_eta must be a positive finite number"),
        (("--model", "gcc", "--regularization", "1"), "regularization must be a number in [0, 1)"),
        (("--model", "gcc", "--method", "exact"), "(CLI --covariance-prior inverse_wishart)"),
        (("--model", "gcc", "--data", "transport"), "needs continuous features"),
    ],
)
def test_gcc_flags_are_checked(tmp_path, capsys, options, message):
    arguments = ("--data", "iris", *options) if "--data" not in options else options
    assert run("fit", "--out", str(tmp_path / "run.nc"), *arguments) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run.nc").exists()


def test_gcc_shares_class_concentration_with_naive_bayes(tmp_path):
    for model in ("gcc", "naive_bayes"):
        run_file = tmp_path / f"{model}.nc"
        assert run("fit", "--model", model, "--data", "iris", "--method", "map", "--class-concentration", "3",
                   "--out", str(run_file)) == 0  # fmt: skip
        assert '"class_concentration": 3.0' in load_result(run_file).attrs["model_hyperparameters"]


def test_gcc_qda_mle_with_too_few_rows_fails_then_regularization_fixes_it(tmp_path, capsys):
    training = tmp_path / "train.csv"
    rows = ["x1,x2,x3,label", "0,1,2,a", "1,0,1,a", "2,2,0,a", "0,0,0,b", "1,1,1,b", "3,1,2,b", "1,2,3,b", "2,0,1,b"]
    training.write_text("\n".join(rows) + "\n")  # class a: 3 rows for 3 features -> singular scatter
    run_file = tmp_path / "run.nc"
    common = ("--model", "gcc", "--covariance", "per-class", "--data", str(training), "--target", "label", "--method", "mle")
    assert run("fit", *common, "--out", str(run_file)) == 1
    error = capsys.readouterr().err
    assert "class 'a' has 3 rows for 3 features" in error and "regularization" in error
    assert not run_file.exists()
    assert run("fit", *common, "--regularization", "0.1", "--out", str(run_file)) == 0
    covariance = load_result(run_file)["point_estimate_mle"]["covariance"].values
    assert np.all(np.linalg.eigvalsh(covariance) > 0)


def test_gcc_conjugate_fit_predict_and_check(tmp_path, capsys):
    run_file = tmp_path / "gcc.nc"
    assert run("fit", "--model", "gcc", "--covariance-prior", "inverse_wishart", "--covariance", "per-class",
               "--data", "iris", "--method", "exact", "--draws", "300", "--seed", "1", "--out", str(run_file)) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "posterior_predictive: exists" in printed and "mle: exists" in printed
    out = tmp_path / "predictions.csv"
    assert run("predict", "--run", str(run_file), "--data", "iris", "--out", str(out)) == 0
    table = read_csv(out)
    assert len(table) == 150
    classes = ("setosa", "versicolor", "virginica")
    for row in table[:20]:
        for kind in ("", "_mle", "_posterior_predictive"):
            assert sum(float(row[f"p_{name}{kind}"]) for name in classes) == pytest.approx(1.0, abs=1e-12)
    assert np.mean([row["predicted"] == row["observed"] for row in table]) > 0.95
    capsys.readouterr()
    assert run("check", "--run", str(run_file), "--replicates", "50") == 0
    report = capsys.readouterr().out
    assert "posterior predictive check (50 replicates from the posterior draws)" in report
    assert report.count("p=") == 3 * 4 * 3  # classes x features x statistics
    assert "statistics flagged" in report


def test_check_refuses_a_discriminative_model(tmp_path, capsys):
    run_file = tmp_path / "logistic.nc"
    assert run("fit", "--data", "iris", "--method", "map", "--out", str(run_file)) == 0
    capsys.readouterr()
    assert run("check", "--run", str(run_file)) == 2
    assert "cannot generate features" in capsys.readouterr().err
