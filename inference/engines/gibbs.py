r"""Exact MCMC for the latent GP by data augmentation: ``fit(model, data, method="gibbs")``.

The model (:meth:`~bayesclass.models.LatentGaussianProcess.latent_gaussian_form`): log hyperparameters
:math:`\vartheta = (\log\ell, \log a, \log c)`, latents :math:`\mathbf z \sim \mathcal N(0, C_\vartheta)`
(exact GP: :math:`\mathbf z = f(X)`; HSGP: :math:`\mathbf z = \Phi\boldsymbol\beta`,
:math:`\boldsymbol\beta \sim \mathcal N(0, \mathrm{diag}\, s_\vartheta^2)`), labels
:math:`y_i \sim \text{Bernoulli}(g^{-1}(z_i))`. One sweep (one draw) is four steps, each leaving the
posterior :math:`p(\vartheta, \mathbf z \mid \mathbf y)` invariant, so the chain is exact MCMC:

1. **Augmentation.** Logit: :math:`\omega_i \sim PG(1, z_i)` (Polson, Scott & Windle 2013; drawn by the
   ``polyagamma`` package), after which the labels are Gaussian pseudo-observations
   :math:`\tilde y_i = \kappa_i / \omega_i` with variance :math:`1/\omega_i`,
   :math:`\kappa_i = y_i - \tfrac12`. Probit: :math:`z^*_i \sim \mathcal N(z_i, 1)` truncated to
   :math:`z^*_i > 0` where :math:`y_i = 1` and :math:`< 0` otherwise (Albert & Chib 1993; SciPy's
   ``truncnorm``): pseudo-observations :math:`\tilde y = z^*` with variance 1.
2. **Hyperparameters, latents integrated out.** Given the pseudo-observations, :math:`\mathbf z` is a
   Gaussian process regression, so :math:`p(\vartheta \mid \tilde y) \propto
   \mathcal N(\tilde y \mid 0, C_\vartheta + D)\, p(\vartheta)` with :math:`D` the pseudo-variances
   (HSGP: by the matrix determinant lemma in the weights, O(p^3) per evaluation after one O(n p^2)
   product per sweep; along the log constant, exact GP or HSGP, O(1) per evaluation after one factor of the block
   the constant does not touch). One coordinate-wise slice sweep over :math:`\vartheta` (stepping out and
   shrinkage, Neal 2003, :func:`univariate_slice`). Each lengthscale is sliced on the coordinate its prior names
   (``prior.lengthscale_slice_power``: :math:`\ell^{-1/2}` under the PC prior, whose tail on :math:`\log\ell` a
   bracket sized to the bulk crosses by a random walk; the Jacobian is in its density). During the burn-in every
   bracket starts at width 1 and is stepped out; at its end
   each coordinate's bracket is set to :data:`WIDTH_PER_MOVE` times its mean move over the burn-in's second half
   and fixed, without stepping out (Neal's m = 1; the constant's O(1) slice keeps stepping out), so every kept
   draw comes from one fixed kernel that leaves the posterior invariant. An exact-GP evaluation costs an (n, n)
   factor: 4.8 of them per lengthscale or amplitude update with stepping out at n = 400, about 2.2 with the
   adapted bracket (issue 30).
3. **Latents.** :math:`\mathbf z \mid \vartheta, \tilde y` is Gaussian and drawn exactly: exact GP by
   Matheron's rule, :math:`\mathbf z = \mathbf f + C (C + D)^{-1}(\tilde y - \mathbf f - \boldsymbol\epsilon)`,
   :math:`\mathbf f \sim \mathcal N(0, C)`, :math:`\boldsymbol\epsilon \sim \mathcal N(0, D)`; HSGP:
   :math:`\boldsymbol\beta = s \odot \mathbf v`,
   :math:`\mathbf v \sim \mathcal N(B^{-1} (s \odot \Phi^\top D^{-1}\tilde y), B^{-1})`,
   :math:`B = I + \mathrm{diag}(s)\,\Phi^\top D^{-1}\Phi\,\mathrm{diag}(s)`. Steps 2 and 3 together draw
   :math:`(\vartheta, \mathbf z)` jointly given the augmentation (a partially collapsed Gibbs step,
   van Dyk & Park 2008: their order matters). Then, ``form.latent_updates - 1`` times, steps 1 and 3 again
   with :math:`\vartheta` held (each pair leaves :math:`p(\mathbf z \mid \vartheta, \mathbf y)` invariant;
   the exact GP reuses the factor of :math:`C_\vartheta`, so each costs one factorisation of :math:`C + D`
   where step 2 costs ~7, ~12 in the burn-in; the first draw of step 3 reuses the factor of :math:`C + D` at the
   accepted point of step 2's last slice, unless that slice was the constant's). Where the data put a latent
   far from 0 (all labels of a region alike) the augmentation makes its chain slow, whatever the
   hyperparameters do: seed 004 at n = 400, 4 x 1000 draws, the slowest latent's bulk ESS was 127 with the
   hyperparameters updated and 110 with them held at their posterior medians (the hyperparameters' own ESS
   680-2500).
4. **Scale move.** :math:`(a, c, \mathbf z) \to (e^t a, e^t c, e^t \mathbf z)` with
   :math:`p(t) \propto p_a(e^t a)\, p_c(e^t c)\, e^{2t}\, p(\mathbf y \mid e^t \mathbf z)` (a generalised Gibbs
   step on the scale group, Liu & Sabatti 2000; the Gaussian prior's factor :math:`e^{-nt}` cancels the
   Jacobian :math:`e^{nt}`), by a univariate slice: O(n) per evaluation. Given the augmentation the
   amplitude and the size of the latents are tightly coupled; this move decouples them (bulk ESS of the
   amplitude 273 without it, 1079 with it, 2 x 1000 draws of seed 004 at n = 200).

Sample stats (group ``sample_stats``): ``lp``, the log density :math:`\log p(\vartheta, \mathbf z, \mathbf y)`
on the unconstrained scale (as NUTS reports it; HSGP: of the weights); ``hyperparameter_evaluations``, the log
densities step 2 evaluated; ``scale_factor``, :math:`e^t` of step 4. There are no divergences (nothing is
integrated) and no step size or tree depth: ``diverging`` is absent and
:func:`~bayesclass.inference.diagnose` counts none. r_hat, ESS and MCSE apply as to any MCMC.

The sweeps run in NumPy/SciPy (LAPACK) at one BLAS thread, the chains in parallel processes (``spawn``, the
draws in shared memory) where a chain's work outweighs starting a process (:func:`_parallel`), else in turn,
one sweep of each chain at a time (also inside a daemonic process, such as a Dask worker, which may start none); a
chain's draws do not depend on where it runs. A script without an ``if __name__ == "__main__":`` guard gets the
same processes, which do not run it again (:mod:`bayesclass.inference.engines._spawn`); a chain process that ends
before finishing its chain has the chain run here, with a warning. Nothing is compiled, so a fit
starts at once and new data never recompile. (The same sweep written in JAX, with blackjax's
``slice.build_coordinate_kernel``, measured 6-11 ms per sweep on one chain at n = 200 against 4 ms here, and
its two chains did not run in parallel on 2 cores: XLA's CPU runtime pays per small operation inside the slice
loops. The slice steps are therefore the 20 lines of :func:`univariate_slice`.) The first ``tune`` sweeps are
burn-in (where the slice brackets are sized, above) and are dropped; after them every ``form.thin``-th sweep is kept
(``draws`` kept draws: ``tune + thin * draws`` sweeps per chain). An interrupt with ``keep_partial`` keeps the
draws made so far (every chain cut to the shortest).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayesclass._interrupts import interrupt_handled, no_draws_yet
from bayesclass._lazy import lazy_import
from bayesclass.inference.engines._blackjax import _Progress
from bayesclass.inference.engines._spawn import spawn_skips_main_script
from bayesclass.inference.engines.sampler import Sampler
from bayesclass.inference.engines.sampling import SamplerSettings
from bayesclass.models._kernels import stationary_of_squared
from bayesclass.models._links import bernoulli_log_proba

if TYPE_CHECKING:
    import scipy
    import xarray as xr
else:
    scipy = lazy_import("scipy")
    xr = lazy_import("xarray")

__all__ = [
    "GibbsRun",
    "STAT_NAMES",
    "augmentation_draw",
    "latent_given_augmentation",
    "sample_gibbs",
    "univariate_slice",
]

#: the sample stats of a sweep (module docstring)
STAT_NAMES = ("lp", "hyperparameter_evaluations", "scale_factor")
#: initial bracket of every univariate slice, on the log scale of the hyperparameters
SLICE_WIDTH = 1.0
#: the most stepping-out expansions per side of a slice
MAX_EXPANSIONS = 20
#: after the burn-in, a hyperparameter's slice bracket is this many times its mean absolute move over the second half
#: of the burn-in, without stepping out (:meth:`_Chain.adapt_widths`)
WIDTH_PER_MOVE = 6.0
#: the fewest burn-in sweeps from which the brackets are adapted (a shorter burn-in keeps :data:`SLICE_WIDTH`)
MIN_ADAPT_SWEEPS = 40
#: the chains start at the priors' medians times exp(U(-JITTER, JITTER)) per hyperparameter
JITTER = 0.5
#: chains run in parallel processes from this much work: rows^2 (exact GP) or rows x basis functions (HSGP),
#: times sweeps (exact n = 100, 2,000 sweeps: 2e7, about 3 s a chain)
PARALLEL_WORK = 2e7
#: sweeps between progress updates
PROGRESS_EVERY = 100
#: one-lengthscale updates of the squared distances between two full sums (:meth:`_Chain._scaled_squared`)
SQUARED_UPDATES = 256


@dataclass(frozen=True)
class GibbsRun:
    """What :func:`sample_gibbs` returns: the draws (``posterior``), ``sample_stats`` and timings.

    Parameters
    ----------
    posterior : xarray.Dataset
        The kept draws (dims ``chain, draw, ...``): lengthscales, amplitude, constant and latents.
    sample_stats : xarray.Dataset
        The sample stats of every kept sweep (:data:`STAT_NAMES`).
    sampling_seconds : float
        Wall-clock seconds of the whole run, burn-in included.
    partial : bool, default False
        Whether an interrupt cut the run short and the draws made so far were kept (``keep_partial``).
    """

    posterior: xr.Dataset
    sample_stats: xr.Dataset
    sampling_seconds: float
    partial: bool = False


def augmentation_draw(
    link: str, labels: np.ndarray, latent: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Step 1 (module docstring): Gaussian pseudo-observations and their variances given the latents.

    Logit: Polya-Gamma ``omega ~ PG(1, z)`` (``polyagamma``), pseudo-observation ``(y - 1/2) / omega``,
    variance ``1 / omega``. Probit: ``z* ~ N(z, 1)`` truncated to the side of 0 the label says (SciPy), variance 1.

    Parameters
    ----------
    link : {"logit", "probit"}
        The inverse link of the Bernoulli likelihood.
    labels : numpy.ndarray of shape (n_obs,)
        The 0/1 labels.
    latent : numpy.ndarray of shape (n_obs,)
        The current latent values ``z`` at the training rows.
    rng : numpy.random.Generator
        The chain's random generator.

    Returns
    -------
    pseudo : numpy.ndarray of shape (n_obs,)
        The Gaussian pseudo-observations.
    variance : numpy.ndarray of shape (n_obs,)
        Their variances (``1 / omega`` for logit, 1 for probit).
    """
    if link == "logit":
        from polyagamma import random_polyagamma

        omega = np.asarray(random_polyagamma(1.0, latent, random_state=rng), dtype=float)
        return (labels - 0.5) / omega, 1.0 / omega
    positive = labels == 1
    lower = np.where(positive, -latent, -np.inf)
    upper = np.where(positive, np.inf, -latent)
    return latent + scipy.stats.truncnorm.rvs(lower, upper, random_state=rng), np.ones_like(latent)


