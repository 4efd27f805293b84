"""Standard errors and Wald intervals of the naive Bayes MLE and MAP (issue 27), against independent implementations.

* statsmodels' ``proportion_confint(method="normal")`` from counts taken here from the raw rows: every
  probability's Wald interval (class prior, binary, each categorical level, each count feature's word share;
  the diagonal of a multinomial covariance is the binomial one);
* a numerical Hessian (``scipy.differentiate.hessian``, central differences) of a negative log-likelihood /
  log posterior written here from scratch with ``scipy.stats`` (binomial, multinomial, normal, Beta, Dirichlet,
  inverse-gamma densities), in the free coordinates of each simplex and mapped back by ``B = [I; -1']``, for
  every block and both estimates;
* Monte-Carlo: the sd of the MLE over data sets simulated from a known truth equals its standard error, and the
  95% Wald intervals cover the truth about 95% of the time.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.differentiate
import scipy.special
import scipy.stats

from bayesclass.data import Dataset, load
from bayesclass.inference import SamplerSettings, fit, save
from bayesclass.inference import load as load_result
from bayesclass.inference.evaluation.parameters import parameter_comparison
from bayesclass.inference.result import COVARIANCE_GROUP_PREFIX, gaussian_approximation
from bayesclass.models import naive_bayes
from bayesclass.models.approximation import GaussianApproximation, flatten_parameters, parameter_labels
from bayesclass.models.naive_bayes import NaiveBayes, NaiveBayesPrior

proportion = pytest.importorskip("statsmodels.stats.proportion")

KINDS = ("binary", "binary", "categorical", "categorical", "count", "count", "count", "continuous", "continuous")
NAMES = ("b0", "b1", "c0", "c1", "w0", "w1", "w2", "g0", "g1")
LEVELS = (3, 4)  # levels of c0, c1
#: a MAP different from the MLE in every block
PRIOR = NaiveBayesPrior(
    class_concentration=3.0,
    binary_alpha=2.0,
    binary_beta=5.0,
    category_concentration=2.5,
    count_concentration=1.5,
    mean_strength=2.0,
    variance_alpha=3.0,
    variance_beta=0.5,
)


def _mixed(n: int = 300, seed: int = 0) -> Dataset:
    """Three classes, every feature kind, every probability strictly inside (0, 1) at n = 300."""
    rng = np.random.default_rng(seed)
    y = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    columns = [
        rng.random(n) < np.array([0.2, 0.5, 0.7])[y],
        rng.random(n) < np.array([0.6, 0.4, 0.3])[y],
        (rng.random(n)[:, None] > np.cumsum([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2], [0.3, 0.3, 0.4]], axis=1)[y]).sum(1),
        rng.integers(0, 4, n),
        *(rng.poisson(np.array(rate)[y]) for rate in ([1.0, 2.0, 3.0], [2.0, 2.0, 1.0], [3.0, 1.0, 2.0])),
        rng.normal(np.array([0.0, 1.0, 2.0])[y], np.array([1.0, 0.5, 2.0])[y]),
        rng.normal(np.array([5.0, 4.0, 6.0])[y], 1.5),
    ]
    return Dataset(
        name="mixed",
        X=np.column_stack(columns).astype(float),
        y=y,
        feature_names=NAMES,
        class_names=("A", "B", "C"),
        feature_kinds=KINDS,
    )


def _block(approximation, name: str) -> np.ndarray:
    """Rows/columns of the covariance whose labels are elements of ``name``."""
    rows = [i for i, label in enumerate(approximation.labels) if label.startswith(f"{name}[")]
    return approximation.covariance[np.ix_(rows, rows)]


def _columns(data: Dataset, kind: str) -> np.ndarray:
    return data.X[:, np.array(data.feature_kinds) == kind]


def _onehot(data: Dataset) -> np.ndarray:
    return np.eye(data.n_classes)[data.y]


def _inverse_hessian(neg_log, x0: np.ndarray, step: float) -> np.ndarray:
    """Inverse of the central-difference Hessian of ``neg_log`` at the 1-d point ``x0`` (scipy.differentiate).

    scipy evaluates at points of shape (m, *extra); ``neg_log`` gets them as (*extra, m). ``step``, the first
    (largest) difference step, keeps every evaluation inside the parameter's domain.
    """
    result = scipy.differentiate.hessian(lambda x: neg_log(np.moveaxis(x, 0, -1)), x0, initial_step=step)
    hessian = (result.ddf + result.ddf.T) / 2  # the two cross differences, averaged
    return np.linalg.inv(hessian)


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["mle", "map"])
def test_covariance_is_over_the_flattened_parameters_in_c_order(kind):
    data = _mixed()
    model = NaiveBayes(prior=PRIOR)
    approximation = model.gaussian_approximation(data, kind)
    estimate = model.point_estimate(data, kind)
    names = model.parameter_names(data)
    assert approximation.names == names
    assert approximation.labels == parameter_labels(estimate, names)
    np.testing.assert_array_equal(approximation.params, flatten_parameters(estimate, names))
    # C order of each variable's own dims: class first, then the feature dim
    assert approximation.labels[3:6] == ("binary_proba[A, b0]", "binary_proba[A, b1]", "binary_proba[B, b0]")
    p = len(approximation.labels)
    assert approximation.covariance.shape == (p, p)
    np.testing.assert_allclose(approximation.covariance, approximation.covariance.T, atol=0)
    assert np.linalg.eigvalsh(approximation.covariance).min() > -1e-15
    # every simplex sums to 1: its covariance has zero row sums within the block
    assert np.abs(_block(approximation, "class_prior").sum(axis=1)).max() < 1e-15
    assert np.abs(_block(approximation, "count_proba").reshape(3, 3, 3, 3).sum(axis=(2, 3))).max() < 1e-15
    assert "inverse" in approximation.curvature
    assert "boundary" not in approximation.curvature  # nothing on the boundary here


@pytest.mark.parametrize("alpha", [0.05, 0.11])
def test_mle_wald_intervals_equal_statsmodels_proportion_confint(alpha):
    data = _mixed()
    approximation = NaiveBayes().gaussian_approximation(data, "mle")
    bounds = approximation.conf_int(alpha)
    onehot = _onehot(data)
    class_rows = onehot.sum(axis=0)
    binary = onehot.T @ _columns(data, "binary")
    categorical = _columns(data, "categorical")
    levels = np.hstack([onehot.T @ (categorical[:, [j]] == np.arange(L)) for j, L in enumerate(LEVELS)])
    words = onehot.T @ _columns(data, "count")
    expected = {
        "class_prior": (class_rows, np.full(3, data.n_obs)),
        "binary_proba": (binary, np.broadcast_to(class_rows[:, None], binary.shape)),
        "category_proba": (levels, np.broadcast_to(class_rows[:, None], levels.shape)),
        "count_proba": (words, np.broadcast_to(words.sum(axis=1, keepdims=True), words.shape)),
    }
    worst = 0.0
    for name, (count, nobs) in expected.items():
        rows = [i for i, label in enumerate(approximation.labels) if label.startswith(f"{name}[")]
        low, high = proportion.proportion_confint(count.ravel(), nobs.ravel(), alpha=alpha, method="normal")
        np.testing.assert_allclose(bounds[rows], np.column_stack([low, high]), rtol=1e-12, atol=1e-14)
        worst = max(worst, float(np.abs(bounds[rows] - np.column_stack([low, high])).max()))
    assert worst < 1e-14


@pytest.mark.parametrize("alpha", [0.05, 0.11])
def test_wald_intervals_are_clipped_to_the_support_as_statsmodels_clips_them(alpha):
    """Issue 41: 2 successes in 14 gave [-0.040, 0.326] where proportion_confint(method="normal") gives [0, 0.326].

    Five classes whose binary counts reach past 0 (2 of 14, 1 of 3, the class prior's 3 of 43) and past 1 (13 of
    14), and sit on both boundaries (0 of 7, 5 of 5); a Gaussian variance of a class of 3 rows reaches below 0.
    """
    sizes, ones = np.array([14, 5, 7, 3, 14]), np.array([2, 5, 0, 1, 13])
    y = np.repeat(np.arange(5), sizes)
    binary = np.concatenate([np.arange(size) < one for size, one in zip(sizes, ones, strict=True)])
    continuous = np.random.default_rng(0).normal(size=y.size)
    data = Dataset(
        name="clipped",
        X=np.column_stack([binary, continuous]).astype(float),
        y=y,
        feature_names=("b0", "g0"),
        class_names=tuple("ABCDE"),
        feature_kinds=("binary", "continuous"),
    )
    approximation = NaiveBayes().gaussian_approximation(data, "mle")
    bounds = approximation.conf_int(alpha)
    labels = list(approximation.labels)
    for name, count, nobs in (("class_prior", sizes, np.full(5, y.size)), ("binary_proba", ones, sizes)):
        rows = [i for i, label in enumerate(labels) if label.startswith(f"{name}[")]
        low, high = proportion.proportion_confint(count, nobs, alpha=alpha, method="normal")
        np.testing.assert_allclose(bounds[rows], np.column_stack([low, high]), rtol=1e-12, atol=1e-14)
    z = scipy.stats.norm.ppf(1 - alpha / 2)
    a_row = labels.index("binary_proba[A, b0]")
    assert bounds[a_row, 0] == 0.0 and approximation.params[a_row] - z * approximation.bse[a_row] < 0
    assert bounds[labels.index("binary_proba[E, b0]"), 1] == 1.0
    # the MLE variance's se is variance * sqrt(2 / N_c): class D's (3 rows) interval would reach below 0
    rows = [labels.index(f"gaussian_variance[{name}, g0]") for name in "ABCDE"]
    variance = approximation.params[rows]
    half = z * variance * np.sqrt(2 / sizes)
    np.testing.assert_allclose(bounds[rows], np.column_stack([np.maximum(variance - half, 0.0), variance + half]))
    assert bounds[rows[3], 0] == 0.0 and variance[3] - half[3] < 0
    mean_rows = [labels.index(f"gaussian_mean[{name}, g0]") for name in "ABCDE"]  # no support: not clipped
    np.testing.assert_allclose(bounds[mean_rows, 0], approximation.params[mean_rows] - z * approximation.bse[mean_rows])
    # the support travels with the stored covariance; a result stored before it had none is read unclipped
    estimate, stored = NaiveBayes().point_estimate(data, "mle"), approximation.to_dataset()
    np.testing.assert_array_equal(GaussianApproximation.from_dataset(stored, estimate).conf_int(alpha), bounds)
    unclipped = GaussianApproximation.from_dataset(stored.drop_vars("support"), estimate).conf_int(alpha)
    assert unclipped[a_row, 0] < 0 and unclipped[rows[3], 0] < 0


def _numerical_covariance(data: Dataset, kind: str, prior: NaiveBayesPrior, labels: tuple[str, ...]) -> np.ndarray:
    """The covariance rebuilt block by block from numerical Hessians of objectives written here with scipy.stats.

    Simplex blocks (class prior, each binary probability with its complement, each class's levels of a
    categorical feature, each class's word shares): -log multinomial(counts | theta) (- log Dirichlet(theta |
    prior)) in the free coordinates theta_1..theta_{L-1}, inverted and mapped back by B = [I; -1']. Gaussian
    blocks: -sum log N(x_k | mu, v) over the class's raw rows (- log InvGamma(v) - log N(mu | m0, v / kappa0)) in
    (mu, v). Everything else 0: the blocks are independent.
    """
    index = {label: i for i, label in enumerate(labels)}
    expected = np.zeros((len(labels), len(labels)))
    classes = data.class_names
    onehot = _onehot(data)
    rows_of = onehot.sum(axis=0)
    binary, categorical, words = (_columns(data, kind_) for kind_ in ("binary", "categorical", "count"))

    def put(names: list[str], block: np.ndarray) -> None:
        at = [index[name] for name in names]
        expected[np.ix_(at, at)] = block

    def simplex(counts: np.ndarray, concentration: float) -> np.ndarray:
        a = counts if kind == "mle" else counts + concentration - 1  # the estimate, written here: a / sum a
        estimate = a / a.sum()

        def neg_log(free: np.ndarray) -> np.ndarray:
            theta = np.concatenate([free, 1.0 - free.sum(axis=-1, keepdims=True)], axis=-1)
            value = -scipy.stats.multinomial.logpmf(counts, counts.sum(), theta)
            if kind == "map":
                components = np.moveaxis(theta, -1, 0)
                value = value - scipy.stats.dirichlet.logpdf(
                    components.reshape(len(counts), -1), np.full(len(counts), concentration)
                ).reshape(components.shape[1:])
            return value

        to_full = np.vstack([np.eye(len(counts) - 1), -np.ones((1, len(counts) - 1))])
        return to_full @ _inverse_hessian(neg_log, estimate[:-1], 0.2 * estimate.min()) @ to_full.T

    put([f"class_prior[{c}]" for c in classes], simplex(rows_of, prior.class_concentration))
    for c, name in enumerate(classes):
        for i, feature in enumerate(("b0", "b1")):  # Bernoulli = two-level simplex (ones, zeros); Beta prior
            ones = binary[data.y == c, i].sum()
            a, b = (prior.binary_alpha, prior.binary_beta) if kind == "map" else (1.0, 1.0)
            p_hat = (ones + a - 1) / (rows_of[c] + a + b - 2)

            def neg_log(p, ones=ones, n=rows_of[c], a=a, b=b):
                value = -scipy.stats.binom.logpmf(ones, n, p[..., 0])
                return value - scipy.stats.beta.logpdf(p[..., 0], a, b) if kind == "map" else value

            put(
                [f"binary_proba[{name}, {feature}]"],
                _inverse_hessian(neg_log, np.array([p_hat]), 0.05 * min(p_hat, 1 - p_hat)),
            )
        for j, levels in enumerate(LEVELS):
            counts = (categorical[data.y == c, j][:, None] == np.arange(levels)).sum(axis=0).astype(float)
            put(
                [f"category_proba[{name}, c{j}={level}]" for level in range(levels)],
                simplex(counts, prior.category_concentration),
            )
        put(
            [f"count_proba[{name}, w{v}]" for v in range(3)],
            simplex(words[data.y == c].sum(axis=0), prior.count_concentration),
        )
        for g, feature in enumerate(("g0", "g1")):
            put(
                [f"gaussian_mean[{name}, {feature}]", f"gaussian_variance[{name}, {feature}]"],
                _gaussian_block(data, kind, prior, c, g),
            )
    return expected


def _gaussian_block(data: Dataset, kind: str, prior: NaiveBayesPrior, c: int, g: int) -> np.ndarray:
    x = _columns(data, "continuous")
    pooled_mean, pooled_var = x[:, g].mean(), x[:, g].var()
    rows = x[data.y == c, g]
    kappa_n = prior.mean_strength + rows.size
    if kind == "mle":
        mode = np.array([rows.mean(), rows.var()])
    else:  # Normal-Inverse-Gamma mode, written here
        m_n = (prior.mean_strength * pooled_mean + rows.sum()) / kappa_n
        b_n = (
            prior.variance_beta * pooled_var
            + ((rows - rows.mean()) ** 2).sum() / 2
            + prior.mean_strength * rows.size * (rows.mean() - pooled_mean) ** 2 / (2 * kappa_n)
        )
        mode = np.array([m_n, b_n / (prior.variance_alpha + rows.size / 2 + 1.5)])

    def neg_log(theta: np.ndarray) -> np.ndarray:
        mu, v = theta[..., 0], theta[..., 1]
        value = -scipy.stats.norm.logpdf(rows.reshape(-1, *([1] * mu.ndim)), mu, np.sqrt(v)).sum(axis=0)
        if kind == "map":
            value = value - scipy.stats.invgamma.logpdf(v, prior.variance_alpha, scale=prior.variance_beta * pooled_var)
            value = value - scipy.stats.norm.logpdf(mu, pooled_mean, np.sqrt(v / prior.mean_strength))
        return value

    scale = np.array([np.sqrt(mode[1]), mode[1]])  # differences in units of sd and of the variance
    unit = _inverse_hessian(lambda theta: neg_log(theta * scale), mode / scale, 0.3)
    return scale[:, None] * unit * scale[None, :]


@pytest.mark.parametrize(("kind", "prior"), [("mle", NaiveBayesPrior()), ("map", PRIOR)])
def test_covariance_equals_the_inverse_numerical_hessian_block_by_block(kind, prior):
    """Every element of the covariance, zeros between blocks included, against objectives written from scratch."""
    data = _mixed()
    model = NaiveBayes(prior=prior)
    approximation = model.gaussian_approximation(data, kind)
    expected = _numerical_covariance(data, kind, prior, approximation.labels)
    np.testing.assert_allclose(
        approximation.params, model.point_estimate(data, kind).pipe(flatten_parameters, approximation.names)
    )
    scale = np.sqrt(np.outer(np.diag(expected), np.diag(expected)))
    relative = np.abs(approximation.covariance - expected) / np.where(scale > 0, scale, 1.0)
    assert relative.max() < 1e-6, approximation.labels[int(np.unravel_index(relative.argmax(), relative.shape)[0])]
    assert (np.diag(expected) > 0).all()


def test_map_with_the_uniform_default_priors_has_the_mle_covariance():
    data = _mixed()
    model = NaiveBayes()
    mle, map_ = model.gaussian_approximation(data, "mle"), model.gaussian_approximation(data, "map")
    probabilities = [i for i, label in enumerate(mle.labels) if not label.startswith("gaussian_")]
    np.testing.assert_allclose(
        map_.covariance[np.ix_(probabilities, probabilities)], mle.covariance[np.ix_(probabilities, probabilities)]
    )
    assert map_.curvature.startswith("inverse Hessian of the negative log posterior at the MAP")
    assert mle.curvature.startswith("inverse observed information at the MLE")


@pytest.mark.parametrize("kind", ["posterior_mean", "unbiased"])
def test_estimates_that_are_not_extrema_state_no_curvature(kind):
    assert NaiveBayes().gaussian_approximation(_mixed(), kind) is None


def test_too_many_parameters_for_a_dense_covariance_give_none(monkeypatch):
    data = _mixed()
    monkeypatch.setattr(naive_bayes, "MAX_COVARIANCE_PARAMETERS", 10)
    with pytest.warns(UserWarning, match="no standard errors or Wald intervals for it"):
        assert NaiveBayes().gaussian_approximation(data, "mle") is None
    assert NaiveBayes().point_estimate(data, "mle") is not None


# -- boundary estimates ------------------------------------------------------------------------------------------


def test_boundary_probabilities_get_variance_zero_and_are_named():
    """Transport: no car in the rain, always walking in the rain: MLE 0 and 1, degenerate intervals, flagged."""
    data = load("transport")
    approximation = NaiveBayes().gaussian_approximation(data, "mle")
    labels = list(approximation.labels)
    zero = labels.index("binary_proba[car, Raining=yes]")
    one = labels.index("binary_proba[walk, Raining=yes]")
    for index, value in ((zero, 0.0), (one, 1.0)):
        assert approximation.params[index] == value
        assert approximation.bse[index] == 0.0
        assert np.abs(approximation.covariance[index]).max() == 0.0
        np.testing.assert_array_equal(approximation.conf_int(0.05)[index], [value, value])
        low, high = proportion.proportion_confint(int(value * 2), 2, method="normal")  # statsmodels agrees
        assert (low, high) == (value, value)
    assert "binary_proba[car, Raining=yes]" in approximation.curvature
    assert "estimated at exactly 0 or 1" in approximation.curvature
    assert np.isfinite(approximation.covariance).all()
    # the others keep their positive variances
    inside = [i for i, value in enumerate(approximation.params) if 0 < value < 1 and "proba" in labels[i]]
    assert (approximation.bse[inside] > 0).all()


def test_map_mode_on_the_boundary_is_flagged_and_interior_mode_is_not():
    data = load("transport")
    uniform = NaiveBayes().gaussian_approximation(data, "map")  # concentration 1 + count 0: the mode is at 0
    assert "estimated at exactly 0 or 1" in uniform.curvature
    smoothed = NaiveBayes(prior=NaiveBayesPrior(binary_alpha=2, binary_beta=2, class_concentration=2))
    inside = smoothed.gaussian_approximation(data, "map")
    assert "boundary" not in inside.curvature
    assert (inside.bse > 0).all()


def test_boundary_fit_saves_loads_and_compares(tmp_path):
    data = load("transport")
    sampler = SamplerSettings(draws=100, chains=2)
    result = fit(NaiveBayes(), data, method="exact", sampler=sampler, standardize=False, random_seed=0)  # raw rows
    assert f"{COVARIANCE_GROUP_PREFIX}mle" in result.children
    assert f"{COVARIANCE_GROUP_PREFIX}map" in result.children
    assert f"{COVARIANCE_GROUP_PREFIX}posterior_mean" not in result.children
    path = tmp_path / "nb.nc"
    save(result, path)
    loaded = load_result(path)
    stored = gaussian_approximation(loaded, "mle")
    np.testing.assert_allclose(stored.covariance, NaiveBayes().gaussian_approximation(data, "mle").covariance)
    rows = {row["parameter"]: row for row in parameter_comparison(loaded, interval_prob=0.95)}
    car = rows["binary_proba[car, Raining=yes]"]
    assert (car["mle"], car["mle_se"], car["mle_low"], car["mle_high"]) == (0.0, 0.0, 0.0, 0.0)
    assert car["high"] > 0.0  # the posterior's interval is not degenerate
    bike = rows["class_prior[bike]"]
    low, high = proportion.proportion_confint(4, 10, alpha=0.05, method="normal")
    assert bike["mle_low"] == pytest.approx(low, abs=1e-14) and bike["mle_high"] == pytest.approx(high, abs=1e-14)
    assert rows["gaussian_variance[bike, Distance]"]["map_se"] > 0


def test_compare_prints_standard_errors_and_explains_a_zero_one(capsys):
    from tests.bad_inputs.harness import run

    code = run(
        "compare", "--model", "naive_bayes", "--data", "penguins", "--missing", "drop", "--method", "exact",
        "--draws", "100", "--chains", "2", "--seed", "0",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("parameter"))
    assert header.count("SE") == 2 and header.count("Wald") == 2  # MLE and MAP; none for the others
    island = next(line for line in out.splitlines() if line.startswith("category_proba[Gentoo, island=Dream]"))
    assert "[0, 0]" in island  # never seen on Dream: a degenerate interval ...
    assert "SE 0: the estimate lies on its parameter's boundary" in out  # ... explained


# -- Monte-Carlo ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_mle_sampling_sd_matches_its_standard_error_and_wald_covers():
    """1000 data sets of 400 rows from a known truth: sd of each MLE over them vs the rms of its standard error."""
    truth = {
        "class_prior": np.array([0.6, 0.4]),
        "binary": np.array([0.3, 0.7]),
        "levels": np.array([[0.2, 0.5, 0.3], [0.5, 0.25, 0.25]]),
        "mean": np.array([0.0, 1.5]),
        "sd": np.array([1.0, 2.0]),
    }
    rng = np.random.default_rng(27)
    model = NaiveBayes()
    R, n = 1000, 400
    estimates, errors = [], []
    for _ in range(R):
        y = rng.choice(2, size=n, p=truth["class_prior"])
        X = np.column_stack(
            [
                rng.random(n) < truth["binary"][y],
                (rng.random(n)[:, None] > np.cumsum(truth["levels"], axis=1)[y]).sum(axis=1),
                rng.normal(truth["mean"][y], truth["sd"][y]),
            ]
        ).astype(float)
        data = Dataset(
            name="mc",
            X=X,
            y=y,
            feature_names=("b", "c", "g"),
            class_names=("A", "B"),
            feature_kinds=("binary", "categorical", "continuous"),
        )
        approximation = model.gaussian_approximation(data, "mle")
        estimates.append(approximation.params)
        errors.append(approximation.bse)
    labels = approximation.labels
    estimates, errors = np.array(estimates), np.array(errors)
    ratio = estimates.std(axis=0, ddof=1) / np.sqrt((errors**2).mean(axis=0))
    # the sd of R draws has relative MC error ~ 1 / sqrt(2 (R - 1)) (heavier for the variance: kurtosis)
    tolerance = 4.0 / np.sqrt(2 * (R - 1))
    assert np.abs(ratio - 1).max() < 1.5 * tolerance, dict(zip(labels, ratio.round(3), strict=True))
    assert abs(ratio.mean() - 1) < tolerance
    true_values = np.concatenate(
        [truth["class_prior"], truth["binary"], truth["levels"].ravel(), truth["mean"], truth["sd"] ** 2]
    )
    covered = np.abs(estimates - true_values) <= scipy.stats.norm.ppf(0.975) * errors
    coverage = covered.mean(axis=0)
    # binomial sd of a coverage over R sets: sqrt(.95 .05 / R) ~ 0.0097; Wald is a little liberal at n = 400
    assert np.abs(coverage - 0.95).max() < 0.04, dict(zip(labels, coverage, strict=True))


# -- intervals of the class probabilities ----------------------------------------------------------------------


def _numerical_delta_bounds(model, estimate, approximation, X, interval_prob):
    """The logit-scale delta method with a central-difference gradient, written here from ``class_proba``."""
    names, values = approximation.names, approximation.params
    sizes = [estimate[name].size for name in names]

    def logit_proba(flat):
        params = estimate.copy(deep=True)
        for name, part in zip(names, np.split(flat, np.cumsum(sizes)[:-1]), strict=True):
            params[name] = (estimate[name].dims, part.reshape(estimate[name].shape))
        p = model.class_proba(params, X).values
        return np.log(p) - np.log1p(-p)

    centre = logit_proba(values)
    active = np.flatnonzero(approximation.bse > 0)
    steps = 1e-5 * approximation.bse
    jacobian = np.stack(
        [
            (
                logit_proba(values + steps[j] * np.eye(values.size)[j])
                - logit_proba(values - steps[j] * np.eye(values.size)[j])
            )
            / (2 * steps[j])
            for j in active
        ],
        axis=-1,
    )
    covariance = approximation.covariance[np.ix_(active, active)]
    half = scipy.stats.norm.ppf(0.5 + interval_prob / 2) * np.sqrt(
        np.einsum("nka,ab,nkb->nk", jacobian, covariance, jacobian)
    )
    return scipy.special.expit(centre - half), scipy.special.expit(centre + half)


@pytest.mark.parametrize(("kind", "prior"), [("mle", NaiveBayesPrior()), ("map", PRIOR)])
def test_probability_intervals_equal_a_numerical_delta_method(kind, prior):
    data = _mixed()
    model = NaiveBayes(prior=prior)
    estimate, approximation = model.point_estimate(data, kind), model.gaussian_approximation(data, kind)
    X = data.X[:40]
    low, high = model.class_proba_interval_kernel(estimate, approximation, 0.9)(X)
    expected_low, expected_high = _numerical_delta_bounds(model, estimate, approximation, X, 0.9)
    np.testing.assert_allclose(low, expected_low, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(high, expected_high, rtol=1e-6, atol=1e-9)
    proba = model.class_proba(estimate, X).values
    assert (low < proba).all() and (proba < high).all() and (low > 0).all() and (high < 1).all()


@pytest.mark.parametrize("data_name", ["mixed", "transport"])
def test_probability_intervals_equal_the_generic_central_difference_default(data_name):
    """The family's exact gradient against the generic default (``models/_delta.py``, where it exists)."""
    delta = pytest.importorskip("bayesclass.models._delta")
    data = _mixed() if data_name == "mixed" else load("transport")
    model = NaiveBayes(prior=PRIOR)
    for kind in ("mle", "map"):
        estimate, approximation = model.point_estimate(data, kind), model.gaussian_approximation(data, kind)
        ours = model.class_proba_interval_kernel(estimate, approximation, 0.95)(data.X)
        generic = delta.delta_method_bounds(model.class_proba_kernel, estimate, approximation, 0.95)(data.X)
        np.testing.assert_allclose(ours, generic, atol=1e-7)


def test_probability_intervals_at_the_boundary_are_degenerate_and_never_nan():
    """Transport: the MLE never sees a car in the rain, so P(car | rain) = 0 exactly, with the interval [0, 0]."""
    data = load("transport")
    model = NaiveBayes()
    estimate, approximation = model.point_estimate(data, "mle"), model.gaussian_approximation(data, "mle")
    rows = np.array([[1.0, 1.0, 0.0], [10.0, 1.0, 0.0], [3.0, 0.0, 0.0]])  # raining, raining, dry
    low, high = model.class_proba_interval_kernel(estimate, approximation, 0.95)(rows)
    proba = model.class_proba(estimate, rows).values
    car = list(data.class_names).index("car")
    assert (proba[:2, car] == 0).all() and (low[:2, car] == 0).all() and (high[:2, car] == 0).all()
    assert np.isfinite(low).all() and np.isfinite(high).all()
    assert ((low <= proba) & (proba <= high)).all()
    assert high[2, car] > low[2, car]  # a dry day: a real interval


def test_probability_intervals_of_a_row_do_not_depend_on_the_rows_beside_it():
    """Each row's interval depends on that row only (up to the family kernel's BLAS rounding; prediction's fixed
    tiles make the written CSV byte-identical for any --chunk-rows)."""
    data = _mixed()
    model = NaiveBayes(prior=PRIOR)
    estimate, approximation = model.point_estimate(data, "map"), model.gaussian_approximation(data, "map")
    bounds = model.class_proba_interval_kernel(estimate, approximation, 0.89)
    together = bounds(data.X)
    one_by_one = [bounds(data.X[i : i + 1]) for i in range(0, data.n_obs, 37)]
    for position, (low, high) in zip(range(0, data.n_obs, 37), one_by_one, strict=True):
        np.testing.assert_allclose(low[0], together[0][position], rtol=0, atol=1e-13)
        np.testing.assert_allclose(high[0], together[1][position], rtol=0, atol=1e-13)


def test_cli_predict_writes_the_intervals_the_same_for_any_chunk_size(tmp_path):
    from tests.bad_inputs.harness import run

    result = fit(NaiveBayes(), load("penguins", missing="drop"), method="mle")
    save(result, tmp_path / "nb.nc")
    written = []
    for chunk_rows in ("1", "7", "1000"):
        out = tmp_path / f"p{chunk_rows}.csv"
        argv = ["predict", "--run", str(tmp_path / "nb.nc"), "--data", "penguins", "--missing", "drop"]
        assert run(*argv, "--out", str(out), "--chunk-rows", chunk_rows, "--no-progress") == 0
        written.append(out.read_bytes())
    assert written[0] == written[1] == written[2]
    header = written[0].decode().splitlines()[0].split(",")
    assert header[:3] == ["p_Adelie", "p_Adelie_mle_low", "p_Adelie_mle_high"]
