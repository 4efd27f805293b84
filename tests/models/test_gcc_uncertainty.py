"""Standard errors of the Gaussian class-conditional point estimates, against independent implementations.

- The MLE's covariance equals the inverse of a central-difference Hessian of a log-likelihood written here with
  ``scipy.stats.multivariate_normal`` over the class means and the free covariance elements (and of the
  multinomial log-likelihood over the free class probabilities); the MAP's equals the inverse Hessian of a log
  posterior written here with SciPy's densities (inverse-Wishart, normal, Dirichlet; LKJ by the correlation
  matrix's determinant and half-normal standard deviations, moved to the covariance by its Jacobian).
- Over many data sets drawn from seed 001's Gaussians, the MLE's sampling standard deviations and correlations
  match the stated ones within Monte-Carlo error, and 95% Wald intervals cover the truth about 95% of the time.
- Kinds without a stated covariance, regularised estimates, too many parameters and estimates that do not exist
  give None or the point estimate's own error, and ``compare`` prints the Wald intervals.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats

from bayesclass.data import Dataset, load, seed001_gaussians
from bayesclass.data.synthetic import SEED001_MEANS, SEED001_PRIOR_C1
from bayesclass.models.base import NoEstimateError
from bayesclass.models.gaussian_class_conditional import (
    MAX_APPROXIMATION_PARAMETERS,
    GaussianClassConditional,
    GaussianClassConditionalPrior,
)
from tests.bad_inputs.harness import run

COVARIANCES = ("shared", "per-class")


def _model(covariance: str, prior: str = "lkj", **kwargs: float) -> GaussianClassConditional:
    return GaussianClassConditional(
        covariance=covariance, prior=GaussianClassConditionalPrior(covariance_prior=prior), **kwargs
    )


# -- an independent parametrisation: means, then the lower triangle of each covariance -------------------------


class _Free:
    """theta = (class means row by row, lower triangle (i >= j) of each group's covariance) and back."""

    def __init__(self, n_classes: int, n_features: int, groups: int) -> None:
        self.K, self.d, self.G = n_classes, n_features, groups
        self.lower = [(i, j) for i in range(n_features) for j in range(i + 1)]

    def pack(self, mean: np.ndarray, covariance: np.ndarray) -> np.ndarray:
        return np.concatenate([mean.ravel(), *[[c[i, j] for i, j in self.lower] for c in covariance]])

    def unpack(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        K, d, G = self.K, self.d, self.G
        mean = theta[: K * d].reshape(K, d)
        covariance = np.zeros((G, d, d))
        for g in range(G):
            for position, (i, j) in enumerate(self.lower):
                value = theta[K * d + g * len(self.lower) + position]
                covariance[g, i, j] = covariance[g, j, i] = value
        return mean, covariance

    def full_index(self) -> np.ndarray:
        """For every element of (class_mean, covariance) flattened in C order, its position in theta."""
        K, d = self.K, self.d
        index = list(range(K * d))
        for g in range(self.G):
            for i, j in itertools.product(range(d), range(d)):
                index.append(K * d + g * len(self.lower) + self.lower.index((max(i, j), min(i, j))))
        return np.array(index)


def _hessian(function, theta: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Central-difference Hessian of a scalar function."""
    p = theta.size
    hessian = np.zeros((p, p))
    for i in range(p):
        for j in range(i, p):
            total = 0.0
            for si, sj in itertools.product((1, -1), (1, -1)):
                point = theta.copy()
                point[i] += si * steps[i]
                point[j] += sj * steps[j]
                total += si * sj * function(point)
            hessian[i, j] = hessian[j, i] = total / (4 * steps[i] * steps[j])
    return hessian


def _log_likelihood(data: Dataset, free: _Free, mean: np.ndarray, covariance: np.ndarray) -> float:
    total = 0.0
    for k in range(data.n_classes):
        rows = data.X[data.y == k]
        cov = covariance[0 if free.G == 1 else k]
        if np.linalg.eigvalsh(cov)[0] <= 0:
            return -np.inf
        total += scipy.stats.multivariate_normal(mean[k], cov).logpdf(rows).sum()
    return total


def _inverse_numerical_hessian(log_density, data: Dataset, model: GaussianClassConditional, kind: str) -> np.ndarray:
    """Inverse negative Hessian of ``log_density(mean, covariance, prior_free)`` at the estimate, full C order."""
    estimate = model.point_estimate(data, kind)
    G = 1 if model.covariance == "shared" else data.n_classes
    free = _Free(data.n_classes, data.n_features, G)
    covariance = estimate["covariance"].values.reshape(G, data.n_features, data.n_features)
    theta = free.pack(estimate["class_mean"].values, covariance)
    steps = 1e-4 * np.maximum(np.abs(theta), np.abs(np.diag(covariance.mean(axis=0))).min())
    hessian = _hessian(lambda t: log_density(data, free, *free.unpack(t)), theta, steps)
    index = free.full_index()
    return np.linalg.inv(-hessian)[np.ix_(index, index)]


def _prior_covariance(counts: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Inverse negative Hessian of sum_k counts_k log pi_k over pi_1..pi_{K-1} (pi_K = 1 - sum), on all K."""
    K = prior.size

    def log_density(free: np.ndarray) -> float:
        pi = np.append(free, 1 - free.sum())
        return float(np.sum(counts * np.log(pi)))

    hessian = _hessian(log_density, prior[:-1].copy(), 1e-5 * prior[:-1])
    to_full = np.vstack([np.eye(K - 1), -np.ones(K - 1)])
    return to_full @ np.linalg.inv(-hessian) @ to_full.T


def _assert_close(stated: np.ndarray, numerical: np.ndarray, tolerance: float = 1e-5) -> None:
    """Equal on the correlation scale: |difference| / sqrt(var_i var_j) below ``tolerance``."""
    scale = np.sqrt(np.outer(np.diag(numerical), np.diag(numerical)))
    assert np.all(np.abs(stated - numerical) <= tolerance * scale + 1e-15)


def _dataset(X: np.ndarray, y: np.ndarray, name: str) -> Dataset:
    d = X.shape[1]
    return Dataset(
        name=name,
        X=X,
        y=y,
        feature_names=tuple(f"f{j}" for j in range(d)),
        class_names=("a", "b"),
        feature_kinds=("continuous",) * d,
    )


def _data_sets() -> list[tuple[str, Dataset]]:
    return [("seed001", seed001_gaussians(150, random_seed=11)), ("iris", load("iris"))]


@pytest.mark.parametrize("covariance", COVARIANCES)
@pytest.mark.parametrize(("name", "data"), _data_sets())
def test_mle_covariance_is_the_inverse_numerical_hessian_of_the_log_likelihood(name, data, covariance) -> None:
    model = _model(covariance)
    approximation = model.gaussian_approximation(data, "mle")
    K = data.n_classes
    counts = np.bincount(data.y, minlength=K)
    numerical = _inverse_numerical_hessian(_log_likelihood, data, model, "mle")
    stated = approximation.covariance
    _assert_close(stated[K:, K:], numerical)
    _assert_close(stated[:K, :K], _prior_covariance(counts, counts / counts.sum()))
    assert np.all(stated[:K, K:] == 0)  # the class prior is independent of the Gaussian parameters
    assert "inverse Fisher information" in approximation.curvature


def _inverse_wishart_log_posterior(model: GaussianClassConditional):
    prior = model.prior

    def log_density(data: Dataset, free: _Free, mean: np.ndarray, covariance: np.ndarray) -> float:
        value = _log_likelihood(data, free, mean, covariance)
        if not np.isfinite(value):
            return value
        d = data.n_features
        center, variance = data.X.mean(axis=0), data.X.var(axis=0)
        inverse_wishart = scipy.stats.invwishart(df=d + 1 + prior.wishart_dof_offset, scale=np.diag(variance))
        value += sum(inverse_wishart.logpdf(cov) for cov in covariance)
        for k in range(data.n_classes):
            cov = covariance[0 if free.G == 1 else k]
            value += scipy.stats.multivariate_normal(center, cov / prior.mean_strength).logpdf(mean[k])
        return value

    return log_density


def _lkj_log_posterior(model: GaussianClassConditional):
    prior = model.prior

    def log_density(data: Dataset, free: _Free, mean: np.ndarray, covariance: np.ndarray) -> float:
        value = _log_likelihood(data, free, mean, covariance)
        if not np.isfinite(value):
            return value
        d = data.n_features
        center, sd = data.X.mean(axis=0), data.X.std(axis=0)
        value += scipy.stats.norm(center, prior.mean_sigma * sd).logpdf(mean).sum()
        for cov in covariance:
            sigma = np.sqrt(np.diag(cov))
            correlation = cov / np.outer(sigma, sigma)
            value += (prior.lkj_eta - 1) * np.linalg.slogdet(correlation)[1]  # LKJ, up to its constant
            value += scipy.stats.halfnorm(scale=prior.sd_sigma * sd).logpdf(sigma).sum()
            value -= d * np.log(sigma).sum()  # Jacobian 2^d prod sigma_i^d of (sigma, C) -> Sigma
        return value

    return log_density


@pytest.mark.parametrize(  # every combination runs on seed001; iris's LKJ per-class (the slowest) runs as slow
    ("name", "data", "prior", "covariance"),
    [
        pytest.param(
            name,
            data,
            prior,
            covariance,
            id=f"{name}-data{index}-{prior}-{covariance}",
            marks=[pytest.mark.slow] if (name, prior, covariance) == ("iris", "lkj", "per-class") else [],
        )
        for index, (name, data) in enumerate(_data_sets())
        for prior in ("inverse_wishart", "lkj")
        for covariance in COVARIANCES
    ],
)
def test_map_covariance_is_the_inverse_numerical_hessian_of_the_log_posterior(name, data, prior, covariance) -> None:
    model = _model(covariance, prior)
    log_density = (_inverse_wishart_log_posterior if prior == "inverse_wishart" else _lkj_log_posterior)(model)
    approximation = model.gaussian_approximation(data, "map")
    K = data.n_classes
    numerical = _inverse_numerical_hessian(log_density, data, model, "map")
    _assert_close(approximation.covariance[K:, K:], numerical)
    counts = np.bincount(data.y, minlength=K).astype(float)  # Dirichlet(1): the posterior is Dirichlet(counts + 1)
    estimate = model.point_estimate(data, "map")
    _assert_close(approximation.covariance[:K, :K], _prior_covariance(counts, estimate["class_prior"].values))
    assert "negative log posterior at the MAP" in approximation.curvature
    if prior == "lkj":  # the means move away from the class averages, so they correlate with the covariance
        assert np.abs(approximation.covariance[K : K + K * data.n_features, K + K * data.n_features :]).max() > 0


def test_unbiased_covariance_is_the_wishart_sampling_covariance() -> None:
    data = load("iris")
    for covariance, divisor in (("shared", 150 - 3), ("per-class", 50 - 1)):
        model = _model(covariance)
        approximation = model.gaussian_approximation(data, "unbiased")
        mle = model.gaussian_approximation(data, "mle")
        estimate = model.point_estimate(data, "unbiased")["covariance"].values.reshape(-1, 4, 4)[0]
        start = 3 + 12
        block = approximation.covariance[start : start + 16, start : start + 16]
        # Var(S_00) = 2 S_00^2 / m, Cov(S_01, S_23) = (S_02 S_13 + S_03 S_12) / m
        assert block[0, 0] == pytest.approx(2 * estimate[0, 0] ** 2 / divisor, rel=1e-12)
        assert block[1, 11] == pytest.approx(
            (estimate[0, 2] * estimate[1, 3] + estimate[0, 3] * estimate[1, 2]) / divisor, rel=1e-12
        )
        assert np.all(approximation.bse[3:15] > mle.bse[3:15])


def _replicates(covariance: str, n: int, count: int):
    model = _model(covariance)
    estimates, standard_errors, inside = [], [], []
    truth = np.concatenate([[SEED001_PRIOR_C1, 1 - SEED001_PRIOR_C1], SEED001_MEANS.ravel()])
    truth = np.concatenate([truth, np.tile(np.eye(2).ravel(), 1 if covariance == "shared" else 2)])
    for seed in range(count):
        approximation = model.gaussian_approximation(seed001_gaussians(n, random_seed=1000 + seed), "mle")
        estimates.append(approximation.params)
        standard_errors.append(approximation.bse)
        low, high = approximation.conf_int(0.05).T
        inside.append((low <= truth) & (truth <= high))
    return approximation, np.array(estimates), np.array(standard_errors), np.array(inside)


@pytest.mark.parametrize("covariance", COVARIANCES)
def test_mle_standard_errors_match_the_sampling_distribution(covariance) -> None:
    """2000 data sets of 400 rows from seed 001's generator: sampling sd vs stated SE, correlations, coverage."""
    count = 2000
    approximation, estimates, standard_errors, inside = _replicates(covariance, 400, count)
    sampling_sd = estimates.std(axis=0, ddof=1)
    stated_sd = np.sqrt((standard_errors**2).mean(axis=0))
    # the relative MC error of an sd from 2000 draws is 1/sqrt(2 * 2000) = 1.6%
    np.testing.assert_allclose(sampling_sd, stated_sd, rtol=0.05)
    sampling_correlation = np.corrcoef(estimates.T)
    stated = approximation.covariance
    stated_correlation = stated / np.sqrt(np.outer(np.diag(stated), np.diag(stated)))
    assert np.abs(sampling_correlation - stated_correlation).max() < 4.5 / np.sqrt(count)
    # 95% Wald intervals cover the truth 95% of the time, except a variance's: with s^2 ~ sigma^2 chi2(m - 1)/m
    # the interval s^2 (1 -+ 1.96 sqrt(2/m)) covers with the chi-square's probability (0.936 at m = 120 rows)
    expected = np.full(len(approximation.labels), 0.95)
    for position, label in enumerate(approximation.labels):
        parts = label.removeprefix("covariance[").removesuffix("]").split(", ")
        if label.startswith("covariance[") and parts[-1] == parts[-2]:
            m = 400 * (1.0 if len(parts) == 2 else (SEED001_PRIOR_C1 if parts[0] == "C1" else 1 - SEED001_PRIOR_C1))
            half = scipy.stats.norm.ppf(0.975) * np.sqrt(2 / m)
            expected[position] = np.diff(scipy.stats.chi2(m - 1).cdf([m / (1 + half), m / (1 - half)]))[0]
    coverage = inside.mean(axis=0)
    monte_carlo_sd = np.sqrt(0.95 * 0.05 / count)
    assert np.all(np.abs(coverage - expected) < 3.5 * monte_carlo_sd), (coverage, expected)


def test_kinds_without_a_stated_covariance_give_none() -> None:
    data = seed001_gaussians(60, random_seed=2)
    conjugate = _model("shared", "inverse_wishart")
    assert conjugate.gaussian_approximation(data, "posterior_predictive") is None
    assert conjugate.gaussian_approximation(data, "posterior_mean") is None
    regularised = _model("per-class", regularization=0.2)
    assert regularised.gaussian_approximation(data, "mle") is None
    assert regularised.gaussian_approximation(data, "unbiased") is None
    assert regularised.gaussian_approximation(data, "map") is not None  # the MAP ignores the regularisation
    d = int(np.sqrt(MAX_APPROXIMATION_PARAMETERS)) + 1
    rng = np.random.default_rng(0)
    wide = _dataset(rng.standard_normal((200, d)), np.arange(200) % 2, "wide")
    assert _model("shared").gaussian_approximation(wide, "mle") is None


def test_fewer_rows_than_features_raises_or_gives_the_conjugate_maps_curvature() -> None:
    """A class with 3 rows for 3 features: no MLE, no LKJ MAP (raised as by the point estimate); the inverse-Wishart
    MAP exists and its covariance is the closed form (finite, positive semi-definite)."""
    rng = np.random.default_rng(3)
    data = _dataset(rng.standard_normal((12, 3)), np.array([0] * 9 + [1] * 3), "tiny")
    for kind, estimate in (("mle", "MLE"), ("map", "LKJ-prior MAP")):
        with pytest.raises(NoEstimateError, match=f"{estimate} of covariance\\['b'\\].*class 'b' has 3 rows"):
            _model("per-class").gaussian_approximation(data, kind)
    conjugate = _model("per-class", "inverse_wishart").gaussian_approximation(data, "map")
    assert np.isfinite(conjugate.covariance).all()
    assert np.linalg.eigvalsh(conjugate.covariance).min() > -1e-12


def test_compare_prints_wald_intervals_for_gcc(capsys) -> None:
    code = run(
        "compare", "--model", "gcc", "--data", "seed001_gaussians", "--rows", "200", "--covariance", "per-class",
        "--covariance-prior", "inverse_wishart", "--method", "exact", "--draws", "200", "--seed", "3",
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("parameter"))
    assert header.count("Wald") >= 3  # MLE, MAP and the unbiased estimate
    row = next(line for line in out.splitlines() if line.startswith("covariance[C1, x1, x2]"))
    assert row.count("[") >= 4  # the posterior's ETI and three Wald intervals


def test_stored_covariances_survive_save_and_load_and_feed_predict_and_the_report(tmp_path) -> None:
    """An exact fit stores the MLE's, MAP's and unbiased estimate's covariances (none for the posterior mean and
    the Student-t predictive); they load back equal, predict still works, the report tabulates the SEs."""
    import bayesclass as bc
    from bayesclass.inference import fit, predict, save
    from bayesclass.inference import load as load_result
    from bayesclass.inference.result import gaussian_approximation

    data = seed001_gaussians(120, random_seed=5)
    model = _model("per-class", "inverse_wishart")
    result = fit(model, data, method="exact", sampler=None, standardize=False, random_seed=1)  # as the raw rows
    save(result, tmp_path / "gcc.nc")
    loaded = load_result(tmp_path / "gcc.nc")
    for kind in ("mle", "map", "unbiased"):
        stored = gaussian_approximation(loaded, kind)
        np.testing.assert_allclose(stored.covariance, model.gaussian_approximation(data, kind).covariance)
        assert stored.curvature == model.gaussian_approximation(data, kind).curvature
    assert gaussian_approximation(loaded, "posterior_mean") is None
    assert gaussian_approximation(loaded, "posterior_predictive") is None
    prediction = predict(loaded, data.X[:4])
    assert np.isfinite(prediction["class_proba_mle"].values).all()
    page = bc.report(loaded)
    se = gaussian_approximation(loaded, "mle").bse
    assert "<th>MLE SE</th>" in page and f"<td>{se[4]:.4g}</td>" in page
