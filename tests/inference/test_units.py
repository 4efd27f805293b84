"""A default fit does not depend on the units of a continuous column (DESIGN: "Defaults do not depend on the units").

One continuous column multiplied by 1,000 and another shifted by 10^4 give the same class probabilities, through
every entry point (``bc.fit`` + ``bc.predict``, the CLI ``fit``/``predict``, ``compare_models``, a study cell,
``BayesianClassifier``) and for every family: point estimates to 1e-8; draws (seeded Laplace draws, the same seed
on the same standardised inputs) within four Monte-Carlo standard errors of the posterior mean. A fit in the
data's units (``standardize=False``) does depend on them: the checks can fail.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayesclass as bc
from bayesclass.cli import main
from bayesclass.data import Dataset
from bayesclass.inference import SamplerSettings
from bayesclass.inference.evaluation.model_comparison import compare_models
from bayesclass.inference.studies.runner import run_cell
from bayesclass.inference.studies.spec import cells, parse_spec
from bayesclass.models import ConvergenceError, get_model

#: the families, by test id: every registry family, the Gaussian class-conditional with both covariances
FAMILIES = {
    "logistic": ("logistic", {}),
    "naive_bayes": ("naive_bayes", {}),
    "gcc_shared": ("gcc", {}),
    "gcc_per_class": ("gcc", {"covariance": "per-class"}),
    "gp": ("gp", {}),
}
#: the families that take continuous features only (the others also get the table's 0/1 column)
CONTINUOUS_ONLY = {"gcc_shared", "gcc_per_class", "gp", "gcc_shared_iw", "gcc_per_class_iw"}
#: the Gaussian class-conditional with its conjugate prior: exact draws (its Laplace draws compile for a minute)
INVERSE_WISHART = {"prior": {"covariance_prior": "inverse_wishart"}}
FAMILIES_WITH_EXACT_DRAWS = {
    "gcc_shared_iw": ("gcc", INVERSE_WISHART),
    "gcc_per_class_iw": ("gcc", {"covariance": "per-class", **INVERSE_WISHART}),
}
#: cheap independent draws, by test id: a Gaussian approximation at the MAP, or the exact conjugate posterior
DRAW_METHODS = {"logistic": "laplace", "naive_bayes": "exact", "gcc_shared_iw": "exact", "gcc_per_class_iw": "exact"}
DRAW_METHODS |= {"gp": "laplace"}
DRAWS = SamplerSettings(draws=200, chains=2, progressbar=False)
POINT_TOLERANCE = 1e-8


def _tables(family: str = "logistic", n_train: int = 60, n_test: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two overlapping classes: a length in mm, a mass near 50, a 0/1 flag where ``family`` takes it (train, test)."""
    rng = np.random.default_rng(7)
    n = n_train + n_test
    label = rng.integers(0, 2, n)
    frame = pd.DataFrame(
        {
            "length": rng.normal(3.0 + 0.8 * label, 1.0),
            "mass": rng.normal(50.0 - 4.0 * label, 6.0),
            "flag": (rng.random(n) < 0.3 + 0.3 * label).astype(float),
            "label": np.where(label == 1, "b", "a"),
        }
    )
    if family in CONTINUOUS_ONLY:
        frame = frame.drop(columns="flag")
    return frame.iloc[:n_train].reset_index(drop=True), frame.iloc[n_train:].reset_index(drop=True)


def _in_other_units(frame: pd.DataFrame) -> pd.DataFrame:
    """The same table with ``length`` in micrometres (x 1,000) and ``mass`` shifted by 10^4."""
    return frame.assign(length=frame["length"] * 1000.0, mass=frame["mass"] + 1e4)


def _model(family: str):
    name, hyperparameters = {**FAMILIES, **FAMILIES_WITH_EXACT_DRAWS}[family]
    return get_model(name, **hyperparameters)


def _probabilities(frame: pd.DataFrame, test: pd.DataFrame, **fit_options) -> tuple[object, pd.DataFrame]:
    result = bc.fit(fit_options.pop("model"), frame, target="label", random_seed=0, **fit_options)
    return result, bc.predict(result, test.drop(columns="label"))


