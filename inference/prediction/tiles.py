"""The chunked engine behind prediction: rows x draws in bounded memory, the same floats however rows are chunked.

Everything that evaluates a function of new rows under every posterior draw (class
probabilities, their log, later the pointwise log-likelihood and scores) has the shape
rows x draws x values, which for 100,000 rows and 2,000 draws no longer fits in memory.
:func:`map_row_chunks` evaluates such a function on consecutive **tiles** of rows and
hands each tile's result to the caller as soon as it is ready, so memory holds a few
tiles, never all rows x draws:

- rows arrive in **chunks** of any size (one array in memory, a CSV file read piece by
  piece, ...); they are re-cut into tiles of exactly ``tile_rows`` rows (the last tile may
  be shorter), numbered from the first row of the first chunk;
- a tile's size comes from a memory budget (:func:`tile_rows_for`: rows x draws x values
  of float64 within :data:`TILE_BYTES`), never from the chunks, so the same rows always
  meet the same BLAS calls: a matrix product's last bits depend on how many rows it
  multiplies at once (OpenBLAS picks other kernels for other shapes), and a fixed tiling
  is what makes the results of one array, of chunks of 1 or 7 rows and of a streamed file
  the same floats;
- tiles are evaluated by a small pool of threads (NumPy, SciPy and BLAS release the GIL),
  each with single-threaded BLAS (:mod:`threadpoolctl`): the work is split by tiles, not
  inside each matrix product, which keeps small factorisations fast on a busy machine and
  the floats independent of the number of workers. Results come back in row order.

Reductions over draws are per row, so a tile's reduction is exactly the reduction over
all rows restricted to the tile: :func:`draw_mean`, :func:`draw_interval` (exact
per-row quantiles, the floats of ``arviz_stats.eti``, from two selections) and
:func:`draw_log_mean_exp`.
"""

from __future__ import annotations

import collections
import contextvars
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, cast

import numpy as np
from threadpoolctl import threadpool_limits

from bayesclass._lazy import lazy_import

if TYPE_CHECKING:
    import scipy
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use

__all__ = [
    "MAX_TILE_ROWS",
    "TILE_BYTES",
    "default_workers",
    "draw_interval",
    "draw_log_mean_exp",
    "draw_mean",
    "draw_summary",
    "map_row_chunks",
    "tile_rows_for",
]

#: memory of one tile's per-draw values (float64): 32 MiB, i.e. 1,048 rows of 2,000 draws x 2 classes
#: (larger tiles amortise the packing of the coefficient matrix per BLAS call: 15% faster than 16 MiB for
#: 10 classes; 64 MiB was no faster)
TILE_BYTES = 32 * 2**20
#: the most rows of one tile (a point estimate has 1 draw: its tiles would otherwise hold millions of rows)
MAX_TILE_ROWS = 8_192
#: the most worker threads by default (each holds a few tiles)
MAX_WORKERS = 4
#: bytes of per-draw values that :func:`draw_summary` reduces at a time: the mean and the two selections of the
#: interval then read them from the core's L2 cache, not from memory (0.93x the time of whole 33 MB tiles)
SUMMARY_BLOCK_BYTES = 2 * 2**20

Rows = np.ndarray | tuple[np.ndarray, ...]


