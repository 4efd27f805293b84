r"""Latent Gaussian-process classification (seed 004 "Gaussian Process Models for Classification").

Registered as ``gp`` (CLI ``bayesclass fit --model gp --link logit|probit``); methods
``gibbs`` (exact data-augmentation MCMC, :mod:`bayesclass.inference.engines.gibbs`), ``nuts`` (MCMC over the
latents and the hyperparameters), ``laplace`` (independent draws of the latents from the Laplace Gaussian, the
hyperparameters at type-II maximum likelihood) and ``map`` (the Laplace approximation with type-II
maximum-likelihood hyperparameters, the "closed-form" side).

Default method (``method="auto"``, :meth:`LatentGaussianProcess.default_method_for`): ``gibbs`` where its work per
kept draw, (inputs + 2) x rows^3 (HSGP: x (basis functions + 1)^3 x 3, the thinning), is at most
:data:`GIBBS_MAX_SWEEP_WORK` = 4e8, else ``laplace``. Step 2 of a sweep factors one rows x rows matrix per slice
evaluation, about 5 per hyperparameter in the burn-in and 2-3 after it (its brackets adapted); measured on 2 cores
before that adaptation, a sweep takes 17 ms for seed 004 at 400 rows of one
input and 93 ms for breast_cancer's 341 rows of 30 inputs, whose default Gibbs fit (4 chains of 1,500 sweeps) takes
~5 min against ~9 s for ``laplace``. The bound keeps every exact GP of one input (up to 500 rows) on Gibbs, and up to
8 inputs at 341 rows. A laplace fit chosen so records why (``method_note``, printed by ``fit`` and in reports);
``method="gibbs"`` is always honoured.
Binary labels; inputs should be standardised (the default ``standardize=True``; not ``--no-standardize``),
since the priors are stated in standard deviations of the inputs.

Model
-----
.. math::

    f \sim GP(0, K_\theta), \qquad z_i = f(x_i), \qquad
    y_i \mid z_i \sim \text{Bernoulli}(g^{-1}(z_i)),

with :math:`g^{-1}` the logistic function (``link="logit"``) or the normal CDF
:math:`\Phi` (``link="probit"``) and the covariance function of seed 004's
illustration, a constant plus a squared exponential with one lengthscale per input
(ARD),

.. math::

    K(x, x') = c^2 + a^2 \exp\Big(-\tfrac12 \sum_j (x_j - x'_j)^2 / \ell_j^2\Big)

(seed 004: :math:`0.5^2 + 3^2 \exp(-5^2 (x - x')^2)`, i.e. :math:`c = 0.5`, :math:`a = 3`,
:math:`\ell = 1/\sqrt{50}`), or a Matérn 5/2 term in place of the squared exponential.

Laplace approximation (seed 004 "Approximate their posterior distribution by a Gaussian")
---------------------------------------------------------------------------------------------
For fixed :math:`\theta` the latent posterior :math:`p(\mathbf z \mid \mathbf y)` is
replaced by :math:`\mathcal N(\hat{\mathbf z}, (K^{-1} + W)^{-1})` at its mode
:math:`\hat{\mathbf z}`, with :math:`W = -\nabla\nabla \log p(\mathbf y \mid \hat{\mathbf z})`
(diagonal); both likelihoods are log-concave, so Newton's method (Rasmussen & Williams,
*GPML*, Algorithm 3.1, in the numerically stable form with
:math:`B = I + W^{1/2} K W^{1/2}`) converges to the unique mode. At a new input the latent
is :math:`\mathcal N(\mathbf k_*^\top \nabla \log p(\mathbf y \mid \hat{\mathbf z}),\;
k_{**} - \mathbf v^\top \mathbf v)`, :math:`\mathbf v = L^{-1} W^{1/2} \mathbf k_*` (Algorithm 3.2),
and the class probability averages the link over it:
:math:`\Phi(\mu / \sqrt{1 + s^2})` exactly for probit; for logit
:math:`\int \sigma(z) \mathcal N(z \mid \mu, s^2) dz` by Gauss-Hermite quadrature (16-64 nodes) for :math:`s \le 2`
and above by the trapezoidal rule over :math:`L` in :math:`E_L[\Phi((\mu - L) / s)]`, :math:`L \sim` Logistic(0, 1)
(within 2e-8 at any :math:`\mu, s`)
(scikit-learn instead approximates the sigmoid by five error functions, Williams &
Barber 1998, which differs by < 1e-3).

Its uncertainty (:meth:`LatentGaussianProcess.gaussian_approximation`): the ``map`` estimate's covariance is
that Gaussian, :math:`(K^{-1} + W)^{-1}` over the latent values at the training inputs (HSGP: the weight-space
covariance of the basis weights), with the hyperparameters held at their type-II maximum-likelihood values
(empirical Bayes: their uncertainty is not included, and they get no standard error). The interval of
:math:`g^{-1}(f_*)` at a new input is :math:`[g^{-1}(m - z s), g^{-1}(m + z s)]` with :math:`m, s^2` the Laplace
predictive mean and variance above (:meth:`LatentGaussianProcess.class_proba_interval_kernel`), and
``method="laplace"`` draws the latents from the Gaussian, the hyperparameters fixed, in the Gibbs sampler's layout
(bench/bench_gp_laplace.py, 4 x 1000 Laplace draws vs the Gibbs defaults, on held-out rows; mean and max
:math:`|\Delta P(y = 1)|`, held-out log loss Laplace vs Gibbs, mean width of the 89% ETI of P(y = 1) Laplace vs Gibbs:
seed 004 with 180 training rows 0.009 / 0.032, 0.295 vs 0.299, 0.193 vs 0.174; the same with probit 0.013 / 0.070,
0.163 vs 0.152, 0.175 vs 0.131; penguins' sex on 200 rows 0.014 / 0.071, 0.258 vs 0.257, 0.141 vs 0.157; seed 004
with 36 training rows 0.035 / 0.088, 0.624 vs 0.621, 0.370 vs 0.414; HSGP on 900 rows of seed 004 0.004 / 0.012,
0.198 vs 0.199, 0.068 vs 0.062). Not the posterior: where the hyperparameters
are poorly determined (few rows, labels nearly all of one class) their type-II ML values can run far out, and the
Laplace Gaussian with them (``seed004_gp(100, random_seed=0)``, 93 of 100 labels 0, unstandardised: amplitude 110,
constant 112, latent sds about 120).

Type-II maximum likelihood maximises that Laplace evidence over
:math:`\log\theta` by L-BFGS with its exact gradient (GPML Algorithm 5.1, including
the change of the mode with :math:`\theta`; Newton warm-started from the previous mode).

Sampling (seed 004 "Implementing the model with Latent Variables")
-----------------------------------------------------------------------
NUTS samples :math:`\theta = (\ell, a, c)` and the whitened latents
:math:`\mathbf u \sim \mathcal N(0, I)`, :math:`\mathbf z = L_\theta \mathbf u`,
:math:`L_\theta L_\theta^\top = K_\theta(X, X)` (non-centred: the centred form has a funnel
between :math:`\theta` and :math:`\mathbf z`). Every gradient needs :math:`L_\theta` and the
derivative of :math:`L_\theta \mathbf u` with respect to :math:`\theta`; :class:`WhitenedLatent`
builds :math:`K_\theta`, factors it and differentiates in one numba kernel: one triangular inverse
and one matrix product, with the amplitude and constant gradients in O(n^2) from the structure of
K (see the comment above the Op), instead of PyTensor's generic Cholesky gradient (two n x n
triangular solves and a dense product) and a dozen n x n temporaries for the kernel. The kernel
constant :math:`c^2` stays inside K (an explicit offset :math:`c\,b`, :math:`b \sim \mathcal N(0, 1)`,
formed a banana with :math:`c` on which NUTS diverged). Priors, for standardised inputs (:class:`GaussianProcessPrior`):
:math:`\ell_j^{-1/2} \sim \text{Exponential}(\lambda)`, the penalised-complexity prior with base model
"input j switched off" (:math:`\ell_j = \infty`; Fuglstad et al. 2019), :math:`\lambda` from
:math:`P(\ell_j < 0.2) = 0.05`, or (``lengthscale_prior="inverse_gamma"``)
:math:`\ell_j \sim \text{InverseGamma}(3, 2)`;
:math:`a \sim \text{HalfNormal}(3)`, :math:`c \sim \text{HalfNormal}(1)`.

Hilbert-space approximation (HSGP)
----------------------------------
Above :data:`EXACT_UP_TO` rows (or with ``approximation="hsgp"``) the stationary term is
replaced by its reduced-rank expansion on the Dirichlet Laplacian eigenfunctions of the box
:math:`[-L, L]^d` (Solin & Saerkkae 2020; Riutort-Mayol et al. 2023; PyMC's ``pm.gp.HSGP``,
whose eigenvalues and spectral densities are used):
:math:`f(x) \approx \beta_0 + \sum_{j=1}^{m^d} \beta_j \phi_j(x)`,
:math:`\beta_j \sim \mathcal N(0, a^2 S_\ell(\omega_j))`, :math:`\beta_0 \sim \mathcal N(0, c^2)`.
A gradient costs O(n m^d) instead of O(n^3). The basis is data of the compiled model (computed
once in NumPy, equal to ``pm.gp.hsgp_approx.calc_eigenvectors``), so a refit with new rows
reuses the compiled sampler. The default m = 30 for one input (15 per input for two, 8 for three)
and L = 1.5 times the half-range
resolve lengthscales down to about 0.2 standardised units, where the lengthscale prior has
little mass (Riutort-Mayol et al.'s rule m >= 1.75 c / (l / S) gives 23 for l = 0.2, S = 1.7).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.data.arguments import spelled
from bayesclass.data.constraints import Constrained, InRange, Integer, Positive
from bayesclass.models._kernels import (
    KernelName,
    hsgp_basis,
    hsgp_frequencies,
    kernel_gradients,
    kernel_matrices,
    kernel_matrix,
    spectral_density,
    stationary_matrices,
)
from bayesclass.models._laplace import (
    LaplaceFit,
    laplace_covariance,
    laplace_evidence_gradient,
    laplace_fit,
    laplace_predict,
    weight_laplace_fit,
)
from bayesclass.models._latent_gaussian import LatentGaussianForm, LatentGaussianNames
from bayesclass.models._links import Link, bernoulli_log_likelihood, bernoulli_log_proba, link_average
from bayesclass.models.approximation import GaussianApproximation
from bayesclass.models.base import (
    ClassifierModel,
    ClassProbaKernel,
    ConvergenceError,
    draws_last,
    features_as_dataarray,
    kernel_of,
    leading_dims_of,
)

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt
    import scipy
    import xarray as xr
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use
    pm = lazy_import("pymc")
    pt = lazy_import("pytensor.tensor")
    xr = lazy_import("xarray")

__all__ = [
    "EXACT_UP_TO",
    "HSGP_MAX_BASIS",
    "PC_LENGTHSCALE_LOWER",
    "PC_LENGTHSCALE_LOWER_PROB",
    "Approximation",
    "GaussianProcessPrior",
    "LatentGaussianProcess",
    "LengthscalePrior",
]

Approximation = Literal["auto", "exact", "hsgp"]
LatentGraph = Literal["fused", "pytensor"]
LengthscalePrior = Literal["pc", "inverse_gamma"]

#: the PC lengthscale prior's default tail statement P(lengthscale < PC_LENGTHSCALE_LOWER) = PC_LENGTHSCALE_LOWER_PROB
#: (:class:`GaussianProcessPrior`; bench/bench_gp_prior.py)
PC_LENGTHSCALE_LOWER, PC_LENGTHSCALE_LOWER_PROB = 0.2, 0.05
#: ``approximation="auto"`` uses the exact latent GP up to this many training rows, HSGP above
EXACT_UP_TO = 500
#: the most HSGP basis functions (hsgp_basis ** n_inputs) a model may have
HSGP_MAX_BASIS = 2500
#: the Gibbs sampler's defaults (bench/bench_gp_defaults.py: with them, 4 chains of seed 004 at n = 400 (exact) and
#: n = 2,000 (HSGP) and penguins' sex at n = 333 pass the convergence verdict, latents included): kept draws and
#: burn-in sweeps per chain, the exact GP's augmentation-and-latent draws per sweep (:class:`LatentGaussianForm`
#: ``latent_updates``: the latents' autocorrelation comes from the augmentation where |f| is large, not from the
#: hyperparameters) and the HSGP's sweeps per kept draw (``thin``: there a latent draw costs a whole sweep). The
#: burn-in also sizes the slice brackets (:mod:`bayesclass.inference.engines.gibbs`); 300 sweeps reach r_hat <= 1.008
#: and 1,200 draws keep the slowest latent's bulk ESS >= 579 at n = 400 on sampler seeds 1 and 2 (issue 30)
GIBBS_DRAWS, GIBBS_BURN_IN = 1200, 300
#: with fewer rows than this the Gibbs sampler's default draws are doubled: the labels inform a lengthscale less
#: and its posterior keeps more of the PC prior's heavy tail, and a sweep costs little (seed 004 at n = 60: 4 x 1,200
#: draws left the lengthscale's r_hat at 1.012 on sampler seed 1, issue 39)
GIBBS_FEW_ROWS = 100
#: L-BFGS-B's stopping rule for type-II maximum likelihood: on the gradient alone, far below the defaults (gtol 1e-5,
#: ftol 2.2e-9; a relative-decrease rule stops at a rounding-dependent point of a flat direction), so
#: that the plug-in's class probabilities do not depend on the data's units beyond 1e-8 (a column x 1,000 moves the
#: standardised inputs by rounding only, which the default rule let the optimiser turn into 3.5e-8 on Pima)
TYPE2_OPTIONS = {"gtol": 1e-12, "ftol": 0.0, "maxiter": 2000}
GIBBS_LATENT_UPDATES = 5
#: the HSGP keeps every 3rd sweep (4 before issue 40: 4 chains x 1,200 draws of every 3rd sweep still pass the verdict
#: with bulk ESS >= 920 on seed 004 at n = 2,000, 1,630 at n = 1,000 and synth.te's 1,000 rows, and save a quarter of
#: the sweeps; bench/bench_gp_fit_speed.py)
GIBBS_HSGP_THIN = 3
#: ``method="auto"`` is the Gibbs sampler where its work per kept draw, (inputs + 2) x m^3 x thin
#: (:meth:`LatentGaussianProcess.gibbs_sweep_work`: step 2 factors one m x m matrix per slice evaluation, about 5
#: per hyperparameter; m = rows, or basis functions + 1 for HSGP), is at most this, and ``laplace`` above it.
#: Measured (one chain, one BLAS thread, 2-core machine, after the one-term distance update of the sweep): seed 004
#: n = 400, 1 input (1.9e8): 17 ms a sweep; penguins' sex n = 333, 2 inputs (1.5e8): 11 ms; breast_cancer's 60%
#: split n = 341, 30 inputs (1.3e9): 93 ms (265 ms before that update), so the default 1,500 sweeps x 4 chains on 2
#: cores take ~5 min (50 min measured before, on a loaded machine) against ~9 s for ``laplace``. The bound keeps
#: every exact GP of one input (n <= EXACT_UP_TO = 500: 3.75e8, ~30 ms a sweep, ~1.5 min a default fit) and the
#: benchmarked Gibbs defaults (bench/bench_gp_defaults.py) on Gibbs; with 341 rows it allows up to 8 inputs.
GIBBS_MAX_SWEEP_WORK = 4e8
#: the posterior variables (and dims) of :meth:`LatentGaussianProcess.build`, for latent-Gaussian samplers:
#: exact GP (latent f at the training rows) and HSGP (basis weights)
_EXACT_LATENT_NAMES = LatentGaussianNames(
    lengthscale="lengthscale",
    amplitude="amplitude",
    constant="constant",
    latent="latent",
    feature_dim="feature",
    latent_dim="obs",
)
_HSGP_LATENT_NAMES = LatentGaussianNames(
    lengthscale="lengthscale",
    amplitude="amplitude",
    constant="constant",
    latent="basis_weight",
    feature_dim="feature",
    latent_dim="basis",
)


#: draws per block of exact-GP prediction (batched training kernels and factors: 16 x n x n floats), and rows per
#: block of one draw's work (:meth:`LatentGaussianProcess._exact_draw_moments`: a 256 x n kernel block in cache)
PREDICTION_BLOCK_DRAWS = 16
PREDICTION_ROW_BLOCK = 256
#: the most memory of one call's per-draw probabilities that the exact GP asks callers to evaluate at once
#: (``setup_rows``: larger calls share each draw's factor over more rows)
PREDICTION_TILE_BYTES = 128 * 2**20


def _draw_blocks(block: Callable[[slice], None], n_draws: int, block_size: int) -> None:
    """``block(draws)`` for consecutive slices of ``block_size`` draws, on the usable cores, one BLAS thread each.

    Each draw's numbers come from its own BLAS calls, so they do not depend on the threads or the blocks.
    """
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    slices = [slice(start, min(start + block_size, n_draws)) for start in range(0, n_draws, block_size)]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = min(len(slices), cores)
    with threadpool_limits(limits=1, user_api="blas"):
        if workers <= 1:
            for draws in slices:
                block(draws)
            return
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bayesclass-gp-draws") as pool:
            for future in [pool.submit(block, draws) for draws in slices]:
                future.result()


class _EstimateCache:
    """The last type-II ML Laplace estimate, for the same model and the same training data (one entry).

    ``fit`` asks for the ``map`` estimate, its :meth:`LatentGaussianProcess.gaussian_approximation` and (method
    ``laplace``) its :meth:`LatentGaussianProcess.laplace_approximation` of one training set in turn; each would
    otherwise rerun the type-II maximum-likelihood search (seconds to a minute at a few hundred rows). An entry
    is reused only for an equal model and the very same data object with unchanged inputs and labels.
    """

    def __init__(self) -> None:
        self._entry: tuple[Any, Dataset, np.ndarray, np.ndarray, xr.Dataset] | None = None

    def get(self, model: Any, data: Dataset) -> xr.Dataset | None:
        entry = self._entry
        if entry is None or entry[1] is not data or entry[0] != model:
            return None
        if not (np.array_equal(entry[2], np.asarray(data.X)) and np.array_equal(entry[3], np.asarray(data.y))):
            return None
        return entry[4].copy(deep=True)

    def put(self, model: Any, data: Dataset, estimate: xr.Dataset) -> None:
        self._entry = (model, data, np.array(data.X, copy=True), np.array(data.y, copy=True), estimate)


_last_estimate = _EstimateCache()

# ---------------------------------------------------------------------------------------------
# the family (registry name "gp"): PyMC model with whitened latents, Laplace point estimate


@dataclass(frozen=True, kw_only=True)
class GaussianProcessPrior(Constrained):
    r"""Weakly-informative priors of the covariance function, on STANDARDISED inputs (the default ``standardize=True``).

    Every lengthscale is in standard deviations of its input. The default lengthscale prior lets an input that
    does not inform the labels switch off: ``"pc"``, the penalised-complexity (PC) prior of the range of a
    Gaussian random field (Fuglstad, Simpson, Lindgren & Rue 2019, "Constructing priors that penalize the
    complexity of Gaussian random fields", JASA 114:445-452, theorem 2.6) with d = 1 per input (ARD): the base
    model is an infinite lengthscale (the input switched off), and the prior density
    :math:`\pi(\ell) = \tfrac{\lambda}{2}\,\ell^{-3/2} \exp(-\lambda \ell^{-1/2})`, i.e.
    :math:`\ell^{-1/2} \sim \text{Exponential}(\lambda)`, decays from it at a constant rate in the distance
    :math:`\ell^{-1/2}`. Its rate comes from the tail statement :math:`P(\ell < \ell_0) = \alpha`:
    :math:`\lambda = -\log(\alpha)\sqrt{\ell_0}`. The tail towards :math:`\ell = \infty` is heavy
    (:math:`\pi(\ell) \sim \ell^{-3/2}`, no mean), so an input the labels do not inform keeps large lengthscales
    in the posterior where ``"inverse_gamma"`` (light towards 0 AND a mode at 0.5 with a finite mean) keeps it
    near 1 (issue 39: on Pima.tr three inputs had type-II ML lengthscales at the search bound, e^5, and posterior
    means 1.4-2.6 under InverseGamma(3, 2)). The same density serves every route: the PyMC model (NUTS, exact
    and HSGP), the Gibbs sampler's slice steps (on :math:`\ell^{-1/2}`, :attr:`lengthscale_slice_power`) and
    SBC's prior draws; the ``map``
    plug-in is type-II maximum likelihood and uses none. Measured (bench/bench_gp_prior.py, default fits, held-out
    log loss of the posterior minus the plug-in's, nats per row): Pima -0.005 (InverseGamma(3, 2): +0.038), synth
    with 3 pure-noise inputs -0.005 (+0.019), synth -0.005 (-0.005), seed004_gp +0.002 (+0.003). HSGP: every basis
    function of the box decays as any one lengthscale grows, so there an input cannot switch off, and NUTS does not
    reach the far lengthscales whose weights' prior sds underflow (SBC of HSGP by NUTS fails under ``"pc"``).

    Parameters
    ----------
    lengthscale_prior : {"pc", "inverse_gamma"}
        The prior of each input's lengthscale: ``"pc"`` (default), the PC prior (Fuglstad et al. 2019) whose
        base model is the input switched off, set by ``lengthscale_lower`` and ``lengthscale_lower_prob``;
        ``"inverse_gamma"``, InverseGamma(``lengthscale_alpha``, ``lengthscale_beta``), the prior before issue 39.
    lengthscale_lower : float
        l0 of the PC prior's tail statement P(lengthscale < l0) = ``lengthscale_lower_prob``, in standard
        deviations of the input.
    lengthscale_lower_prob : float
        alpha of that statement, in (0, 1): the prior probability of a lengthscale shorter than l0.
    lengthscale_alpha, lengthscale_beta : float
        InverseGamma(alpha, beta) per input dimension (ARD), used by ``lengthscale_prior="inverse_gamma"``; (3, 2)
        has mode 0.5 and mean 1 standard deviation of the input, and little mass below 0.2 or above 4.
    amplitude_sigma : float
        HalfNormal scale of :math:`a`, the standard deviation of the stationary term
        (seed 004's illustration has :math:`a = 3`).
    constant_sigma : float
        HalfNormal scale of :math:`c`, the standard deviation of the constant term.
    """

    lengthscale_prior: LengthscalePrior = "pc"
    lengthscale_lower: Annotated[float, Positive()] = PC_LENGTHSCALE_LOWER
    lengthscale_lower_prob: Annotated[
        float, InRange(0.0, 1.0, closed="neither", fix="a tail probability, e.g. 0.05")
    ] = PC_LENGTHSCALE_LOWER_PROB
    lengthscale_alpha: Annotated[float, Positive()] = 3.0
    lengthscale_beta: Annotated[float, Positive()] = 2.0
    amplitude_sigma: Annotated[float, Positive()] = 3.0
    constant_sigma: Annotated[float, Positive()] = 1.0

    @property
    def lengthscale_slice_power(self) -> float:
        r"""The Gibbs sampler slices each lengthscale on :math:`\ell^p` for this p, on :math:`\log\ell` where it is 0.

        PC: :math:`p = -1/2`, the prior's own coordinate (:math:`\ell^{-1/2} \sim \text{Exponential}`, light on
        both sides; :math:`\ell = \infty` is 0). On :math:`\log\ell` its tail is :math:`e^{-t/2}`, which a slice
        bracket sized to the bulk crosses by a random walk (issue 39: seed 004 at n = 60, lengthscale r_hat 1.03
        with the default draws). InverseGamma: 0.
        """
        return -0.5 if self.lengthscale_prior == "pc" else 0.0

    @property
    def pc_rate(self) -> float:
        r"""The PC prior's rate, :math:`\lambda = -\log(\alpha) \sqrt{\ell_0}` (the rate of l^(-1/2))."""
        return -math.log(self.lengthscale_lower_prob) * math.sqrt(self.lengthscale_lower)

    def log_lengthscale_density(self, log_lengthscale, xp=np):
        r"""Log density of :math:`t = \log\ell` (the Jacobian :math:`e^t` included), elementwise.

        PC: :math:`\log(\lambda/2) - t/2 - \lambda e^{-t/2}`; InverseGamma(a, b):
        :math:`a \log b - \log\Gamma(a) - a t - b e^{-t}`.

        Parameters
        ----------
        log_lengthscale : array-like
            :math:`\log\ell`, any shape.
        xp : module
            The array namespace (NumPy by default).

        Returns
        -------
        array
            The log densities, the same shape.
        """
        if self.lengthscale_prior == "pc":
            rate = self.pc_rate
            return math.log(rate / 2.0) - 0.5 * log_lengthscale - rate * xp.exp(-0.5 * log_lengthscale)
        alpha, beta = self.lengthscale_alpha, self.lengthscale_beta
        return alpha * math.log(beta) - math.lgamma(alpha) - alpha * log_lengthscale - beta * xp.exp(-log_lengthscale)

    def lengthscale_median(self) -> float:
        r"""The prior median of a lengthscale: :math:`(\lambda / \log 2)^2` (PC), the InverseGamma's median.

        Returns
        -------
        float
            The median, in standard deviations of the input.
        """
        if self.lengthscale_prior == "pc":
            return (self.pc_rate / math.log(2.0)) ** 2
        return float(scipy.stats.invgamma(self.lengthscale_alpha, scale=self.lengthscale_beta).median())

    def lengthscale_statement(self) -> str:
        """The lengthscale prior as a formula (:meth:`LatentGaussianProcess.prior_formulas`).

        Returns
        -------
        str
            ``"lengthscale[feature] ~ ..."``.
        """
        if self.lengthscale_prior == "pc":
            return (
                f"lengthscale[feature] ~ PC(P(lengthscale < {self.lengthscale_lower:g}) = "
                f"{self.lengthscale_lower_prob:g}): lengthscale^(-1/2) ~ Exponential({self.pc_rate:.4g})"
            )
        return f"lengthscale[feature] ~ InverseGamma({self.lengthscale_alpha:g}, {self.lengthscale_beta:g})"


@dataclass(frozen=True, kw_only=True)
class LatentGaussianProcess(ClassifierModel):
    r"""Binary latent-GP classifier (registry name ``gp``), seed 004.

    Parameters
    ----------
    link : {"logit", "probit"}
        Inverse link from the latent function to P(y = second class).
    kernel : {"exp_quad", "matern52"}
        The stationary term of the covariance function (plus a constant term).
    prior : GaussianProcessPrior
        Priors of the covariance function's lengthscales, amplitude and constant term.
    jitter : float
        eps: K = c^2 + a^2 (k + eps I), added for a stable Cholesky factor (relative to the amplitude), in
        (0, 0.01]: a nugget, not a noise term.
    approximation : {"auto", "exact", "hsgp"}
        ``exact``: the latent at every training input (O(n^3) per gradient);
        ``hsgp``: the Hilbert-space approximation (O(n m^d) per gradient);
        ``auto`` (default): exact up to :data:`EXACT_UP_TO` training rows, HSGP above.
    hsgp_basis : int, optional
        m, the number of basis functions per input dimension (m^d in all, at most
        :data:`HSGP_MAX_BASIS`); by default 30, 15, 8 and 5 for 1, 2, 3 and more inputs
        (:meth:`basis_per_input`).
    hsgp_boundary : float
        c > 1: the basis lives on [-L, L] per dimension with L = c times the half-range
        of the (standardised) training inputs.

    Notes
    -----
    NUTS samples the whitened latents :math:`\mathbf u \sim \mathcal N(0, I)` with
    :math:`\mathbf z = L_\theta \mathbf u`, :math:`L_\theta L_\theta^\top = K_\theta(X, X)`
    (non-centred), jointly with :math:`\theta`; the centred form has the funnel between
    :math:`\theta` and :math:`\mathbf z` that makes NUTS diverge. The ``map`` point
    estimate is the Laplace approximation with :math:`\theta` by type-II maximum
    likelihood (the Laplace approximation of :math:`\log p(\mathbf y \mid \theta)`
    maximised by L-BFGS over :math:`\log\theta` with its exact gradient, GPML Algorithm
    5.1). Prediction at new inputs: per posterior draw,
    :math:`f_* \mid \mathbf z, \theta` is Gaussian with mean
    :math:`K_{*}^\top K^{-1}\mathbf z` and variance :math:`k_{**} - K_*^\top K^{-1} K_*`, and
    :math:`P(y_* = 1 \mid \mathbf z, \theta)` averages the link over it (exact for probit,
    quadrature within 2e-8 for logit); the class probability is the average over draws (seed 004:
    "make a prediction for a test case at x* by averaging"). Binary labels only: a
    multiclass dataset is an error.

    HSGP (``approximation="hsgp"``): :math:`f(x) \approx \beta_0 + \sum_j \beta_j \phi_j(x)`
    with the Dirichlet Laplacian eigenfunctions :math:`\phi_j` on :math:`[-L, L]^d` and
    :math:`\beta_j \sim \mathcal N(0, a^2 S_\ell(\omega_j))`, :math:`S_\ell` the spectral
    density of the stationary kernel, and :math:`\beta_0 \sim \mathcal N(0, c^2)` the constant
    term (``basis_weight``, dims ``basis``, first entry ``"constant"``; sampled whitened).
    Its ``map`` is the Laplace approximation in weight space (:func:`weight_laplace_fit`),
    again with type-II maximum-likelihood hyperparameters. A draw predicts
    :math:`g^{-1}(\beta_0 + \boldsymbol\phi(x_*)^\top\boldsymbol\beta)` (f* is a function of the
    weights).

    Sampling defaults (``fit(method="auto")``: the exact Gibbs sampler,
    :mod:`bayesclass.inference.engines.gibbs`, where :meth:`default_method_for` chooses it):
    per chain :data:`GIBBS_DRAWS` kept draws after
    :data:`GIBBS_BURN_IN` burn-in sweeps (:meth:`sampling_defaults`; ``SamplerSettings`` draws and tune
    override them); each sweep of the exact GP draws the augmentation and the latents
    :data:`GIBBS_LATENT_UPDATES` times, and the HSGP keeps every :data:`GIBBS_HSGP_THIN`-th sweep
    (:meth:`latent_gaussian_form`). With 4 chains these pass the convergence verdict on every hyperparameter
    and latent value of seed 004 at n = 400 (exact) and 2,000 (HSGP) and of the penguins' sex on bill depth
    and body mass (n = 333), bench/bench_gp_defaults.py.
    """

    link: Link = "logit"
    kernel: KernelName = "exp_quad"
    prior: GaussianProcessPrior = field(default_factory=GaussianProcessPrior)
    jitter: Annotated[
        float, InRange(0.0, 0.01, closed="right", fix="a numerical nugget beside the unit diagonal, e.g. 1e-6")
    ] = 1e-6
    approximation: Approximation = "auto"
    hsgp_basis: Annotated[int | None, Integer(minimum=2, fix="basis functions per input dimension, e.g. 30")] = None
    hsgp_boundary: Annotated[
        float,
        Positive(),
        InRange(1, None, closed="neither", fix="the basis box is c times the input half-range; 1.2 to 2 is usual"),
    ] = 1.5

    name: ClassVar[str] = "gp"
    predicts_from_effective_draws: ClassVar[bool] = True
    prior_variables: ClassVar[dict[str, str]] = {
        "prior.lengthscale_prior": "lengthscale",
        "prior.lengthscale_lower": "lengthscale",
        "prior.lengthscale_lower_prob": "lengthscale",
        "prior.lengthscale_alpha": "lengthscale",
        "prior.lengthscale_beta": "lengthscale",
        "prior.amplitude_sigma": "amplitude",
        "prior.constant_sigma": "constant",
    }
    summary_parameter_names: ClassVar[tuple[str, ...] | None] = ("lengthscale", "amplitude", "constant")
    #: the fused latent Op (:mod:`bayesclass.models._latent_op`) has numba and Python forms, no JAX form
    nuts_backends: ClassVar[tuple[str, ...]] = ("nutpie", "pymc")
    #: what ``method="auto"`` samples with (bench/README.md, issue 16: 5-8x the ESS/s of NUTS, no divergences)
    default_sampling_method: ClassVar[str] = "gibbs"
    #: one input: reports draw the latent f and P(class 1 | x) along it (:meth:`latent_predictive`)
    latent_curve: ClassVar[bool] = True

    def basis_per_input(self, n_inputs: int) -> int:
        """M, the number of HSGP basis functions per input.

        Parameters
        ----------
        n_inputs : int
            d, the number of inputs (features).

        Returns
        -------
        int
            ``hsgp_basis``, or by default 30 for one input, 15 for two, 8 for three and 5 beyond (m^d stays in
            the hundreds).
        """
        if self.hsgp_basis is not None:
            return self.hsgp_basis
        return {1: 30, 2: 15, 3: 8}.get(n_inputs, 5)

    def uses_hsgp(self, data: Dataset) -> bool:
        """Whether ``data`` is modelled by the HSGP approximation.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        bool
            True for ``approximation="hsgp"``, or for ``"auto"`` with more than :data:`EXACT_UP_TO` rows.
        """
        return self.approximation == "hsgp" or (self.approximation == "auto" and data.n_obs > EXACT_UP_TO)

    def check_training_data(self, data: Dataset) -> None:
        """The base checks, plus: exactly two classes, continuous inputs, a feasible HSGP basis.

        Parameters
        ----------
        data : Dataset
            Training data.

        Raises
        ------
        ValueError
            If the base checks fail, the data do not have two classes, an input is not continuous, or (HSGP)
            the basis is too large or an input is constant.
        """
        super().check_training_data(data)
        if data.n_classes != 2:
            raise ValueError(
                f"the gp model is binary, but {data.name!r} has {data.n_classes} classes "
                f"({', '.join(map(repr, data.class_names))}); multiclass latent GPs (K latent functions with a "
                "softmax) "
                "are not implemented: select two classes or use the logistic, gcc or naive_bayes model"
            )
        other = [
            name for name, kind in zip(data.feature_names, data.feature_kinds, strict=True) if kind != "continuous"
        ]
        if other:
            raise ValueError(f"the gp model needs continuous inputs; {', '.join(map(repr, other))} are not: drop them")
        if self.uses_hsgp(data):
            m = self.basis_per_input(data.n_features)
            size = m**data.n_features
            if size > HSGP_MAX_BASIS:
                raise ValueError(
                    f"{spelled('hsgp_basis', m)} per input gives {size} basis functions for {data.n_features} inputs "
                    f"(at most {HSGP_MAX_BASIS}): lower {spelled('hsgp_basis')}, use fewer inputs, or "
                    f"{spelled('approximation', 'exact')}"
                )
            spread = np.ptp(np.asarray(data.X, dtype=float), axis=0)
            flat = [name for name, width in zip(data.feature_names, spread, strict=True) if not width > 0]
            if flat:
                raise ValueError(
                    f"input(s) {', '.join(map(repr, flat))} are constant: the HSGP basis needs a range; drop them"
                )

    def prior_formulas(self, *, n_classes: int | None = None) -> tuple[str, ...]:
        """The prior and likelihood as plain-text formulas, one statement per line (class docstring).

        Parameters
        ----------
        n_classes : int, optional
            Unused: the model is binary.

        Returns
        -------
        tuple of str
            The hyperparameter priors, the latent GP and the Bernoulli likelihood.
        """
        prior = self.prior
        link = "logistic(f)" if self.link == "logit" else "Phi(f), the standard normal CDF"
        return (
            prior.lengthscale_statement(),
            f"amplitude ~ HalfNormal({prior.amplitude_sigma:g});  constant ~ HalfNormal({prior.constant_sigma:g})",
            f"latent f ~ GP(0, amplitude^2 k_{self.kernel}(x, x' / lengthscale) + constant^2)  "
            f"(approximation: {self.approximation}; jitter {self.jitter:g} amplitude^2 on the diagonal)",
            f"y ~ Bernoulli(p = {link})",
        )

    def hyperparameter_priors(self, *, n_classes: int | None = None) -> dict[str, str]:
        """The base's statements, less the lengthscale hyperparameters the chosen lengthscale prior does not use.

        Parameters
        ----------
        n_classes : int, optional
            Unused: the model is binary.

        Returns
        -------
        dict of str to str
            Dotted hyperparameter name -> its prior statement.
        """
        unused = (
            ("prior.lengthscale_alpha", "prior.lengthscale_beta")
            if self.prior.lengthscale_prior == "pc"
            else ("prior.lengthscale_lower", "prior.lengthscale_lower_prob")
        )
        priors = super().hyperparameter_priors(n_classes=n_classes)
        return {name: statement for name, statement in priors.items() if name not in unused}

    def available_point_estimates(self) -> tuple[str, ...]:
        """The point estimate kinds of the latent GP.

        Returns
        -------
        tuple of str
            ``("map",)``: the Laplace approximation at the type-II maximum-likelihood hyperparameters.
        """
        return ("map",)

    def parameter_names(self, data: Dataset) -> tuple[str, ...]:
        """The parameters of the model of ``data``.

        Parameters
        ----------
        data : Dataset
            Training data (their size decides between the exact GP and HSGP).

        Returns
        -------
        tuple of str
            The hyperparameters, and the latent values at the training inputs (``latent``, exact) or the basis
            weights (``basis_weight``, HSGP).
        """
        return ("lengthscale", "amplitude", "constant", "basis_weight" if self.uses_hsgp(data) else "latent")

    def coords(self, data: Dataset) -> dict[str, Any]:
        """The coordinates of the model of ``data`` and of its parameter sets.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        dict
            ``class``, ``feature``, ``obs`` (+ ``basis``, ``other_basis`` for HSGP), plus what prediction at new
            inputs needs: the training inputs and labels (``training_input``, ``training_label``; exact GP) or
            the basis geometry (``hsgp_center``, ``hsgp_half_width``, ``hsgp_frequency``; HSGP).
        """
        coords: dict[str, Any] = {
            "class": list(data.class_names),
            "feature": list(data.feature_names),
            "obs": [str(i) for i in range(data.n_obs)],
        }
        if self.uses_hsgp(data):
            index = np.stack(
                np.meshgrid(*[np.arange(1, self.basis_per_input(data.n_features) + 1)] * data.n_features), axis=-1
            ).reshape(-1, data.n_features)
            labels = ["constant", *(",".join(map(str, row)) for row in index)]
            coords["basis"] = labels
            coords["other_basis"] = labels
            center, half_width, frequencies = self._hsgp_geometry(data)
            coords["hsgp_center"] = (("feature",), center)
            coords["hsgp_half_width"] = (("feature",), half_width)
            coords["hsgp_frequency"] = (("basis", "feature"), frequencies)
            return coords
        coords["training_input"] = (("obs", "feature"), np.asarray(data.X, dtype=float))
        coords["training_label"] = (("obs",), np.asarray(data.y, dtype=np.int64))
        return coords

    def _hsgp_geometry(self, data: Dataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(center, half_width L, frequencies with a zero row for the constant) of the HSGP basis for ``data``."""
        x = np.asarray(data.X, dtype=float)
        low, high = x.min(axis=0), x.max(axis=0)
        center, half_width = (high + low) / 2.0, self.hsgp_boundary * (high - low) / 2.0
        frequencies = np.vstack(
            [np.zeros((1, x.shape[1])), hsgp_frequencies(half_width, self.basis_per_input(x.shape[1]))]
        )
        return center, half_width, frequencies

    def cache_key(self, data: Dataset) -> tuple:
        """Everything about ``data`` and ``self`` that shapes the PyMC graph (compile-cache key).

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        tuple
            The base key, and the number of rows (exact GP) or which HSGP weights are centred (HSGP: the graph
            depends on those, not on n).
        """
        if self.uses_hsgp(data):  # the graph depends on which weights are centred, not on n
            return (*super().cache_key(data), "hsgp", tuple(bool(flag) for flag in self.hsgp_centered(data)))
        return (*super().cache_key(data), data.n_obs)

    # -- PyMC model -------------------------------------------------------------------------------
    def build(self, data: Dataset, *, latent_graph: LatentGraph = "fused") -> pm.Model:
        """The latent GP with whitened latents, or its HSGP approximation (class docstring).

        Dims ``feature``, ``obs`` (+ ``basis``); data containers ``y`` (the class codes) and, for the exact
        GP, ``X`` (the training inputs), named as in every family (NAMING.md).

        ``latent_graph="pytensor"`` builds the exact latent from PyTensor's own kernel and
        ``cholesky(K) @ u`` instead of :class:`WhitenedLatent`: the same density, for tests and
        benchmarks.

        Parameters
        ----------
        data : Dataset
            Training data (two classes, continuous inputs).
        latent_graph : {"fused", "pytensor"}
            How the exact latent is built: the fused :class:`WhitenedLatent` Op (default) or PyTensor's
            generic graph. Ignored for HSGP.

        Returns
        -------
        pymc.Model
            The model.

        Raises
        ------
        ValueError
            If ``latent_graph`` is neither form, or the data fail :meth:`check_training_data`.
        """
        if latent_graph not in ("fused", "pytensor"):
            raise ValueError(f"latent_graph must be 'fused' or 'pytensor', got {latent_graph!r}")
        self.check_training_data(data)
        with pm.Model(coords=self.model_coords(data)) as model:
            labels = pm.Data("y", np.asarray(data.y, dtype=np.int64), dims="obs")
            lengthscale = self._lengthscale_variable()
            amplitude = pm.HalfNormal("amplitude", sigma=self.prior.amplitude_sigma)
            constant = pm.HalfNormal("constant", sigma=self.prior.constant_sigma)
            if self.uses_hsgp(data):
                latent = self._hsgp_latent(data, lengthscale, amplitude, constant)
            else:
                latent = self._exact_latent(data, lengthscale, amplitude, constant, latent_graph)
            pm.Potential("label_likelihood", bernoulli_log_likelihood(latent, 2.0 * labels - 1.0, self.link))
        return model

    def _lengthscale_variable(self):
        """The lengthscales' random variable (dims ``feature``) under the prior's ``lengthscale_prior``."""
        prior = self.prior
        if prior.lengthscale_prior == "inverse_gamma":
            return pm.InverseGamma(
                "lengthscale", alpha=prior.lengthscale_alpha, beta=prior.lengthscale_beta, dims="feature"
            )

        def pc(rate, size):  # lengthscale^(-1/2) ~ Exponential(rate); PyMC derives the density of the power
            return pm.Exponential.dist(lam=rate, size=size) ** -2.0

        return pm.CustomDist(
            "lengthscale", prior.pc_rate, dist=pc, transform=pm.distributions.transforms.log, dims="feature"
        )

    def _exact_latent(self, data: Dataset, lengthscale, amplitude, constant, latent_graph: LatentGraph):
        inputs = pm.Data("X", np.asarray(data.X, dtype=float), dims=("obs", "feature"))
        whitened = pm.Normal("latent_whitened", 0.0, 1.0, dims="obs")
        # the constant term stays inside K (module docstring: an explicit offset c * b made NUTS diverge)
        if latent_graph == "fused":
            from bayesclass.models._latent_op import WhitenedLatent  # PyTensor's Op class: imported on use

            # an Op with two outputs returns a list (PyTensor annotates Op.__call__ as a variable or a list)
            outputs = cast(
                "list[Any]",
                WhitenedLatent(self.kernel, self.jitter)(inputs, lengthscale, amplitude, constant, whitened),
            )
            latent = outputs[0]
            return pm.Deterministic("latent", latent, dims="obs")
        scaled = inputs / lengthscale
        squared = pt.maximum(
            pt.sum(scaled**2, axis=1)[:, np.newaxis] + pt.sum(scaled**2, axis=1)[np.newaxis, :] - 2 * scaled @ scaled.T,
            0.0,
        )
        if self.kernel == "exp_quad":
            stationary = pt.exp(-0.5 * squared)
        else:
            r = pt.sqrt(5.0 * squared + 1e-12)
            stationary = (1.0 + r + r**2 / 3.0) * pt.exp(-r)
        covariance = constant**2 + amplitude**2 * (stationary + self.jitter * pt.eye(data.n_obs))
        return pm.Deterministic("latent", pt.linalg.cholesky(covariance) @ whitened, dims="obs")

    def _hsgp_latent(self, data: Dataset, lengthscale, amplitude, constant):
        basis, frequencies = self._hsgp_features(data)
        basis_values = pm.Data("hsgp_basis_values", basis, dims=("obs", "basis"))
        stationary = (pm.gp.cov.ExpQuad if self.kernel == "exp_quad" else pm.gp.cov.Matern52)(
            data.n_features, ls=lengthscale
        )
        frequency_values = pm.Data("hsgp_frequency_values", frequencies)  # data: a refit swaps it with the basis
        prior_sd = pt.concatenate(
            [constant[np.newaxis], amplitude * pt.sqrt(stationary.power_spectral_density(frequency_values))]
        )
        centered = self.hsgp_centered(data)
        labels = np.asarray(self.model_coords(data)["basis"])
        pm.Model.get_context().add_coords({"basis_centered": labels[centered], "basis_noncentered": labels[~centered]})
        weight = pt.zeros(basis.shape[1])
        if centered.any():
            direct = pm.Normal("basis_weight_centered", 0.0, prior_sd[np.flatnonzero(centered)], dims="basis_centered")
            weight = pt.set_subtensor(weight[np.flatnonzero(centered)], direct)
        if (~centered).any():
            whitened = pm.Normal("basis_weight_whitened", 0.0, 1.0, dims="basis_noncentered")
            weight = pt.set_subtensor(weight[np.flatnonzero(~centered)], prior_sd[np.flatnonzero(~centered)] * whitened)
        weight = pm.Deterministic("basis_weight", weight, dims="basis")
        return basis_values @ weight

    def hsgp_centered(self, data: Dataset) -> np.ndarray:
        """Which HSGP weights NUTS samples centred (``True``) rather than whitened, shape (m^d + 1,).

        A weight the labels pin down (its prior variance times the Fisher information of the labels
        at f = 0 above 1, at the prior medians of the hyperparameters) is sampled centred: whitened,
        the product of its prior sd and its whitened value forms a narrow banana (NUTS diverged on
        it: 28 divergences at n = 10,000 with every weight whitened, 6-14 with this rule). Weights
        the labels barely inform (high frequencies) stay whitened, which avoids the funnel of the
        centred form. (Reading "pinned down" off the Laplace fit at the type-II ML hyperparameters
        instead, or whitening the constant's weight, gave more divergences, 21 and 42.)

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        numpy.ndarray of bool, shape (m^d + 1,)
            One flag per basis weight, the constant's first.
        """
        import scipy.stats

        basis, frequencies = self._hsgp_features(data)
        prior = self.prior
        d = data.n_features
        median = np.concatenate(
            [
                np.full(d, prior.lengthscale_median()),
                [
                    prior.amplitude_sigma * scipy.stats.halfnorm.median(),
                    prior.constant_sigma * scipy.stats.halfnorm.median(),
                ],
            ]
        )
        curvature = 0.25 if self.link == "logit" else 2.0 / np.pi  # W at f = 0
        information = curvature * np.sum(basis**2, axis=0) * self._hsgp_prior_sd(frequencies, median, d) ** 2
        return information > 1.0

    def latent_gaussian_form(self, data: Dataset) -> LatentGaussianForm:
        """The model as a latent Gaussian model, for samplers that use the structure (``method="gibbs"``).

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        LatentGaussianForm
            :class:`~bayesclass.models._latent_gaussian.LatentGaussianForm` with the same priors, kernel, jitter
            and HSGP basis as :meth:`build`: the training inputs (exact GP) or the basis and its frequencies
            (HSGP).
        """
        self.check_training_data(data)
        hsgp = self.uses_hsgp(data)
        basis, frequencies = self._hsgp_features(data) if hsgp else (None, None)
        return LatentGaussianForm(
            link=self.link,
            labels=np.asarray(data.y, dtype=np.int64),
            n_lengthscales=data.n_features,
            kernel=self.kernel,
            jitter=self.jitter,
            prior=self.prior,
            names=_HSGP_LATENT_NAMES if hsgp else _EXACT_LATENT_NAMES,
            inputs=None if hsgp else np.asarray(data.X, dtype=float),
            basis=basis,
            frequencies=frequencies,
            latent_updates=1 if hsgp else GIBBS_LATENT_UPDATES,
            thin=GIBBS_HSGP_THIN if hsgp else 1,
        )

    def method_warnings(self, method: str, data: Dataset) -> tuple[str, ...]:
        """A warning where NUTS is not the sampler to trust: on the exact GP, and on the HSGP under the PC prior.

        Exact GP: NUTS mixes slowly through the lengthscale's long right tail (issue 41). At default settings on
        seed004_gp (seed 0) its chains reach lengthscales of 4.9 to 7.7 (100 rows; r_hat 1.041, bulk ESS 165 of
        4,000 draws, 203 s) and 11 to 15 (200 rows; r_hat 1.065, ESS 93, 775 s). The tail is the posterior's: the
        default Gibbs sampler's chains (seed 1) reach 6.5 to 9.9 on the 100 rows (bulk ESS 362 of 4,800 draws, 118
        s) and 13 to 17 on the 200 (verdict PASS, 120 s). Both NUTS runs fail the convergence verdict, which is
        the check to read; the warning names the sampler to use instead.

        HSGP under the PC prior: every basis function's prior sd decays as any one lengthscale grows: in the PC
        prior's heavy tail they underflow, and NUTS does not reach those lengthscales (simulation-based calibration
        of HSGP by NUTS fails under ``"pc"``, p = 5e-16, and passes under ``"inverse_gamma"``; the Gibbs sampler
        passes under both).

        Parameters
        ----------
        method : str
            The method about to run.
        data : Dataset
            The training data.

        Returns
        -------
        tuple of str
            That warning, or none.
        """
        if method != "nuts":
            return ()
        if not self.uses_hsgp(data):
            return (
                f"{spelled('method', 'nuts')} is not the recommended sampler for the exact GP: it mixes slowly through "
                "the lengthscale's long right tail (read the lengthscale's r_hat and ESS in the convergence verdict); "
                f"the default {spelled('method', 'gibbs')} is the calibrated sampler here",
            )
        if self.prior.lengthscale_prior != "pc":
            return ()
        return (
            f"{spelled('method', 'nuts')} is not calibrated on the HSGP approximation under the PC lengthscale prior "
            "(it does not reach the long lengthscales, whose basis weights' prior sds underflow); use the default "
            f"{spelled('method', 'gibbs')}, or "
            f"{spelled('lengthscale_prior', 'inverse_gamma', owner='GaussianProcessPrior')}",
        )

    def sampling_defaults(self, method: str, n_obs: int) -> dict[str, int]:
        """The Gibbs sampler's draws (:data:`GIBBS_DRAWS`, twice below :data:`GIBBS_FEW_ROWS` rows) and burn-in.

        NUTS: the base's.

        With them (and the sweep of :meth:`latent_gaussian_form`) 4 chains pass the convergence verdict on every
        hyperparameter and latent value of seed 004 at n = 400 and 2,000 and of penguins' sex at n = 333
        (bench/bench_gp_defaults.py).

        Parameters
        ----------
        method : str
            The sampling method that runs.
        n_obs : int
            The number of training rows.

        Returns
        -------
        dict
            ``{"draws": ..., "tune": ...}`` per chain.
        """
        if method == "gibbs":
            return {"draws": GIBBS_DRAWS * (2 if n_obs < GIBBS_FEW_ROWS else 1), "tune": GIBBS_BURN_IN}
        return super().sampling_defaults(method, n_obs)

    def gibbs_sweep_work(self, data: Dataset) -> float:
        """The Gibbs sampler's work per kept draw on ``data``: (inputs + 2) x m^3 x thin (:data:`GIBBS_MAX_SWEEP_WORK`).

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        float
            m = the rows (exact GP) or the basis functions + 1 (HSGP, every :data:`GIBBS_HSGP_THIN`-th sweep kept).
        """
        if self.uses_hsgp(data):
            size, thin = self.basis_per_input(data.n_features) ** data.n_features + 1, GIBBS_HSGP_THIN
        else:
            size, thin = data.n_obs, 1
        return float(thin * (data.n_features + 2) * float(size) ** 3)

    def default_method_for(self, data: Dataset) -> str:
        """``"gibbs"`` where :meth:`gibbs_sweep_work` is at most :data:`GIBBS_MAX_SWEEP_WORK`, else ``"laplace"``.

        Parameters
        ----------
        data : Dataset
            Training data.

        Returns
        -------
        str
            The method ``fit(method="auto")`` runs.
        """
        return "gibbs" if self.gibbs_sweep_work(data) <= GIBBS_MAX_SWEEP_WORK else "laplace"

    def method_note(self, method: str, data: Dataset) -> str:
        """Why ``laplace`` is the default on ``data`` (the Gibbs sampler's work over the bound), else ``""``.

        Parameters
        ----------
        method : str
            The method that ran.
        data : Dataset
            Training data.

        Returns
        -------
        str
            One line, or ``""``.
        """
        if method != "laplace" or self.default_method_for(data) != "laplace":
            return ""
        size = f"(basis functions + 1)^3 x {GIBBS_HSGP_THIN}" if self.uses_hsgp(data) else "rows^3"
        return (
            f"laplace is the gp's default on {data.n_obs} rows x {data.n_features} inputs: the Gibbs sampler's work "
            f"per draw, (inputs + 2) x {size} = {self.gibbs_sweep_work(data):.2g}, exceeds "
            f"{GIBBS_MAX_SWEEP_WORK:.2g}; the gibbs method also samples the hyperparameters (type-II ML here), slowly"
        )

    # -- Laplace point estimate -------------------------------------------------------------------
    def _covariance(self, a: np.ndarray, b: np.ndarray, lengthscale, amplitude: float, constant: float) -> np.ndarray:
        return kernel_matrix(a, b, lengthscale=lengthscale, amplitude=amplitude, constant=constant, kernel=self.kernel)

    def _point_estimate(self, data: Dataset, kind: str) -> xr.Dataset:
        cached = _last_estimate.get(self, data)
        if cached is not None:
            return cached
        import scipy.linalg
        import scipy.optimize  # noqa: F401  (loaded before the limit, which holds only the BLAS already loaded)
        from threadpoolctl import threadpool_limits

        # one BLAS thread: on a shared 2-core machine the threaded factorisations of breast_cancer's 341 x 341
        # kernel ran 30x slower (the type-II ML search 40 s, 5.8 s at one thread; the whole laplace fit 48 s vs 8.4 s)
        with threadpool_limits(limits=1, user_api="blas"):
            estimate = self._hsgp_laplace(data) if self.uses_hsgp(data) else self._exact_laplace(data)
        _last_estimate.put(self, data, estimate)
        return estimate.copy(deep=True)

    def _exact_laplace(self, data: Dataset) -> xr.Dataset:
        x, y, d = np.asarray(data.X, dtype=float), data.y, data.n_features
        previous: list[LaplaceFit | None] = [None]  # warm start of Newton's method

        def negative_evidence(log_theta: np.ndarray) -> tuple[float, np.ndarray]:
            theta = np.exp(log_theta)
            covariance, gradients = kernel_gradients(
                x,
                lengthscale=theta[:d],
                amplitude=theta[d],
                constant=theta[d + 1],
                kernel=self.kernel,
                jitter=self.jitter,
            )
            try:
                fit = laplace_fit(x, y, covariance, link=self.link, tol=1e-10, start=previous[0])
            except (ConvergenceError, np.linalg.LinAlgError):
                previous[0] = None
                return np.inf, np.zeros_like(log_theta)
            previous[0] = fit
            return -fit.log_marginal_likelihood, -laplace_evidence_gradient(fit, covariance, gradients)

        theta = self._type2_maximum_likelihood(negative_evidence, d, jac=True)
        lengthscale, amplitude, constant = theta[:d], float(theta[d]), float(theta[d + 1])
        covariance = self._covariance(x, x, lengthscale, amplitude, constant) + self.jitter * amplitude**2 * np.eye(
            data.n_obs
        )
        fit = laplace_fit(x, y, covariance, link=self.link)
        estimate = xr.Dataset(
            {
                "lengthscale": (("feature",), lengthscale),
                "amplitude": ((), amplitude),
                "constant": ((), constant),
                "latent": (("obs",), fit.mode),
                "laplace_weight": (("obs",), fit.sqrt_w**2),
            }
        )
        return self.with_coords(estimate, data)

    @staticmethod
    def _type2_maximum_likelihood(objective, d: int, *, jac: bool) -> np.ndarray:
        """Argmax of the Laplace evidence over log theta = (log l, log a, log c), from l = 1, a = 1, c = 0.5."""
        start = np.concatenate([np.zeros(d), [0.0, np.log(0.5)]])
        found = scipy.optimize.minimize(
            objective, start, jac=jac, method="L-BFGS-B", bounds=[(-5.0, 5.0)] * (d + 2), options=TYPE2_OPTIONS
        )
        if not np.isfinite(found.fun):
            raise ConvergenceError(f"type-II maximum likelihood of the GP hyperparameters failed ({found.message})")
        return np.exp(found.x)

    def _hsgp_features(self, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
        center, half_width, frequencies = self._hsgp_geometry(data)
        basis = np.hstack(
            [np.ones((data.n_obs, 1)), hsgp_basis(np.asarray(data.X, dtype=float), center, half_width, frequencies[1:])]
        )
        return basis, frequencies[1:]

    def _hsgp_prior_sd(self, frequencies: np.ndarray, theta: np.ndarray, d: int) -> np.ndarray:
        return np.concatenate(
            [[theta[d + 1]], theta[d] * np.sqrt(spectral_density(frequencies, theta[:d], self.kernel))]
        )

    def _hsgp_laplace(self, data: Dataset) -> xr.Dataset:
        y, d = data.y, data.n_features
        basis, frequencies = self._hsgp_features(data)

        def negative_evidence(log_theta: np.ndarray) -> float:  # O(n p^2) per Newton step: finite-difference gradient
            prior_sd = self._hsgp_prior_sd(frequencies, np.exp(log_theta), d)
            try:
                return -weight_laplace_fit(basis * prior_sd, y, link=self.link).log_marginal_likelihood
            except (ConvergenceError, np.linalg.LinAlgError):
                return np.inf

        theta = self._type2_maximum_likelihood(negative_evidence, d, jac=False)
        prior_sd = self._hsgp_prior_sd(frequencies, theta, d)
        fit = weight_laplace_fit(basis * prior_sd, y, link=self.link)
        estimate = xr.Dataset(
            {
                "lengthscale": (("feature",), theta[:d]),
                "amplitude": ((), float(theta[d])),
                "constant": ((), float(theta[d + 1])),
                "basis_weight": (("basis",), prior_sd * fit.mode),
                "laplace_weight_covariance": (
                    ("basis", "other_basis"),
                    prior_sd[:, np.newaxis] * fit.covariance * prior_sd,
                ),
            }
        )
        return self.with_coords(estimate, data)

    # -- uncertainty of the Laplace estimate: its Gaussian, the ``laplace`` method ----------------------
    def _gaussian_approximation(self, data: Dataset, kind: str) -> GaussianApproximation:
        r"""The Laplace Gaussian of the latent values (exact GP) or of the basis weights (HSGP), hyperparameters fixed.

        Exact GP: :math:`\mathcal N(\hat{\mathbf z}, (K^{-1} + W)^{-1})` over ``latent`` (the latent f at the
        training inputs), the covariance computed as :math:`K - V^\top V`, :math:`V = L^{-1} W^{1/2} K`,
        :math:`L L^\top = B = I + W^{1/2} K W^{1/2}` (GPML section 3.4.3). HSGP: over ``basis_weight``, the
        weight-space Laplace covariance the estimate holds (``laplace_weight_covariance``).

        Empirical Bayes: the hyperparameters (lengthscale, amplitude, constant) are held at their type-II
        maximum-likelihood values; their uncertainty is not included, and they get no standard error (the
        approximation's ``names`` are the latents only).
        """
        return self._laplace_gaussian(self.point_estimate(data, kind), kind)

    def _laplace_gaussian(self, estimate: xr.Dataset, kind: str) -> GaussianApproximation:
        """The approximation of :meth:`_gaussian_approximation` from the estimate itself (no refit)."""
        fixed = "hyperparameters fixed at their type-II maximum-likelihood values (empirical Bayes: their "
        fixed += "uncertainty is not included, and they have no standard error)"
        if "basis_weight" in estimate:
            covariance = estimate["laplace_weight_covariance"].transpose("basis", "other_basis").values
            curvature = f"Laplace covariance of the HSGP basis weights, (Phi' W Phi + S^-2)^-1, with the {fixed}"
            return GaussianApproximation.of(kind, estimate, ("basis_weight",), covariance, curvature)
        covariance = laplace_covariance(self._training_covariance(estimate), np.sqrt(estimate["laplace_weight"].values))
        curvature = f"Laplace covariance (K^-1 + W)^-1 of the latent values at the training inputs, with the {fixed}"
        return GaussianApproximation.of(kind, estimate, ("latent",), covariance, curvature)

    def _training_covariance(self, estimate: xr.Dataset) -> np.ndarray:
        """K(X, X) + jitter a^2 I at the estimate's hyperparameters (exact GP)."""
        x = estimate["training_input"].transpose("obs", "feature").values
        amplitude = float(estimate["amplitude"])
        covariance = self._covariance(x, x, estimate["lengthscale"].values, amplitude, float(estimate["constant"]))
        return covariance + self.jitter * amplitude**2 * np.eye(x.shape[0])

    def has_laplace(self) -> bool:
        """True: ``method="laplace"`` draws the latents from the Laplace Gaussian of the ``map`` estimate.

        Returns
        -------
        bool
            True (the GP always has its Laplace ``map`` estimate).
        """
        return "map" in self.available_point_estimates()

    def laplace_approximation(self, data: Dataset) -> tuple[xr.Dataset, GaussianApproximation]:
        """The Laplace Gaussian of the latents (exact) or basis weights (HSGP) at the type-II ML hyperparameters.

        The draws of ``method="laplace"`` are of the latents only; :meth:`laplace_parameters` adds the
        hyperparameters, the same type-II ML values in every draw (empirical Bayes, as the ``map`` estimate).

        Parameters
        ----------
        data : Dataset
            Training data (coded, standardised), as given to :meth:`point_estimate`.

        Returns
        -------
        mode : xarray.Dataset
            ``latent`` (dims ``obs``) or ``basis_weight`` (dims ``basis``) at the Laplace mode.
        approximation : GaussianApproximation
            N(mode, covariance) over it (:meth:`gaussian_approximation` of ``"map"``).
        """
        estimate = self.point_estimate(data, "map")
        approximation = self._laplace_gaussian(estimate, "map")
        return estimate[list(approximation.names)], approximation

    def laplace_parameters(self, draws: xr.Dataset, data: Dataset) -> xr.Dataset:
        """The draws of the latents with the type-II ML hyperparameters beside them, constant across draws.

        Parameters
        ----------
        draws : xarray.Dataset
            Draws of ``latent`` or ``basis_weight``, dims ``(chain, draw, ...)``.
        data : Dataset
            Training data.

        Returns
        -------
        xarray.Dataset
            ``lengthscale`` (dims ``chain, draw, feature``), ``amplitude``, ``constant`` (``chain, draw``) and the
            latents, in the order of :meth:`parameter_names`: the layout of the Gibbs and NUTS posteriors.
        """
        estimate = self.point_estimate(data, "map")
        leading = {"chain": draws.sizes["chain"], "draw": draws.sizes["draw"]}
        fixed = {
            name: estimate[name]
            .drop_vars([c for c in estimate[name].coords if c not in estimate[name].dims])
            .expand_dims(leading)
            .copy()
            for name in ("lengthscale", "amplitude", "constant")
        }
        names = self.parameter_names(data)
        return xr.Dataset({name: fixed[name] if name in fixed else draws[name] for name in names}).assign_coords(
            chain=draws["chain"], draw=draws["draw"]
        )

    # -- prediction -------------------------------------------------------------------------------
    def latent_predictive(self, params: xr.Dataset, X: Any) -> xr.Dataset:
        r"""Mean and variance of the latent f(x*) at new inputs, per parameter draw (or for the Laplace fit).

        Exact GP draws: :math:`f_* \mid \mathbf z, \theta` (class docstring); the ``map`` estimate:
        the Laplace predictive (GPML Algorithm 3.2, or its weight-space form for HSGP); HSGP draws:
        :math:`\beta_0 + \boldsymbol\phi(x_*)^\top\boldsymbol\beta` with variance 0.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (any leading dims) or the ``map`` estimate.
        X : array-like of shape (n_obs, n_features) or (n_features,), or Dataset
            New model inputs.

        Returns
        -------
        xarray.Dataset
            ``latent_mean`` and ``latent_variance``, dims ``(*leading, obs)``.
        """
        features = features_as_dataarray(X, params).values
        moments, leading, _ = self._latent_moments(params)
        mean, variance = moments(features)  # (obs, draws)
        shape = (features.shape[0], *(params.sizes[dim] for dim in leading))
        order = (*range(1, len(shape)), 0)
        coords = {dim: params[dim].values for dim in leading if dim in params.coords}
        dims = (*leading, "obs")
        return xr.Dataset(
            {
                "latent_mean": (dims, mean.reshape(shape).transpose(order)),
                "latent_variance": (dims, np.broadcast_to(variance, mean.shape).reshape(shape).transpose(order)),
            },
            coords=coords,
        )

    def latent_from_proba(self, proba: np.ndarray) -> np.ndarray:
        """The latent f with :math:`g^{-1}(f) =` ``proba``: the logit, or the normal quantile for probit.

        For example the generator's true latent from its true P(class 1 | x).

        Parameters
        ----------
        proba : numpy.ndarray
            Probabilities of class 1, clipped to [1e-12, 1 - 1e-12].

        Returns
        -------
        numpy.ndarray
            The latent values, elementwise, same shape as ``proba``.
        """
        import scipy.special

        p = np.clip(np.asarray(proba, dtype=float), 1e-12, 1 - 1e-12)
        return scipy.special.logit(p) if self.link == "logit" else scipy.special.ndtri(p)

    def class_proba_kernel(self, params: xr.Dataset) -> ClassProbaKernel:
        """P(class | x*): the link averaged over :meth:`latent_predictive`, per draw.

        The average is exact for probit and by quadrature within 2e-8 for logit (``link_average``).

        The work on the parameters is done once (the Laplace fit of the ``map`` estimate, the HSGP weights);
        exact GP draws need one n x n Cholesky factor per draw at every call (n training rows; the factors
        of every draw would take draws x n^2 x 8 bytes), so a call should hold at least ``setup_rows`` rows.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (any leading dims) or the ``map`` estimate.

        Returns
        -------
        ClassProbaKernel
            The prediction function of ``params``.
        """
        moments, leading, setup_rows = self._latent_moments(params)

        def evaluate(X: np.ndarray, log: bool) -> np.ndarray:
            mean, variance = moments(X)
            out = np.empty((X.shape[0], 2, mean.shape[1]))
            proba = np.clip(link_average(mean, variance, self.link), 1e-300, 1.0, out=out[:, 1])  # (obs, draws)
            if not log:
                np.subtract(1.0, proba, out=out[:, 0])
                return out
            with np.errstate(divide="ignore"):
                np.log1p(-np.minimum(proba, 1 - 1e-16), out=out[:, 0])
                np.log(proba, out=out[:, 1])
            return out

        return kernel_of(params, evaluate, leading_dims=leading, setup_rows=setup_rows)

    def training_class_log_proba(self, params: xr.Dataset, n_obs: int) -> Callable[[np.ndarray], np.ndarray] | None:
        r"""The likelihood of the training rows from the exact GP's latent draws: :math:`\log g^{-1}(\pm z_{s,i})`.

        The exact GP's draws hold the latent value :math:`z_i` at every training row, on which the model puts
        :math:`y_i \sim \text{Bernoulli}(g^{-1}(z_i))`: the pointwise log-likelihood is read off them in
        O(draws x rows), where predicting the rows again (:meth:`class_proba_kernel`) costs one n x n factor per
        draw (16 s of a 4,000-draw fit at n = 400) and adds the jitter's variance. HSGP draws (basis weights) and
        the ``map`` estimate give None.

        Parameters
        ----------
        params : xarray.Dataset
            Posterior draws (any leading dims).
        n_obs : int
            The number of training rows the draws were fitted on.

        Returns
        -------
        callable or None
            ``log_proba(rows)``, shape ``(len(rows), 2, n_draws)``; None unless ``params`` holds exact-GP latent
            draws over ``n_obs`` rows.
        """
        if "latent" not in params or "laplace_weight" in params or params["latent"].sizes.get("obs") != n_obs:
            return None
        leading = leading_dims_of(params["latent"], "obs")
        if not leading:
            return None
        latent = draws_last(params["latent"], leading, "obs")  # (obs, draws)

        def log_proba(rows: np.ndarray) -> np.ndarray:
            values = latent[rows]  # (rows, draws): class 0 has sign -1, class 1 sign +1
            return np.stack([bernoulli_log_proba(values, np.asarray(sign), self.link) for sign in (-1.0, 1.0)], axis=1)

        return log_proba

    def class_proba_interval_kernel(
        self, estimate: xr.Dataset, approximation: GaussianApproximation, interval_prob: float
    ) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
        r"""Intervals of the plug-in P(class 1 | x*) = :math:`g^{-1}(f_*)` from the Laplace latent predictive.

        With :math:`m, s^2` the Laplace predictive mean and variance of :math:`f_*` (GPML Algorithm 3.2, or
        :math:`\boldsymbol\phi_*^\top \hat{\boldsymbol\beta}` and
        :math:`\boldsymbol\phi_*^\top \Sigma_\beta \boldsymbol\phi_*` for HSGP), the interval of probability
        :math:`1 - \alpha` is :math:`[g^{-1}(m - z s), g^{-1}(m + z s)]`, :math:`z = \Phi^{-1}(1 - \alpha/2)`:
        exact for :math:`g^{-1}(f_*)` under the Gaussian (the link is monotone), so it stays in (0, 1); class 0
        gets the complement. The hyperparameters are held at their type-II ML values (not included).

        The point estimate's probability averages the link over the same Gaussian (:meth:`class_proba_kernel`),
        which pulls it towards 1/2 from :math:`g^{-1}(m)`; for a large :math:`|m|` with a large :math:`s` it may
        fall just outside the interval (both then within 1e-3 of 0 or 1).

        Parameters
        ----------
        estimate : xarray.Dataset
            The ``map`` estimate.
        approximation : GaussianApproximation
            Its Laplace Gaussian (over ``latent`` or ``basis_weight``, :meth:`gaussian_approximation`).
        interval_prob : float
            The intervals' probability, in (0, 1).

        Returns
        -------
        callable
            ``bounds(X) -> (low, high)``, each ``(n_obs, 2)``.

        Raises
        ------
        ValueError
            An approximation over other parameters than the estimate's latents.
        """
        expected = ("basis_weight",) if "basis_weight" in estimate else ("latent",)
        if approximation.names != expected:
            raise ValueError(
                f"the covariance of the GP's {approximation.kind} estimate must be over {expected[0]} (its Laplace "
                f"Gaussian), got one over {', '.join(approximation.names)}: refit the model to store it again"
            )
        z = scipy.stats.norm.ppf(0.5 + interval_prob / 2.0)
        cdf = scipy.special.expit if self.link == "logit" else scipy.special.ndtr
        moments, _, _ = self._latent_moments(estimate)

        def bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mean, variance = moments(X)
            mean, half = mean[:, 0], z * np.sqrt(variance[:, 0])
            low = np.column_stack([cdf(-(mean + half)), cdf(mean - half)])
            return low, np.column_stack([cdf(-(mean - half)), cdf(mean + half)])

        return bounds

    def _latent_moments(self, params: xr.Dataset):
        """(function of inputs (obs, feature) -> latent mean and variance (obs, draws), leading dims, setup rows).

        The variance may be returned as (obs, 1) when it is the same for every draw (the Laplace fit, HSGP draws).
        """
        if "basis_weight" in params:
            leading = leading_dims_of(params["basis_weight"], "basis")
            frequencies = params["hsgp_frequency"].transpose("basis", "feature").values[1:]
            center, half_width = params["hsgp_center"].values, params["hsgp_half_width"].values
            weight = draws_last(params["basis_weight"], leading, "basis")  # (basis, draws)
            covariance = (
                params["laplace_weight_covariance"].transpose("basis", "other_basis").values
                if "laplace_weight_covariance" in params
                else None
            )

            def hsgp(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                basis = np.hstack(
                    [np.ones((features.shape[0], 1)), hsgp_basis(features, center, half_width, frequencies)]
                )
                mean = basis @ weight  # (obs, draws)
                if covariance is not None:
                    spread = np.einsum("ij,ij->i", basis @ covariance, basis)  # diag(Phi S Phi'), one product
                    return mean, np.maximum(spread, 0.0)[:, np.newaxis]
                return mean, np.zeros((features.shape[0], 1))  # a point value of f per draw

            return hsgp, leading, 1

        leading = leading_dims_of(params["latent"], "obs")
        x = params["training_input"].values
        lengthscale = draws_last(params["lengthscale"], leading, "feature").T  # (draws, feature)
        amplitude = draws_last(params["amplitude"], leading).reshape(-1)
        constant = draws_last(params["constant"], leading).reshape(-1)
        eye = np.eye(x.shape[0])

        def training_covariance(draw: int) -> np.ndarray:
            a = amplitude[draw]
            return self._covariance(x, x, lengthscale[draw], a, constant[draw]) + self.jitter * a**2 * eye

        if "laplace_weight" in params:  # the Laplace (map) estimate: one fit, done once
            fit = laplace_fit(x, params["training_label"].values, training_covariance(0), link=self.link)

            def laplace(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                a, c = amplitude[0], constant[0]
                cross = self._covariance(x, features, lengthscale[0], a, c)
                mean, variance, _ = laplace_predict(fit, cross, np.full(features.shape[0], a**2 + c**2))
                return mean[:, np.newaxis], variance[:, np.newaxis]

            return laplace, leading, 1

        latent = draws_last(params["latent"], leading, "obs").T  # (draws, training obs)
        if latent.shape[0] > 1 and all(
            np.all(values == values[0]) for values in (lengthscale, amplitude, constant)
        ):  # one set of hyperparameters for every draw (method "laplace"): one factor, done once
            return (
                self._shared_hyperparameter_moments(
                    x, latent, training_covariance(0), lengthscale[0], amplitude[0], constant[0]
                ),
                leading,
                1,
            )

        # one factor per draw and call: calls of 32 n rows keep it under ~6% of the work, where their per-draw
        # probabilities fit in PREDICTION_TILE_BYTES (at least 2 n rows: under ~50%)
        n = x.shape[0]
        setup_rows = max(2 * n, min(32 * n, PREDICTION_TILE_BYTES // (16 * latent.shape[0])))
        return self._exact_draw_moments(x, latent, lengthscale, amplitude, constant), leading, setup_rows

    def _exact_draw_moments(
        self, x: np.ndarray, latent: np.ndarray, lengthscale: np.ndarray, amplitude: np.ndarray, constant: np.ndarray
    ) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
        r"""Exact-GP draws with their own hyperparameters: :math:`f_* \mid \mathbf z_s, \theta_s` for every draw s.

        Per draw, :math:`K_s = L_s L_s^\top` (one Cholesky factor) and :math:`L_s^{-1}` (LAPACK ``dtrtri``); with
        :math:`K_s(X, X_*) = c_s^2 \mathbf 1 \mathbf 1^\top + a_s^2 E_s` (:math:`E_s` the unit stationary kernel),
        :math:`V = L_s^{-1} K_s(X, X_*) = G + c_s^2 \mathbf w \mathbf 1^\top`, where :math:`G = a_s^2 L_s^{-1} E_s`
        is one BLAS-3 ``dtrmm`` over every row (three times the speed of a triangular solve here) and
        :math:`\mathbf w = L_s^{-1} \mathbf 1`. With :math:`\mathbf u = L_s^{-1} \mathbf z_s` the mean is
        :math:`V^\top \mathbf u = G^\top \mathbf u + c_s^2\, \mathbf w^\top \mathbf u` and the variance
        :math:`a_s^2 + c_s^2 - \lVert V_{\cdot j} \rVert^2`, :math:`\lVert V_{\cdot j} \rVert^2 =
        \lVert G_{\cdot j} \rVert^2 + 2 c_s^2\, \mathbf w^\top G_{\cdot j} + c_s^4 \lVert \mathbf w \rVert^2`.
        The factors of a block of draws are batched (:func:`~bayesclass.models._kernels.kernel_matrices`, stacked
        Cholesky); each draw then goes over the rows :data:`PREDICTION_ROW_BLOCK` at a time, so that its kernel
        block, :math:`L_s^{-1}` and :math:`G` stay in the core's cache (1.5x the speed of whole tiles). Blocks of
        draws run on the usable cores (:func:`_draw_blocks`), one BLAS thread each.
        """
        n, n_draws = x.shape[0], latent.shape[0]
        blas, lapack = scipy.linalg.blas, scipy.linalg.lapack

        def moments(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            rows = features.shape[0]
            mean, variance = np.empty((rows, n_draws)), np.empty((rows, n_draws))
            row_blocks = [slice(start, start + PREDICTION_ROW_BLOCK) for start in range(0, rows, PREDICTION_ROW_BLOCK)]

            def block(draws: slice) -> None:
                training = kernel_matrices(
                    x,
                    x,
                    lengthscales=lengthscale[draws],
                    amplitudes=amplitude[draws],
                    constants=constant[draws],
                    kernel=self.kernel,
                )
                training[:, range(n), range(n)] += self.jitter * amplitude[draws, np.newaxis] ** 2
                factors = np.linalg.cholesky(training)  # (block, n, n), C order: factors[b].T is L' in Fortran order
                for offset, draw in enumerate(range(*draws.indices(n_draws))):
                    inverse, info = lapack.dtrtri(factors[offset].T, lower=0, overwrite_c=1)  # (L')^-1 = (L^-1)'
                    if info != 0:  # a zero pivot: K_s is singular within the jitter
                        raise np.linalg.LinAlgError(f"the training covariance of draw {draw} is singular")
                    a2, c2 = amplitude[draw] ** 2, constant[draw] ** 2
                    projections = (inverse.T @ np.column_stack([np.ones(n), latent[draw]])).T  # L^-1 1, L^-1 z
                    w, u = projections
                    for part in row_blocks:  # BLAS-3 over a cache-sized block of rows
                        unit = stationary_matrices(features[part], x, lengthscales=lengthscale[draw : draw + 1])
                        solved = blas.dtrmm(a2, inverse, unit[0].T, lower=0, trans_a=1, overwrite_b=1)  # G, (n, rows)
                        projected = projections @ solved  # (2, rows): w'G, u'G
                        explained = np.einsum("ij,ij->j", solved, solved) + 2.0 * c2 * projected[0] + c2**2 * (w @ w)
                        mean[part, draw] = projected[1] + c2 * (w @ u)
                        variance[part, draw] = a2 + c2 - explained

            _draw_blocks(block, n_draws, PREDICTION_BLOCK_DRAWS)
            np.maximum(variance, 0.0, out=variance)
            return mean, variance

        return moments

    def _shared_hyperparameter_moments(
        self, x: np.ndarray, latent: np.ndarray, covariance: np.ndarray, lengthscale, amplitude: float, constant: float
    ) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """Exact-GP draws of the latents that share one set of hyperparameters: f* | z per draw, K factored once."""
        factor = scipy.linalg.cholesky(covariance, lower=True, check_finite=False)
        # K^-1 z per draw, (training obs, draws): the mean at x* is K(x, x*)' K^-1 z
        weights = scipy.linalg.cho_solve((factor, True), latent.T, check_finite=False)

        def moments(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            cross = self._covariance(x, features, lengthscale, amplitude, constant)
            v = scipy.linalg.solve_triangular(factor, cross, lower=True, check_finite=False)
            variance = np.maximum(amplitude**2 + constant**2 - (v**2).sum(axis=0), 0.0)
            return cross.T @ weights, variance[:, np.newaxis]

        return moments
