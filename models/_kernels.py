"""Covariance functions of the latent GP and their Hilbert-space (HSGP) expansion.

K(x, x') = c^2 + a^2 k(r), r the ARD-scaled distance, k the squared exponential
``exp(-r^2 / 2)`` or Matern 5/2 ``(1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)``; their
derivatives with respect to the log hyperparameters (type-II maximum likelihood);
and the HSGP basis: the Dirichlet eigenfunctions of the Laplacian on [-L, L]^d with
the kernels' power spectral densities (Solin & Saerkkae 2020, Riutort-Mayol et al. 2023).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np

from bayesclass._lazy import lazy_import

if TYPE_CHECKING:
    import pymc as pm
else:
    pm = lazy_import("pymc")

__all__ = [
    "KernelName",
    "checked_lengthscale",
    "hsgp_basis",
    "hsgp_frequencies",
    "kernel_gradients",
    "kernel_matrices",
    "kernel_matrix",
    "spectral_density",
    "stationary_kernel",
    "stationary_matrices",
    "stationary_of_squared",
]

KernelName = Literal["exp_quad", "matern52"]


def kernel_matrix(
    x1: np.ndarray,
    x2: np.ndarray,
    *,
    lengthscale: float | np.ndarray,
    amplitude: float,
    constant: float = 0.0,
    kernel: KernelName = "exp_quad",
) -> np.ndarray:
    """K(x1, x2) = constant^2 + amplitude^2 k(r), r the ARD-scaled distance (module docstring).

    Parameters
    ----------
    x1, x2 : array of shape (n1, d), (n2, d)
    lengthscale : float or array of shape (d,)
        One lengthscale per input dimension (ARD) or one for all.
    amplitude, constant : float
        Standard deviations of the stationary term and of the constant term.
    kernel : {"exp_quad", "matern52"}
        ``exp(-r^2 / 2)`` or ``(1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)``.
    """
    scale = checked_lengthscale(lengthscale, np.shape(x1)[1], kernel)
    a, b = np.asarray(x1, dtype=float) / scale, np.asarray(x2, dtype=float) / scale
    return constant**2 + amplitude**2 * stationary_kernel(a, b, kernel)


def kernel_matrices(
    x1: np.ndarray,
    x2: np.ndarray,
    *,
    lengthscales: np.ndarray,
    amplitudes: np.ndarray,
    constants: np.ndarray,
    kernel: KernelName = "exp_quad",
) -> np.ndarray:
    """K_s(x1, x2) of :func:`kernel_matrix` for a batch of hyperparameter draws s (:func:`stationary_matrices`).

    Parameters
    ----------
    x1, x2 : array of shape (n1, d), (n2, d)
    lengthscales : array of shape (draws, d)
        Each draw's lengthscales (ARD), positive and finite (not checked: these are posterior draws).
    amplitudes, constants : array of shape (draws,)
        Each draw's amplitude and constant standard deviation.
    kernel : {"exp_quad", "matern52"}
        As in :func:`kernel_matrix`.

    Returns
    -------
    numpy.ndarray of shape (draws, n1, n2)
        ``constants[s]^2 + amplitudes[s]^2 k(r_s)``, :func:`kernel_matrix` of draw ``s`` up to rounding.
    """
    values = stationary_matrices(x1, x2, lengthscales=lengthscales, kernel=kernel)
    values *= (np.asarray(amplitudes, dtype=float) ** 2)[:, np.newaxis, np.newaxis]
    values += (np.asarray(constants, dtype=float) ** 2)[:, np.newaxis, np.newaxis]
    return values


def stationary_matrices(
    x1: np.ndarray, x2: np.ndarray, *, lengthscales: np.ndarray, kernel: KernelName = "exp_quad"
) -> np.ndarray:
    r"""k(r_s) between the rows of ``x1`` and ``x2`` for a batch of lengthscale draws s, in batched matrix products.

    The exponent of the squared exponential, :math:`-\tfrac12 |a - b|^2 = a \cdot b - \tfrac12 |a|^2 -
    \tfrac12 |b|^2` (:math:`a, b` the inputs divided by the lengthscales), is ONE product of the inputs augmented
    by their squared norms and a column of ones, capped at 0 against rounding and exponentiated in place: three
    passes over the result, where a prediction spends most of its memory traffic.

    Parameters
    ----------
    x1, x2 : array of shape (n1, d), (n2, d)
    lengthscales : array of shape (draws, d)
        Each draw's lengthscales (ARD), positive and finite (not checked: these are posterior draws).
    kernel : {"exp_quad", "matern52"}
        As in :func:`kernel_matrix`.

    Returns
    -------
    numpy.ndarray of shape (draws, n1, n2)
        The unit-amplitude stationary kernel of each draw.
    """
    scale = np.asarray(lengthscales, dtype=float)[:, np.newaxis, :]  # (draws, 1, d)
    a, b = np.asarray(x1, dtype=float) / scale, np.asarray(x2, dtype=float) / scale
    ones_a, ones_b = np.ones((*a.shape[:2], 1)), np.ones((*b.shape[:2], 1))
    left = np.concatenate([a, -0.5 * (a**2).sum(axis=-1, keepdims=True), ones_a], axis=-1)
    right = np.concatenate([b, ones_b, -0.5 * (b**2).sum(axis=-1, keepdims=True)], axis=-1)
    exponent = left @ np.ascontiguousarray(right.transpose(0, 2, 1))  # -|a - b|^2 / 2, (draws, n1, n2)
    np.minimum(exponent, 0.0, out=exponent)
    if kernel == "exp_quad":
        return np.exp(exponent, out=exponent)
    exponent *= -2.0  # the squared distances
    return stationary_of_squared(exponent, kernel)


def stationary_kernel(scaled1, scaled2, kernel: KernelName, xp=np):
    """k(r) between the rows of two arrays of inputs already divided by the lengthscales.

    ``exp(-r^2 / 2)`` (exp_quad) or ``(1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)`` (matern52).

    ``xp`` is the array namespace (NumPy, or ``jax.numpy`` inside a traced sampler: one formula for both).
    """
    squared = xp.maximum(
        (scaled1**2).sum(1)[:, np.newaxis] + (scaled2**2).sum(1)[np.newaxis, :] - 2 * scaled1 @ scaled2.T, 0.0
    )
    return stationary_of_squared(squared, kernel, xp)


def stationary_of_squared(squared, kernel: KernelName, xp=np):
    """k(r) from the squared ARD-scaled distances r^2 (:func:`stationary_kernel`)."""
    if kernel == "exp_quad":
        return xp.exp(-0.5 * squared)
    r = xp.sqrt(5.0 * squared + (0.0 if xp is np else 1e-30))  # (a traced sqrt needs a finite gradient at 0)
    return (1.0 + r + r**2 / 3.0) * xp.exp(-r)


def checked_lengthscale(lengthscale, n_inputs: int, kernel: str) -> np.ndarray:
    """The lengthscales broadcast to (n_inputs,), or a ValueError for a bad kernel name or lengthscale."""
    if kernel not in ("exp_quad", "matern52"):
        raise ValueError(f"kernel must be 'exp_quad' or 'matern52', got {kernel!r}")
    scale = np.broadcast_to(np.asarray(lengthscale, dtype=float), (n_inputs,))
    if not (np.all(np.isfinite(scale)) and np.all(scale > 0)):
        raise ValueError(f"lengthscale must be positive and finite, got {lengthscale!r}")
    return scale


def kernel_gradients(
    x: np.ndarray,
    *,
    lengthscale: np.ndarray,
    amplitude: float,
    constant: float,
    kernel: KernelName = "exp_quad",
    jitter: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """K(x, x) + jitter a^2 I and its derivatives with respect to (log l_1 .. log l_d, log a, log c).

    Returns
    -------
    covariance : array (n, n)
    gradients : array (d + 2, n, n)
    """
    x = np.asarray(x, dtype=float)
    scale = checked_lengthscale(lengthscale, x.shape[1], kernel)
    n = x.shape[0]
    scaled_differences = (x[:, np.newaxis, :] - x[np.newaxis, :, :]) ** 2 / scale**2  # (n, n, d)
    squared = scaled_differences.sum(axis=-1)
    if kernel == "exp_quad":
        stationary = np.exp(-0.5 * squared)
        radial = stationary  # d k / d log l_j = radial * (x_j - x'_j)^2 / l_j^2
    else:
        r = np.sqrt(5.0 * squared)
        decay = np.exp(-r)
        stationary = (1.0 + r + r**2 / 3.0) * decay
        radial = 5.0 / 3.0 * (1.0 + r) * decay
    eye = np.eye(n)
    covariance = constant**2 + amplitude**2 * (stationary + jitter * eye)
    gradients = np.empty((x.shape[1] + 2, n, n))
    gradients[: x.shape[1]] = amplitude**2 * np.moveaxis(radial[..., np.newaxis] * scaled_differences, -1, 0)
    gradients[-2] = 2.0 * amplitude**2 * (stationary + jitter * eye)
    gradients[-1] = 2.0 * constant**2 * np.ones((n, n))
    return covariance, gradients


# -- Hilbert-space approximation (HSGP) -------------------------------------------------------------


def hsgp_frequencies(half_width: np.ndarray, m: int) -> np.ndarray:
    """Square roots of the Laplacian's Dirichlet eigenvalues on the box [-L, L]^d, shape (m^d, d), via PyMC."""
    half_width = np.asarray(half_width, dtype=float)
    return np.sqrt(pm.gp.hsgp_approx.calc_eigenvalues(half_width, [m] * half_width.size))


