"""The log_likelihood group and PSIS-LOO (inference.loo): the group is the classifier's conditional log
probability of each observed class, computed in tiles; LOO and compare refuse what they cannot compare."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tracemalloc
import warnings

import arviz_stats as azs
import numpy as np
import pytest
import xarray as xr

from bayesclass import data
from bayesclass.inference import SamplerSettings, fit, model_of, save
from bayesclass.inference.criticism.loo import compare, loo, pointwise_log_likelihood
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.result import result_info, write_info
from bayesclass.models import GaussianClassConditional, LogisticRegression, NaiveBayes

SETTINGS = SamplerSettings(draws=300, tune=300, chains=2, progressbar=False)
PRIOR = {"covariance_prior": "inverse_wishart"}


@pytest.fixture(scope="module")
def results():
    gaussians = data.seed001_gaussians(120, random_seed=5)
    return {
        "logistic": fit(LogisticRegression(), gaussians, sampler=SETTINGS, random_seed=1),
        "probit": fit(LogisticRegression(link="probit"), gaussians, sampler=SETTINGS, random_seed=2),
        "naive_bayes": fit(NaiveBayes(), gaussians, method="exact", sampler=SETTINGS, random_seed=3),
        "gcc": fit(GaussianClassConditional(prior=PRIOR), gaussians, method="exact", sampler=SETTINGS, random_seed=4),
    }


@pytest.mark.parametrize("name", ["logistic", "naive_bayes", "gcc"])
def test_the_group_is_the_conditional_log_probability_of_each_observed_class(results, name):
    result = results[name]
    group = result["log_likelihood"]["y"]
    assert group.dims == ("chain", "draw", "obs") and group.shape == (2, 300, 120)
    X = model_inputs(result, result["constant_data"]["X"].values)
    y = result["observed_data"]["y"].values
    per_class = model_of(result).class_log_proba(result["posterior"].to_dataset(), X)
    expected = per_class.transpose("chain", "draw", "obs", "class").values[:, :, np.arange(len(y)), y]
    np.testing.assert_allclose(group.values, expected, rtol=1e-12, atol=1e-12)
    assert (group.values <= 0).all()  # log of a probability, not a density of x


def test_tiles_and_threads_do_not_change_the_floats(results):
    result = results["logistic"]
    model, posterior = model_of(result), result["posterior"].to_dataset()
    X = model_inputs(result, result["constant_data"]["X"].values)
    y = result["observed_data"]["y"].values
    one = pointwise_log_likelihood(model, posterior, X, y, workers=1)
    np.testing.assert_array_equal(one["y"].values, pointwise_log_likelihood(model, posterior, X, y)["y"].values)


def test_memory_beyond_the_output_does_not_grow_with_the_rows():
    """Beyond the output itself, the peak is a few tiles in flight (the chunked engine), whatever the rows: the
    same at 20,000 and 40,000 rows x 600 draws (both enough rows to keep every tile slot busy: at 10,000 rows, 3
    tiles, fewer are in flight), and far below one rows x draws x classes array."""
    from bayesclass.inference.prediction.tiles import TILE_BYTES

    model = LogisticRegression()
    rng = np.random.default_rng(0)
    posterior = xr.Dataset(
        {
            "intercept": (("chain", "draw"), rng.normal(size=(2, 300))),
            "weights": (("chain", "draw", "feature"), rng.normal(size=(2, 300, 3))),
        },
        coords={"feature": ["a", "b", "c"], "class": ["no", "yes"]},
    )
    overheads = []
    for n_rows in (20_000, 40_000):
        X, y = rng.normal(size=(n_rows, 3)), rng.integers(0, 2, n_rows)
        tracemalloc.start()
        group = pointwise_log_likelihood(model, posterior, X, y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        overheads.append(peak - group["y"].nbytes)
    assert overheads[1] < overheads[0] + TILE_BYTES, [value / 2**20 for value in overheads]
    assert overheads[1] < 8 * TILE_BYTES < 40_000 * 600 * 2 * 8  # a few tiles, not rows x draws x classes


def test_loo_summarises_and_compare_ranks_results_on_the_same_data(results):
    summary = loo(results["logistic"])
    assert np.isfinite(summary.elpd_loo) and summary.se > 0 and 0 < summary.p_loo < 10
    assert summary.n_rows == 120 and summary.n_samples == 600
    assert summary.n_high_k == int(np.sum(summary.pareto_k > 0.7))
    table = compare({"logit": results["logistic"], "probit": results["probit"], "nb": results["naive_bayes"]})
    assert set(table.index) == {"logit", "probit", "nb"}
    assert table["weight"].sum() == pytest.approx(1.0)
    assert table["elpd_diff"].iloc[0] == 0 and (table["elpd_diff"] <= 0).all()


def test_what_loo_cannot_compare_is_a_clear_error(results):
    point = fit(LogisticRegression(), data.seed001_gaussians(120, random_seed=5), method="map")
    with pytest.raises(ValueError, match=r"point estimate \(map\): LOO needs posterior draws"):
        loo(point)
    other = fit(LogisticRegression(), data.seed001_gaussians(100, random_seed=9), sampler=SETTINGS, random_seed=1)
    with pytest.raises(
        ValueError,
        match=r"^'a' \(seed001_gaussians \(\w{12}\)\) and 'b' \(seed001_gaussians \(\w{12}\)\) were fitted on "
        r"different rows or labels: 120 rows against 100 rows; LOO compares models on the same rows only",
    ):
        compare({"a": results["logistic"], "b": other})
    with pytest.raises(ValueError, match=r"compare needs two or more results, got 1"):
        compare({"a": results["logistic"]})


def test_the_loo_command(results, tmp_path):
    for name in ("logistic", "probit"):
        save(results[name], tmp_path / f"{name}.nc")
    command = [sys.executable, "-m", "bayesclass.cli", "loo", "--run", "logistic.nc", "--run", "probit.nc"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("elpd_loo") == 2 and "stacking weights" in done.stdout and "weight" in done.stdout
    point = fit(LogisticRegression(), data.seed001_gaussians(120, random_seed=5), method="map")
    save(point, tmp_path / "map.nc")
    refused = subprocess.run(
        [sys.executable, "-m", "bayesclass.cli", "loo", "--run", "map.nc"], cwd=tmp_path, capture_output=True, text=True
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "LOO needs posterior draws" in refused.stderr


def test_rows_whose_log_likelihood_is_the_same_in_every_draw(results):
    """Rows predicted with probability 1 in every draw (constant log-likelihood) have exact LOO = that value:
    taken out of PSIS (which cannot fit their tail) and added back; the other rows are unchanged."""
    result = results["logistic"]
    reference = loo(result)
    modified = result.copy()
    values = result["log_likelihood"]["y"].copy()
    values[..., :3] = 0.0  # log P(y|x) = 0 for the first three rows in every draw
    modified["log_likelihood"] = xr.DataTree(values.to_dataset(name="y"))
    summary = loo(modified)
    rest = result.copy()
    rest["log_likelihood"] = xr.DataTree(result["log_likelihood"]["y"].isel(obs=slice(3, None)).to_dataset(name="y"))
    others = loo(rest)
    assert summary.elpd_loo == pytest.approx(others.elpd_loo, rel=1e-12)  # the three rows add exactly 0
    assert summary.p_loo == pytest.approx(others.p_loo, rel=1e-12)
    assert np.array_equal(summary.pareto_k[:3], np.zeros(3))
    assert np.allclose(summary.pareto_k[3:], others.pareto_k)
    assert summary.n_rows == reference.n_rows == 120
    everything = result.copy()
    everything["log_likelihood"] = xr.DataTree((values * 0 - 0.25).to_dataset(name="y"))
    flat = loo(everything)
    assert flat.elpd_loo == pytest.approx(-0.25 * 120) and flat.se == 0 and flat.p_loo == 0


# --------------------------------------------------------------------------- same rows, other features or families


@pytest.fixture(scope="module")
def iris_fits():
    """Fits on the training rows of one iris split: logistic on 2 features (standardised) and on all 4, naive
    Bayes on all 4; and a logistic fit on the training rows of another split (same count of each class)."""
    train = data.train_validation_test_split(data.load("iris"), random_seed=0)[0]
    other_split = data.train_validation_test_split(data.load("iris"), random_seed=1)[0]
    two = train.select_features(["petal length (cm)", "petal width (cm)"])
    return {
        "two": fit(LogisticRegression(), two, sampler=SETTINGS, standardize=True, random_seed=1),
        "all": fit(LogisticRegression(), train, sampler=SETTINGS, random_seed=2),
        "nb": fit(NaiveBayes(), train, method="exact", sampler=SETTINGS, random_seed=3),
        "other_split": fit(NaiveBayes(), other_split, method="exact", sampler=SETTINGS, random_seed=4),
        "train": train,
        "other_train": other_split,
    }


def test_compare_accepts_fits_on_the_same_rows_whatever_their_features_family_or_scaling(iris_fits):
    train = iris_fits["train"]
    assert result_info(iris_fits["two"]).data.target_fingerprint == train.target_fingerprint
    assert result_info(iris_fits["two"]).data.fingerprint != result_info(iris_fits["all"]).data.fingerprint
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing ArviZ raises reaches the caller: it is in the table
        table = compare({name: iris_fits[name] for name in ("two", "all", "nb")})
    assert set(table.index) == {"two", "all", "nb"} and table["weight"].sum() == pytest.approx(1.0)
    for name in ("two", "all", "nb"):  # each row's elpd is that fit's own LOO over the same 90 rows
        assert table.loc[name, "elpd"] == pytest.approx(loo(iris_fits[name]).elpd_loo, rel=1e-12)
    assert table["warning"].map(type).eq(str).all()


def test_the_same_labels_from_another_split_are_refused(iris_fits):
    """Iris is sorted by class, so a stratified training part of any split has the same labels in the same
    order (the target fingerprints agree): the recorded split and the shared columns tell the rows apart."""
    assert iris_fits["other_train"].target_fingerprint == iris_fits["train"].target_fingerprint
    with pytest.raises(
        ValueError,
        match=r"^'nb' \(iris\[train\] \(\w{12}\)\) and 'other' \(iris\[train\] \(\w{12}\)\) were fitted on "
        r"different rows or labels: the rows are the train part of the split 0.6,0.2,0.2 with seed 0 against the "
        r"train part of the split 0.6,0.2,0.2 with seed 1; ",
    ):
        compare({"nb": iris_fits["nb"], "other": iris_fits["other_split"]})
    unsplit = iris_fits["other_split"].copy()  # the same rows without their split record: the columns differ
    info = result_info(unsplit)
    origin = dataclasses.replace(info.data.origin, split=None)
    write_info(unsplit, dataclasses.replace(info, data=dataclasses.replace(info.data, origin=origin)))
    n_differ = int(np.sum(np.any(iris_fits["train"].X != iris_fits["other_train"].X, axis=1)))
    with pytest.raises(ValueError, match=r"the column 'sepal length \(cm\)', which both use, differs in \d+ of 90"):
        compare({"nb": iris_fits["nb"], "other": unsplit})
    assert n_differ > 0


def test_other_labels_or_class_names_are_refused_naming_what_differs(iris_fits):
    train = iris_fits["train"]
    shuffled = train.subset(np.random.default_rng(0).permutation(train.n_obs))
    refit = fit(NaiveBayes(), shuffled, method="exact", sampler=SETTINGS, random_seed=5)
    with pytest.raises(ValueError, match=r"the labels differ \(same number of rows and classes, but other rows or "):
        compare({"nb": iris_fits["nb"], "shuffled": refit})
    renamed = dataclasses.replace(train, class_names=("a", "b", "c"))
    refit = fit(NaiveBayes(), renamed, method="exact", sampler=SETTINGS, random_seed=5)
    with pytest.raises(ValueError, match=r"class names \['setosa', 'versicolor', 'virginica'\] against \['a', 'b',"):
        compare({"nb": iris_fits["nb"], "renamed": refit})


def test_results_without_a_target_fingerprint_fall_back_to_the_whole_table(iris_fits):
    """A result written before the target fingerprint was recorded compares by the whole-table fingerprint:
    the same table is accepted, other features are refused with a message saying why."""
    old = iris_fits["all"].copy()
    info = result_info(old)
    write_info(old, dataclasses.replace(info, data=dataclasses.replace(info.data, target_fingerprint="")))
    assert result_info(old).data.target_fingerprint == ""
    assert len(compare({"old": old, "nb": iris_fits["nb"]})) == 2  # same table
    with pytest.raises(ValueError, match=r"written before bayesclass recorded the target fingerprint, so the whole"):
        compare({"old": old, "two": iris_fits["two"]})


def test_pareto_k_warnings_are_notes_not_warnings(results):
    """A row whose log-likelihood has a few extreme draws has a high Pareto k: ArviZ warns; loo and compare
    return that as a one-line note with its count, and raise nothing."""
    result = results["logistic"].copy()
    values = result["log_likelihood"]["y"].copy()
    values[0, :5, 0] = -40.0  # five draws give row 0 a tiny likelihood: heavy-tailed importance ratios
    result["log_likelihood"] = xr.DataTree(values.to_dataset(name="y"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = loo(result)
        table = compare({"modified": result, "probit": results["probit"]})
    n_above, n_warned = int(np.sum(summary.pareto_k > 0.7)), int(np.sum(summary.pareto_k > summary.good_k))
    assert n_warned >= 1 and summary.pareto_k[0] > summary.good_k and n_above == summary.n_high_k
    expected = (  # the count of the tables' limit (0.7) and, below it for 600 draws, ArviZ's own
        f"Pareto k > 0.7 in {n_above} of 120 rows (ArviZ warns above {summary.good_k:.2f} for 600 draws: "
        f"{n_warned} rows): their leave-one-out estimates are unreliable"
    )
    assert len(summary.notes) == 1 and summary.notes[0].startswith(expected)
    assert "\n" not in summary.notes[0] and "site-packages" not in summary.notes[0]
    assert table.loc["modified", "warning"].startswith(expected)


def test_the_loo_command_compares_fits_on_the_same_rows_and_prints_no_warnings(iris_fits, tmp_path, capsys):
    from bayesclass.cli import main

    for name in ("two", "all", "nb", "other_split"):
        save(iris_fits[name], tmp_path / f"{name}.nc")
    command = [sys.executable, "-W", "default", "-m", "bayesclass.cli", "loo"]
    done = subprocess.run(
        [*command, "--run", "two.nc", "--run", "all.nc", "--run", "nb.nc"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.count("elpd_loo") == 3 and "stacking weights" in done.stdout
    assert "Warning" not in done.stdout and "site-packages" not in done.stdout
    code = main(["loo", "--run", str(tmp_path / "nb.nc"), "--run", str(tmp_path / "other_split.nc")])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    assert error.startswith(f"bayesclass loo: error: '{tmp_path / 'nb.nc'}' (iris[train] (")
    assert f"and '{tmp_path / 'other_split.nc'}' (iris[train] (" in error and "seed 0 against the train part" in error


def test_format_loo_shows_each_note_once(results):
    from bayesclass.reports.text import format_loo

    result = results["logistic"].copy()
    values = result["log_likelihood"]["y"].copy()
    values[0, :5, 0] = -40.0
    result["log_likelihood"] = xr.DataTree(values.to_dataset(name="y"))
    runs = {"modified": result, "probit": results["probit"]}
    text = format_loo(runs, {name: loo(run) for name, run in runs.items()}, compare(runs))
    notes = [line for line in text.splitlines() if line.startswith("  note: ")]
    assert len(notes) == 1 and notes[0].startswith("  note: Pareto k > 0.7 in ")
    assert "(ArviZ warns above 0.64 for 600 draws: " in notes[0]


# --------------------------------------------------------------------------- rows equal up to rounding; exact check


def _exact_leave_one_out(Z: np.ndarray, y: np.ndarray, prior, row: int) -> float:
    """``log p(y_i | x_i, D_-i)`` of Gaussian naive Bayes in closed form (Student-t and Dirichlet predictives).

    PSIS-LOO of the conditional log-likelihood estimates ``log 1 / E_post[1 / P(y_i | x_i, theta)]``, which for a
    generative model is ``log p(x_i, y_i | D_-i) / p(x_i | D_-i)``: the class predictive of the model refitted
    without row i (the prior's autoscaled m_0, b_0 kept, as PSIS keeps them).
    """
    from scipy import stats
    from scipy.special import logsumexp

    m0, b0 = Z.mean(axis=0), prior.variance_beta * Z.var(axis=0)
    kappa0, a0, beta = prior.mean_strength, prior.variance_alpha, prior.class_concentration
    keep = np.arange(len(y)) != row
    n_classes = int(y.max()) + 1
    log_joint = np.empty(n_classes)
    for c in range(n_classes):
        rows = Z[keep][y[keep] == c]
        n, mean = len(rows), rows.mean(axis=0)
        kappa, a = kappa0 + n, a0 + n / 2
        m = (kappa0 * m0 + n * mean) / kappa
        b = b0 + ((rows - mean) ** 2).sum(axis=0) / 2 + kappa0 * n * (mean - m0) ** 2 / (2 * kappa)
        density = stats.t.logpdf(Z[row], df=2 * a, loc=m, scale=np.sqrt(b * (kappa + 1) / (a * kappa))).sum()
        log_joint[c] = np.log((beta + n) / (n_classes * beta + keep.sum())) + density
    return float(log_joint[y[row]] - logsumexp(log_joint))


def test_naive_bayes_on_breast_cancer_matches_the_exact_leave_one_out_density():
    """Issue 28: naive Bayes on breast_cancer gave elpd_loo NaN (NUTS draws) or NaN Pareto k (exact draws). Most
    of its 341 rows have a log-likelihood equal up to rounding in every draw (spread <= 1e-6 nats, most below
    1e-11) but not exactly, so they reached PSIS, whose Pareto fit of ratios equal in their last bits returns NaN
    shapes, or a NaN density. Now finite and, row by row, the closed-form leave-one-out density: flat rows to
    1e-6 nats, PSIS rows with k < 0.7 to Monte-Carlo error (4000 draws)."""
    from bayesclass.inference.criticism.loo import FLAT_ROW_TOLERANCE, _elpd

    split = data.train_validation_test_split(data.load("breast_cancer"), fractions=(0.6, 0.2, 0.2), random_seed=0)
    result = fit(NaiveBayes(), split[0], method="exact", standardize=True, random_seed=0)
    summary = loo(result)
    assert np.isfinite([summary.elpd_loo, summary.se, summary.p_loo]).all() and not np.isnan(summary.pareto_k).any()
    values = result["log_likelihood"]["y"].values.reshape(-1, summary.n_rows)
    spread = np.ptp(values, axis=0)
    flat = spread <= FLAT_ROW_TOLERANCE
    assert flat.sum() > 200 and (spread[flat] > 0).sum() > 100  # most flat rows are not exactly constant
    Z = model_inputs(result, result["constant_data"]["X"].values)
    y = result["observed_data"]["y"].values
    prior = result_info(result).model.prior
    elpd_i = np.asarray(_elpd(result)[0].elpd_i)
    assert elpd_i.sum() == pytest.approx(summary.elpd_loo, rel=1e-12)
    flat_rows = np.flatnonzero(flat)[:: len(np.flatnonzero(flat)) // 10][:10]
    exact = np.array([_exact_leave_one_out(Z, y, prior, row) for row in flat_rows])
    assert np.abs(elpd_i[flat_rows] - exact).max() < FLAT_ROW_TOLERANCE
    varying = np.flatnonzero(~flat & (summary.pareto_k < 0.7))
    checked = varying[np.argsort(spread[varying])[-15:]]  # the rows PSIS moves most
    exact = np.array([_exact_leave_one_out(Z, y, prior, row) for row in checked])
    assert np.abs(elpd_i[checked] - exact).max() < 0.15, (elpd_i[checked], exact)
    assert np.abs(elpd_i[checked] - exact).sum() < 0.5


def test_rows_equal_up_to_rounding_are_exact_and_finite(results):
    """Rows whose log-likelihood is 0 or a few ulps below it (probability 1 up to rounding): plain importance
    sampling, Pareto k 0, the other rows' PSIS unchanged; a row varying by more than the tolerance stays in PSIS."""
    result = results["naive_bayes"]
    values = result["log_likelihood"]["y"].copy()
    jitter = np.random.default_rng(1).integers(0, 4, size=values[..., :5].shape)
    values[..., :5] = -jitter * np.finfo(float).eps
    modified = result.copy()
    modified["log_likelihood"] = xr.DataTree(values.to_dataset(name="y"))
    summary = loo(modified)
    rest = result.copy()
    rest["log_likelihood"] = xr.DataTree(result["log_likelihood"]["y"].isel(obs=slice(5, None)).to_dataset(name="y"))
    others = loo(rest)
    # the five rows' few ulps, and the rounding of sums of different lengths (two ulps of the total)
    rounding = 5 * 1e-15 + 2 * np.spacing(abs(others.elpd_loo))
    assert np.isfinite(summary.elpd_loo) and summary.elpd_loo == pytest.approx(others.elpd_loo, abs=rounding)
    assert summary.p_loo == pytest.approx(others.p_loo, abs=1e-14)
    assert np.array_equal(summary.pareto_k[:5], np.zeros(5)) and np.allclose(summary.pareto_k[5:], others.pareto_k)


def test_rows_whose_largest_ratios_tie_get_importance_sampling_not_an_error(results):
    """Rows whose probability is clipped at its bound in a third of the draws (the GP's Laplace draws of
    near-certain rows on breast_cancer): their largest importance ratios tie, arviz_stats refuses to fit a tail
    ("All tail values are the same"); they get plain importance sampling, -log mean(1/p), to rounding, with Pareto
    k 0, and the other rows' PSIS is unchanged."""
    from scipy.special import logsumexp

    result = results["naive_bayes"]
    values = result["log_likelihood"]["y"].copy()
    n_samples = values.sizes["chain"] * values.sizes["draw"]
    rng = np.random.default_rng(2)
    tied = rng.uniform(-2.0, -0.5, size=values[..., :3].shape)
    tied[rng.uniform(size=tied.shape) < 0.35] = -3.0  # the same lowest probability: the largest ratio, tied
    values[..., :3] = tied
    modified = result.copy()
    modified["log_likelihood"] = xr.DataTree(values.to_dataset(name="y"))
    with pytest.raises(ValueError, match="All tail values are the same"):
        azs.loo(modified, pointwise=True)  # what arviz_stats alone does with these rows
    summary = loo(modified)
    rest = result.copy()
    rest["log_likelihood"] = xr.DataTree(result["log_likelihood"]["y"].isel(obs=slice(3, None)).to_dataset(name="y"))
    others = loo(rest)
    flat = tied.reshape(n_samples, 3)
    expected = np.log(n_samples) - logsumexp(-flat, axis=0)
    assert summary.elpd_loo == pytest.approx(others.elpd_loo + expected.sum(), rel=1e-12)
    assert np.array_equal(summary.pareto_k[:3], np.zeros(3)) and np.allclose(summary.pareto_k[3:], others.pareto_k)


def test_a_non_finite_density_from_arviz_stats_is_refused_naming_the_rows(results, monkeypatch):
    """Should arviz_stats' Pareto fit still return a NaN density for a row (as it did for rows equal up to
    rounding), loo refuses with the rows and their spread instead of returning elpd_loo NaN."""
    import bayesclass.inference.criticism.loo as loo_module

    real_loo = loo_module.azs.loo

    def nan_in_row_7(data, **kwargs):
        estimate = real_loo(data, **kwargs)
        estimate.elpd_i[7] = np.nan
        return estimate

    monkeypatch.setattr(loo_module.azs, "loo", nan_in_row_7)
    with pytest.raises(loo_module.LooUnavailable, match=r"non-finite leave-one-out density for training rows 7 \(0-ba"):
        loo(results["logistic"])
