r"""The ``laplace`` method: independent draws from the Laplace (Gaussian) approximation of the posterior.

For a family whose MAP has a Gaussian approximation over unconstrained parameters
(:meth:`~bayesclass.models.base.ClassifierModel.has_laplace`), the posterior is approximated by

.. math::

    p(\theta \mid y) \approx \mathcal N\!\left(\hat\theta_{MAP},\; H^{-1}\right), \qquad
    H = -\nabla^2 \log p(\theta \mid y)\big|_{\hat\theta_{MAP}},

and ``chains x draws`` independent draws are taken from it with a NumPy ``Generator`` seeded by ``random_seed``
(same seed, same draws). The covariance may be singular by construction (softmax weights and intercepts sum to
zero over the classes): the draws are :math:`\hat\theta + U \sqrt{S}\, z` with :math:`U S U^\top` the symmetric
eigendecomposition of the covariance, the eigenvalues below :math:`p\,\varepsilon \max S` set to zero, so every
draw stays in the covariance's range (it sums to zero where the mode does). The draws are laid out as NUTS's
(variables and dims of :meth:`~bayesclass.models.base.ClassifierModel.parameter_names`, then ``chain``, ``draw``),
so prediction, scores, LOO, reports and studies treat them as any posterior draws; they are independent, so no
convergence verdict applies.

A family with constrained parameters (probabilities, scales) supplies its approximation in an unconstrained space
and the map back (:meth:`~bayesclass.models.base.ClassifierModel.laplace_approximation`,
:meth:`~bayesclass.models.base.ClassifierModel.laplace_parameters`); the draws are taken there and mapped. Naive
Bayes and gcc declare the generic one (``laplace_space = "transformed"``,
:mod:`bayesclass.models._transformed_laplace`): the mode and exact inverse Hessian of the log density over
their PyMC model's value variables (log-odds, simplex, log, LKJ-Cholesky transforms; the Jacobian included),
each draw mapped back as PyMC's transforms map it. Both state that density themselves
(:meth:`~bayesclass.models.base.ClassifierModel.laplace_log_density`: naive Bayes's in closed form, gcc's in
numpy with an exact gradient and a finite-difference Hessian), so no Hessian graph is compiled: 0.25-0.7 s a fit
of 40 rows on a loaded machine, where compiling took 5-30 s (up to about 540 s under load).

It is an approximation: it is centred at the mode, not the mean, and symmetric, so where the posterior is skewed
(few rows, near separation) its mean and spread differ from NUTS's. Measured (logit, 4 x 1000 draws of each,
max over the parameters of |mean difference| / NUTS posterior sd, and laplace sd / NUTS sd): 200 rows of seed
001's Gaussians, 0.14 and 0.99-1.02; breast cancer (569 rows, 30 standardised features), 0.39 and 0.95-1.05;
Spector & Mazzeo (32 rows, default prior) 0.25 and 0.93-0.99, with a prior sd of 1000 (4 x 2000 draws) 0.58
and 0.87-0.88: NUTS's intercept mean is -16.3 where the MAP is -13.0, its sds 1.13-1.15 times the Laplace ones.
Against the exact conjugate posteriors (4 x 1000 draws of each, 70% of the rows): naive Bayes on iris, wine and
breast cancer 0.28, 0.26, 0.16 and 0.86-1.03; on penguins 0.87 and 0.89-1.93 (category_proba of the two classes in
which a level of island never occurs: there the Laplace over the log-gamma weights is 1.8-1.9 times too wide);
digits (650 parameters) as counts 0.79 and 0.95-3.06, binarised 0.74 and 0.96-2.40 (pixels never lit in a class: a
probability near 0 whose logistic-normal approximation is too wide; the median over the parameters 0.03 and 0.15);
gcc with the inverse-Wishart prior on iris 0.48 and 0.86-1.02, on wine (13 features) 0.96 and 0.75-1.01, on breast
cancer (30 features) 1.10 and 0.83-0.99 (an inverse-Wishart's mean exceeds its mode by the factor (nu + d + 1) / (nu
- d - 1), a skew that grows with the dimension d and that a Gaussian over the Cholesky factor's coordinates does not
reproduce); seed 001's Gaussians at 20, 40, 200, 1000 training rows 0.36, 0.37, 0.18, 0.11 (naive Bayes) and 0.51,
0.41, 0.21, 0.11 (gcc), smallest sd ratios 0.54, 0.73, 0.94, 0.97 and 0.68, 0.80, 0.93, 0.97. The held-out log
losses differ by at most 0.05 (breast cancer, naive Bayes: 1.069 Laplace, 1.118 exact), mostly by under 0.01.
Against NUTS (4 x 1000 draws, iris, 105 training rows): gcc with its default LKJ prior (no exact posterior) 0.45 and
0.88-1.03, held-out log loss 0.0165 Laplace, 0.0176 NUTS; naive Bayes 0.24 and 0.86-1.02, 0.0619 and 0.0636.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.inference.engines.sampler import Sampler, SamplerRun, kept_draws
from bayesclass.inference.engines.sampling import SamplerSettings

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_import("xarray")

__all__ = ["SAMPLER", "gaussian_draws"]


def gaussian_draws(mean: np.ndarray, covariance: np.ndarray, size: tuple[int, ...], random_seed: int) -> np.ndarray:
    """Draws from N(``mean``, ``covariance``) for a positive semi-definite (possibly singular) covariance.

    Parameters
    ----------
    mean : numpy.ndarray of shape (p,)
        The mean.
    covariance : numpy.ndarray of shape (p, p)
        A symmetric positive semi-definite covariance.
    size : tuple of int
        The leading shape of the draws (``(chains, draws)``).
    random_seed : int
        Seed of a :func:`numpy.random.default_rng` generator.

    Returns
    -------
    numpy.ndarray of shape (*size, p)
        The draws, each in ``mean`` plus the range of ``covariance``.

    Raises
    ------
    ValueError
        A covariance that is not finite or has a clearly negative eigenvalue.
    """
    covariance = np.asarray(covariance, dtype=float)
    if not np.isfinite(covariance).all():
        raise ValueError("the Laplace covariance holds NaN or inf: the Hessian at the MAP is singular")
    eigenvalues, eigenvectors = np.linalg.eigh(0.5 * (covariance + covariance.T))
    cutoff = len(mean) * np.finfo(float).eps * max(float(np.abs(eigenvalues).max(initial=0.0)), np.finfo(float).tiny)
    if (eigenvalues < -cutoff * 1e6).any():
        raise ValueError(
            f"the Laplace covariance is not positive semi-definite (eigenvalue {eigenvalues.min():.3g}): "
            "the MAP is not a maximum of the posterior"
        )
    root = eigenvectors * np.sqrt(np.where(eigenvalues > cutoff, eigenvalues, 0.0))
    standard = np.random.default_rng(random_seed).standard_normal((*size, len(mean)))
    return np.asarray(mean) + standard @ root.T


def _unflattened(flat: np.ndarray, mode: xr.Dataset, names: tuple[str, ...]) -> xr.Dataset:
    """Draws ``(chain, draw, p)`` as one variable per name, each of its mode's dims after ``chain``, ``draw``."""
    variables = {}
    start = 0
    for name in names:
        template = mode[name]
        stop = start + template.size
        values = flat[..., start:stop].reshape(*flat.shape[:2], *template.shape)
        variables[name] = (("chain", "draw", *template.dims), values)
        start = stop
    return xr.Dataset(variables, coords={"chain": np.arange(flat.shape[0]), "draw": np.arange(flat.shape[1])})