def univariate_slice(
    log_density: Callable[[float], float],
    current: float,
    rng: np.random.Generator,
    *,
    width: float = SLICE_WIDTH,
    expansions: int = MAX_EXPANSIONS,
) -> tuple[float, float, int]:
    """One slice-sampling update of t along a line through t = 0 (Neal 2003, Fig. 3 stepping out, Fig. 5 shrinkage).

    Leaves the target invariant.

    Parameters
    ----------
    log_density : callable
        ``log_density(t)``: the target along the line, up to a constant.
    current : float
        ``log_density(0)``, finite.
    rng : numpy.random.Generator
        The chain's random generator.
    width : float, default :data:`SLICE_WIDTH`
        The initial bracket's width.
    expansions : int, default :data:`MAX_EXPANSIONS`
        At most ``expansions - 1`` stepping-out expansions of the bracket in all (Neal's m); 1: none, the bracket is
        the initial one (no evaluations at its ends).

    Returns
    -------
    t : float
        The new point on the line.
    value : float
        ``log_density(t)``.
    evaluations : int
        The evaluations of ``log_density`` made.
    """
    level = current - rng.standard_exponential()
    left = -width * rng.uniform()
    right = left + width
    limit = rng.integers(0, expansions)
    evaluations = 0
    for side in (-1, 1):
        budget = limit if side < 0 else expansions - 1 - limit
        while budget > 0:
            evaluations += 1
            end = left if side < 0 else right
            if not log_density(end) > level:
                break
            if side < 0:
                left -= width
            else:
                right += width
            budget -= 1
    while True:
        t = rng.uniform(left, right)
        value = log_density(t)
        evaluations += 1
        if value > level:
            return t, value, evaluations
        if t < 0:
            left = t
        else:
            right = t


