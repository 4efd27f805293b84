r"""Decisions under a loss matrix.

Seed 004 "Loss functions and Classification", "Predicting to Minimize Expected Loss".

A loss matrix :math:`L` has one row per TRUE class :math:`k` and one column per PREDICTED class (action)
:math:`j`: :math:`L_{kj}` is the loss of predicting :math:`j` when the truth is :math:`k` (non-negative,
zero diagonal expected). The expected loss of action :math:`j` at :math:`\mathbf{x}` is

.. math::

    R_j(\mathbf{x}) = \sum_k L_{kj} \, P(k \mid \mathbf{x}),

and the Bayes decision is :math:`\arg\min_j R_j(\mathbf{x})`. Under posterior draws :math:`\theta_s`
each draw gives :math:`R_j^{(s)}(\mathbf{x}) = \sum_k L_{kj} P(k \mid \mathbf{x}, \theta_s)`; as
:math:`R` is linear in the probabilities, the decision minimises the posterior mean
:math:`\bar R_j = \sum_k L_{kj} \bar P(k \mid \mathbf{x})` (the loss under the posterior predictive),
and the draws give the posterior interval of each action's expected loss.

The 0-1 loss (:meth:`LossMatrix.zero_one`) gives :math:`R_j = 1 - P(j \mid \mathbf{x})`: the most
probable class. With two classes the rule is the seed's threshold: predict class 1 iff
:math:`P(1 \mid \mathbf{x}) > L_{01} / (L_{01} + L_{10})`.

Ties (equal expected losses, e.g. :math:`P(1 \mid \mathbf{x})` exactly at the threshold) go to the
action listed first in the class order, deterministically (NumPy's ``argmin`` returns the first
minimum). Scaling :math:`L` by a positive constant changes no decision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np

from bayesclass.data.constraints import Constrained, NumericArray

__all__ = ["LossMatrix", "decide", "expected_loss"]


#: the layout of a loss-matrix CSV, for messages about a file that does not follow it
_LAYOUT = (
    "expected a header of the predicted classes after one leading cell, then one row per true class with its "
    "losses, e.g. 'true/predicted,benign,malignant' / 'benign,0,1' / 'malignant,10,0'"
)


@dataclass(frozen=True)
class LossMatrix(Constrained):
    """A loss matrix over named classes.

    ``values[k, j]`` is the loss of predicting ``class_names[j]`` when the truth is ``class_names[k]``.

    Parameters
    ----------
    values : array-like of shape (K, K)
        Non-negative finite losses.
    class_names : tuple of str
        The K class names, in the order of the rows and of the columns.
    """

    values: Annotated[np.ndarray, NumericArray(ndim=2, fix="one row (true class) and one column (predicted) per class")]
    class_names: tuple[str, ...]

    def __post_init__(self) -> None:
        super().__post_init__()  # values: a read-only 2-D float array
        names = tuple(str(name) for name in self.class_names)
        object.__setattr__(self, "class_names", names)
        values = self.values
        K = len(names)
        if K < 2 or len(set(names)) != K:
            raise ValueError(f"a loss matrix needs two or more distinct class names, got {list(names)}")
        if values.shape != (K, K):
            raise ValueError(
                f"loss matrix has shape {values.shape}; it must be {K} x {K}, one row (true class) and one column "
                f"(predicted class) per class of {list(names)}"
            )
        bad = ~np.isfinite(values) | (values < 0)  # each entry named by its two classes: a cross-field check
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ValueError(
                f"loss matrix entry [true {names[k]!r}, predicted {names[j]!r}] is {float(values[k, j])!r}; "
                "losses must be finite and non-negative"
            )

    @classmethod
    def zero_one(cls, class_names: tuple[str, ...]) -> LossMatrix:
        """The 0-1 loss: 1 for every wrong prediction, 0 for a right one (decisions = the most probable class)."""
        K = len(class_names)
        return cls(np.ones((K, K)) - np.eye(K), tuple(class_names))

    @classmethod
    def from_csv(cls, path: str | Path) -> LossMatrix:
        """Read a loss matrix from a CSV file.

        A header row of predicted class names after one leading cell, then one row per true class: its name,
        then its losses. E.g.::

            true/predicted,benign,malignant
            benign,0,1
            malignant,10,0
        """
        import csv

        path = Path(path)
        try:
            with path.open(newline="", encoding="utf-8-sig") as file:
                rows = [row for row in csv.reader(file) if any(cell.strip() for cell in row)]
        except OSError as error:
            raise ValueError(f"cannot read loss matrix file {str(path)!r}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise ValueError(f"loss matrix file {str(path)!r} is not UTF-8 text") from None
        header = [cell.strip() for cell in rows[0][1:]] if rows else []
        if len(rows) < 3 or len(header) < 2:
            first = f"its first line is {','.join(rows[0])[:60]!r}" if rows else "it holds no text"
            raise ValueError(f"{str(path)!r} is not a loss-matrix CSV ({first}); {_LAYOUT}")
        true_names = [row[0].strip() for row in rows[1:]]
        for number, row in enumerate(rows[1:], start=2):
            if len(row) != len(header) + 1:
                raise ValueError(
                    f"loss matrix file {str(path)!r}, line {number}: {len(row) - 1} losses for {len(header)} "
                    f"predicted classes in the header; {_LAYOUT}"
                )
        if sorted(true_names) != sorted(header):
            raise ValueError(
                f"loss matrix file {str(path)!r}: the rows name the true classes {true_names} and the header the "
                f"predicted classes {header}; both must list the same classes"
            )
        values = np.empty((len(header), len(header)))
        for k, row in enumerate(rows[1:]):
            for j, cell in enumerate(row[1:]):
                try:
                    values[k, j] = float(cell)
                except ValueError:
                    raise ValueError(
                        f"loss matrix file {str(path)!r}: entry [true {true_names[k]!r}, predicted {header[j]!r}] "
                        f"is {cell.strip()!r}, not a number"
                    ) from None
        order = [true_names.index(name) for name in header]  # rows in the column order
        return cls(values[order], tuple(header))

    def aligned(self, class_names: tuple[str, ...] | list[str]) -> np.ndarray:
        """The losses ordered by ``class_names`` (a fitted result's classes).

        Parameters
        ----------
        class_names : tuple or list of str
            The classes, in the order wanted for the rows and the columns.

        Returns
        -------
        numpy.ndarray of shape (K, K)
            The losses in that order.

        Raises
        ------
        ValueError
            The matrix's classes and ``class_names`` differ (the message names the missing and unknown ones).
        """
        names = [str(name) for name in class_names]
        unknown = sorted(set(self.class_names) - set(names))
        missing = sorted(set(names) - set(self.class_names))
        if unknown or missing:
            parts = []
            if unknown:
                parts.append(f"unknown class(es) {unknown}")
            if missing:
                parts.append(f"no row/column for {missing}")
            raise ValueError(
                f"the loss matrix is for the classes {list(self.class_names)}, the result for {names}: "
                f"{'; '.join(parts)}; write one row and one column per fitted class"
            )
        order = [self.class_names.index(name) for name in names]
        return self.values[np.ix_(order, order)]

    def threshold(self) -> float:
        """Binary only: the probability of the second class above which it is predicted, L01 / (L01 + L10).

        Returns
        -------
        float
            The threshold; NaN where both off-diagonal losses are 0.

        Raises
        ------
        ValueError
            The matrix is not over two classes.
        """
        if len(self.class_names) != 2:
            raise ValueError(f"a threshold exists for 2 classes, this loss matrix has {len(self.class_names)}")
        false_positive, false_negative = self.values[0, 1], self.values[1, 0]
        total = false_positive + false_negative
        return math.nan if total == 0 else float(false_positive / total)


def expected_loss(proba: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Expected loss of every action, ``R[..., j] = sum_k proba[..., k] * loss[k, j]``.

    Parameters
    ----------
    proba : numpy.ndarray of shape (..., K)
        Class probabilities, classes on the last axis (any leading axes: rows, draws ...); rows of NaN
        probabilities (an estimate that is undefined there) give NaN losses.
    loss : numpy.ndarray of shape (K, K)
        ``loss[k, j]``: the loss of action ``j`` when the truth is ``k`` (:meth:`LossMatrix.aligned`).

    Returns
    -------
    numpy.ndarray of shape (..., K)
        The expected loss of every action.
    """
    proba = np.asarray(proba, dtype=float)
    if proba.shape[-1] != loss.shape[0]:
        raise ValueError(f"probabilities have {proba.shape[-1]} classes, the loss matrix {loss.shape[0]}")
    return proba @ loss


def decide(losses: np.ndarray) -> np.ndarray:
    """The action of least expected loss along the last axis; ties go to the first class in order.

    Parameters
    ----------
    losses : numpy.ndarray of shape (..., K)
        Expected losses of every action (:func:`expected_loss`).

    Returns
    -------
    numpy.ndarray of shape (...)
        The action codes; -1 where the losses are NaN (no decision).
    """
    losses = np.asarray(losses, dtype=float)
    undefined = np.isnan(losses).any(axis=-1)
    decisions = np.where(undefined[..., np.newaxis], 0.0, losses).argmin(axis=-1)
    return np.where(undefined, -1, decisions)
