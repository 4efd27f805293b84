"""Which draws predict, and the latent GP's fast prediction (issue 40; inference/prediction/draws.py).

- the exact GP's batched moments (``_exact_draw_moments``: batched kernels and factors, ``dtrtri`` + ``dtrmm``) equal
  an independent textbook computation per draw (``numpy.linalg.solve`` of K against the cross-covariance), and do
  not depend on the block of draws or the threads;
- ``stationary_matrices`` / ``kernel_matrices`` equal ``kernel_matrix`` draw by draw, for both kernels;
- ``draws="auto"`` thins a GP's draws to about its ESS; the mean it predicts lies within the Monte-Carlo error it
  states of the every-draw prediction, and its interval's endpoints at levels within the stated bounds; other
  families predict from every draw either way (the same floats);
- the attrs say which draws and how precise; bad values are refused naming the argument; the progress bar is drawn
  on a terminal after its delay and never with ``progress=False``.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.data import seed004_gp
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.prediction import predict as predict_module
from bayesclass.inference.prediction import progress
from bayesclass.inference.prediction.draws import MIN_PREDICTION_DRAWS, select_draws
from bayesclass.inference.result import result_info
from bayesclass.models import gaussian_process
from bayesclass.models._kernels import kernel_matrices, kernel_matrix, stationary_matrices
from bayesclass.models.base import draws_last, leading_dims_of


@pytest.fixture(scope="module")
def gp_fit():
    """The exact GP by Gibbs on 60 rows of seed 004: 2 x 1,000 draws, thinned by draws='auto'."""
    data = seed004_gp(60, random_seed=5)
    settings = bc.SamplerSettings(draws=1000, chains=2, progressbar=False)
    return bc.fit(bc.LatentGaussianProcess(), data, sampler=settings, random_seed=2)


@pytest.fixture(scope="module")
def new_rows():
    return np.linspace(-0.2, 1.2, 41)[:, np.newaxis]


def _textbook_moments(model, posterior, features):
    """Per draw: K^-1 by numpy.linalg.solve; mean K*' K^-1 z, variance k** - diag(K*' K^-1 K*)."""
    leading = leading_dims_of(posterior["latent"], "obs")
    x = posterior["training_input"].values
    lengthscale = draws_last(posterior["lengthscale"], leading, "feature").T
    amplitude = draws_last(posterior["amplitude"], leading).reshape(-1)
    constant = draws_last(posterior["constant"], leading).reshape(-1)
    latent = draws_last(posterior["latent"], leading, "obs").T
    means, variances = [], []
    for ls, a, c, z in zip(lengthscale, amplitude, constant, latent, strict=True):
        covariance = kernel_matrix(x, x, lengthscale=ls, amplitude=a, constant=c, kernel=model.kernel)
        covariance += model.jitter * a**2 * np.eye(x.shape[0])
        cross = kernel_matrix(x, features, lengthscale=ls, amplitude=a, constant=c, kernel=model.kernel)
        solved = np.linalg.solve(covariance, np.column_stack([z, cross]))
        means.append(cross.T @ solved[:, 0])
        variances.append(a**2 + c**2 - np.einsum("ij,ij->j", cross, solved[:, 1:]))
    return np.array(means).T, np.array(variances).T


def test_the_batched_moments_are_the_textbook_moments_of_every_draw(gp_fit, new_rows):
    info = result_info(gp_fit)
    posterior = gp_fit["posterior"].to_dataset().isel(draw=slice(0, 40))
    features = model_inputs(gp_fit, new_rows)
    moments, _, _ = info.model._latent_moments(posterior)
    mean, variance = moments(features)
    expected_mean, expected_variance = _textbook_moments(info.model, posterior, features)
    assert mean.shape == variance.shape == (len(new_rows), 80)
    np.testing.assert_allclose(mean, expected_mean, rtol=0, atol=1e-7 * np.abs(expected_mean).max())
    np.testing.assert_allclose(variance, np.maximum(expected_variance, 0.0), rtol=0, atol=1e-7)


def test_the_moments_do_not_depend_on_the_blocks_of_draws_or_the_threads(gp_fit, new_rows, monkeypatch):
    model = result_info(gp_fit).model
    posterior = gp_fit["posterior"].to_dataset().isel(draw=slice(0, 30))
    features = model_inputs(gp_fit, new_rows)
    moments, _, _ = model._latent_moments(posterior)
    reference = moments(features)
    monkeypatch.setattr(gaussian_process, "PREDICTION_BLOCK_DRAWS", 7)
    monkeypatch.setattr(gaussian_process.os, "sched_getaffinity", lambda pid: {0})  # one thread
    blocked = model._latent_moments(posterior)[0](features)
    for ours, theirs in zip(blocked, reference, strict=True):
        assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("kernel", ["exp_quad", "matern52"])
def test_kernel_matrices_are_kernel_matrix_of_every_draw(kernel):
    rng = np.random.default_rng(3)
    x1, x2 = rng.normal(size=(9, 3)), rng.normal(size=(5, 3))
    lengthscales = rng.uniform(0.3, 2.0, size=(4, 3))
    amplitudes, constants = rng.uniform(0.5, 2.0, 4), rng.uniform(0.1, 1.0, 4)
    batch = kernel_matrices(
        x1, x2, lengthscales=lengthscales, amplitudes=amplitudes, constants=constants, kernel=kernel
    )
    unit = stationary_matrices(x1, x2, lengthscales=lengthscales, kernel=kernel)
    for draw in range(4):
        expected = kernel_matrix(
            x1, x2, lengthscale=lengthscales[draw], amplitude=amplitudes[draw], constant=constants[draw], kernel=kernel
        )
        np.testing.assert_allclose(batch[draw], expected, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(unit[draw], kernel_matrix(x1, x2, lengthscale=lengthscales[draw], amplitude=1.0,
                                                             kernel=kernel), rtol=1e-12, atol=1e-14)  # fmt: skip
    assert np.all(stationary_matrices(x1, x1, lengthscales=lengthscales, kernel=kernel) <= 1.0)


def test_auto_thins_a_gp_to_about_its_ess_within_the_stated_monte_carlo_error(gp_fit, new_rows):
    posterior = gp_fit["posterior"].to_dataset()
    _, selection = select_draws(posterior, thin=True)
    assert selection.total == 2000 and selection.step > 1  # the fixture is thinned
    assert selection.kept >= MIN_PREDICTION_DRAWS
    assert selection.kept == 2 * len(range(0, 1000, selection.step))
    every = bc.predict(gp_fit, new_rows, draws="all", return_draws=True)
    thinned = bc.predict(gp_fit, new_rows, return_draws=True)
    assert thinned["class_proba_draws"].sizes["draw"] == len(range(0, 1000, selection.step))
    np.testing.assert_allclose(  # the kept draws are the every-draw prediction's (up to the products' last bits)
        thinned["class_proba_draws"].values,
        every["class_proba_draws"].isel(draw=slice(None, None, selection.step)).values,
        rtol=1e-12,
        atol=1e-14,
    )
    effective = min(selection.kept, selection.ess)
    draws = every["class_proba_draws"].isel({"class": 1}).values.reshape(-1, len(new_rows))  # (draws, rows)
    bound = 4.0 * draws.std(axis=0) / np.sqrt(effective)  # 4 of the stated MC standard errors, per row
    gap = np.abs(thinned["class_proba"].isel({"class": 1}).values - every["class_proba"].isel({"class": 1}).values)
    assert np.all(gap <= bound + 1e-12)
    tail = (1 - 0.89) / 2  # the interval's endpoints, as levels of the every-draw distribution
    level = (draws < thinned["class_proba_low"].isel({"class": 1}).values).mean(axis=0)
    spread = np.abs(draws.max(axis=0) - draws.min(axis=0)) > 1e-9  # rows whose draws differ
    assert np.all(np.abs(level[spread] - tail) <= 4.0 * np.sqrt(tail * (1 - tail) / effective))
    assert f"{selection.kept:,} of 2,000 posterior draws" in thinned.attrs["draws"]
    assert f"every {selection.step}th of each chain" in thinned.attrs["draws"]
    assert f"sqrt({effective:,.0f})" in thinned.attrs["monte_carlo_error"]
    assert "draws" not in every.attrs and "monte_carlo_error" not in every.attrs


def test_other_families_predict_from_every_draw_whatever_draws_says(new_rows):
    data = bc.load("seed001_gaussians", n=80, random_seed=1)
    result = bc.fit("logistic", data, sampler=bc.SamplerSettings(draws=400, chains=2, progressbar=False),
                    random_seed=0)  # fmt: skip
    rows = data.X[:7]
    auto, every = bc.predict(result, rows, return_draws=True), bc.predict(result, rows, draws="all", return_draws=True)
    assert auto["class_proba_draws"].sizes["draw"] == 400
    assert np.array_equal(auto["class_proba"].values, every["class_proba"].values)
    assert "draws" not in auto.attrs


def test_the_step_is_the_draws_over_the_arviz_bulk_ess():
    import arviz_stats as azs
    import xarray as xr

    rng = np.random.default_rng(0)
    noise = rng.standard_normal((4, 2000))
    chains = np.empty_like(noise)
    chains[:, 0] = noise[:, 0]
    for t in range(1, 2000):  # AR(1), rho 0.9: ESS about 8,000 x 0.1 / 1.9 = 421
        chains[:, t] = 0.9 * chains[:, t - 1] + np.sqrt(1 - 0.81) * noise[:, t]
    posterior = xr.Dataset({"theta": (("chain", "draw"), chains), "other": (("chain", "draw"), noise)})
    ess = float(azs.ess(posterior[["theta"]], method="bulk")["theta"])
    kept, selection = select_draws(posterior, thin=True)
    assert selection.ess == pytest.approx(ess) and 300 < ess < 600
    assert selection.step == 8000 // max(int(np.ceil(ess)), MIN_PREDICTION_DRAWS)
    assert kept.sizes["draw"] == len(range(0, 2000, selection.step))
    assert np.array_equal(kept["theta"].values, chains[:, :: selection.step])


def test_few_draws_are_all_used(gp_fit, new_rows):
    small = gp_fit["posterior"].to_dataset().isel(draw=slice(0, MIN_PREDICTION_DRAWS // 2))
    kept, selection = select_draws(small, thin=True)
    assert kept is small and selection.step == 1 and selection.ess is None


@pytest.mark.parametrize("value", ["some", "ALL", 1, None])
def test_a_bad_draws_value_is_refused_naming_the_argument(gp_fit, new_rows, value):
    with pytest.raises(ValueError, match=r"^draws must be one of 'auto', 'all', got "):
        bc.predict(gp_fit, new_rows, draws=value)


def test_the_progress_bar_appears_on_a_terminal_after_its_delay_and_never_when_off(gp_fit, new_rows, monkeypatch):
    from rich.console import Console

    terminal = io.StringIO()
    monkeypatch.setattr(progress, "_progress_console", lambda: Console(file=terminal, force_terminal=True))
    monkeypatch.setattr(predict_module, "PREDICTION_PROGRESS_DELAY", 0.0)
    bc.predict(gp_fit, new_rows)
    assert "predicting" in terminal.getvalue() and f"{len(new_rows)}/{len(new_rows)}" in terminal.getvalue()
    terminal.truncate(0)
    terminal.seek(0)
    bc.predict(gp_fit, new_rows, progress=False)
    assert terminal.getvalue() == ""
    monkeypatch.setattr(predict_module, "PREDICTION_PROGRESS_DELAY", 60.0)  # a quick prediction draws nothing
    bc.predict(gp_fit, new_rows)
    assert terminal.getvalue() == ""
    with pytest.raises(ValueError, match="^progress must be True or False, got 'yes'$"):
        bc.predict(gp_fit, new_rows, progress="yes")


@pytest.fixture(scope="module")
def hsgp_fit():
    """The HSGP by Gibbs on 120 rows of seed 004 (predicted from its basis weights): 2 x 400 draws (thinned by 2)."""
    data = seed004_gp(120, random_seed=6)
    settings = bc.SamplerSettings(draws=400, tune=200, chains=2, progressbar=False)
    return bc.fit(bc.LatentGaussianProcess(approximation="hsgp"), data, sampler=settings, random_seed=3)


def test_auto_thins_an_hsgp_within_the_stated_monte_carlo_error(hsgp_fit, new_rows, monkeypatch):
    from bayesclass.inference.prediction import draws as draws_module

    ess = draws_module._smallest_bulk_ess(hsgp_fit["posterior"].to_dataset())
    monkeypatch.setattr(draws_module, "_smallest_bulk_ess", lambda posterior: min(ess, 200.0))  # thin by 2
    _, selection = select_draws(hsgp_fit["posterior"].to_dataset(), thin=True)
    every = bc.predict(hsgp_fit, new_rows, draws="all", return_draws=True)
    thinned = bc.predict(hsgp_fit, new_rows)
    assert selection.step == 2  # 800 draws, MIN_PREDICTION_DRAWS = 400 kept
    effective = min(selection.kept, selection.ess)
    draws = every["class_proba_draws"].isel({"class": 1}).values.reshape(-1, len(new_rows))
    gap = np.abs(thinned["class_proba"].isel({"class": 1}).values - draws.mean(axis=0))
    assert np.all(gap <= 4.0 * draws.std(axis=0) / np.sqrt(effective) + 1e-12)
    assert f"{selection.kept:,} of 800 posterior draws" in thinned.attrs["draws"]