def _cholesky(matrix: np.ndarray, *, overwrite: bool = False) -> np.ndarray | None:
    """The lower Cholesky factor (LAPACK potrf), or None where not positive definite.

    On a copy of ``matrix``, or with ``overwrite`` in ``matrix`` itself (symmetric: a C-ordered one is passed as its
    Fortran-ordered transpose).
    """
    if overwrite and matrix.flags.c_contiguous:
        matrix = matrix.T  # the same symmetric matrix, Fortran-ordered: potrf works in it without a copy
    factor, info = scipy.linalg.lapack.dpotrf(matrix, lower=1, clean=1, overwrite_a=int(overwrite))
    return factor if info == 0 else None


def _solve(factor: np.ndarray, right: np.ndarray, *, transposed: bool = False) -> np.ndarray:
    """``L^-1 right`` (or ``L'^-1 right``) for a lower Cholesky factor L: LAPACK's trtrs, without SciPy's checks.

    ``scipy.linalg.solve_triangular`` validated its arguments for 0.012 ms a call, as long as the solve itself at
    n = 226; a sweep makes about 25 solves.
    """
    return scipy.linalg.lapack.dtrtrs(factor, right, lower=1, trans=int(transposed))[0]


def _add_to_diagonal(matrix: np.ndarray, values) -> np.ndarray:
    """``matrix`` (square) with ``values`` added to its diagonal in place."""
    diagonal = np.einsum("ii->i", matrix)  # a writable view
    diagonal += values
    return matrix


def _eigen_root(covariance: np.ndarray) -> np.ndarray:
    """A square root R (R R' = C) of a covariance that LAPACK's Cholesky refuses by rounding: V diag(sqrt(w+)) V'.

    C = c^2 1 1' + a^2 (k + eps I) is positive definite, its smallest eigenvalues a^2 eps; with every lengthscale
    far out (inputs switched off) k is nearly 1 1', and where a << c those eigenvalues fall below the rounding of
    the c^2 entries and potrf fails. The eigendecomposition's eigenvalues below 0 are rounding: they are set to 0.
    """
    eigenvalues, vectors = np.linalg.eigh(covariance)
    return vectors * np.sqrt(np.maximum(eigenvalues, 0.0))


def latent_given_augmentation(
    covariance: np.ndarray,
    pseudo: np.ndarray,
    variance: np.ndarray,
    rng: np.random.Generator,
    *,
    prior_factor: np.ndarray | None = None,
    joint_factor: np.ndarray | None = None,
) -> np.ndarray:
    """Step 3 for the exact GP: one exact draw of z ~ N(0, C) given ``pseudo`` ~ N(z, diag(variance)).

    Matheron's rule: z = f + C (C + D)^-1 (pseudo - f - eps), f ~ N(0, C), eps ~ N(0, D); the draw is from
    N(C (C + D)^-1 pseudo, C - C (C + D)^-1 C).

    Parameters
    ----------
    covariance : numpy.ndarray of shape (n_obs, n_obs)
        The prior covariance C of the latents.
    pseudo : numpy.ndarray of shape (n_obs,)
        The pseudo-observations of step 1.
    variance : numpy.ndarray of shape (n_obs,)
        Their variances, the diagonal of D.
    rng : numpy.random.Generator
        The chain's random generator.
    prior_factor : numpy.ndarray of shape (n_obs, n_obs), optional
        The lower Cholesky factor of C, where the caller has it (computed here otherwise).
    joint_factor : numpy.ndarray of shape (n_obs, n_obs), optional
        The lower Cholesky factor of C + D, where the caller has it (computed here otherwise).

    Returns
    -------
    numpy.ndarray of shape (n_obs,)
        One draw of the latents z.

    Raises
    ------
    numpy.linalg.LinAlgError
        C + D is not positive definite (C itself, where rounding makes its Cholesky factor fail, is drawn from by
        its eigendecomposition).
    """
    if prior_factor is None:
        prior_factor = _cholesky(covariance)
    if prior_factor is None:
        prior_factor = _eigen_root(covariance)
    prior_draw = prior_factor @ rng.standard_normal(pseudo.size)
    noise = np.sqrt(variance) * rng.standard_normal(pseudo.size)
    factor = joint_factor
    if factor is None:
        factor = _cholesky(
            _add_to_diagonal(covariance.copy(), variance), overwrite=True
        )  # LAPACK's own (Fortran-ordered) factor: 2 O(n^2) solves follow
    if factor is None:
        raise np.linalg.LinAlgError("the latent covariance plus the pseudo-variances is not positive definite")
    return prior_draw + covariance @ _solve(factor, _solve(factor, pseudo - prior_draw - noise), transposed=True)


