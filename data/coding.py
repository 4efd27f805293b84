"""Treatment (dummy) coding of categorical features, for the discriminative families.

A categorical column with levels ``l_0, ..., l_{L-1}`` (codes 0..L-1; text levels are
sorted, so ``l_0`` is the first in alphabetical order) becomes ``L - 1`` binary columns
``"column=l_k"``, ``k = 1 .. L-1``, equal to 1 where the row has level ``l_k``. The first
level is the reference: its effect is absorbed by the intercept, and each coefficient
of ``"column=l_k"`` is the change of the linear predictor from ``l_0`` to ``l_k``. (Using
the codes 0, 1, 2 as one number would force the three levels onto one line, which the
data never said.) The same coding, with the training levels, is applied at prediction.

A binary column read from text (two named levels, e.g. ``sex``: ``female``, ``male``) is coded the same way,
as ONE indicator named after its second level (``"sex=male"``), so that every coefficient says which level
it is the effect of. Its values are its 0/1 codes unchanged. A 0/1 column of numbers has no level names and
keeps its name.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["categorical_levels", "treatment_code"]


def categorical_levels(
    X: np.ndarray,
    feature_names: tuple[str, ...],
    feature_kinds: tuple[str, ...],
    category_names: Mapping[str, tuple[str, ...]],
) -> dict[str, tuple[str, ...]]:
    """The levels of every column to treatment-code: categorical columns, and binary columns with level names.

    A categorical column's levels are its category names, or the codes ``"0" .. str(max code)``; a binary
    column's are its two category names (a 0/1 column of numbers, without names, is not coded).

    Parameters
    ----------
    X : numpy.ndarray of shape (n_obs, n_features)
        The features; a categorical column holds the codes 0..L-1.
    feature_names : tuple of str
        The name of every column of ``X``.
    feature_kinds : tuple of str
        The kind of every column (``"categorical"``, and ``"binary"`` with level names, for the ones coded here).
    category_names : Mapping of str to tuple of str
        The level names of the categorical columns that have them (text levels, in code order).

    Returns
    -------
    dict of str to tuple of str
        Each categorical column's levels, in code order (the first is the reference level).
    """
    levels = {}
    for column, (name, kind) in enumerate(zip(feature_names, feature_kinds, strict=True)):
        if kind == "categorical":
            levels[name] = tuple(category_names.get(name, ())) or tuple(
                str(code) for code in range(int(X[:, column].max()) + 1)
            )
        elif kind == "binary" and len(category_names.get(name, ())) == 2:
            levels[name] = tuple(category_names[name])
    return levels


def treatment_code(
    X: np.ndarray, feature_names: tuple[str, ...], levels: Mapping[str, tuple[str, ...]]
) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    """``X`` with each column named in ``levels`` replaced by its treatment-coded indicators.

    Parameters
    ----------
    X : numpy.ndarray of shape (n_obs, n_features)
        The features; a categorical column holds the codes 0..L-1.
    feature_names : tuple of str
        The name of every column of ``X``.
    levels : Mapping of str to tuple of str
        The levels of the categorical columns (from :func:`categorical_levels` on the training data);
        columns not named here are kept as they are.

    Returns
    -------
    coded : array of shape (n_obs, n_coded)
        The coded features, as ``float``.
    names : tuple of str
        The coded column names: other columns keep their names, a categorical column
        ``c`` becomes ``"c=<level>"`` for every level but the first (the reference).
    indicator : array of bool, shape (n_coded,)
        Which coded columns are level indicators (0/1).

    Raises
    ------
    ValueError
        A code that is not one of the column's levels (e.g. a level unseen in training),
        naming the column, the row and the levels.
    """
    X = np.asarray(X, dtype=float)
    blocks, names, indicator = [], [], []
    for column, name in enumerate(feature_names):  # preprocessing of the columns, not a model loop
        if name not in levels:
            blocks.append(X[:, column : column + 1])
            names.append(name)
            indicator.append(False)
            continue
        codes, known = X[:, column], levels[name]
        bad = (codes < 0) | (codes >= len(known)) | (codes != np.round(codes))
        if bad.any():
            row = int(np.argmax(bad))
            raise ValueError(
                f"categorical column {name!r} has the code {codes[row]:g} in row {row}, which is not one of its "
                f"{len(known)} training levels {known}; recode the row or refit with that level"
            )
        blocks.append((codes[:, np.newaxis] == np.arange(1, len(known))[np.newaxis, :]).astype(float))
        names.extend(f"{name}={level}" for level in known[1:])
        indicator.extend([True] * (len(known) - 1))
    return np.hstack(blocks), tuple(names), np.array(indicator, dtype=bool)