def tile_rows_for(values_per_row: int, *, setup_rows: int = 1, tile_bytes: int | None = None) -> int:
    """Rows per tile so that one tile of per-draw values stays within ``tile_bytes``.

    Parameters
    ----------
    values_per_row : int
        float64 values the function produces per row (e.g. classes x draws).
    setup_rows : int
        Rows below which one evaluation costs mostly its setup (see
        :attr:`bayesclass.models.base.ClassProbaKernel.setup_rows`); the tile holds at least as many.
    tile_bytes : int, optional
        The memory budget of one tile; default :data:`TILE_BYTES` (read at each call).

    Returns
    -------
    int
        ``clip(tile_bytes // (8 * values_per_row), setup_rows, MAX_TILE_ROWS)``, at least 1.
    """
    tile_bytes = TILE_BYTES if tile_bytes is None else tile_bytes
    for name, value in (("values_per_row", values_per_row), ("setup_rows", setup_rows), ("tile_bytes", tile_bytes)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    rows = int(tile_bytes) // (8 * int(values_per_row))
    return max(1, min(max(rows, int(setup_rows)), MAX_TILE_ROWS))


def default_workers() -> int:
    """Worker threads by default: the cores this process may use, at most :data:`MAX_WORKERS`.

    Returns
    -------
    int
        At least 1.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def map_row_chunks[Chunk: (np.ndarray, tuple[np.ndarray, ...]), Result](
    function: Callable[[Chunk], Result],
    chunks: Iterable[Chunk],
    *,
    tile_rows: int,
    workers: int | None = None,
) -> Iterator[tuple[int, Result]]:
    """Evaluate ``function`` on consecutive tiles of ``tile_rows`` rows re-cut from ``chunks``, in row order.

    This is the one chunked engine of :mod:`bayesclass.inference`: prediction, log
    probabilities and (later) pointwise log-likelihoods and scores evaluate their
    per-draw functions through it, in bounded memory (module docstring).

    Parameters
    ----------
    function : callable
        Called with one tile: an array of ``tile_rows`` rows (the last tile may have fewer),
        or a tuple of such arrays when the chunks are tuples (e.g. inputs and labels, cut
        at the same rows). It returns anything (typically per-row summaries over draws);
        it runs in a worker thread with single-threaded BLAS.
    chunks : iterable of arrays, or of tuples of arrays
        The rows, in order, in pieces of any size (empty pieces are skipped). The arrays of
        one tuple must have the same number of rows. Consumed lazily in the calling thread,
        so reading the next chunk overlaps with evaluating the previous tiles.
    tile_rows : int
        Rows per tile (:func:`tile_rows_for`). The results depend on it (through BLAS
        blocking, in the last bits) but never on the chunk sizes.
    workers : int, optional
        Worker threads; default :func:`default_workers`. 1 evaluates in the calling
        thread. Results do not depend on it.

    Yields
    ------
    (int, object)
        The index of the tile's first row (counted over all chunks) and ``function``'s result.

    Examples
    --------
    Per-row means over the draws of a (rows, draws) function, 1,000 rows at a time:

    >>> import numpy as np
    >>> draws = np.linspace(0.0, 1.0, 5)
    >>> rows = np.arange(10.0)[:, np.newaxis]
    >>> chunks = (rows[i : i + 3] for i in range(0, 10, 3))
    >>> means = [m for _, m in map_row_chunks(lambda x: (x * draws).mean(axis=1), chunks, tile_rows=4)]
    >>> np.concatenate(means).tolist()
    [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]
    """
    if isinstance(tile_rows, bool) or not isinstance(tile_rows, (int, np.integer)) or tile_rows < 1:
        raise ValueError(f"tile_rows must be a positive integer (see tile_rows_for), got {tile_rows!r}")
    workers = default_workers() if workers is None else workers
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a positive integer (threads), got {workers!r}")
    # tiles are re-cut from the chunks and are of their kind: arrays, or tuples of arrays
    tiles = cast("Iterator[tuple[int, Chunk]]", _tiles(chunks, int(tile_rows)))
    with threadpool_limits(limits=1, user_api="blas"):
        if workers == 1:
            for first, tile in tiles:
                yield first, function(tile)
            return
        pool = ThreadPoolExecutor(max_workers=int(workers), thread_name_prefix="bayesclass-tile")
        pending: collections.deque[tuple[int, Future]] = collections.deque()
        try:
            for first, tile in tiles:
                # in the caller's context: a message says what the caller's interface says (bayesclass.data.arguments)
                pending.append((first, pool.submit(contextvars.copy_context().run, function, tile)))
                if len(pending) > workers:  # at most workers + 1 tiles in flight: bounded memory
                    done_first, future = pending.popleft()
                    yield done_first, future.result()
            while pending:
                done_first, future = pending.popleft()
                yield done_first, future.result()
        finally:  # an error, an interrupt or a consumer that stops early: drop what has not started
            for _, future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)


def _tiles(chunks: Iterable[Rows], tile_rows: int) -> Iterator[tuple[int, Rows]]:
    """(first row, tile) for consecutive tiles of ``tile_rows`` rows re-cut from ``chunks``."""
    pending: list[tuple[np.ndarray, ...]] = []
    pending_rows = 0
    first = 0
    single = None
    for chunk in chunks:
        arrays = chunk if isinstance(chunk, tuple) else (chunk,)
        if single is None:
            single = not isinstance(chunk, tuple)
        elif single != (not isinstance(chunk, tuple)):
            raise TypeError("chunks must all be arrays or all be tuples of arrays")
        lengths = {len(array) for array in arrays}
        if len(lengths) != 1:
            raise ValueError(f"the arrays of one chunk must have the same number of rows, got {sorted(lengths)}")
        n = lengths.pop()
        start = 0
        if pending_rows and n:
            take = min(tile_rows - pending_rows, n)
            pending.append(tuple(array[:take] for array in arrays))
            pending_rows += take
            start = take
            if pending_rows == tile_rows:
                yield first, _unwrap(_joined(pending), single)
                first += tile_rows
                pending, pending_rows = [], 0
        while n - start >= tile_rows:
            yield first, _unwrap(tuple(array[start : start + tile_rows] for array in arrays), single)
            first += tile_rows
            start += tile_rows
        if start < n:
            pending, pending_rows = [tuple(array[start:] for array in arrays)], n - start
    if pending_rows:
        yield first, _unwrap(_joined(pending), single)


def _joined(pieces: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    if len(pieces) == 1:
        return pieces[0]
    return tuple(np.concatenate(parts, axis=0) for parts in zip(*pieces, strict=True))


def _unwrap(arrays: tuple[np.ndarray, ...], single: bool | None) -> Rows:
    return arrays[0] if single else arrays


# -- reductions over draws (the last axis), per row -------------------------------------------------


def draw_mean(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """The mean over draws (last axis) of per-draw values ``(..., draws)``.

    Parameters
    ----------
    values : numpy.ndarray of shape (..., draws)
        Per-draw values.
    weights : numpy.ndarray of shape (draws,), optional
        Draw weights summing to 1 (a stack's pooled member draws); None: equal weights.

    Returns
    -------
    numpy.ndarray of shape (...)
        Their (weighted) mean over draws; a weighted mean is kept inside the draws' range (the weights sum to 1
        only up to rounding, and a mixture of probabilities 1 must stay 1, not 1 + 1e-15).
    """
    if weights is None:
        return values.mean(axis=-1)
    return np.clip(values @ weights, values.min(axis=-1), values.max(axis=-1))


def draw_summary(
    values: np.ndarray, prob: float, *, in_place: bool = False, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`draw_mean` and :func:`draw_interval` of per-draw values, in blocks of rows that stay in cache.

    Both reduce each row on its own, so the blocks (of :data:`SUMMARY_BLOCK_BYTES`) give the same floats as
    whole arrays; weighted draws are reduced whole (their mean is one matrix product).

    Parameters
    ----------
    values : numpy.ndarray of shape (rows, ..., draws)
        Per-draw values.
    prob : float
        The interval's probability, in (0, 1).
    in_place : bool
        Reorder the draws of ``values`` itself (the caller no longer needs their order) instead of a copy's.
    weights : numpy.ndarray of shape (draws,), optional
        Draw weights summing to 1; None: equal weights.

    Returns
    -------
    (mean, lower, upper) : arrays (rows, ...)
    """
    rows = max(1, SUMMARY_BLOCK_BYTES // max(1, values[:1].nbytes))
    if weights is not None or values.ndim < 2 or values.shape[0] <= rows:
        mean = draw_mean(values, weights)
        return mean, *draw_interval(values, prob, in_place=in_place, weights=weights)
    mean = np.empty(values.shape[:-1])
    lower, upper = np.empty_like(mean), np.empty_like(mean)
    for start in range(0, values.shape[0], rows):  # blocks of rows that stay in cache, not a loop over rows
        block = slice(start, start + rows)
        mean[block] = draw_mean(values[block])
        lower[block], upper[block] = draw_interval(values[block], prob, in_place=in_place)
    return mean, lower, upper


def draw_interval(
    values: np.ndarray, prob: float, *, in_place: bool = False, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The equal-tailed interval of probability ``prob`` over draws (last axis): exact per-row quantiles.

    The same floats as ``arviz_stats.eti(values, prob, axis=-1)``, i.e. ``numpy.quantile`` with
    the "linear" method (Hyndman & Fan type 7) at ``(1 - prob) / 2`` and ``1 - (1 - prob) / 2``
    (tested to equality): the two order statistics around each quantile interpolated exactly as
    ``numpy.quantile`` does (:func:`_type7`). The order statistics come from two selections with
    ONE ``kth`` each (``ndarray.partition``, SIMD-accelerated; numpy's selection with several
    ``kth`` is not, and takes 3-4x longer than a sort): the first puts the lower quantile's upper
    neighbour in place, every smaller draw before it (its lower neighbour is their maximum); the
    second selects among the draws after it only. On 2,000 draws this is 0.8x the time of a full
    sort. Rows with a NaN draw get NaN bounds, as in numpy.

    Parameters
    ----------
    values : array (..., draws)
    prob : float
        In (0, 1).
    in_place : bool
        Reorder the draws of ``values`` itself (the caller no longer needs their order) instead of a copy's.
    weights : numpy.ndarray of shape (draws,), optional
        Draw weights summing to 1: the interval is then the quantiles of the weighted draws' distribution (a
        stack's mixture of its members' draws), ``numpy.quantile(..., weights=weights, method="inverted_cdf")``.

    Returns
    -------
    (lower, upper) : arrays (...)
    """
    edge = (1 - prob) / 2
    if weights is not None:
        lower, upper = _weighted_inverted_cdf(values, weights, (edge, 1 - edge))
        return lower, upper
    work = values if in_place else values.copy()
    n = work.shape[-1]
    (low, low_gamma), (high, high_gamma) = (_type7_position(n, q) for q in (edge, 1 - edge))
    if high + 1 > n - 1 or high < low + 2:  # one draw, or quantiles too close together: sort (NaN last)
        work.sort(axis=-1)
        below_low, above_low, below_high = work[..., low], work[..., min(low + 1, n - 1)], work[..., high]
        above_high = work[..., min(high + 1, n - 1)]
        undefined = np.isnan(work[..., -1])
    else:
        work.partition(low + 1, axis=-1)  # NaN counts as the largest value, as in a sort
        above_low = work[..., low + 1].copy()
        below_low = work[..., : low + 1].max(axis=-1)
        rest = work[..., low + 2 :]  # sorted positions low + 2 ... n - 1, in some order
        rest.partition(high - low - 2, axis=-1)
        below_high = rest[..., high - low - 2].copy()
        above_high = rest[..., high - low - 1 :].min(axis=-1)  # NaN where the row has one (it sorts last)
        undefined = np.isnan(above_high)
    lower = _type7(below_low, above_low, low_gamma)
    upper = _type7(below_high, above_high, high_gamma)
    if undefined.any():
        lower[undefined] = np.nan
        upper[undefined] = np.nan
    return lower, upper


def _weighted_inverted_cdf(values: np.ndarray, weights: np.ndarray, quantiles: tuple[float, ...]) -> list[np.ndarray]:
    """``numpy.quantile(values, q, axis=-1, weights=weights, method="inverted_cdf")`` for each q, over all rows at once.

    numpy's weighted quantile moves the axis first and searches each row's cumulative weights in a Python loop
    (3-5x the time of a sort on a tile of 1,000 rows x 8,000 draws); this is the same rule on the last axis, one
    argsort for every quantile: the value at the first sorted position whose normalised cumulative weight reaches
    q (tested equal to numpy's, ties, zero weights and NaN rows included). Each q is in (0, 1).
    """
    order = np.argsort(values, axis=-1)  # NaN last
    cdf = np.cumsum(weights[order], axis=-1)
    cdf /= cdf[..., -1:]
    last = np.take_along_axis(values, order[..., -1:], axis=-1)[..., 0]
    results = []
    for quantile in quantiles:
        index = np.minimum(np.count_nonzero(cdf < quantile, axis=-1), values.shape[-1] - 1)
        chosen = np.take_along_axis(order, index[..., None], axis=-1)
        result = np.take_along_axis(values, chosen, axis=-1)[..., 0]
        result[np.isnan(last)] = np.nan
        results.append(result)
    return results


def _type7_position(n: int, quantile: float) -> tuple[int, np.float64]:
    """(sorted position just below, weight of the one above) of ``numpy.quantile(..., quantile, method="linear")``.

    numpy's virtual index ``(n - 1) q``: its floor and fractional part, computed as numpy does; past the last
    position numpy takes the last value (position ``n - 1``, weight 0).
    """
    virtual = (n - 1) * np.float64(quantile)
    if virtual >= n - 1:
        return n - 1, np.float64(0.0)
    previous = int(np.floor(virtual))
    return previous, np.float64(virtual - previous)


def _type7(below: np.ndarray, above: np.ndarray, gamma: np.float64) -> np.ndarray:
    """The ``_lerp`` of ``numpy.quantile`` between the two order statistics around a quantile, op for op.

    ``below + (above - below) gamma``, or ``above - (above - below)(1 - gamma)`` when ``gamma >= 0.5``, so that
    the floats are ``numpy.quantile``'s.
    """
    difference = above - below
    if gamma >= 0.5:
        return above - difference * (1 - gamma)
    return below + difference * gamma


def draw_log_mean_exp(log_values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``log(mean_s exp(v_s))`` over draws (last axis), in the log domain (``logsumexp - log S``).

    Parameters
    ----------
    log_values : numpy.ndarray of shape (..., draws)
        Per-draw log values (e.g. log class probabilities).
    weights : numpy.ndarray of shape (draws,), optional
        Draw weights summing to 1: ``log sum_s w_s exp(v_s)`` (``logsumexp(v, b=w)``).

    Returns
    -------
    numpy.ndarray of shape (...)
        The log of their mean over draws; NaN where a row is NaN.
    """
    with np.errstate(invalid="ignore", divide="ignore"):  # NaN rows (impossible under every class) stay NaN
        if weights is not None:
            return scipy.special.logsumexp(log_values, axis=-1, b=weights)
        return scipy.special.logsumexp(log_values, axis=-1) - np.log(log_values.shape[-1])