class _Chain:
    """One chain of the sweep of the module docstring on a :class:`LatentGaussianForm`."""

    def __init__(
        self,
        form,
        rng: np.random.Generator,
        log_theta: np.ndarray,
        *,
        update_hyperparameters: bool,
        latent_updates: int = 1,
        adapt_sweeps: int = 0,
    ):
        self.form, self.rng, self.update = form, rng, update_hyperparameters
        self.latent_updates = latent_updates
        # slice brackets: SLICE_WIDTH with stepping out during the burn-in (adapt_sweeps), then adapted and fixed
        self.adapt_sweeps = adapt_sweeps if adapt_sweeps >= MIN_ADAPT_SWEEPS else 0
        self.sweeps = 0
        self.widths = np.full(form.n_hyperparameters, SLICE_WIDTH)
        self.expansions = MAX_EXPANSIONS
        self._moves = np.zeros(form.n_hyperparameters)
        self._moves_counted = 0
        self._last_joint: tuple[bytes, np.ndarray | None] = (b"", None)
        self.log_theta = np.asarray(log_theta, dtype=float).copy()
        self.labels = np.asarray(form.labels, dtype=float)
        self.signs = 2.0 * self.labels - 1.0
        self.d = form.n_lengthscales
        self.shift = np.zeros(form.n_hyperparameters)
        self.shift[list(form.amplitude_and_constant)] = 1.0
        self.latent = np.zeros(form.labels.size if form.exact else form.basis.shape[1])
        self._stationary_key: bytes | None = None
        # the scaled squared distances r^2 = sum_j s_j S_j (s_j = 1 / l_j^2) at the log lengthscales
        # _squared_at, and the updates made to them since they were last summed in full
        self._squared_at: np.ndarray | None = None
        self._squared = np.zeros((0, 0))
        self._squared_updates = 0
        if form.exact:  # S_j = (x_j - x'_j)^2 per input, once: a new lengthscale costs O(n^2) and one exp
            inputs = np.asarray(form.inputs, dtype=float)
            self._squared_differences = (inputs[:, np.newaxis, :] - inputs[np.newaxis, :, :]) ** 2
            self._squared_differences = np.ascontiguousarray(np.moveaxis(self._squared_differences, -1, 0))

    # -- pieces ------------------------------------------------------------------------------------
    def _stationary(self, log_theta: np.ndarray) -> np.ndarray:
        """k(X, X) for the lengthscales of ``log_theta``, kept while they do not change.

        The amplitude and constant slices reuse it.
        """
        key = log_theta[: self.d].tobytes()
        if key != self._stationary_key:
            self._stationary_value = stationary_of_squared(self._scaled_squared(log_theta), self.form.kernel)
            self._stationary_key = key
        return self._stationary_value

    def _scaled_squared(self, log_theta: np.ndarray) -> np.ndarray:
        """r^2 = sum_j S_j / l_j^2 at the lengthscales of ``log_theta``.

        A slice along one log lengthscale changes one term: r^2 += (1/l_new^2 - 1/l_old^2) S_j, O(n^2) instead of
        the O(d n^2) sum (which was 58% of a sweep with 30 inputs). The sum is redone in full where more than one
        lengthscale changed and after :data:`SQUARED_UPDATES` updates, so rounding cannot accumulate (the two
        agree to ~1e-15 relative, tests/inference/test_gibbs.py); values below 0 by rounding are set to 0.
        """
        log_lengthscale = log_theta[: self.d]
        previous = self._squared_at
        changed = np.arange(self.d) if previous is None else np.flatnonzero(log_lengthscale != previous)
        if previous is not None and changed.size == 1 and self._squared_updates < SQUARED_UPDATES:
            j = changed[0]
            step = np.exp(-2.0 * log_lengthscale[j]) - np.exp(-2.0 * previous[j])
            self._squared += step * self._squared_differences[j]
            np.maximum(self._squared, 0.0, out=self._squared)
            self._squared_updates += 1
        elif changed.size > 0:
            scale = np.exp(-2.0 * log_lengthscale)
            self._squared = np.einsum("j,jab->ab", scale, self._squared_differences, optimize=False)  # no BLAS call
            self._squared_updates = 0
        self._squared_at = log_lengthscale.copy()
        return self._squared

    def _covariance(self, log_theta: np.ndarray, extra_diagonal=0.0) -> np.ndarray:
        amplitude2, constant2 = np.exp(2.0 * log_theta[self.d]), np.exp(2.0 * log_theta[self.d + 1])
        covariance = np.multiply(self._stationary(log_theta), amplitude2)
        covariance += constant2
        return _add_to_diagonal(covariance, amplitude2 * self.form.jitter + extra_diagonal)

    def _log_likelihood(self, values: np.ndarray) -> float:
        return float(bernoulli_log_proba(values, self.signs, self.form.link).sum())

    def _values(self) -> np.ndarray:
        return self.latent if self.form.exact else self.form.basis @ self.latent

    # -- one sweep ------------------------------------------------------------------------------------
    def sweep(self) -> tuple[float, int, float]:
        """Steps 1-4 of the module docstring; returns the sample stats (lp, evaluations, scale factor)."""
        pseudo, variance = augmentation_draw(self.form.link, self.labels, self._values(), self.rng)
        along_constant: Callable | None = None
        weight_system: Callable | None = None
        if self.form.exact:
            collapsed, along_constant = self._exact_densities(pseudo, variance)
        else:
            collapsed, weight_system, along_constant = self._weight_densities(pseudo, variance)
        evaluations = self._update_hyperparameters(collapsed, along_constant) if self.update else 0
        if weight_system is None:
            covariance = self._covariance(self.log_theta)
            prior_factor = _cholesky(covariance)  # for every latent draw of this sweep and for lp
            key, joint_factor = self._last_joint  # C + D at the hyperparameters step 2 ended on, if it factored it
            log_prior_latent, dimension = self._draw_exact_latent(
                pseudo, variance, covariance, prior_factor, joint_factor if key == self.log_theta.tobytes() else None
            )
            self._last_joint = (b"", None)
            for _ in range(self.latent_updates - 1):  # step 3b: the augmentation and the latents again
                pseudo, variance = augmentation_draw(self.form.link, self.labels, self.latent, self.rng)
                log_prior_latent, dimension = self._draw_exact_latent(pseudo, variance, covariance, prior_factor)
        else:
            log_prior_latent, dimension = self._draw_weights(weight_system)
            for _ in range(self.latent_updates - 1):
                pseudo, variance = augmentation_draw(self.form.link, self.labels, self._values(), self.rng)
                log_prior_latent, dimension = self._draw_weights(self._weight_densities(pseudo, variance)[1])
        lp, scale = self._scale_move(log_prior_latent, dimension)
        self.sweeps += 1
        if self.sweeps == self.adapt_sweeps:
            self.adapt_widths()
        return lp, evaluations, scale

    def adapt_widths(self) -> None:
        """At the end of the burn-in: every bracket :data:`WIDTH_PER_MOVE` times its coordinate's mean move, fixed.

        The moves are those of the second half of the burn-in. From then on the brackets are not stepped out (but
        the constant's, whose evaluations are O(1)): a slice update with a fixed bracket leaves its target invariant
        (Neal 2003, m = 1), and every kept draw is made with the same brackets. A slice evaluation of a lengthscale
        or the amplitude costs an (n, n) factor; stepping out a bracket of width 1 cost about 4.8 of them per
        update at n = 400, a bracket sized to the conditional's spread about 2. (Fixing the brackets halfway through
        the burn-in too was tried: the moves under a fixed bracket are shorter than under stepping out, so the
        final brackets came out 0.8 times as wide, shrinking with every such round.)
        """
        if self._moves_counted == 0:
            return
        mean_move = self._moves / self._moves_counted
        self.widths = np.clip(WIDTH_PER_MOVE * mean_move, 1e-3, 2.0 * MAX_EXPANSIONS * SLICE_WIDTH)
        self.expansions = 1

    def _exact_densities(self, pseudo: np.ndarray, variance: np.ndarray) -> tuple[Callable, Callable]:
        """Step 2's collapsed log density of the exact GP, and its O(1) form along the log constant."""
        form = self.form

        def collapsed(log_theta):  # log N(pseudo | 0, C + D) + log prior, up to a constant
            factor = _cholesky(self._covariance(log_theta, variance), overwrite=True)  # a new matrix: no copy
            # the last accepted slice point is the last one evaluated: its factor serves step 3's first draw
            self._last_joint = (log_theta.tobytes(), factor)
            if factor is None:
                return -np.inf
            whitened = _solve(factor, pseudo)
            return float(-np.log(np.diag(factor)).sum() - 0.5 * whitened @ whitened + form.log_prior(log_theta))

        def along_constant(log_theta):
            """``collapsed`` along the log constant: C + D = c^2 1 1' + M, with M fixed.

            One factor of M, the matrix determinant lemma and Sherman-Morrison give every value in O(1).
            """
            rest = log_theta.copy()
            rest[self.d + 1] = -np.inf  # c = 0: M alone
            factor = _cholesky(self._covariance(rest, variance))
            if factor is None:
                return collapsed
            ones, data = scipy.linalg.cho_solve(
                (factor, True), np.column_stack([np.ones_like(pseudo), pseudo]), check_finite=False
            ).T
            log_det, quadratic = 2 * np.log(np.diag(factor)).sum(), pseudo @ data
            ones_ones, ones_data = ones.sum(), data.sum()

            def value(point):
                c2 = np.exp(2.0 * point[self.d + 1])
                denominator = 1.0 + c2 * ones_ones
                result = -0.5 * (log_det + np.log(denominator)) - 0.5 * (quadratic - c2 * ones_data**2 / denominator)
                return float(result + form.log_prior(point))

            return value

        return collapsed, along_constant

    def _weight_densities(self, pseudo: np.ndarray, variance: np.ndarray) -> tuple[Callable, Callable, Callable]:
        """Step 2's collapsed log density of the HSGP (in the weights), its weights' system, its form along c.

        Along the log constant each value costs O(1) after one factor (``along_constant``), as the exact GP's.
        """
        form = self.form
        precision = 1.0 / variance
        # Phi' D^-1 Phi, once per sweep: its lower triangle (BLAS syrk, half a product's work), all that potrf reads
        gram = scipy.linalg.blas.dsyrk(1.0, (form.basis * np.sqrt(precision)[:, np.newaxis]).T, lower=1)
        projected = form.basis.T @ (pseudo * precision)
        last: list = [b"", None]  # the last point's system: step 2 ends on the point whose weights step 3 draws

        def weight_system(log_theta):
            if log_theta.tobytes() == last[0]:
                return last[1]
            last[0], last[1] = log_theta.tobytes(), weights(log_theta)
            return last[1]

        def weights(log_theta):
            sd = form.prior_sd(log_theta)
            system = np.multiply(gram, sd[:, np.newaxis], order="F")  # Fortran-ordered: potrf reads its lower part
            system *= sd
            factor = _cholesky(_add_to_diagonal(system, 1.0), overwrite=True)
            if factor is None:
                return sd, None, None
            return sd, factor, _solve(factor, sd * projected)

        def collapsed(log_theta):
            _, factor, whitened = weight_system(log_theta)
            if factor is None:
                return -np.inf
            return float(-np.log(np.diag(factor)).sum() + 0.5 * whitened @ whitened + form.log_prior(log_theta))

        def along_constant(log_theta):
            """``collapsed`` along the log constant c, the prior sd of the constant basis function (the first).

            With S = diag(c, s) (s fixed on this line), I + S G S has the fixed block R = I + s G_rr s; by its factor
            L, u = L^-1 s g_r0 and v = L^-1 s p_r (p: the projected pseudo-observations), its determinant is
            det R (1 + c^2 k) and the quadratic v'v + c^2 q^2 / (1 + c^2 k), k = g_00 - u'u, q = p_0 - u'v.
            """
            sd = form.prior_sd(log_theta)
            rest = np.multiply(gram[1:, 1:], sd[1:, np.newaxis], order="F")
            rest *= sd[1:]
            factor = _cholesky(_add_to_diagonal(rest, 1.0), overwrite=True)
            if factor is None:
                return collapsed
            u, v = _solve(factor, np.column_stack([sd[1:] * gram[1:, 0], sd[1:] * projected[1:]])).T
            log_det, quadratic = 2.0 * np.log(np.diag(factor)).sum(), v @ v
            k, q = gram[0, 0] - u @ u, projected[0] - u @ v

            def value(point):
                c2 = np.exp(2.0 * point[self.d + 1])
                schur = 1.0 + c2 * k
                if not schur > 0:
                    return -np.inf
                result = -0.5 * (log_det + np.log(schur)) + 0.5 * (quadratic + c2 * q * q / schur)
                return float(result + form.log_prior(point))

            return value

        return collapsed, weight_system, along_constant

    def _update_hyperparameters(self, collapsed: Callable, along_constant: Callable | None) -> int:
        """Step 2: one coordinate-wise slice sweep over the log hyperparameters; returns the evaluations made."""
        form, rng = self.form, self.rng
        current = collapsed(self.log_theta)
        evaluations = 1
        counted = self.adapt_sweeps > 0 and self.sweeps >= self.adapt_sweeps // 2 and self.sweeps < self.adapt_sweeps
        for index in rng.permutation(form.n_hyperparameters):
            axis = np.zeros(form.n_hyperparameters)
            axis[index] = 1.0
            base = self.log_theta
            cheap = along_constant is not None and index == self.d + 1  # O(1) per evaluation: stepped out always
            density = along_constant(base) if along_constant is not None and cheap else collapsed

            power = form.prior.lengthscale_slice_power if index < self.d else 0.0
            start = np.exp(power * base[index]) if power else 0.0

            def point(t: float, base=base, axis=axis, index=index, power=power, start=start) -> np.ndarray:
                # log scale, or (power p != 0) the slice coordinate s = e^(p log value), at start + t
                return base + (np.log(start + t) / power - base[index] if power else t) * axis

            def on_line(t: float, density=density, power=power, start=start, point=point) -> float:
                if not power:
                    return density(point(t))
                # the density of s: that of the log value times |d log value / d s| = 1 / (|p| s), p dropped
                return density(point(t)) - np.log(start + t) if start + t > 0 else -np.inf

            expansions = MAX_EXPANSIONS if cheap else self.expansions
            if power:
                current -= np.log(start)
            t, current, used = univariate_slice(on_line, current, rng, width=self.widths[index], expansions=expansions)
            self.log_theta = point(t)
            if power:
                current += np.log(start + t)
            evaluations += used
            if counted:
                self._moves[index] += abs(t)
        self._moves_counted += int(counted)
        return evaluations

    def _draw_exact_latent(
        self,
        pseudo: np.ndarray,
        variance: np.ndarray,
        covariance: np.ndarray,
        prior_factor: np.ndarray | None,
        joint_factor: np.ndarray | None = None,
    ) -> tuple[float, int]:
        """Step 3 for the exact GP (C and its factor given); returns the latents' log prior density and dimension."""
        self.latent = latent_given_augmentation(
            covariance, pseudo, variance, self.rng, prior_factor=prior_factor, joint_factor=joint_factor
        )
        if prior_factor is None:  # C refused by Cholesky (rounding, :func:`_eigen_root`): its eigendecomposition
            eigenvalues, vectors = np.linalg.eigh(covariance)
            eigenvalues = np.maximum(eigenvalues, np.finfo(float).tiny)
            projected = vectors.T @ self.latent
            return -0.5 * np.log(eigenvalues).sum() - 0.5 * projected @ (projected / eigenvalues), self.latent.size
        whitened = _solve(prior_factor, self.latent)
        log_prior_latent = -np.log(np.diag(prior_factor)).sum() - 0.5 * whitened @ whitened
        return log_prior_latent, self.latent.size

    def _draw_weights(self, weight_system: Callable) -> tuple[float, int]:
        """Step 3 for the HSGP (in the weights); returns the free weights' log prior density and their number."""
        sd, factor, whitened = weight_system(self.log_theta)
        standard = _solve(factor, whitened + self.rng.standard_normal(whitened.size), transposed=True)
        self.latent = sd * standard
        # a weight whose prior sd underflows to 0 (a frequency far above the lengthscale's) is fixed at 0
        free = sd > 0
        log_prior_latent = -np.log(sd[free]).sum() - 0.5 * standard[free] @ standard[free]
        return log_prior_latent, int(free.sum())

    def _scale_move(self, log_prior_latent: float, dimension: int) -> tuple[float, float]:
        """Step 4 (where the hyperparameters are updated) and the sweep's lp; returns (lp, scale factor)."""
        form = self.form
        values = self._values()
        scale = 0.0
        if self.update:
            base = self.log_theta

            def scale_density(t):
                return form.log_prior(base + t * self.shift) + self._log_likelihood(np.exp(t) * values)

            scale, _, _ = univariate_slice(scale_density, scale_density(0.0), self.rng)
            self.log_theta = base + scale * self.shift
            self.latent = np.exp(scale) * self.latent
            values = np.exp(scale) * values
        lp = (
            form.log_prior(self.log_theta)
            + log_prior_latent
            - dimension * scale
            - 0.5 * dimension * np.log(2 * np.pi)
            + self._log_likelihood(values)
        )
        return float(lp), float(np.exp(scale))


