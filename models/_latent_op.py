"""The whitened latent of the exact GP, z = chol(K_theta) u, as one PyTensor Op with its numba kernels.

:class:`WhitenedLatent` builds K from the inputs and hyperparameters, factors it and
returns z and the factor; :class:`WhitenedLatentGradient` is its reverse-mode
gradient (the derivation is in the comment below). The numba implementations that
nutpie compiles are registered with PyTensor at first use
(:func:`register_numba_kernels`), not at import.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np
from pytensor.gradient import DisconnectedType
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from bayesclass._lazy import lazy_import
from bayesclass.models._kernels import KernelName, kernel_matrix

if TYPE_CHECKING:
    import pytensor.tensor as pt
    import scipy
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use
    pt = lazy_import("pytensor.tensor")

__all__ = ["WhitenedLatent", "WhitenedLatentGradient", "register_numba_kernels"]


# -- the whitened latent z = chol(K_theta) u as one Op, kernel included ---------------------------------------
#
# An exact latent GP spends its gradient on K_theta, its Cholesky factor L and the derivative of z = L u.
# PyTensor differentiates cholesky(K) @ u generically (Murray 2016: a dense product L^T (g u^T) and two
# n x n triangular solves) and builds K and its derivatives from a dozen n x n temporaries. Here, with
# K = c^2 1 1^T + a^2 (R_l + eps I) and u_bar = L^T g, Phi(M) = lower triangle of M with its diagonal halved:
#     K_bar = S (symmetrised) with S = L^-T Phi(u_bar u^T) L^-1,
#     X = Phi(u_bar u^T) L^-1 is lower triangular with rows u_bar_i (sum_{k<i} u_k L^-1[k, :] + u_i L^-1[i, :] / 2),
#     <S, K> = tr Phi(u_bar u^T) = u_bar . u / 2, and <S, 1 1^T> = v^T Phi(u_bar u^T) v with v = L^-1 1, so
#     c_bar = 2 c v^T Phi v,   a_bar = (2 / a) (u_bar . u / 2 - c^2 v^T Phi v)   (O(n^2), no S needed),
#     l_bar_j = sum_ik S_ik dK_ik / dl_j   (S = L^-T X: one triangular inverse, one matrix product),
# and the kernel is built and contracted in one loop over the pairs i > k. One logp + gradient takes 1.1 ms
# against 1.7 ms for the generic path at n = 200, 6.5 ms against 11.3 ms at n = 400 (bench/README.md).


class WhitenedLatent(Op):
    """``(z, L) = (chol(K) @ u, chol(K))``, ``K = c^2 + a^2 (k_l(x, x) + jitter I)``, from ``(x, l, a, c, u)``.

    ``kernel`` is "exp_quad" or "matern52" (:func:`kernel_matrix`); NaN where K is not positive definite.
    """

    __props__ = ("kernel", "jitter")

    def __init__(self, kernel: KernelName, jitter: float):
        register_numba_kernels()
        self.kernel, self.jitter = kernel, float(jitter)

    def __setstate__(self, state: dict) -> None:  # an Op unpickled in a fresh process (a worker) is a first use too
        register_numba_kernels()
        self.__dict__.update(state)

    def make_node(self, inputs, lengthscale, amplitude, constant, whitened):
        args = [
            pt.as_tensor_variable(value, dtype="float64")
            for value in (inputs, lengthscale, amplitude, constant, whitened)
        ]
        return Apply(self, args, [args[4].type(), pt.matrix(dtype="float64").type()])

    def perform(self, node, inputs, outputs):
        x, lengthscale, amplitude, constant, whitened = inputs
        covariance = kernel_matrix(
            x, x, lengthscale=lengthscale, amplitude=amplitude, constant=constant, kernel=self.kernel
        )
        covariance[np.diag_indices_from(covariance)] += self.jitter * amplitude**2
        try:
            factor = scipy.linalg.cholesky(covariance, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            factor = np.full_like(covariance, np.nan)
        outputs[0][0] = factor @ whitened
        outputs[1][0] = factor

    def pullback(self, inputs, outputs, output_gradients):
        if not isinstance(output_gradients[1].type, DisconnectedType):
            raise NotImplementedError(
                "WhitenedLatent: only the latent output is differentiable, not the Cholesky factor"
            )
        latent_gradient = output_gradients[0]
        if isinstance(latent_gradient.type, DisconnectedType):
            latent_gradient = pt.zeros_like(outputs[0])
        x, lengthscale, amplitude, constant, whitened = inputs
        grads = WhitenedLatentGradient(self.kernel)(
            x, lengthscale, amplitude, constant, whitened, outputs[1], latent_gradient
        )
        return [pt.zeros_like(x), *grads]


def _whitened_latent_gradient(kernel, x, lengthscale, amplitude, constant, whitened, factor, latent_gradient):
    """(l_bar, a_bar, c_bar, u_bar) of :class:`WhitenedLatent` (comment above); NumPy reference of the numba kernel."""
    u_bar = factor.T @ latent_gradient
    ones_solved = scipy.linalg.solve_triangular(factor, np.ones(len(whitened)), lower=True, check_finite=False)
    weighted = whitened * ones_solved
    quadratic = np.sum(ones_solved * u_bar * (np.cumsum(weighted) - 0.5 * weighted))  # v^T Phi v
    trace = 0.5 * u_bar @ whitened
    lower_inverse, _ = scipy.linalg.lapack.dtrtri(factor, lower=1)
    rows = u_bar[:, np.newaxis] * (
        np.cumsum(whitened[:, np.newaxis] * lower_inverse, axis=0) - 0.5 * whitened[:, np.newaxis] * lower_inverse
    )
    s = lower_inverse.T @ rows
    squared_differences = (x[:, np.newaxis, :] - x[np.newaxis, :, :]) ** 2 / lengthscale**2  # (n, n, d)
    r2 = squared_differences.sum(axis=-1)
    if kernel == "exp_quad":
        radial = np.exp(-0.5 * r2)
    else:
        r = np.sqrt(5.0 * r2)
        radial = 5.0 / 3.0 * (1.0 + r) * np.exp(-r)
    lengthscale_bar = amplitude**2 * np.einsum("ik,ikj->j", s * radial, squared_differences) / lengthscale
    amplitude_bar = 2.0 / amplitude * (trace - constant**2 * quadratic)
    return lengthscale_bar, np.asarray(amplitude_bar), np.asarray(2.0 * constant * quadratic), u_bar


class WhitenedLatentGradient(Op):
    """``(l_bar, a_bar, c_bar, u_bar)`` of :class:`WhitenedLatent` from ``(x, l, a, c, u, L, z_bar)``."""

    __props__ = ("kernel",)

    def __init__(self, kernel: KernelName):
        register_numba_kernels()
        self.kernel = kernel

    def __setstate__(self, state: dict) -> None:
        register_numba_kernels()
        self.__dict__.update(state)

    def make_node(self, x, lengthscale, amplitude, constant, whitened, factor, latent_gradient):
        args = [x, lengthscale, amplitude, constant, whitened, factor, latent_gradient]
        return Apply(self, args, [lengthscale.type(), amplitude.type(), constant.type(), whitened.type()])

    def perform(self, node, inputs, outputs):
        for slot, value in zip(outputs, _whitened_latent_gradient(self.kernel, *inputs), strict=True):
            slot[0] = value


@functools.cache
def register_numba_kernels() -> None:
    """Register the numba implementations of :class:`WhitenedLatent` and its gradient, for nutpie.

    LAPACK potrf runs through PyTensor's numba wrapper, trtri through SciPy's cython_lapack in the same way;
    without them PyTensor's numba backend would run ``perform`` in object mode.

    Runs once, when the first Op is built or unpickled (not when ``bayesclass`` is imported): it imports
    numba and private PyTensor modules, which a fit of any other family never needs.
    """
    from pytensor.link.numba.dispatch import basic as numba_basic

    lower_inverse, lower_transpose_times = _numba_triangular_routines()

    @numba_basic.numba_funcify.register(WhitenedLatent)
    def _numba_whitened_latent(op, node, **kwargs):
        return _whitened_latent_kernel(op.kernel == "matern52", op.jitter)

    @numba_basic.numba_funcify.register(WhitenedLatentGradient)
    def _numba_whitened_latent_gradient(op, node, **kwargs):
        return _whitened_latent_gradient_kernel(op.kernel == "matern52", lower_inverse, lower_transpose_times)


def _numba_triangular_routines():
    """The numba triangular routines of the gradient kernel: ``(lower_inverse, lower_transpose_times)``.

    ``lower_inverse(factor)`` is LAPACK trtri of a lower-triangular factor (NaN where it fails);
    ``lower_transpose_times(lower, matrix)`` is BLAS trmm, ``lower^T @ matrix``. Both call SciPy's cython
    LAPACK/BLAS through function pointers.
    """
    import numba
    from numba.core import types
    from numba.core.extending import get_cython_function_address
    from pytensor.link.numba.cache import _call_cached_ptr
    from pytensor.link.numba.dispatch import basic as numba_basic
    from pytensor.link.numba.dispatch.linalg._LAPACK import int_ptr_to_val, nb_f64p, nb_i32p, val_to_int_ptr

    @numba_basic.numba_njit
    def trtri_pointer():
        with numba.objmode(ptr=types.intp):
            ptr = get_cython_function_address("scipy.linalg.cython_lapack", "dtrtri")
        return ptr

    trtri_type = types.FunctionType(types.void(nb_i32p, nb_i32p, nb_i32p, nb_f64p, nb_i32p, nb_i32p))

    @numba_basic.numba_njit
    def trtri(uplo, diag, size, matrix, lda, info):
        function = _call_cached_ptr(
            get_ptr_func=trtri_pointer, func_type_ref=trtri_type, unique_func_name_lit="bayesclass.dtrtri"
        )
        function(uplo, diag, size, matrix, lda, info)

    @numba_basic.numba_njit
    def trmm_pointer():
        with numba.objmode(ptr=types.intp):
            ptr = get_cython_function_address("scipy.linalg.cython_blas", "dtrmm")
        return ptr

    trmm_type = types.FunctionType(
        types.void(nb_i32p, nb_i32p, nb_i32p, nb_i32p, nb_i32p, nb_i32p, nb_f64p, nb_f64p, nb_i32p, nb_f64p, nb_i32p)
    )

    @numba_basic.numba_njit
    def trmm(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb):
        function = _call_cached_ptr(
            get_ptr_func=trmm_pointer, func_type_ref=trmm_type, unique_func_name_lit="bayesclass.dtrmm"
        )
        function(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb)

    @numba_basic.numba_njit
    def lower_transpose_times(lower, matrix):
        """lower^T @ matrix for a lower-triangular, Fortran-ordered ``lower``.

        ``matrix`` (Fortran-ordered) is overwritten.
        """
        size = val_to_int_ptr(np.int32(lower.shape[0]))
        alpha = np.ones(1)
        trmm(
            val_to_int_ptr(ord("L")),
            val_to_int_ptr(ord("L")),
            val_to_int_ptr(ord("T")),
            val_to_int_ptr(ord("N")),
            size,
            size,
            alpha.ctypes,
            lower.ctypes,
            size,
            matrix.ctypes,
            size,
        )
        return matrix

    @numba_basic.numba_njit
    def lower_inverse(factor):
        inverse = factor.T.copy().T  # a Fortran-ordered copy (ndarray.copy() in numba is C-ordered)
        size = np.int32(factor.shape[0])
        info = val_to_int_ptr(np.int32(0))
        trtri(
            val_to_int_ptr(ord("L")),
            val_to_int_ptr(ord("N")),
            val_to_int_ptr(size),
            inverse.ctypes,
            val_to_int_ptr(size),
            info,
        )
        if int_ptr_to_val(info) != 0:
            inverse[:] = np.nan
        return inverse

    return lower_inverse, lower_transpose_times


def _numba_radial_functions(matern: bool):
    """The numba functions ``(stationary, radial)`` of the squared scaled distance r2 for one kernel.

    ``stationary(r2)`` is k(r); ``radial(r2)`` is the factor of d k / d log l_j = radial * (x_j - x'_j)^2 / l_j^2.
    """
    from pytensor.link.numba.dispatch import basic as numba_basic

    sqrt5 = math.sqrt(5.0)

    @numba_basic.numba_njit
    def stationary(r2):
        if matern:
            r = sqrt5 * math.sqrt(r2)
            return (1.0 + r + r * r / 3.0) * math.exp(-r)
        return math.exp(-0.5 * r2)

    @numba_basic.numba_njit
    def radial(r2):  # d k / d log l_j = radial * (x_j - x'_j)^2 / l_j^2
        if matern:
            r = sqrt5 * math.sqrt(r2)
            return 5.0 / 3.0 * (1.0 + r) * math.exp(-r)
        return math.exp(-0.5 * r2)

    return stationary, radial


def _whitened_latent_kernel(matern: bool, jitter: float):
    """The numba form of :meth:`WhitenedLatent.perform`: K built in one loop over pairs, then its factor."""
    from pytensor.link.numba.dispatch import basic as numba_basic
    from pytensor.link.numba.dispatch.linalg.decomposition.cholesky import _cholesky

    stationary, _ = _numba_radial_functions(matern)

    @numba_basic.numba_njit
    def whitened_latent_kernel(x, lengthscale, amplitude, constant, whitened):
        n, d = x.shape
        a2, c2 = amplitude.item() ** 2, constant.item() ** 2
        covariance = np.empty((n, n))
        for i in range(n):
            covariance[i, i] = c2 + a2 * (1.0 + jitter)
            for k in range(i):
                r2 = 0.0
                for j in range(d):
                    difference = (x[i, j] - x[k, j]) / lengthscale[j]
                    r2 += difference * difference
                value = c2 + a2 * stationary(r2)
                covariance[i, k] = value
                covariance[k, i] = value
        factor = _cholesky(covariance, lower=True, overwrite_a=True)
        latent = np.zeros(n)  # L u over the lower triangle (the factor's layout is not known to numba)
        for i in range(n):
            for k in range(i + 1):
                latent[i] += factor[i, k] * whitened[k]
        return latent, factor

    return whitened_latent_kernel


def _whitened_latent_gradient_kernel(matern: bool, lower_inverse, lower_transpose_times):
    """The numba form of :meth:`WhitenedLatentGradient.perform` (the derivation in the comment above)."""
    from pytensor.link.numba.dispatch import basic as numba_basic

    _, radial = _numba_radial_functions(matern)

    @numba_basic.numba_njit
    def whitened_latent_gradient_kernel(x, lengthscale, amplitude, constant, whitened, factor, latent_gradient):
        n, d = x.shape
        a, c = amplitude.item(), constant.item()
        u_bar = np.zeros(n)  # L^T z_bar
        for i in range(n):
            for k in range(i + 1):
                u_bar[k] += factor[i, k] * latent_gradient[i]
        ones_solved = np.empty(n)  # v = L^-1 1 by forward substitution
        for i in range(n):
            total = 1.0
            for k in range(i):
                total -= factor[i, k] * ones_solved[k]
            ones_solved[i] = total / factor[i, i]
        quadratic, running, trace = 0.0, 0.0, 0.0
        for i in range(n):
            term = whitened[i] * ones_solved[i]
            quadratic += ones_solved[i] * u_bar[i] * (running + 0.5 * term)
            running += term
            trace += 0.5 * u_bar[i] * whitened[i]
        inverse = lower_inverse(factor)
        rows = np.zeros((n, n)).T  # Fortran order: the loops run down columns
        for k in range(n):  # column k of X = Phi(u_bar u^T) L^-1: prefix sums down the column
            running = 0.0
            for i in range(k, n):
                term = whitened[i] * inverse[i, k]
                rows[i, k] = u_bar[i] * (running + 0.5 * term)
                running += term
        s = lower_transpose_times(inverse, rows)  # triangular times triangular: BLAS trmm
        lengthscale_bar = np.zeros(d)
        for i in range(n):
            for k in range(i):
                r2 = 0.0
                for j in range(d):
                    difference = (x[i, j] - x[k, j]) / lengthscale[j]
                    r2 += difference * difference
                weight = (s[i, k] + s[k, i]) * radial(r2)
                for j in range(d):
                    difference = (x[i, j] - x[k, j]) / lengthscale[j]
                    lengthscale_bar[j] += weight * difference * difference
        lengthscale_bar *= a * a / lengthscale
        amplitude_bar = np.asarray(2.0 / a * (trace - c * c * quadratic))
        constant_bar = np.asarray(2.0 * c * quadratic)
        return lengthscale_bar, amplitude_bar, constant_bar, u_bar

    return whitened_latent_gradient_kernel
