"""The registry of fitting methods: every posterior sampler, declared once, and the point estimate kinds.

Adding a sampling method is one module that defines a :class:`~bayesclass.inference.engines.sampler.Sampler`
and one line in :data:`SAMPLERS` here. The CLI's ``--method`` choices, the result schema's checks and the study
spec read :data:`METHODS`; a family says which samplers it accepts through the sampler's ``accepts``.
"""

from __future__ import annotations

from bayesclass.inference.engines import exact, gibbs, laplace, nuts
from bayesclass.inference.engines.sampler import Sampler
from bayesclass.models.base import POINT_ESTIMATE_KINDS

__all__ = ["METHODS", "SAMPLERS", "method_names", "methods_of"]

#: every posterior sampling method, by name
SAMPLERS: dict[str, Sampler] = {
    sampler.name: sampler for sampler in (nuts.SAMPLER, gibbs.SAMPLER, exact.SAMPLER, laplace.SAMPLER)
}


def method_names() -> tuple[str, ...]:
    """Every ``method`` value as the registry holds it now.

    Returns
    -------
    tuple of str
        ``"auto"``, the registered samplers, and the point estimate kinds (:data:`METHODS` as of import; this
        reads :data:`SAMPLERS` each time).
    """
    return ("auto", *SAMPLERS, *POINT_ESTIMATE_KINDS)


#: every ``method`` value: "auto" (the family's default sampler), the samplers, and the point estimate kinds (as of
#: import; :func:`method_names` reads the registry each time)
METHODS: tuple[str, ...] = method_names()


def methods_of(model: object) -> tuple[str, ...]:
    """The ``method`` values :func:`~bayesclass.inference.engines.fit.fit` accepts for a family instance.

    Parameters
    ----------
    model : ClassifierModel
        The family instance.

    Returns
    -------
    tuple of str
        The samplers that accept it (registry order), then its point estimate kinds.
    """
    samplers = tuple(name for name, sampler in SAMPLERS.items() if sampler.accepts(model))
    return (*samplers, *model.available_point_estimates())  # type: ignore[attr-defined]
