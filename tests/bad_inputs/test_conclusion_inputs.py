"""Bad input to the conclusion's paired log-loss comparison: never a silently wrong number, never a traceback-only
IndexError.

Each row of :data:`CONCLUSION_CASES` calls
:func:`bayesclass.inference.evaluation.conclusions.paired_log_loss` with arrays that do not fit together and
expects a ``ValueError`` naming the argument.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayesclass.inference.evaluation.conclusions import difference_verdict, paired_log_loss

_P = np.array([[0.6, 0.4], [0.3, 0.7], [0.5, 0.5]])

#: (proba, y, message fragment)
CONCLUSION_CASES = [
    ({"A": np.ones(3)}, np.zeros(3, dtype=int), r"proba\['A'\] has shape \(3,\); expected \(3, K\)"),
    ({"A": _P[:2]}, np.zeros(3, dtype=int), r"proba\['A'\] has shape \(2, 2\)"),
    ({"A": _P}, np.array([0, 1, 2]), r"y has class codes 0..2, outside the 2 columns of proba\['A'\]"),
    ({"A": _P}, np.array([0, -1, 1]), r"y has class codes -1..1, outside the 2 columns"),
    ({"A": _P}, np.array([0.0, 1.0, 1.0]), r"y must be a 1-d array of integer class codes"),
    ({"A": _P}, np.zeros((3, 1), dtype=int), r"y must be a 1-d array of integer class codes, got shape \(3, 1\)"),
]


@pytest.mark.parametrize(("proba", "y", "fragment"), CONCLUSION_CASES)
def test_paired_log_loss_refuses(proba, y, fragment):
    with pytest.raises(ValueError, match=fragment):
        paired_log_loss(proba, y)


def test_a_score_without_a_practical_threshold_is_refused():
    with pytest.raises(ValueError, match=r"score='accuracy' has no practical threshold; give one of log_loss, "):
        difference_verdict(0.1, 0.01, score="accuracy")
