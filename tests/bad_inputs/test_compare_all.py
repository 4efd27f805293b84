"""Bad input to ``bayesclass compare --model all|LIST`` and ``bayesclass.compare_models`` (issue 28).

Each row of :data:`COMPARE_ALL_CASES` runs the command and expects its exit code and a fragment of its one-line
error (never a traceback); each row of :data:`COMPARE_MODELS_CASES` calls the library and expects the exception
type and a fragment naming the argument. Every row is refused before any fit, so the table runs in seconds.
"""

from __future__ import annotations

import pytest

import bayesclass as bc
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation.model_comparison import compare_models
from tests.bad_inputs.harness import assert_one_line_error, run

#: (arguments after ``compare``, exit code, fragment of stderr); ``{dir}`` is a fresh folder with a file ``f.txt``
COMPARE_ALL_CASES = [
    (("--model", "svm", "--data", "iris"), 2, "invalid choice: 'svm' (choose 'all', one of 'logistic'"),
    (("--model", "logistic,svm", "--data", "iris"), 2, "invalid choice: 'logistic,svm'"),
    (("--model", "logistic,", "--data", "iris"), 2, "invalid choice: 'logistic,'"),
    (("--model", ",", "--data", "iris"), 2, "invalid choice: ','"),
    (("--model", "ALL", "--data", "iris"), 2, "invalid choice: 'ALL'"),
    (("--model", "all", "--data", "iris", "--loss-matrix", "{dir}/l.csv"), 2, "--loss-matrix with several families"),
    (("--model", "all", "--data", "iris", "--out", "{dir}/r.nc"), 2, "with several families --out is a folder"),
    (("--model", "all", "--data", "iris", "--out", "{dir}/f.txt"), 2, "with several families --out is a folder"),
    (("--model", "all", "--data", "iris", "--out", "{dir}/no/such/fits"), 2, "does not exist; create it first"),
    (("--model", "all", "--data", "iris", "--split", "1,1"), 2, "--split '1,1' must be three numbers"),
    (("--model", "all", "--data", "iris", "--baselines", "svm"), 2, "unknown baseline(s) ['svm']"),
    (("--model", "logistic,naive_bayes", "--data", "iris", "--kernel", "matern52"), 2, "applies to --model gp, none"),
    (("--model", "all", "--data", "iris", "--prior-sigma", "-1"), 2, "must be"),
    (("--model", "all", "--data", "no_such_data"), 2, "no_such_data"),
    (("--model", "all", "--data", "iris", "--seed", "-1"), 2, "--seed"),
    (("--model", "gcc,gp", "--data", "penguins", "--missing", "drop"), 2, "none of the families gcc, gp can take"),
    (("--model", "all", "--data", "penguins"), 2, "blank cell(s)"),
]


@pytest.mark.parametrize(
    ("argv", "code", "fragment"), COMPARE_ALL_CASES, ids=[" ".join(row[0]) for row in COMPARE_ALL_CASES]
)
def test_compare_all_refuses_in_one_line(tmp_path, capsys, argv, code, fragment):
    (tmp_path / "f.txt").write_text("not a folder")
    arguments = [part.format(dir=tmp_path) for part in argv]
    assert run("compare", *arguments, "--no-progress") == code
    error = capsys.readouterr().err
    assert_one_line_error(error, fragment)
    assert error.strip().count("\n") == 0, error
    assert not (tmp_path / "m.html").exists() and not (tmp_path / "r.nc").exists()


_IRIS = bc.load("iris")

#: (positional arguments, keyword arguments, exception type, fragment of its message)
COMPARE_MODELS_CASES = [
    (
        ("iris",),
        {},
        TypeError,
        "data must be a bayesclass Dataset (bayesclass.load) or a pandas DataFrame with its class column "
        "target='COLUMN', got str",
    ),
    ((_IRIS, "svm"), {}, ValueError, "families='svm': unknown family 'svm'; give 'all' or a comma-separated list"),
    ((_IRIS, ["logistic", 3]), {}, TypeError, "families must be 'all' or names among"),
    ((_IRIS, ""), {}, ValueError, "families=''"),
    ((_IRIS, "logistic"), {"hyperparameters": {"gp": {}}}, ValueError, "hyperparameters given for gp, not among"),
    ((_IRIS, "logistic"), {"hyperparameters": {"logistic": {"link": "cauchit"}}}, ValueError, "link must be"),
    ((_IRIS, "logistic"), {"fractions": (0.5, 0.5, 0)}, ValueError, "fractions must be 3 positive numbers"),
    ((_IRIS, "logistic"), {"random_seed": -1}, ValueError, "random_seed must be an integer in 0..4294967295"),
    ((_IRIS, "logistic"), {"method": "bogus"}, ValueError, "method='bogus' must be 'auto'"),
    ((_IRIS, "logistic"), {"method": "map"}, ValueError, "method='map' must be 'auto'"),
    ((_IRIS, "logistic"), {"standardize": "yes"}, ValueError, "standardize must be False, True"),
    ((_IRIS, "logistic"), {"sampler": {"draws": 10}}, TypeError, "sampler must be a SamplerSettings"),
    ((_IRIS, "logistic"), {"baselines": "svm"}, ValueError, "baselines='svm': unknown 'svm'; give 'all'"),
    ((_IRIS, "logistic"), {"baselines": ["knn", "svm"]}, ValueError, "unknown 'svm'"),
    ((_IRIS, "logistic"), {"baselines": 5}, TypeError, "baselines must be 'all', a comma-separated string"),
    ((_IRIS, "logistic"), {"with_stack": "yes"}, TypeError, "with_stack must be True or False"),
]


@pytest.mark.parametrize(("args", "kwargs", "error", "fragment"), COMPARE_MODELS_CASES)
def test_compare_models_refuses_before_any_fit(args, kwargs, error, fragment):
    with pytest.raises(error) as raised:
        compare_models(*args, sampler=kwargs.pop("sampler", SamplerSettings(draws=10)), **kwargs)
    assert fragment in str(raised.value)