def sample_gibbs(
    form,
    *,
    settings: SamplerSettings,
    random_seed: int,
    update_hyperparameters: bool = True,
    initial_log_theta: np.ndarray | None = None,
) -> GibbsRun:
    """Run ``settings.chains`` chains of ``tune + thin * draws`` sweeps on ``form`` (module docstring).

    Parameters
    ----------
    form : LatentGaussianForm
        The family's latent-Gaussian form (labels, inputs or basis, kernel, link, priors of the log
        hyperparameters).
    settings : SamplerSettings
        ``draws`` (kept draws, each ``form.thin`` sweeps apart), ``tune`` (burn-in sweeps, dropped), ``chains``,
        ``progressbar`` and ``keep_partial`` apply (``draws`` and ``tune`` set: ``fit`` sets the family's defaults);
        ``target_accept`` and ``backend`` are NUTS settings and play no part.
    random_seed : int
        Seed of the chains' generators (each chain's own stream; its draws do not depend on where it runs).
    update_hyperparameters : bool, default True
        False, with ``initial_log_theta``, holds the hyperparameters fixed (steps 1 and 3 only: the latent
        sampler alone, for tests).
    initial_log_theta : numpy.ndarray, optional
        The log hyperparameters the chains start at (jittered where they are updated); the form's own
        initial point by default.

    Returns
    -------
    GibbsRun
        ``posterior``: the variables that ``form.names`` names (a ``LatentGaussianNames``, filled in by the
        family): the lengthscales (chain, draw, feature dim), amplitude, constant and the latents (chain, draw,
        latent dim); ``sample_stats``: :data:`STAT_NAMES`.
    """
    from threadpoolctl import threadpool_limits

    _load_lapack()
    latent_updates, thin = form.latent_updates, form.thin
    start = time.perf_counter()
    seeds = np.random.SeedSequence(random_seed).spawn(settings.chains)
    base = form.initial_log_theta() if initial_log_theta is None else np.asarray(initial_log_theta, dtype=float)
    draws, tune = settings.resolved_counts()
    total = tune + draws * thin
    options = {"latent_updates": latent_updates, "adapt_sweeps": tune}  # every chain's, wherever it runs
    starts = []
    for seed in seeds:  # each chain's generator draws its own start, then sweeps: the same draws run anywhere
        jitter = np.random.default_rng(seed.spawn(1)[0]).uniform(-JITTER, JITTER, base.size)
        starts.append(base + (jitter if update_hyperparameters else 0.0))
    size = form.labels.size if form.exact else form.basis.shape[1]
    shapes = {
        "theta": (len(seeds), total, base.size),
        "latents": (len(seeds), total, size),
        "stats": (len(seeds), total, len(STAT_NAMES)),
        "done": (len(seeds),),
        "stop": (1,),
    }
    processes = (
        settings.chains > 1
        and (os.cpu_count() or 1) > 1
        and _parallel(form, total)
        and not multiprocessing.current_process().daemon  # a daemonic process (a Dask worker) may have no children
    )
    progress = _Progress(
        total, enabled=settings.progressbar, label="Gibbs (data augmentation)", chains=len(seeds), unit="sweeps"
    )
    memory = _SharedArrays(shapes) if processes else None
    arrays = memory.arrays if memory is not None else {name: np.zeros(shape) for name, shape in shapes.items()}
    partial = False
    try:
        if memory is not None:
            _run_in_processes(form, seeds, starts, total, update_hyperparameters, options, memory, progress)
        else:
            with threadpool_limits(limits=1, user_api="blas"):
                chains = [
                    _Chain(
                        form,
                        np.random.default_rng(seed),
                        log_theta,
                        update_hyperparameters=update_hyperparameters,
                        **options,
                    )
                    for seed, log_theta in zip(seeds, starts, strict=True)
                ]
                for step in range(total):  # step-major: an interrupt leaves every chain as long as the others
                    for index, chain in enumerate(chains):
                        _record(arrays, index, step, chain)
                    if (step + 1) % PROGRESS_EVERY == 0:
                        for index in range(len(chains)):
                            progress.advance(PROGRESS_EVERY, index)
    except KeyboardInterrupt:
        if not settings.keep_partial:
            raise
        done = int(arrays["done"].min())
        if done < tune + thin:  # not one kept draw
            where = f"sweep {done} of {tune}" if done < tune else f"sweep {done}, before the first kept draw"
            raise no_draws_yet(f"during the burn-in ({where})") from None
        interrupt_handled()
        partial = True
    finally:
        for index, done in enumerate(arrays["done"]):  # every chain's last sweeps
            progress.update(index, int(done))
        progress.close()
        if memory is not None:
            arrays = {name: value.copy() for name, value in arrays.items()}
            memory.close()
    posterior, sample_stats = _kept_draws(form, arrays, tune, thin)
    return GibbsRun(posterior, sample_stats, time.perf_counter() - start, partial)