def _run(model: Any, training: Dataset, settings: SamplerSettings, random_seed: int) -> SamplerRun:
    start = time.perf_counter()
    draw_count = settings.resolved_counts()[0]
    mode, approximation = model.laplace_approximation(training)
    size = (settings.chains, draw_count)
    flat = gaussian_draws(approximation.params, approximation.covariance, size, random_seed)
    draws = _unflattened(flat, mode, approximation.names)
    posterior = model.laplace_parameters(draws, training)
    return SamplerRun(
        posterior=posterior,
        sampler_settings={"draws": draw_count, "chains": settings.chains},
        sampling_seconds=time.perf_counter() - start,
    )


def _values_per_draw(model: Any, training: Dataset) -> int:
    """Values per draw: from the family's declared density where it has one (no PyMC model built, nor imported)."""
    from bayesclass.inference._memory import parameter_values

    declared = model.laplace_log_density(training) if model.laplace_space == "transformed" else None
    if declared is None:
        return parameter_values(model, training)
    return sum(int(np.size(values)) for values in declared.parameters(declared.initial[np.newaxis]))


SAMPLER = Sampler(
    name="laplace",
    description="independent draws from the Laplace approximation N(MAP, inverse Hessian) of the posterior",
    accepts=lambda model: model.has_laplace(),
    run=_run,
    independent_draws=True,
    settings=("draws", "chains"),
    stored_steps=kept_draws,
    values_per_draw=_values_per_draw,
)
