"""Bad input to ``bayesclass stack`` and to stacks read back: a one-line error and exit code 2, never a traceback.

:data:`STACK_CLI_CASES` runs ``bayesclass stack`` on result files made once per module; :data:`STACK_FILE_CASES`
tampers with a saved stack (its weights, attrs, groups or a member's draws) and asks ``bayesclass predict`` for it;
:data:`STACK_API_CASES` are the ``bayesclass.stack`` calls the Python API refuses.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import netCDF4
import numpy as np
import pytest

import bayesclass as bc
from tests.bad_inputs.harness import assert_one_line_error, run

FAST = ("--draws", "100", "--chains", "2", "--seed", "1", "-q")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """Result files: two families on the same rows, other rows, other classes, a point estimate, few draws."""
    folder = tmp_path_factory.mktemp("stack")
    fits = {
        "nb": ("--model", "naive_bayes", "--data", "seed001_gaussians", "--rows", "60", "--method", "exact", *FAST),
        "logistic": ("--model", "logistic", "--data", "seed001_gaussians", "--rows", "60", "--method", "laplace",
                     *FAST),
        "other_rows": ("--model", "naive_bayes", "--data", "seed001_gaussians", "--rows", "70", "--method", "exact",
                       *FAST),
        "iris": ("--model", "naive_bayes", "--data", "iris", "--method", "exact", *FAST),
        "one_column": ("--model", "naive_bayes", "--data", "seed001_gaussians", "--rows", "60", "--features", "x1",
                       "--method", "exact", *FAST),
        "map": ("--model", "naive_bayes", "--data", "seed001_gaussians", "--rows", "60", "--method", "map", "-q"),
        "few_draws": ("--model", "naive_bayes", "--data", "seed001_gaussians", "--rows", "60", "--method", "exact",
                      "--draws", "5", "--chains", "2", "-q"),
    }  # fmt: skip
    paths = {}
    for name, options in fits.items():
        paths[name] = folder / f"{name}.nc"
        assert run("fit", *options, "--out", str(paths[name])) == 0
    paths["stack"] = folder / "stack.nc"
    assert run("stack", str(paths["nb"]), str(paths["logistic"]), "--out", str(paths["stack"]), "-q") == 0
    return paths


#: (runs by fixture name or a literal path, extra options, exit code, message fragment)
STACK_CLI_CASES = [
    (("nb",), (), 2, "give two or more result files to stack, got 1"),
    (("nb", "/nonexistent/b.nc"), (), 2, "no result file at '/nonexistent/b.nc'"),
    (("nb", "map"), (), 2, "is a point estimate (map); a stack mixes posteriors"),
    (("nb", "other_rows"), (), 2, "were fitted on different rows or labels; a stack's members are fitted on the same"),
    (("nb", "iris"), (), 2, "have other classes (['C1', 'C2'] against ['setosa', 'versicolor', 'virginica'])"),
    (("nb", "few_draws"), (), 2, "PSIS-LOO needs at least 25"),
    (("nb", "stack"), (), 2, "is a stack; stack the fitted results themselves"),
    (("nb", "one_column"), (), 2, "have other columns (['x1', 'x2'] against ['x1']"),
    (("nb", "nb"), (), 2, "is given more than once; stack different result files"),
    (("nb", "logistic"), ("--method", "bma"), 2, "argument --method: invalid choice: 'bma'"),
    (("nb", "logistic"), ("--out-of-place",), 2, "unrecognized arguments: --out-of-place"),
]


@pytest.mark.parametrize(("runs", "options", "code", "fragment"), STACK_CLI_CASES)
def test_stack_refuses(files, tmp_path, capsys, runs, options, code, fragment):
    out = tmp_path / "new.nc"
    paths = [str(files.get(name, name)) for name in runs]
    assert run("stack", *paths, *options, "--out", str(out)) == code
    assert_one_line_error(capsys.readouterr().err, fragment)
    assert not out.exists()


def test_stack_refuses_an_output_that_is_not_netcdf(files, tmp_path, capsys):
    assert run("stack", str(files["nb"]), str(files["logistic"]), "--out", str(tmp_path / "s.txt")) == 2
    assert_one_line_error(capsys.readouterr().err, "must end in .nc")


def _weights(values):
    def tamper(dataset):
        dataset["stack_weights"]["weight"][:] = values

    return tamper


def _elpd(values):
    def tamper(dataset):
        dataset["stack_weights"]["elpd_loo"][:] = values

    return tamper


def _attr(name, value):
    def tamper(dataset):
        dataset.setncattr(name, value)

    return tamper


def _member_draw(dataset):
    variable = next(iter(dataset["member_0"]["posterior"].variables.values()))
    for name, candidate in dataset["member_0"]["posterior"].variables.items():
        if candidate.dimensions[:2] == ("chain", "draw"):
            variable = dataset["member_0"]["posterior"][name]
            break
    values = variable[:]
    variable[:] = values * 1.01


def _renamed_member(dataset):
    dataset.renameGroup("member_1", "member_7")


#: (what is done to a saved stack, message fragment of ``bayesclass predict``'s exit-2 error)
STACK_FILE_CASES = [
    (_weights([0.5, 0.5]), "do not match their SHA-256 (attr stack_digest)"),
    (_weights([1.5, -0.5]), "every weight must be in [0, 1]"),
    (_weights([0.7, 0.7]), "weight sums to 1.4, not 1"),
    (_weights([np.nan, 1.0]), "every weight must be in [0, 1]"),
    (_attr("stack_method", "bma"), "attr stack_method 'bma' is not one of stacking, pseudo_bma_plus"),
    (_attr("stack_members", '["only one"]'), "attr stack_members must list 2 to 64 distinct member labels"),
    (_attr("stack_members", '["a", "a"]'), "attr stack_members must list 2 to 64 distinct member labels"),
    (_attr("stack_members", "not json"), "attr stack_members is not valid JSON"),
    (_attr("bayesclass_stack", 7), "attr bayesclass_stack = '7' should be 0 or 1"),
    (_member_draw, "stack member 'nb.nc': the parameter arrays do not match their SHA-256"),
    (_elpd([-40.0, -41.0]), "do not match their SHA-256 (attr stack_digest)"),
    (_elpd([np.inf, -41.0]), "elpd_loo/elpd_se must hold one finite number per member"),
    (_renamed_member, "a stack of 2 members needs groups member_0 .. member_1"),
]


@pytest.mark.parametrize(("tamper", "fragment"), STACK_FILE_CASES)
def test_a_tampered_stack_is_refused(files, tmp_path, capsys, tamper, fragment):
    path = tmp_path / "stack.nc"
    shutil.copy(files["stack"], path)
    with netCDF4.Dataset(path, "a") as dataset:
        tamper(dataset)
    out = tmp_path / "p.csv"
    assert run("predict", "--run", str(path), "--data", "seed001_gaussians", "--out", str(out)) == 2
    assert_one_line_error(capsys.readouterr().err, fragment)
    assert not out.exists()


def test_predict_refuses_draws_out_for_a_stack(files, tmp_path, capsys):
    argv = ("predict", "--run", str(files["stack"]), "--data", "seed001_gaussians", "--out", str(tmp_path / "p.csv"))
    assert run(*argv, "--draws-out", str(tmp_path / "d.nc")) == 2
    assert_one_line_error(capsys.readouterr().err, "--draws-out: ")
    assert not (tmp_path / "p.csv").exists()


#: (a command that reads one fit, given a stack) -> exit 2 and what a stack is, what takes it
STACK_ONE_FIT_CASES = [
    (("loo", "--run"), "the result is a stack of fitted results (bayesclass stack), not one fit"),
    (("diagnose", "--run"), "diagnose, check and loo apply to its members' own result files"),
    (("check", "--run"), "predict and report take the stack"),
]


@pytest.mark.parametrize(("command", "fragment"), STACK_ONE_FIT_CASES)
def test_commands_of_one_fit_say_what_a_stack_is(files, capsys, command, fragment):
    assert run(*command, str(files["stack"])) == 2
    assert_one_line_error(capsys.readouterr().err, fragment)


#: (arguments of ``bayesclass.stack`` by fixture name, exception type, message fragment)
STACK_API_CASES = [
    ("nb", TypeError, "results must be a list of result DataTrees or a dict label -> result"),
    (["nb", "not a result"], TypeError, "results[1] is a str, not a result DataTree"),
    ({"a": "nb", "b": 3}, TypeError, "result 'b' is a int, not a result DataTree"),
    ([], ValueError, "a stack needs two or more results, got 0"),
]


@pytest.mark.parametrize(("arguments", "kind", "fragment"), STACK_API_CASES)
def test_the_api_refuses(files, arguments, kind, fragment):
    def resolve(value):
        return bc.load_result(files[value]) if isinstance(value, str) and value in files else value

    if isinstance(arguments, dict):
        results = {label: resolve(value) for label, value in arguments.items()}
    elif isinstance(arguments, list):
        results = [resolve(value) for value in arguments]
    else:
        results = resolve(arguments)
    with pytest.raises(kind) as error:
        bc.stack(results)
    assert fragment in str(error.value)


def test_the_api_refuses_an_unknown_method(files):
    results = [bc.load_result(files["nb"]), bc.load_result(files["logistic"])]
    with pytest.raises(ValueError, match="method must be one of stacking, pseudo_bma_plus, got 'bma'"):
        bc.stack(results, method="bma")