def _kept_draws(form, arrays: dict, tune: int, thin: int) -> tuple[xr.Dataset, xr.Dataset]:
    """The posterior and sample stats of every ``thin``-th sweep after the first ``tune`` (all chains as long)."""
    theta, latent, stats, done = arrays["theta"], arrays["latents"], arrays["stats"], arrays["done"].astype(int)
    kept = slice(tune + thin - 1, int(done.min()), thin)
    d, names = form.n_lengthscales, form.names
    coords = {"chain": np.arange(arrays["done"].size), "draw": np.arange(len(range(kept.start, kept.stop, thin)))}
    posterior = xr.Dataset(
        {
            names.lengthscale: (("chain", "draw", names.feature_dim), theta[:, kept, :d]),
            names.amplitude: (("chain", "draw"), theta[:, kept, d]),
            names.constant: (("chain", "draw"), theta[:, kept, d + 1]),
            names.latent: (("chain", "draw", names.latent_dim), latent[:, kept]),
        },
        coords=coords,
    )
    stats = stats[:, kept]
    sample_stats = xr.Dataset(
        {
            "lp": (("chain", "draw"), stats[..., 0]),
            "hyperparameter_evaluations": (("chain", "draw"), stats[..., 1].astype(np.int64)),
            "scale_factor": (("chain", "draw"), stats[..., 2]),
        },
        coords=coords,
    )
    return posterior, sample_stats