def _assert_point_probabilities_equal(one, other) -> None:
    names = sorted(name for name in one.data_vars if str(name).startswith("class_proba"))
    assert names and names == sorted(name for name in other.data_vars if str(name).startswith("class_proba"))
    for name in names:
        np.testing.assert_allclose(one[name].values, other[name].values, rtol=0, atol=POINT_TOLERANCE, err_msg=name)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_point_estimate_is_the_same_in_other_units(family):
    train, test = _tables(family)
    model = _model(family)
    for kind in model.available_point_estimates():
        _, raw = _probabilities(train, test, model=model, method=kind)
        result, scaled = _probabilities(_in_other_units(train), _in_other_units(test), model=model, method=kind)
        assert bc.result_info(result).standardized_features == ("length", "mass")  # the default
        _assert_point_probabilities_equal(raw, scaled)


def test_a_fit_in_the_data_units_depends_on_them():
    """The control: without standardisation the prior acts on other scales, so the probabilities move."""
    train, test = _tables()
    _, raw = _probabilities(train, test, model=get_model("logistic"), method="map", standardize=False)
    _, scaled = _probabilities(
        _in_other_units(train), _in_other_units(test), model=get_model("logistic"), method="map", standardize=False
    )
    assert np.abs(raw["class_proba"].values - scaled["class_proba"].values).max() > 1e-3


def _monte_carlo_tolerance(result, test: pd.DataFrame) -> np.ndarray:
    """Four Monte-Carlo standard errors of each posterior mean probability (independent draws: sd / sqrt(S))."""
    draws = bc.predict(result, test.drop(columns="label"), return_draws=True)["class_proba_draws"]
    count = draws.sizes["chain"] * draws.sizes["draw"]
    return 4 * draws.std(("chain", "draw")).values / np.sqrt(count)


def _same_draws_in_other_units(family: str, method: str) -> None:
    train, test = _tables(family)
    model = _model(family)
    result, raw = _probabilities(train, test, model=model, method=method, sampler=DRAWS)
    _, scaled = _probabilities(_in_other_units(train), _in_other_units(test), model=model, method=method, sampler=DRAWS)
    difference = np.abs(raw["class_proba"].values - scaled["class_proba"].values)
    assert np.all(difference <= _monte_carlo_tolerance(result, test))
    kinds = [name for name in raw.data_vars if name.startswith("class_proba_") and name[12:] in ("map", "mle")]
    assert "class_proba_map" in kinds
    for name in kinds:
        np.testing.assert_allclose(raw[name].values, scaled[name].values, rtol=0, atol=POINT_TOLERANCE)


@pytest.mark.parametrize("family", DRAW_METHODS)
def test_draws_and_the_estimates_beside_them_are_the_same_in_other_units(family):
    _same_draws_in_other_units(family, DRAW_METHODS[family])


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gcc_shared", "gcc_per_class"])
def test_laplace_draws_of_the_default_gcc_prior_are_the_same_in_other_units(family):
    """The LKJ prior's Laplace draws (a minute of compilation each; the exact draws above are the cheap twin)."""
    _same_draws_in_other_units(family, "laplace")


@pytest.mark.slow
def test_the_default_nuts_posterior_is_the_same_in_other_units():
    """The default method (NUTS for logistic regression): the posterior means agree within Monte-Carlo error."""
    train, test = _tables()
    sampler = SamplerSettings(draws=500, tune=500, chains=2, progressbar=False)
    result, raw = _probabilities(train, test, model=get_model("logistic"), sampler=sampler)
    _, scaled = _probabilities(
        _in_other_units(train), _in_other_units(test), model=get_model("logistic"), sampler=sampler
    )
    assert bc.result_info(result).method == "nuts"
    draws = bc.predict(result, test.drop(columns="label"), return_draws=True)["class_proba_draws"]
    ess = bc.diagnose(result).min_ess_bulk
    tolerance = 4 * np.sqrt(2) * draws.std(("chain", "draw")).values / np.sqrt(ess)  # two independent runs
    assert np.all(np.abs(raw["class_proba"].values - scaled["class_proba"].values) <= tolerance)
    for kind in ("map", "mle"):
        np.testing.assert_allclose(raw[f"class_proba_{kind}"], scaled[f"class_proba_{kind}"], atol=POINT_TOLERANCE)