def hsgp_basis(x: np.ndarray, center: np.ndarray, half_width: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """The Laplacian eigenfunctions prod_j sin(omega_j (x_j - center_j + L_j)) / sqrt(L_j), shape (n, m^d).

    Equals ``pm.gp.hsgp_approx.calc_eigenvectors`` (tested); NumPy here so that the basis
    is data of the compiled model and prediction needs no graph compilation. The basis is a tensor product: each
    input's sines are computed once per distinct frequency (m per input, not m^d), then multiplied out.
    """
    shifted = np.asarray(x, dtype=float) - center + half_width  # (n, d)
    basis = np.ones((shifted.shape[0], frequencies.shape[0]))
    for column in range(frequencies.shape[1]):  # the d inputs of the tensor product (d is small: m^d functions)
        distinct, which = np.unique(frequencies[:, column], return_inverse=True)
        sines = np.sin(shifted[:, column, np.newaxis] * distinct) / np.sqrt(half_width[column])  # (n, m)
        basis *= sines[:, which]
    return basis


def spectral_density(
    frequencies: np.ndarray, lengthscale: np.ndarray, kernel: KernelName = "exp_quad", xp=np
) -> np.ndarray:
    """Power spectral density S(omega) of the unit-amplitude stationary kernel, for each row of ``frequencies``.

    ``lengthscale`` may carry leading dims (..., d); the result is (..., m^d). Equals
    PyMC's ``power_spectral_density`` of ``ExpQuad`` and ``Matern52`` (tested). ``xp``: the array
    namespace (``jax.numpy`` inside a traced sampler; the lengthscale is then not checked).
    """
    if kernel not in ("exp_quad", "matern52"):
        raise ValueError(f"kernel must be 'exp_quad' or 'matern52', got {kernel!r}")
    if xp is np:
        lengthscale = np.asarray(lengthscale, dtype=float)
        if not (np.all(np.isfinite(lengthscale)) and np.all(lengthscale > 0)):
            raise ValueError(f"lengthscale must be positive and finite, got {lengthscale.squeeze()!r}")
    lengthscale = lengthscale[..., np.newaxis, :]  # (..., 1, d)
    d = frequencies.shape[1]
    scaled = (frequencies**2 * lengthscale**2).sum(axis=-1)
    volume = xp.prod(lengthscale, axis=-1)
    if kernel == "exp_quad":
        return (2.0 * np.pi) ** (d / 2) * volume * xp.exp(-0.5 * scaled)
    power = (d + 5) / 2
    norm = 2.0**d * np.pi ** (d / 2) * math.gamma(power) * 5.0**2.5 / (0.75 * np.sqrt(np.pi))
    return norm * volume * (5.0 + scaled) ** -power