def _load_lapack() -> None:
    """Load SciPy's LAPACK (and the special functions) now.

    ``threadpool_limits`` holds only the BLAS libraries already loaded to one thread, and SciPy's own
    OpenBLAS loads with ``scipy.linalg`` (imported lazily). Left to load inside the limit, it ran every
    chain process at two threads on two cores: 14 s instead of 8 s.
    """
    import scipy.linalg
    import scipy.special
    import scipy.stats  # noqa: F401


def _record(arrays: dict, index: int, step: int, chain: _Chain) -> None:
    """One sweep of ``chain`` written to row ``step`` of chain ``index``."""
    arrays["stats"][index, step] = chain.sweep()
    arrays["theta"][index, step] = np.exp(chain.log_theta)
    arrays["latents"][index, step] = chain.latent
    arrays["done"][index] = step + 1


def _parallel(form, sweeps: int) -> bool:
    """Whether the chains run in parallel processes: where a chain's work outweighs starting a process.

    Starting one costs about 1 s (a fresh interpreter imports NumPy, SciPy and this module). Threads do not
    help: the Python between LAPACK calls holds the GIL (2 chains of 2,000 sweeps at n = 200: 15.8 s one
    after another, 19.5 s in two threads).
    """
    rows = form.labels.size
    work = rows * rows if form.exact else rows * form.basis.shape[1]  # the dominant cost per evaluation
    return work * sweeps >= PARALLEL_WORK


class _SharedArrays:
    """The draws of every chain in shared memory, written by the chain processes (``stop``: set to 1 to stop)."""

    def __init__(self, shapes: dict[str, tuple[int, ...]], names: dict[str, str] | None = None) -> None:
        from multiprocessing import shared_memory

        self.shapes = shapes
        self.blocks = {
            name: shared_memory.SharedMemory(
                name=None if names is None else names[name],
                create=names is None,
                size=max(8, 8 * int(np.prod(shape))),
            )
            for name, shape in shapes.items()
        }
        self.arrays = {
            name: np.ndarray(shape, dtype=float, buffer=self.blocks[name].buf) for name, shape in shapes.items()
        }
        if names is None:
            for array in self.arrays.values():
                array.fill(0.0)
        self.owner = names is None

    @property
    def names(self) -> dict[str, str]:
        return {name: block.name for name, block in self.blocks.items()}

    def close(self) -> None:
        self.arrays = {}
        for block in self.blocks.values():
            block.close()
            if self.owner:
                block.unlink()