def _cli_probabilities(tmp_path, name: str, train: pd.DataFrame, test: pd.DataFrame, family: str) -> pd.DataFrame:
    train.to_csv(tmp_path / f"{name}_train.csv", index=False)
    test.drop(columns="label").to_csv(tmp_path / f"{name}_test.csv", index=False)
    model, hyperparameters = FAMILIES[family]
    flags = [f"--{key}={value}" for key, value in hyperparameters.items()]
    run = str(tmp_path / f"{name}.nc")
    fit = ["fit", "--model", model, *flags, "--data", str(tmp_path / f"{name}_train.csv"), "--target", "label"]
    assert main([*fit, "--method", "map", "--seed", "0", "--out", run]) == 0
    out = tmp_path / f"{name}_proba.csv"
    assert main(["predict", "--run", run, "--data", str(tmp_path / f"{name}_test.csv"), "--out", str(out)]) == 0
    return pd.read_csv(out)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_cli_fit_and_predict_are_the_same_in_other_units(tmp_path, family, capsys):
    train, test = _tables(family)
    raw = _cli_probabilities(tmp_path, "raw", train, test, family)
    scaled = _cli_probabilities(tmp_path, "scaled", _in_other_units(train), _in_other_units(test), family)
    numbers = raw.select_dtypes("number").columns
    assert {"p_a", "p_b"} <= set(numbers), list(numbers)
    np.testing.assert_allclose(raw[numbers].values, scaled[numbers].values, rtol=0, atol=POINT_TOLERANCE)
    assert (raw.select_dtypes(exclude="number").values == scaled.select_dtypes(exclude="number").values).all()


@pytest.mark.parametrize(
    ("families", "method", "hyperparameters"),
    [(["logistic", "gp"], "laplace", {}), (["naive_bayes", "gcc"], "exact", {"gcc": INVERSE_WISHART})],
)
def test_compare_models_is_the_same_in_other_units(families, method, hyperparameters):
    train, test = _tables("gcc_shared")  # every family takes continuous features
    frame = pd.concat([train, test], ignore_index=True)
    comparisons = [
        compare_models(
            Dataset.from_frame(table, target="label"),
            families,
            method=method,
            sampler=DRAWS,
            hyperparameters=hyperparameters,
            baselines=(),
            with_stack=False,
        )
        for table in (frame, _in_other_units(frame))
    ]
    raw, scaled = (comparison.score_tables["test"] for comparison in comparisons)
    assert list(raw.index) == list(scaled.index) and len(raw.index) >= 4  # 2 posteriors and their point estimates
    points = [label for label in raw.index if "posterior" not in str(label)]
    assert points
    np.testing.assert_allclose(raw.loc[points, "log_loss"], scaled.loc[points, "log_loss"], rtol=0, atol=1e-8)
    assert all(family.result is not None for comparison in comparisons for family in comparison.fits)
    posterior_rows = [label for label in raw.index if "posterior" in str(label)]
    # a log loss of posterior means drawn with the same seed on the same standardised inputs: far below its
    # Monte-Carlo error (about 1e-2 for 400 draws)
    np.testing.assert_allclose(raw.loc[posterior_rows, "log_loss"], scaled.loc[posterior_rows, "log_loss"], atol=1e-3)


def _study_cell_rows(tmp_path, name: str, table: pd.DataFrame) -> dict:
    path = tmp_path / f"{name}.csv"
    table.to_csv(path, index=False)
    spec = parse_spec(
        {
            "name": name,
            "seed": 0,
            "training_sizes": [50],
            "repeats": 1,
            "test_fraction": 0.25,
            "sampler": {"draws": 1000, "chains": 2},
            "models": [{"family": "logistic", "method": "laplace", "point_estimates": ["mle", "map"]}],
            "datasets": [{"path": str(path), "target": "label", "label": "table"}],
        }
    )
    (cell,) = list(cells(spec))
    assert cell.model.standardize  # the study's default
    record = run_cell(cell, tmp_path / name)
    assert record["status"] == "ok", record["error"]
    return {(row["estimate"], row["metric"]): row["value"] for row in record["rows"]}


