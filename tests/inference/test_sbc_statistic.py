"""The SBC uniformity test keeps its level when the elements of one simulation are dependent, and has power."""

from __future__ import annotations

import numpy as np

from bayesclass.inference.criticism.sbc import _uniform_ranks_p_value

N_DRAWS, N_BINS = 99, 10
EDGES = np.linspace(0, N_DRAWS + 1, N_BINS + 1)


def _dependent_uniform_ranks(rng: np.random.Generator, n_simulations: int, n_elements: int) -> np.ndarray:
    """Calibrated ranks whose elements move together, as a GP's latent values do: each simulation shifts all
    of its elements' ranks by one common uniform offset (ranks stay exactly uniform per element)."""
    common = rng.integers(0, N_DRAWS + 1, (n_simulations, 1))
    jitter = rng.integers(0, 3, (n_simulations, n_elements))
    return (common + jitter) % (N_DRAWS + 1)


def _pooled_p_value(ranks: np.ndarray) -> float:
    """The former statistic: one chi-square test of all elements' ranks pooled."""
    import scipy.stats

    return float(scipy.stats.chisquare(np.histogram(ranks.ravel(), bins=EDGES)[0]).pvalue)


def test_level_holds_under_dependence_where_pooling_fails():
    rng = np.random.default_rng(0)
    replicates = [_dependent_uniform_ranks(rng, 40, 24) for _ in range(400)]
    combined = np.mean([_uniform_ranks_p_value(r, EDGES) < 0.05 for r in replicates])
    pooled = np.mean([_pooled_p_value(r) < 0.05 for r in replicates])
    assert combined <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 400), combined  # at most its level (Bonferroni)
    assert pooled > 0.5, pooled  # what the pooled histogram did with the same calibrated ranks


def test_detects_ranks_that_pile_up_in_the_middle():
    """A too-wide posterior ranks the truth near the middle: every element's histogram is peaked."""
    rng = np.random.default_rng(1)
    ranks = np.clip(rng.normal(N_DRAWS / 2, 12, (100, 6)).round(), 0, N_DRAWS).astype(int)
    assert _uniform_ranks_p_value(ranks, EDGES) < 1e-6


def test_mirror_elements_count_once():
    """The two halves of a symmetric matrix repeat each other: the Bonferroni factor counts them once."""
    rng = np.random.default_rng(2)
    ranks = rng.integers(0, N_DRAWS + 1, (60, 3))
    mirrored = np.concatenate([ranks, ranks[:, 1:]], axis=1)
    assert _uniform_ranks_p_value(mirrored, EDGES) == _uniform_ranks_p_value(ranks, EDGES)
