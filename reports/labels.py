"""How a report names what it shows: point estimate kinds, score columns."""

from __future__ import annotations

from bayesclass.inference.evaluation.report_data import ESTIMATE_NAMES

__all__ = ["ESTIMATE_LABELS", "SCORE_COLUMNS", "estimate_label"]

#: how each point estimate kind is labelled in tables, legends and figure markers (the family vocabulary's names)
ESTIMATE_LABELS = ESTIMATE_NAMES

#: (column, header, format) of a score table as reports and ``compare`` print it; truth columns only where known
SCORE_COLUMNS = (
    ("log_loss", "log loss", ".4f"),
    ("brier", "Brier", ".4f"),
    ("accuracy", "accuracy", ".3f"),
    ("balanced_accuracy", "bal. acc.", ".3f"),
    ("ece", "ECE", ".3f"),
    ("calibration_mcb", "MCB", ".4f"),
    ("kl_to_truth", "KL truth", ".4f"),
    ("truth_coverage", "coverage", ".2f"),
    ("mean_loss", "mean loss", ".4f"),
)


def estimate_label(kind: str) -> str:
    """The label of a point estimate kind (``"map"`` -> ``"MAP"``).

    Parameters
    ----------
    kind : str
        A point estimate kind (a key of :data:`ESTIMATE_LABELS`).

    Returns
    -------
    str
        Its label; "posterior" and unknown kinds as they are.
    """
    return ESTIMATE_LABELS.get(kind, kind)