def _chain_process(form, seed, log_theta, total, update, options, shapes, names, index, errors, parent) -> None:
    """One chain in a child process: sweeps written to the shared arrays until done, ``stop`` set or the parent gone.

    A parent killed (SIGKILL) could not set ``stop``; nobody reads the chain's draws then.
    """
    import signal
    import traceback

    from threadpoolctl import threadpool_limits

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the chains (``stop``) and keeps their draws
    _load_lapack()
    memory = _SharedArrays(shapes, names)
    try:
        arrays = memory.arrays
        chain = _Chain(form, np.random.default_rng(seed), log_theta, update_hyperparameters=update, **options)
        with threadpool_limits(limits=1, user_api="blas"):
            for step in range(total):
                if arrays["stop"][0] or os.getppid() != parent:
                    return
                _record(arrays, index, step, chain)
    except BaseException:  # noqa: BLE001  (sent to the parent, which raises it)
        errors.put(f"chain {index}: {traceback.format_exc()}")
    finally:
        memory.close()


def _run_in_processes(form, seeds, starts, total, update, options, memory: _SharedArrays, progress) -> None:
    """Run the first chain here and each other one in a process of its own, showing progress.

    The processes are started by ``spawn`` (nothing inherited from this process's threads; a script without a
    main guard is not run again in them, :func:`~bayesclass.inference.engines._spawn.spawn_skips_main_script`),
    at most one per core at a time; on an interrupt, stop them all and keep what they wrote.
    """
    with spawn_skips_main_script():
        _run_chain_processes(form, seeds, starts, total, update, options, memory, progress)


def _run_chain_processes(form, seeds, starts, total, update, options, memory: _SharedArrays, progress) -> None:
    """The body of :func:`_run_in_processes`."""
    from threadpoolctl import threadpool_limits

    context = multiprocessing.get_context("spawn")
    errors, parent = context.SimpleQueue(), os.getpid()
    processes = [
        context.Process(
            target=_chain_process,
            args=(form, seed, log_theta, total, update, options, memory.shapes, memory.names, index, errors, parent),
            daemon=True,
            name=f"bayesclass-gibbs-chain-{index}",
        )
        for index, (seed, log_theta) in enumerate(zip(seeds, starts, strict=True))
        if index > 0
    ]
    cores = os.cpu_count() or 1
    slots = max(1, cores - 1)  # while this process runs the first chain, one core is its own
    arrays, pending = memory.arrays, list(processes)
    running: list[multiprocessing.process.BaseProcess] = []

    def tend() -> None:
        """Start waiting processes as slots free up, raise a chain's error, advance the progress bar."""
        nonlocal running
        running = [process for process in running if process.is_alive()]
        while pending and len(running) < slots:
            running.append(pending.pop(0))
            running[-1].start()
        if not errors.empty():
            raise RuntimeError(f"a Gibbs chain failed:\n{errors.get()}")
        for index, done in enumerate(arrays["done"]):
            progress.update(index, int(done))

    try:
        tend()
        chain = _Chain(form, np.random.default_rng(seeds[0]), starts[0], update_hyperparameters=update, **options)
        with threadpool_limits(limits=1, user_api="blas"):
            for step in range(total):
                _record(arrays, 0, step, chain)
                if (step + 1) % PROGRESS_EVERY == 0:
                    tend()
        slots = cores  # the first chain is done: every core runs chain processes
        while pending or running:
            time.sleep(0.02)
            tend()
        _rerun_lost_chains(form, seeds, starts, total, update, options, arrays, processes)
    finally:  # an interrupt, an error, or the end: every chain process stops and is joined
        arrays["stop"][0] = 1.0
        for process in processes:
            if process.pid is not None:
                process.join()


def _rerun_lost_chains(form, seeds, starts, total, update, options, arrays, processes) -> None:
    """Run here every chain whose process ended without finishing it (it could not start, or died), with a warning.

    A chain's draws depend only on its seed and start, so a chain run again here is the one its process would
    have drawn; a chain process that fails silently can never leave an empty or short chain behind.
    """
    import warnings

    from threadpoolctl import threadpool_limits

    lost = [index for index in range(1, len(seeds)) if arrays["done"][index] < total]
    if not lost:
        return
    codes = {process.name: process.exitcode for process in processes}
    warnings.warn(
        f"Gibbs chain process(es) {lost} ended before finishing (exit codes {codes}); their chains ran in this "
        "process instead, one after another",
        RuntimeWarning,
        stacklevel=2,
    )
    with threadpool_limits(limits=1, user_api="blas"):
        for index in lost:
            chain = _Chain(
                form,
                np.random.default_rng(seeds[index]),
                starts[index],
                update_hyperparameters=update,
                **options,
            )
            for step in range(total):
                _record(arrays, index, step, chain)


def _run(model, training, settings: SamplerSettings, random_seed: int):
    """The ``gibbs`` method on a family that has a latent-Gaussian form (nothing is compiled)."""
    from bayesclass.inference.engines.sampler import SamplerRun

    run = sample_gibbs(model.latent_gaussian_form(training), settings=settings, random_seed=random_seed)
    return SamplerRun(
        posterior=run.posterior,
        sample_stats=run.sample_stats,
        sampler_settings={"draws": settings.draws, "tune": settings.tune, "chains": settings.chains},
        sampling_seconds=run.sampling_seconds,
        partial=run.partial,
    )


def _stored_steps(model, training, settings: SamplerSettings) -> int:
    """Sweeps per chain :func:`sample_gibbs` holds: the burn-in and every sweep of the kept (thinned) draws."""
    draws, tune = settings.resolved_counts()
    return tune + draws * model.latent_gaussian_form(training).thin


def _values_per_draw(model, training) -> int:
    """Values one kept draw holds: the log hyperparameters and the latents (nothing is built: no PyMC model)."""
    form = model.latent_gaussian_form(training)
    return form.n_hyperparameters + (form.labels.size if form.exact else form.basis.shape[1])


def _accepts(model) -> bool:
    return hasattr(model, "latent_gaussian_form")


SAMPLER = Sampler(
    name="gibbs",
    description="exact data-augmentation Gibbs sampler of a latent Gaussian model",
    accepts=_accepts,
    run=_run,
    settings=("draws", "tune", "chains", "progressbar", "keep_partial"),
    stored_steps=_stored_steps,
    values_per_draw=_values_per_draw,
)
