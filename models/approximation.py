r"""The Gaussian approximation of a point estimate: its covariance, standard errors and Wald intervals.

A family that can state the curvature of its objective at a point estimate returns, from
:meth:`~bayesclass.models.base.ClassifierModel.gaussian_approximation`, the estimate's normal approximation
:math:`\hat\theta \approx N(\theta, \Sigma)` over its parameters flattened by :func:`flatten_parameters`:
for an MLE the inverse observed information (the inverse Hessian of the negative log-likelihood), for a MAP
the inverse Hessian of the negative log posterior (its Laplace curvature). Standard errors and Wald intervals
follow from it generically, in the style of statsmodels' results classes (``params``, ``bse``,
``conf_int``, ``cov_params``):

.. math::

    \operatorname{se}_j = \sqrt{\Sigma_{jj}}, \qquad
    \hat\theta_j \pm z_{1-\alpha/2}\, \operatorname{se}_j ,

each interval clipped to its parameter's support where the family states one (a probability's to [0, 1], as
statsmodels' ``proportion_confint(method="normal")`` clips it).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import

if TYPE_CHECKING:
    import pandas as pd
    import scipy
    import xarray as xr
else:
    scipy = lazy_import("scipy")
    xr = lazy_import("xarray")

__all__ = ["GaussianApproximation", "flatten_parameters", "parameter_labels"]


def parameter_labels(params: xr.Dataset, names: tuple[str, ...]) -> tuple[str, ...]:
    """The label of every element of the parameters ``names``, in the order of :func:`flatten_parameters`.

    Parameters
    ----------
    params : xarray.Dataset
        One point estimate (no draw dims).
    names : tuple of str
        The parameters, in order (the family's ``parameter_names``).

    Returns
    -------
    tuple of str
        ``name`` for a scalar, ``name[label, ...]`` (coordinate labels, C order) for an array.
    """
    labels: list[str] = []
    for name in names:
        variable = params[name]
        if not variable.dims:
            labels.append(name)
            continue
        # the coordinate labels of each dim, read once (reading them per element took 13 ms a call)
        coordinates = [[str(label) for label in variable[dim].values] for dim in variable.dims]
        labels.extend(f"{name}[{', '.join(parts)}]" for parts in itertools.product(*coordinates))  # C order
    return tuple(labels)


def flatten_parameters(params: xr.Dataset, names: tuple[str, ...]) -> np.ndarray:
    """The parameters ``names`` of ``params`` as one vector: each raveled in its own dims' order (C order).

    Parameters
    ----------
    params : xarray.Dataset
        One point estimate (no draw dims).
    names : tuple of str
        The parameters, in order.

    Returns
    -------
    numpy.ndarray of shape (p,)
        The concatenated values.
    """
    return np.concatenate([np.ravel(params[name].values) for name in names]) if names else np.zeros(0)


@dataclass(frozen=True)
class GaussianApproximation:
    """N(``params``, ``covariance``) over the flattened parameters of one point estimate.

    Parameters
    ----------
    kind : str
        The point estimate (``"mle"``, ``"map"`` ...).
    names : tuple of str
        The parameters flattened, in order (:func:`flatten_parameters`).
    labels : tuple of str
        One label per element (:func:`parameter_labels`).
    params : numpy.ndarray of shape (p,)
        The estimate, flattened.
    covariance : numpy.ndarray of shape (p, p)
        Its covariance: the inverse Hessian of the negative log-likelihood (MLE) or log posterior (MAP).
    curvature : str
        What the covariance is, in words (for reports).
    support : numpy.ndarray of shape (p, 2) or None
        Each parameter's lower and upper bound (``-inf``/``inf`` where it has none), which :meth:`conf_int`
        clips to; None: no bounds.
    """

    kind: str
    names: tuple[str, ...]
    labels: tuple[str, ...]
    params: np.ndarray
    covariance: np.ndarray
    curvature: str = "inverse Hessian at the estimate"
    support: np.ndarray | None = None

    def __post_init__(self) -> None:
        p = len(self.labels)
        if self.params.shape != (p,) or self.covariance.shape != (p, p):
            raise ValueError(
                f"a Gaussian approximation over {p} parameters needs params of shape ({p},) and a ({p}, {p}) "
                f"covariance, got {self.params.shape} and {self.covariance.shape}"
            )
        if self.support is not None and self.support.shape != (p, 2):
            raise ValueError(
                f"support should be a ({p}, 2) array of bounds (low, high), got shape {self.support.shape}"
            )
        if (
            self.support is not None
            and not ((self.support[:, 0] <= self.params) & (self.params <= self.support[:, 1])).all()
        ):
            raise ValueError(
                "support (low, high) should hold each estimate; it is NaN or excludes one (refit the model)"
            )
        for array in (self.params, self.covariance, self.support):
            if array is not None:
                array.flags.writeable = False

    @classmethod
    def of(
        cls,
        kind: str,
        estimate: xr.Dataset,
        names: tuple[str, ...],
        covariance: np.ndarray,
        curvature: str,
        support: Mapping[str, tuple[float, float]] | None = None,
    ) -> GaussianApproximation:
        """The approximation of ``estimate`` with ``covariance`` over its parameters ``names``.

        Parameters
        ----------
        kind : str
            The point estimate kind.
        estimate : xarray.Dataset
            The point estimate.
        names : tuple of str
            Its parameters, in the order of the covariance's rows.
        covariance : numpy.ndarray of shape (p, p)
            The covariance (symmetrised here).
        curvature : str
            What the covariance is, in words.
        support : mapping of str to (float, float), optional
            The bounds (low, high) of the named parameters' elements (a probability's ``(0, 1)``); the others
            have none.

        Returns
        -------
        GaussianApproximation
            The approximation.
        """
        covariance = np.array(covariance, dtype=float)
        covariance = 0.5 * (covariance + covariance.T)
        bounds = None
        if support:
            bounds = np.concatenate(
                [np.tile(support.get(name, (-np.inf, np.inf)), (estimate[name].size, 1)) for name in names]
            )
        return cls(
            kind=kind,
            names=tuple(names),
            labels=parameter_labels(estimate, names),
            params=flatten_parameters(estimate, names),
            covariance=covariance,
            curvature=curvature,
            support=bounds,
        )

    @property
    def bse(self) -> np.ndarray:
        """The standard errors ``sqrt(diag(covariance))`` (statsmodels' name)."""
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def cov_params(self) -> np.ndarray:
        """The covariance of the parameters (statsmodels' name).

        Returns
        -------
        numpy.ndarray of shape (p, p)
            :attr:`covariance`.
        """
        return self.covariance

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """Wald intervals ``params -+ z_{1-alpha/2} bse``, as statsmodels' ``conf_int(alpha)``, in :attr:`support`.

        Each is clipped to its parameter's support: a probability's is statsmodels'
        ``proportion_confint(count, nobs, alpha, method="normal")``, which clips to [0, 1] too.

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the coverage, in (0, 1).

        Returns
        -------
        numpy.ndarray of shape (p, 2)
            Lower and upper bounds per parameter.
        """
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be a number in (0, 1), e.g. 0.05 for 95% intervals; got {alpha!r}")
        z = scipy.stats.norm.ppf(1.0 - alpha / 2.0)
        bounds = np.column_stack([self.params - z * self.bse, self.params + z * self.bse])
        if self.support is None:
            return bounds
        return np.clip(bounds, self.support[:, :1], self.support[:, 1:])

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Estimate, standard error and Wald interval per parameter, one row each.

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the intervals' coverage.

        Returns
        -------
        pandas.DataFrame
            Columns ``estimate``, ``std_err``, ``low``, ``high``, indexed by the parameter labels.
        """
        import pandas as pd

        bounds = self.conf_int(alpha)
        return pd.DataFrame(
            {"estimate": self.params, "std_err": self.bse, "low": bounds[:, 0], "high": bounds[:, 1]},
            index=pd.Index(self.labels, name="parameter"),
        )

    def to_dataset(self) -> xr.Dataset:
        """The covariance as an ``xarray.Dataset`` (what a result stores beside the estimate).

        Returns
        -------
        xarray.Dataset
            ``covariance`` (dims ``parameter``, ``parameter_column``) labelled with :attr:`labels`, ``support``
            (dims ``parameter``, ``bound``) where there are bounds; attrs
            ``kind``, ``names`` (comma-separated) and ``curvature``.
        """
        variables = {"covariance": (("parameter", "parameter_column"), np.array(self.covariance))}
        if self.support is not None:
            variables["support"] = (("parameter", "bound"), np.array(self.support))
        return xr.Dataset(
            variables,
            coords={"parameter": list(self.labels), "parameter_column": list(self.labels)},
            attrs={"kind": self.kind, "names": ",".join(self.names), "curvature": self.curvature},
        )

    @classmethod
    def from_dataset(cls, dataset: Any, estimate: xr.Dataset) -> GaussianApproximation:
        """The approximation stored by :meth:`to_dataset`, checked against its point estimate.

        Parameters
        ----------
        dataset : xarray.Dataset
            The stored covariance (untrusted: read from a file).
        estimate : xarray.Dataset
            The point estimate it belongs to.

        Returns
        -------
        GaussianApproximation
            The approximation.

        Raises
        ------
        ValueError
            Parameters the estimate lacks, a covariance of another shape or labels, not finite, not symmetric, or
            with a negative variance; a support that does not hold the estimate.
        """
        if "covariance" not in dataset:
            raise ValueError("has no covariance variable")
        text = dataset.attrs.get("names")
        names = tuple(text.split(",")) if isinstance(text, str) and text else ()
        if text is None:
            raise ValueError("attr names (the parameters the covariance is over) is missing")
        if not names or not all(name in estimate.data_vars for name in names):
            raise ValueError(f"attr names {str(text)[:80]!r} should list parameters of the point estimate")
        covariance = np.asarray(dataset["covariance"].values)
        labels = parameter_labels(estimate, names)
        p = len(labels)
        if covariance.shape != (p, p) or covariance.dtype.kind != "f":
            raise ValueError(f"covariance should be a ({p}, {p}) float matrix, got shape {covariance.shape}")
        stored = tuple(str(label) for label in dataset["covariance"]["parameter"].values)
        if stored != labels:
            raise ValueError("covariance labels differ from the point estimate's parameters")
        if not np.isfinite(covariance).all():
            raise ValueError("covariance holds NaN or inf")
        scale = max(1.0, float(np.abs(covariance).max()))
        if np.abs(covariance - covariance.T).max() > 1e-8 * scale or (np.diag(covariance) < 0).any():
            raise ValueError("covariance is not symmetric with non-negative variances")
        curvature = dataset.attrs.get("curvature", "")
        support = np.asarray(dataset["support"].values, dtype=float) if "support" in dataset else None
        return cls(
            kind=str(dataset.attrs.get("kind", "")),
            names=tuple(names),
            labels=labels,
            params=flatten_parameters(estimate, names),
            covariance=covariance.astype(float),
            curvature=curvature if isinstance(curvature, str) else "",
            support=support,
        )
