"""The latent GP's data-dependent default method (``method="auto"``, issue 28).

The Gibbs sampler where its work per kept draw, (inputs + 2) x rows^3 (HSGP: x (basis + 1)^3 x thin), is at most
``GIBBS_MAX_SWEEP_WORK``; ``laplace`` above it, with the reason recorded in the result and printed. Explicit
methods are honoured; families without a data-dependent rule keep their ``default_sampling_method``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayesclass as bc
from bayesclass.cli import main
from bayesclass.data import Dataset, seed004_gp, train_validation_test_split
from bayesclass.inference import SamplerSettings
from bayesclass.inference.engines.fit import resolve_method
from bayesclass.inference.engines.methods import SAMPLERS
from bayesclass.inference.evaluation.report_evaluation import run_summary
from bayesclass.inference.result import result_info
from bayesclass.models import LatentGaussianProcess, LogisticRegression
from bayesclass.models.gaussian_process import GIBBS_MAX_SWEEP_WORK

SHORT = SamplerSettings(draws=20, tune=10, chains=1, progressbar=False)


def table(n: int, d: int, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    return Dataset(
        name=f"table_{n}x{d}",
        X=x,
        y=(x[:, 0] + rng.normal(size=n) > 0).astype(int),
        feature_names=tuple(f"x{j}" for j in range(d)),
        class_names=("0", "1"),
        feature_kinds=("continuous",) * d,
    )


@pytest.fixture(scope="module")
def breast_cancer_train() -> Dataset:
    """breast_cancer's 60% training split: 341 rows x 30 inputs (``compare``'s default split)."""
    train, _, _ = train_validation_test_split(bc.load("breast_cancer"), fractions=(0.6, 0.2, 0.2), random_seed=0)
    assert (train.n_obs, train.n_features) == (341, 30)
    return train


@pytest.mark.parametrize(
    ("n", "d", "approximation", "work", "method"),
    [
        (500, 1, "auto", 3 * 500**3, "gibbs"),  # the largest exact GP of one input
        (400, 2, "auto", 4 * 400**3, "gibbs"),
        (341, 8, "auto", 10 * 341**3, "gibbs"),  # 3.97e8: just under the bound
        (341, 9, "auto", 11 * 341**3, "laplace"),
        (341, 30, "auto", 32 * 341**3, "laplace"),  # breast_cancer's training split
        (600, 1, "auto", 3 * 3 * 31**3, "gibbs"),  # HSGP, 30 basis functions, every 3rd sweep kept
        (600, 3, "auto", 3 * 5 * 513**3, "laplace"),  # HSGP, 8^3 basis functions
    ],
)
def test_the_gp_default_follows_the_gibbs_work_bound(n, d, approximation, work, method):
    model = LatentGaussianProcess(approximation=approximation)
    data = table(n, d)
    assert model.gibbs_sweep_work(data) == work
    assert (work <= GIBBS_MAX_SWEEP_WORK) == (method == "gibbs")
    assert model.default_method_for(data) == method
    assert resolve_method(model, "auto", SamplerSettings(), data=data) == method
    assert resolve_method(model, "auto", SamplerSettings()) == "gibbs"  # no data: the family's sampler
    assert resolve_method(model, "gibbs", SamplerSettings(), data=data) == "gibbs"  # an explicit method stays
    assert resolve_method(model, "auto", SamplerSettings(backend="nutpie"), data=data) == "nuts"
    assert bool(model.method_note("laplace", data)) == (method == "laplace")
    assert model.method_note("gibbs", data) == ""


def test_other_families_keep_their_sampler_on_wide_data():
    data = table(341, 30)
    assert LogisticRegression().default_method_for(data) == "nuts"
    assert LogisticRegression().method_note("nuts", data) == ""
    assert resolve_method(LogisticRegression(), "auto", SamplerSettings(), data=data) == "nuts"


@pytest.fixture(scope="module")
def wide_auto_fit(breast_cancer_train):
    return bc.fit(LatentGaussianProcess(), breast_cancer_train, standardize=True, sampler=SHORT, random_seed=0)


def test_fit_auto_is_laplace_on_breast_cancer_and_records_why(wide_auto_fit, tmp_path):
    info = result_info(wide_auto_fit)
    assert info.method == "laplace"
    assert "341 rows x 30 inputs" in info.method_note and f"exceeds {GIBBS_MAX_SWEEP_WORK:.2g}" in info.method_note
    assert wide_auto_fit["posterior"].sizes["draw"] == 20  # the settings' draws, as an explicit laplace fit
    bc.save_result(wide_auto_fit, tmp_path / "wide.nc")
    assert result_info(bc.load_result(tmp_path / "wide.nc")).method_note == info.method_note  # kept in the file


def test_the_report_says_why_the_method_ran(wide_auto_fit):
    info = result_info(wide_auto_fit)
    summary = run_summary(wide_auto_fit, info, label="gp")
    assert summary.method == "laplace"
    assert summary.method_description.endswith(info.method_note)
    assert summary.method_description.startswith(SAMPLERS["laplace"].description)


def test_an_edited_method_note_with_a_control_character_is_refused(wide_auto_fit):
    edited = wide_auto_fit.copy()
    edited.attrs = {**wide_auto_fit.attrs, "method_note": "laplace\x1b[2J"}
    with pytest.raises(ValueError, match="attr method_note holds"):
        result_info(edited)


def test_fit_auto_is_gibbs_on_few_inputs():
    result = bc.fit(LatentGaussianProcess(), seed004_gp(60, random_seed=1), standardize=True, sampler=SHORT)
    info = result_info(result)
    assert info.method == "gibbs" and info.method_note == ""


def test_cli_fit_records_laplace_on_a_wide_table_and_honours_an_explicit_gibbs(breast_cancer_train, tmp_path, capsys):
    frame = pd.DataFrame(breast_cancer_train.X, columns=list(breast_cancer_train.feature_names))
    frame["diagnosis"] = np.asarray(breast_cancer_train.class_names)[breast_cancer_train.y]
    csv = tmp_path / "wide.csv"
    frame.to_csv(csv, index=False)
    base = ("fit", "--model", "gp", "--data", str(csv), "--target", "diagnosis", "--standardize", "--seed", "1")
    short = ("--draws", "10", "--chains", "1", "--no-progress")
    out = tmp_path / "auto.nc"
    assert main([*base, *short, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "by laplace" in printed and "laplace is the gp's default on 341 rows x 30 inputs" in printed
    assert result_info(bc.load_result(out)).method == "laplace"
    out = tmp_path / "gibbs.nc"
    assert main([*base, *short, "--tune", "2", "--method", "gibbs", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "by gibbs" in printed and "default" not in printed
    info = result_info(bc.load_result(out))
    assert info.method == "gibbs" and info.method_note == ""


def test_compare_says_why_the_gp_ran_by_laplace():
    from bayesclass.inference.evaluation.model_comparison import compare_models
    from bayesclass.reports.model_comparison import format_model_comparison

    comparison = compare_models(bc.load("breast_cancer"), ["gp"], standardize=True, sampler=SHORT, random_seed=0)
    (fitted,) = comparison.fits
    assert fitted.method == "laplace"
    text = format_model_comparison(comparison)
    assert "gp           fitted by laplace" in text
    assert "(laplace is the gp's default on 341 rows x 30 inputs: the Gibbs sampler's work" in text