def test_a_study_cell_is_the_same_in_other_units(tmp_path):
    train, test = _tables()
    frame = pd.concat([train, test], ignore_index=True)
    raw = _study_cell_rows(tmp_path, "raw", frame)
    scaled = _study_cell_rows(tmp_path, "scaled", _in_other_units(frame))
    assert raw.keys() == scaled.keys()
    for (estimate, metric), value in raw.items():
        if estimate != "posterior":
            assert scaled[estimate, metric] == pytest.approx(value, abs=POINT_TOLERANCE), (estimate, metric)
        elif metric in ("log_loss", "brier"):
            # the cell's seed comes from its key, which holds the data's fingerprint: other draws of the same
            # posterior, whose mean probabilities differ by Monte-Carlo error (2,000 draws: sd(p) / 45 < 0.01)
            assert scaled[estimate, metric] == pytest.approx(value, abs=1e-2), (estimate, metric)
    assert len({estimate for estimate, _ in raw}) == 3  # the posterior, the MAP and the MLE


@pytest.mark.parametrize("family", FAMILIES)
def test_the_estimator_is_the_same_in_other_units(family):
    train, test = _tables(family)
    model = _model(family)

    def proba(train_frame: pd.DataFrame, test_frame: pd.DataFrame) -> np.ndarray:
        columns = ["length", "mass"]
        estimator = bc.BayesianClassifier(model, method="map", random_seed=0)
        estimator.fit(train_frame[columns].to_numpy(), train_frame["label"].to_numpy())
        return estimator.predict_proba(test_frame[columns].to_numpy())

    np.testing.assert_allclose(
        proba(train, test), proba(_in_other_units(train), _in_other_units(test)), rtol=0, atol=POINT_TOLERANCE
    )


# -- a point estimate that fails beside the draws is warned of, and shown ------------------------------------------


def test_a_point_estimate_whose_optimiser_fails_beside_draws_is_a_warning_and_a_line_on_the_page(monkeypatch):
    train, test = _tables()
    model = get_model("naive_bayes")
    family = type(model)
    original = family.point_estimate

    def failing(self, data, kind):
        if kind == "map":
            raise ConvergenceError("L-BFGS-B stopped: gradient 0.000123 (ABNORMAL: )")
        return original(self, data, kind)

    monkeypatch.setattr(family, "point_estimate", failing)
    expected = (
        "the map point estimate is not stored beside the draws: its optimiser did not converge: L-BFGS-B stopped: "
        "gradient 0.000123 (ABNORMAL: )"
    )
    with pytest.warns(UserWarning, match=expected.replace("(", r"\(").replace(")", r"\)")):
        result = bc.fit(model, train, target="label", method="exact", sampler=DRAWS, random_seed=0)
    info = bc.result_info(result)
    assert "point_estimate_map" not in result and info.point_estimate_status["map"].startswith("did not converge")
    assert f"UserWarning: {expected}" in info.fit_warnings
    page = bc.report(result, Dataset.from_frame(test, target="label"))
    flat = " ".join(page.split())
    assert expected in flat
    assert "MAP is not shown: did not converge" in flat or "map is not shown: did not converge" in flat.lower()
    assert "priors on standardised inputs" in flat


def test_an_estimate_that_does_not_exist_is_recorded_without_a_warning(monkeypatch):
    """Separation, a zero variance ...: a fact of the data the status states (and the page shows), not a failure."""
    from bayesclass.models import NoEstimateError

    train, _ = _tables()
    model = get_model("naive_bayes")
    family = type(model)
    original = family.point_estimate

    def missing(self, data, kind):
        if kind == "mle":
            raise NoEstimateError("the MLE does not exist: a zero variance")
        return original(self, data, kind)

    monkeypatch.setattr(family, "point_estimate", missing)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        result = bc.fit(model, train, target="label", method="exact", sampler=DRAWS, random_seed=0)
    assert bc.result_info(result).point_estimate_status["mle"] == "the MLE does not exist: a zero variance"


def test_the_prior_scale_is_stated_for_each_choice():
    train, _ = _tables()
    stated = {
        option: bc.result_info(bc.fit("logistic", train, target="label", method="map", standardize=option)).prior_scale
        for option in (True, "all", False)
    }
    assert stated[True] == (
        "priors on standardised inputs (centred, divided by the training sd: length, mass; binary, categorical and "
        "count columns as coded)"
    )
    assert "training sd: length, mass, flag; categorical and count columns as coded)" in stated["all"]
    assert stated[False].startswith("priors in the data's units")
