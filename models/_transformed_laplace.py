r"""The Laplace approximation of a PyMC model's posterior in its unconstrained (transformed) space.

A family whose parameters are constrained (probabilities on a simplex, variances, covariance matrices) declares
``laplace_space = "transformed"`` (:class:`~bayesclass.models.base.ClassifierModel`); its Laplace approximation is
then taken, for any such family alike, over the value variables of its PyMC model (:meth:`build`) raveled into one
vector :math:`z` (PyMC's transforms: log-odds, the zero-sum simplex map, log, LKJ's Cholesky map, or the model's own
unconstrained variables):

.. math::

    \hat z = \arg\max_z \log p(z \mid y), \qquad
    p(z \mid y) \approx \mathcal N\!\left(\hat z,\; H^{-1}\right), \qquad
    H = -\nabla^2_z \log p(z \mid y)\big|_{\hat z},

with :math:`\log p(z \mid y)` the model's joint log density *including* the log Jacobian of each transform
(``model.logp(jacobian=True)``), so the mode is the mode of the density of :math:`z`, always interior (a uniform
Dirichlet's mode in :math:`z` is not on the simplex's edge). The gradient and the Hessian are pytensor's exact
symbolic derivatives; the mode is found by :func:`scipy.optimize.minimize` (``trust-exact``, with that Hessian)
from the model's initial point. Draws :math:`z^{(s)} \sim \mathcal N(\hat z, H^{-1})` are mapped back to the
family's parameters (:meth:`parameter_names`, random and deterministic variables alike) by the model's own
graph from the value variables (``model.replace_rvs_by_values``), compiled once and vectorised over the draws
(:func:`pytensor.graph.replace.vectorize_graph`): every draw is a valid parameter set (on the simplex, positive
definite), which a Gaussian over the constrained parameters would not give.

A family whose log density over those value variables has a closed form declares it
(:meth:`~bayesclass.models.base.ClassifierModel.laplace_log_density`, built with :func:`closed_form_posterior` and
the pieces below: :func:`simplex_log_density`, :func:`block_diagonal`, :func:`numerical_derivatives`); the same
approximation is then taken without compiling a Hessian graph (10-50 s per fit), and the tests check it against
the compiled route.

The approximation is of the density of :math:`z`, not of the parameters: its image is skewed like a
log-normal or a logistic-normal, and its mean differs from the posterior mean where the posterior in :math:`z`
is skewed (few rows per class, a count of zero).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data.arguments import spelled
from bayesclass.models.approximation import GaussianApproximation

if TYPE_CHECKING:
    from collections.abc import Callable

    import pymc as pm
    import scipy
    import xarray as xr
    from pytensor.graph.basic import Variable

    from bayesclass.data import Dataset
else:
    pm = lazy_import("pymc")
    scipy = lazy_import("scipy")
    xr = lazy_import("xarray")

__all__ = [
    "TransformedPosterior",
    "block_diagonal",
    "closed_form_posterior",
    "numerical_derivatives",
    "simplex_log_density",
    "simplex_mode",
    "simplex_point",
    "transformed_laplace_approximation",
    "transformed_laplace_parameters",
]

#: the largest gradient norm (of the log density in the unconstrained space) accepted at the mode
GRADIENT_TOLERANCE = 1e-6


@dataclass(frozen=True, eq=False)
class TransformedPosterior:
    """The compiled log density of a PyMC model over its raveled value variables, and the map to its parameters.

    Parameters
    ----------
    value_names : tuple of str
        The value variables (PyMC's names, e.g. ``class_prior_simplex__``), in the order raveled.
    value_shapes : tuple of tuple of int
        Their shapes.
    initial : numpy.ndarray of shape (p,)
        The model's initial point, raveled.
    value_and_gradient : callable
        ``z -> (log p(z | y), gradient)``, the log Jacobian of the transforms included.
    hessian : callable
        ``z -> Hessian of log p(z | y)``, shape ``(p, p)``.
    parameters : callable
        ``Z (n, p) -> [one array (n, *shape) per parameter]``: the parameters of each row of ``Z``.
    parameter_names : tuple of str
        The parameters, in the order of ``parameters``' outputs.
    parameter_dims : tuple of tuple of str
        Their dims in the model (without the draw dims).
    """

    value_names: tuple[str, ...]
    value_shapes: tuple[tuple[int, ...], ...]
    initial: np.ndarray
    value_and_gradient: Callable[[np.ndarray], tuple[float, np.ndarray]]
    hessian: Callable[[np.ndarray], np.ndarray]
    parameters: Callable[[np.ndarray], list[np.ndarray]]
    parameter_names: tuple[str, ...]
    parameter_dims: tuple[tuple[str, ...], ...]

    @property
    def labels(self) -> tuple[str, ...]:
        """One label per element of the raveled value vector: ``name[i, j]`` (C order), ``name`` for a scalar."""
        labels: list[str] = []
        for name, shape in zip(self.value_names, self.value_shapes, strict=True):
            labels.extend(f"{name}[{', '.join(map(str, index))}]" if index else name for index in np.ndindex(shape))
        return tuple(labels)


class _LastCall:
    """A compiled ``z -> (value, gradient, Hessian)`` that remembers its last point (the optimiser asks twice)."""

    def __init__(self, function: Callable[[np.ndarray], list[np.ndarray]]) -> None:
        self._function = function
        self._point: np.ndarray | None = None
        self._values: tuple[float, np.ndarray, np.ndarray] = (np.nan, np.zeros(0), np.zeros((0, 0)))

    def __call__(self, z: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        z = np.asarray(z, dtype=float)
        if self._point is None or not np.array_equal(z, self._point):
            value, gradient, hessian = self._function(z)
            self._values = (float(value), gradient, hessian)
            self._point = z.copy()
        return self._values


@dataclass(frozen=True, eq=False)
class _Compiled:
    """The compiled functions of one model layout, their data containers, and a lock over both."""

    shared: dict[str, Any]
    derivatives: Callable[[np.ndarray], list[np.ndarray]]
    to_parameters: Callable[[np.ndarray], list[np.ndarray]]
    value_names: tuple[str, ...]
    parameter_dims: tuple[tuple[str, ...], ...]
    lock: threading.Lock


#: compiled functions per model layout (:meth:`cache_key` and the data's shapes): a model of new data of the same
#: layout swaps its data containers' values in (as NUTS's compile cache does); the most recent few are kept
_COMPILED: dict[tuple, _Compiled] = {}
_KEPT = 8


def _compile(model: pm.Model, names: tuple[str, ...]) -> _Compiled:
    """Compile the log density, its derivatives and the map to ``names`` over the raveled value variables."""
    import pytensor
    import pytensor.tensor as pt
    from pymc.pytensorf import join_nonshared_inputs
    from pytensor.graph.replace import vectorize_graph

    point = model.initial_point()
    outputs = [model.logp(jacobian=True), *model.replace_rvs_by_values([model[name] for name in names])]
    joined, flat = join_nonshared_inputs(point=point, outputs=outputs, inputs=model.value_vars)
    log_density, *parameters = joined
    gradient = cast("Variable", pytensor.grad(log_density, flat))
    # one compiled function (one rewrite pass) for the value and both derivatives, the Hessian as the
    # vectorised Jacobian of the gradient (no scan)
    hessian = cast("Variable", pytensor.gradient.jacobian(gradient, flat, vectorize=True))
    rows = pt.matrix("rows", dtype=flat.dtype)
    batched = vectorize_graph(parameters, replace={flat: rows})
    dims = model.named_vars_to_dims
    return _Compiled(
        shared=_shared(model),
        derivatives=pytensor.function([flat], [log_density, gradient, hessian]),
        to_parameters=pytensor.function([rows], batched),
        value_names=tuple(var.name for var in model.value_vars),
        parameter_dims=tuple(tuple(dims.get(name, ())) for name in names),
        lock=threading.Lock(),
    )


def _shared(model: pm.Model) -> dict[str, Any]:
    """The model's data containers (shared variables) by name."""
    from pytensor.compile.sharedvalue import SharedVariable

    return {name: var for name, var in model.named_vars.items() if isinstance(var, SharedVariable)}


def transformed_posterior(family: Any, data: Dataset) -> TransformedPosterior:
    """The compiled :class:`TransformedPosterior` of ``family``'s model of ``data``.

    A family that declares its log density in closed form (:meth:`laplace_log_density`) gives it here, and
    nothing is compiled. Otherwise the functions are compiled once per model layout (``family.cache_key(data)``
    and the shapes of the model's
    data and value variables); a later model of the same layout reuses them with its own data values, set under
    a lock at each call.

    Parameters
    ----------
    family : ClassifierModel
        A family instance.
    data : Dataset
        Training data, as given to ``family.build``.

    Returns
    -------
    TransformedPosterior
        The compiled density and map, bound to ``data``.
    """
    declared = family.laplace_log_density(data)
    if declared is not None:
        return declared
    model = family.build(data)
    names = tuple(family.parameter_names(data))
    point = model.initial_point()
    values = {name: var.get_value() for name, var in _shared(model).items()}
    key = (
        type(family).__qualname__,
        family.cache_key(data),
        names,
        tuple((var.name, np.shape(point[var.name])) for var in model.value_vars),
        tuple((name, np.shape(value)) for name, value in values.items()),
    )
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _compile(model, names)
        _COMPILED[key] = compiled
        while len(_COMPILED) > _KEPT:
            del _COMPILED[next(iter(_COMPILED))]

    def with_data(function: Callable[[np.ndarray], list[np.ndarray]]) -> Callable[[np.ndarray], list[np.ndarray]]:
        def call(z: np.ndarray) -> list[np.ndarray]:
            with compiled.lock:
                for name, value in values.items():
                    compiled.shared[name].set_value(value)
                return [np.asarray(output, dtype=float) for output in function(z)]

        return call

    derivatives = _LastCall(with_data(compiled.derivatives))
    return TransformedPosterior(
        value_names=compiled.value_names,
        value_shapes=tuple(tuple(np.shape(point[name])) for name in compiled.value_names),
        initial=np.concatenate([np.ravel(point[name]) for name in compiled.value_names]).astype(float),
        value_and_gradient=lambda z: derivatives(z)[:2],
        hessian=lambda z: derivatives(z)[2],
        parameters=with_data(compiled.to_parameters),
        parameter_names=names,
        parameter_dims=compiled.parameter_dims,
    )


def closed_form_posterior(
    mode: dict[str, np.ndarray],
    derivatives: Callable[[np.ndarray], list[np.ndarray]],
    parameters: Callable[[np.ndarray], list[np.ndarray]],
    parameter_names: tuple[str, ...],
    parameter_dims: tuple[tuple[str, ...], ...],
) -> TransformedPosterior:
    """A :class:`TransformedPosterior` from a family's own (numpy) log density over its PyMC value variables.

    Parameters
    ----------
    mode : dict of str to numpy.ndarray
        The value variables (PyMC's names, in the model's order) at the start of the search for the mode (a
        closed-form mode, where the family knows it): their names, shapes and the initial point.
    derivatives : callable
        ``z -> [log p(z | y) up to a constant, gradient (p,), Hessian (p, p)]`` over the raveled value variables,
        the log Jacobian of PyMC's transforms included.
    parameters : callable
        ``Z (n, p) -> [one array (n, *shape) per parameter]``, as PyMC's backward transforms map them.
    parameter_names : tuple of str
        The parameters, in the order of ``parameters``' outputs.
    parameter_dims : tuple of tuple of str
        Their dims in the model.

    Returns
    -------
    TransformedPosterior
        The density, its derivatives (each point evaluated once) and the map to the parameters.
    """
    remembered = _LastCall(derivatives)
    return TransformedPosterior(
        value_names=tuple(mode),
        value_shapes=tuple(np.shape(value) for value in mode.values()),
        initial=np.concatenate([np.ravel(value) for value in mode.values()]).astype(float),
        value_and_gradient=lambda z: remembered(z)[:2],
        hessian=lambda z: remembered(z)[2],
        parameters=parameters,
        parameter_names=parameter_names,
        parameter_dims=parameter_dims,
    )


def simplex_point(y: np.ndarray) -> np.ndarray:
    """PyMC's ``simplex`` backward transform: ``softmax([y, -sum(y)])`` over the last axis (shape ``(..., m + 1)``).

    Parameters
    ----------
    y : numpy.ndarray of shape (..., m)
        Unconstrained values.

    Returns
    -------
    numpy.ndarray of shape (..., m + 1)
        Points of the simplex.
    """
    x = np.concatenate([y, -y.sum(axis=-1, keepdims=True)], axis=-1)
    weights = np.exp(x - x.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def simplex_mode(concentration: np.ndarray) -> np.ndarray:
    r"""The mode, in PyMC's simplex coordinates, of a Dirichlet(``concentration`` - 1) density of :math:`p` there.

    The density of :math:`y` (the Jacobian :math:`K \prod_k p_k` included) is :math:`\prod_k p_k^{a_k}`,
    largest at :math:`p = a / \sum a`; :math:`y` is the zero-sum :math:`\log p`, less its last entry.

    Parameters
    ----------
    concentration : numpy.ndarray of shape (..., m + 1)
        :math:`a`, positive: a Dirichlet posterior's concentrations (prior plus counts).

    Returns
    -------
    numpy.ndarray of shape (..., m)
    """
    log_p = np.log(concentration)
    return (log_p - log_p.mean(axis=-1, keepdims=True))[..., :-1]


def simplex_log_density(y: np.ndarray, concentration: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r""":math:`\sum_k a_k \log p_k` of :math:`p = \operatorname{softmax}([y, -\sum y])`, and its derivatives in y.

    A Dirichlet posterior (prior concentrations less 1, plus counts) in PyMC's simplex coordinates, the log Jacobian
    :math:`\log K + \sum_k \log p_k` included: :math:`a` is the posterior's concentration. With
    :math:`x = B y`, :math:`B = [I; -\mathbf 1^\top]`, the gradient is :math:`B^\top (a - A p)` and the Hessian
    :math:`-A B^\top (\operatorname{diag} p - p p^\top) B`, :math:`A = \sum_k a_k`.

    Parameters
    ----------
    y : numpy.ndarray of shape (..., m)
        Simplex coordinates.
    concentration : numpy.ndarray of shape (..., m + 1)
        :math:`a`.

    Returns
    -------
    value : numpy.ndarray of shape (...)
        The log density, up to a constant.
    gradient : numpy.ndarray of shape (..., m)
    hessian : numpy.ndarray of shape (..., m, m)
    """
    p = simplex_point(y)
    total = concentration.sum(axis=-1, keepdims=True)
    value = (concentration * np.log(p)).sum(axis=-1)
    along = concentration - total * p
    spread = total[..., np.newaxis] * (
        p[..., :, np.newaxis] * np.eye(p.shape[-1]) - p[..., :, np.newaxis] * p[..., np.newaxis, :]
    )
    hessian = spread[..., :-1, :-1] - spread[..., :-1, -1:] - spread[..., -1:, :-1] + spread[..., -1:, -1:]
    return value, along[..., :-1] - along[..., -1:], -hessian


def block_diagonal(blocks: np.ndarray) -> np.ndarray:
    """The block-diagonal matrix of a stack of equal square blocks, in order.

    Parameters
    ----------
    blocks : numpy.ndarray of shape (..., m, m)
        The blocks (leading axes raveled in C order).

    Returns
    -------
    numpy.ndarray of shape (B m, B m)
        With ``B`` the number of blocks.
    """
    m = blocks.shape[-1]
    stack = blocks.reshape(-1, m, m)
    count = stack.shape[0]
    out = np.zeros((count, m, count, m))
    out[np.arange(count), :, np.arange(count), :] = stack
    return out.reshape(count * m, count * m)


#: the complex step of :func:`numerical_derivatives` (its first derivatives are exact to rounding)
_COMPLEX_STEP = 1e-20
#: the real step of its second derivatives, relative to ``max(1, |z_k|)`` (central differences: an error of about
#: step squared times the fourth derivative, 1e-8 relative)
_REAL_STEP = 1e-4


def numerical_derivatives(log_density: Callable[[np.ndarray], np.ndarray], z: np.ndarray) -> list[np.ndarray]:
    r"""The value, gradient and Hessian of an analytic log density, without a derivative written out.

    The gradient by the complex step (:math:`\partial_j f = \operatorname{Im} f(z + i h e_j) / h`, exact to
    rounding), the Hessian by central differences of that gradient (steps :data:`_REAL_STEP` relative), in two
    batched calls of ``log_density`` (``p`` and ``2 p^2`` points), symmetrised.

    Parameters
    ----------
    log_density : callable
        ``Z (n, p) -> (n,)``, complex-analytic (written without ``abs``, ``conj`` or comparisons of the values).
    z : numpy.ndarray of shape (p,)
        The point.

    Returns
    -------
    list of numpy.ndarray
        ``[value, gradient (p,), Hessian (p, p)]``.
    """
    z = np.asarray(z, dtype=float)
    p = z.size
    identity = np.eye(p)
    value = float(log_density(z[np.newaxis]).real[0])
    gradient = log_density(z + 1j * _COMPLEX_STEP * identity).imag / _COMPLEX_STEP
    step = _REAL_STEP * np.maximum(1.0, np.abs(z))
    shifted = step[:, np.newaxis] * identity  # row k: the step along k
    points = (
        z
        + 1j * _COMPLEX_STEP * identity[np.newaxis, :, np.newaxis, :]
        + np.array([1.0, -1.0])[:, np.newaxis, np.newaxis, np.newaxis] * shifted[np.newaxis, np.newaxis, :, :]
    )  # (2, j, k, p): the complex step along j, the real step along k
    slopes = log_density(points.reshape(-1, p)).imag.reshape(2, p, p) / _COMPLEX_STEP
    hessian = (slopes[0] - slopes[1]) / (2 * step[np.newaxis, :])
    return [np.asarray(value), gradient, 0.5 * (hessian + hessian.T)]


def _mode(posterior: TransformedPosterior) -> np.ndarray:
    """The mode of the log density over the value vector, by a trust-region Newton method with the exact Hessian."""

    def negative(z: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = posterior.value_and_gradient(z)
        return -float(value), -np.asarray(gradient, dtype=float)

    result = scipy.optimize.minimize(
        negative,
        posterior.initial,
        jac=True,
        hess=lambda z: -posterior.hessian(z),
        method="trust-exact",
        options={"gtol": GRADIENT_TOLERANCE, "maxiter": 200},
    )
    gradient_norm = float(np.abs(result.jac).max(initial=0.0))
    if not np.isfinite(result.fun) or gradient_norm > GRADIENT_TOLERANCE * max(1.0, abs(float(result.fun))):
        raise ValueError(
            f"the Laplace approximation found no mode of the posterior in the unconstrained space "
            f"({result.message}; largest gradient {gradient_norm:.3g} after {result.nit} steps): "
            f"fit with {spelled('method', 'nuts')} instead"
        )
    return np.asarray(result.x, dtype=float)


def transformed_laplace_approximation(family: Any, data: Dataset) -> tuple[xr.Dataset, GaussianApproximation]:
    """The Laplace approximation N(mode, inverse negative Hessian) over ``family``'s raveled value variables.

    Parameters
    ----------
    family : ClassifierModel
        A family whose model's value variables carry its parameters (``laplace_space = "transformed"``).
    data : Dataset
        Training data.

    Returns
    -------
    mode : xarray.Dataset
        The mode, one variable per value variable (dims ``<name>_dim_<i>``).
    approximation : GaussianApproximation
        N(mode, covariance) over the mode's variables raveled, kind ``"laplace"``.

    Raises
    ------
    ValueError
        Where no mode is found (an improper direction: the density grows without bound) or the Hessian at the
        point found is not negative definite.
    """
    posterior = transformed_posterior(family, data)
    mode = _mode(posterior)
    precision = -posterior.hessian(mode)
    try:
        factor = scipy.linalg.cho_factor(0.5 * (precision + precision.T))
    except np.linalg.LinAlgError:
        raise ValueError(
            "the Laplace approximation's Hessian at the mode is not negative definite (a flat or improper "
            f"direction of the posterior in the unconstrained space): fit with {spelled('method', 'nuts')} instead"
        ) from None
    covariance = scipy.linalg.cho_solve(factor, np.eye(len(mode)))
    variables = {}
    start = 0
    for name, shape in zip(posterior.value_names, posterior.value_shapes, strict=True):
        size = int(np.prod(shape, dtype=int))
        dims = tuple(f"{name}_dim_{axis}" for axis in range(len(shape)))
        variables[name] = (dims, mode[start : start + size].reshape(shape))
        start += size
    approximation = GaussianApproximation(
        kind="laplace",
        names=posterior.value_names,
        labels=posterior.labels,
        params=mode,
        covariance=0.5 * (covariance + covariance.T),
        curvature="inverse Hessian of the negative log posterior in the unconstrained space, at its mode",
    )
    return xr.Dataset(variables), approximation


def transformed_laplace_parameters(family: Any, draws: xr.Dataset, data: Dataset) -> xr.Dataset:
    """Draws of the value variables (:func:`transformed_laplace_approximation`) as ``family``'s parameters.

    Parameters
    ----------
    family : ClassifierModel
        The family.
    draws : xarray.Dataset
        One variable per value variable, dims ``(chain, draw, ...)``.
    data : Dataset
        Training data.

    Returns
    -------
    xarray.Dataset
        The parameters of :meth:`parameter_names`, dims ``(chain, draw, *model dims)``.
    """
    posterior = transformed_posterior(family, data)
    leading = (draws.sizes["chain"], draws.sizes["draw"])
    rows = np.concatenate(
        [
            draws[name].transpose("chain", "draw", ...).values.reshape(leading[0] * leading[1], -1)
            for name in posterior.value_names
        ],
        axis=1,
    )
    values = posterior.parameters(rows)
    return xr.Dataset(
        {
            name: (("chain", "draw", *dims), value.reshape(*leading, *value.shape[1:]))
            for name, dims, value in zip(posterior.parameter_names, posterior.parameter_dims, values, strict=True)
        },
        coords={"chain": draws["chain"].values, "draw": draws["draw"].values},
    )
