"""Training / validation / test split (seed 001 §A)."""

from __future__ import annotations

import numbers
from dataclasses import replace

import numpy as np

from bayesclass.data._validation import require_seed
from bayesclass.data.dataset import Dataset
from bayesclass.data.origin import SplitOrigin, SplitPart

_PARTS: tuple[SplitPart, ...] = ("train", "validation", "test")


def train_validation_test_split(
    dataset: Dataset,
    *,
    fractions: tuple[float, float, float] = (0.6, 0.2, 0.2),
    random_seed: int,
    stratify: bool = True,
) -> tuple[Dataset, Dataset, Dataset]:
    """Split labelled data into a training, a validation and a test set.

    Seed 001 §A: train the classifier on the training set, pick models and
    hyperparameters on the validation set, and report final performance on
    the test set. Row counts are ``round(fraction * n_obs)`` for validation and
    test, the rest for training; rows are drawn with
    :func:`sklearn.model_selection.train_test_split` (twice), stratified by
    class when ``stratify``. Each part keeps the original row order, and all
    parts keep the full ``class_names`` (a class may be absent from a part).

    Parameters
    ----------
    dataset : Dataset
        The labelled data.
    fractions : tuple of 3 floats
        Shares of (train, validation, test); each > 0, summing to 1.
    random_seed : int
        Seed of the shuffling; same seed, same split.
    stratify : bool
        Keep class proportions (approximately) equal across parts.

    Returns
    -------
    (Dataset, Dataset, Dataset)
        Named ``"<name>[train]"``, ``"<name>[validation]"``, ``"<name>[test]"``.

    Raises
    ------
    ValueError
        Bad ``fractions``, a part that would be empty, or a stratified split
        that is impossible (a class with fewer than 2 rows, or fewer test rows
        than classes).
    """
    parts = split_row_indices(dataset, fractions=fractions, random_seed=random_seed, stratify=stratify)
    random_seed = require_seed(random_seed)
    note = f"train_validation_test_split(fractions={tuple(fractions)}, random_seed={random_seed}, stratify={stratify})"
    n = dataset.n_obs
    return tuple(  # type: ignore[return-value]
        replace(
            dataset,
            name=f"{dataset.name}[{part}]",
            X=dataset.X[index],
            y=dataset.y[index],
            true_class_proba=None if dataset.true_class_proba is None else dataset.true_class_proba[index],
            provenance=f"{dataset.provenance}; {part} part ({len(index)} of {n} rows) of {note}",
            origin=replace(
                dataset.origin,
                split=SplitOrigin(
                    part=part,
                    fractions=tuple(float(f) for f in fractions),  # type: ignore[arg-type]
                    random_seed=random_seed,
                    stratify=stratify,
                ),
            ),
        )
        for part, index in zip(_PARTS, parts, strict=True)
    )


def split_row_indices(
    dataset: Dataset,
    *,
    fractions: tuple[float, float, float] = (0.6, 0.2, 0.2),
    random_seed: int,
    stratify: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of ``dataset`` (0-based positions) in each part of :func:`train_validation_test_split`.

    Parameters
    ----------
    dataset, fractions, random_seed, stratify
        As :func:`train_validation_test_split`, which takes its parts' rows from here.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        The sorted row positions of the training, validation and test parts.

    Raises
    ------
    ValueError
        As :func:`train_validation_test_split`.
    """
    from sklearn.model_selection import train_test_split

    if not isinstance(dataset, Dataset):
        raise ValueError(f"dataset must be a Dataset, got {type(dataset).__name__}; build one with data.load(...)")
    random_seed = require_seed(random_seed)
    if not isinstance(stratify, bool):
        raise ValueError(f"stratify must be True or False, got {stratify!r}")
    if (
        not isinstance(fractions, (tuple, list))
        or len(fractions) != 3
        or not all(isinstance(f, numbers.Real) and not isinstance(f, bool) and f > 0 for f in fractions)
        or not np.isclose(sum(fractions), 1.0, rtol=0, atol=1e-9)
    ):
        raise ValueError(
            f"fractions must be 3 positive numbers (train, validation, test) summing to 1, got {fractions!r}; "
            "e.g. fractions=(0.6, 0.2, 0.2)"
        )
    n = dataset.n_obs
    n_validation, n_test = round(fractions[1] * n), round(fractions[2] * n)
    sizes = (n - n_validation - n_test, n_validation, n_test)
    if min(sizes) < 1:
        raise ValueError(
            f"fractions={tuple(fractions)} of {n} rows in {dataset.name!r} give parts of {sizes} rows; "
            "every part needs at least one row: use more data or larger fractions"
        )
    rows, y = np.arange(n), dataset.y
    try:
        rest, test = train_test_split(
            rows, test_size=n_test, random_state=random_seed, stratify=y if stratify else None
        )
        train, validation = train_test_split(
            rest, test_size=n_validation, random_state=random_seed, stratify=y[rest] if stratify else None
        )
    except ValueError as error:  # scikit-learn explains why stratification is impossible
        raise ValueError(
            f"cannot split {dataset.name!r} stratified by class with fractions={tuple(fractions)}: {error}; "
            "pass stratify=False or use more data"
        ) from error
    return np.sort(train), np.sort(validation), np.sort(test)
