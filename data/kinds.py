"""The kinds of feature a Dataset column can be (:data:`FeatureKind`), shared by the container and the coder."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["FEATURE_KINDS", "FeatureKind"]

FeatureKind = Literal["continuous", "binary", "categorical", "count"]
"""How a feature's values are to be modelled.

``"continuous"``: any finite real (Gaussian class models, seed 003 "Gaussian Naive Bayes").
``"binary"``: 0/1 only (Bernoulli, seed 003 "Raining"). ``"categorical"``: codes
``0..L-1`` (multinomial). ``"count"``: non-negative integers (e.g. pixel intensities 0..16).
"""

FEATURE_KINDS: tuple[str, ...] = get_args(FeatureKind)
