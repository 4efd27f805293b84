"""The kinds of feature a Dataset column can be (:data:`FeatureKind`), shared by the container and the coder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, cast, get_args

__all__ = ["FEATURE_KINDS", "FeatureKind", "check_feature_kinds"]

FeatureKind = Literal["continuous", "binary", "categorical", "count"]
"""How a feature's values are to be modelled.

``"continuous"``: any finite real (Gaussian class models, seed 003 "Gaussian Naive Bayes").
``"binary"``: 0/1 only (Bernoulli, seed 003 "Raining"). ``"categorical"``: codes
``0..L-1`` (multinomial). ``"count"``: non-negative integers (e.g. pixel intensities 0..16).
"""

FEATURE_KINDS: tuple[str, ...] = get_args(FeatureKind)


def check_feature_kinds(
    kinds: object,
    features: Sequence[str],
    *,
    owner: str,
    argument: str = "feature_kinds",
    target: str | None = None,
) -> dict[str, FeatureKind]:
    """Declared kinds of some columns, checked: a mapping from feature columns of ``owner`` to feature kinds.

    Parameters
    ----------
    kinds : object
        What the caller gave (``{"year": "categorical"}``).
    features : sequence of str
        The feature columns that may be named.
    owner : str
        The table's name in error messages.
    argument : str, default "feature_kinds"
        How the caller calls ``kinds`` in error messages (``--feature-kind`` on the CLI).
    target : str, optional
        The class column, which has labels, not a feature kind (named as such in the error).

    Returns
    -------
    dict of str to FeatureKind
        The declared kinds.

    Raises
    ------
    ValueError
        Not a mapping, a column that is not a feature (the features are listed), or an unknown kind (the kinds are
        listed).
    """
    if not isinstance(kinds, Mapping):
        raise ValueError(
            f"{argument} must map column names to feature kinds, e.g. {{'age': 'continuous'}}; got {kinds!r}"
        )
    if target is not None and target in kinds:
        raise ValueError(
            f"{argument} declares a kind for {target!r}, the target (class) column of {owner!r}: its labels are the "
            f"classes, not a feature; drop it, or name another target column; the feature columns are "
            f"{', '.join(map(repr, features))}"
        )
    unknown = [str(column) for column in kinds if column not in features]
    if unknown:
        raise ValueError(
            f"{argument} names column(s) {', '.join(map(repr, unknown))} that {owner!r} does not have as features; "
            f"its feature columns are {', '.join(map(repr, features))}"
        )
    for column, kind in kinds.items():
        if kind not in FEATURE_KINDS:
            raise ValueError(f"{argument}[{column!r}] = {kind!r} is not a feature kind; use one of {FEATURE_KINDS}")
    return cast("dict[str, FeatureKind]", dict(kinds))
