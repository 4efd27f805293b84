"""Class probabilities for NEW inputs, from posterior draws and point estimates alike, in bounded memory.

Prediction never goes through ``pm.set_data`` + posterior predictive sampling: each
family's :meth:`~bayesclass.models.base.ClassifierModel.class_proba_kernel` is
evaluated on the stored draws with NumPy, so any number of rows works (the shape
pitfalls of pymc#6230 / pymc#7897 cannot arise) and no model is compiled.

Rows go through the chunked engine (:mod:`bayesclass.inference.prediction.tiles`): tiles of
rows sized from a memory budget (rows x draws x classes), each reduced over draws as
soon as it is computed (posterior mean; equal-tailed interval from exact per-row
quantiles), so that 100,000 rows x 2,000 draws take a few hundred MB, not the 3 GB
of every per-draw probability. The per-draw probabilities are kept only on request
(``return_draws=True``). :func:`predict_chunks` does the same for rows that arrive in
pieces (a CSV file larger than memory) and gives the same floats as :func:`predict`
on all rows at once.

The interval is the equal-tailed interval (ETI) of the per-draw probabilities,
by default of probability 0.89, ArviZ's default: the numbers of ``arviz_stats.eti``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.data.arguments import spelled
from bayesclass.data.dataset import table_rows
from bayesclass.data.origin import MissingPolicy
from bayesclass.data.table import TableOptions
from bayesclass.inference._memory import format_bytes, largest_fitting, require_memory, tile_bytes
from bayesclass.inference.engines.fit import model_inputs
from bayesclass.inference.prediction.decisions import LossMatrix, decide
from bayesclass.inference.prediction.draws import PREDICTION_DRAWS, DrawSelection, PredictionDraws, select_draws
from bayesclass.inference.prediction.progress import PREDICTION_PROGRESS_DELAY, progress_over_rows
from bayesclass.inference.prediction.tiles import (
    draw_log_mean_exp,
    draw_mean,
    draw_summary,
    map_row_chunks,
    tile_rows_for,
)
from bayesclass.inference.result import (
    ResultInfo,
    StackInfo,
    data_result,
    gaussian_approximation,
    is_stack,
    result_info,
    stack_info,
)
from bayesclass.inference.stacking import member_kernels, stack_inputs, stack_kernel
from bayesclass.models.base import ClassProbaKernel

if TYPE_CHECKING:
    import arviz_stats as azs
    import scipy
    import xarray as xr
else:
    scipy = lazy_import("scipy")  # SciPy loads its submodules (scipy.special ...) on first use
    azs = lazy_import("arviz_stats")
    xr = lazy_import("xarray")

__all__ = ["DEFAULT_INTERVAL_PROB", "Predictor", "predict", "predict_chunks", "predict_log_proba"]

DEFAULT_INTERVAL_PROB = 0.89


def predict(
    result: xr.DataTree,
    X: Any,
    *,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    return_draws: bool = False,
    loss: LossMatrix | None = None,
    workers: int | None = None,
    keep_draws: bool | None = None,
    missing: MissingPolicy | None = None,
    draws: PredictionDraws = "auto",
    progress: bool = True,
) -> xr.Dataset:
    """Class probabilities of the rows of ``X`` under every estimate stored in ``result``.

    Parameters
    ----------
    result : xarray.DataTree
        Output of :func:`inference.fit` (or :func:`inference.load`).
    X : array-like of shape (n_obs, n_features) or (n_features,), or Dataset
        New inputs in the original (unstandardised) units. A Dataset's labels
        are checked against the fitted classes.
    interval_prob : float
        Probability mass of the equal-tailed interval, in (0, 1).
    return_draws : bool
        Also return the per-draw probabilities ``class_proba_draws`` (chain, draw, obs,
        class): rows x draws x classes float64 values (3.2 GB for 100,000 rows, 2,000 draws
        and 2 classes). Off (the default), memory stays bounded for any number of rows.
    loss : LossMatrix, optional
        Decide each row under this loss matrix (:mod:`bayesclass.inference.prediction.decisions`): adds
        ``expected_loss`` (obs, class): the expected loss of predicting each class, under the
        posterior mean probabilities (or the point estimate), with ``expected_loss_low`` /
        ``expected_loss_high``, the ETI of the per-draw expected losses, when there are draws;
        and ``decision`` (obs), the class of least expected loss (ties: the first class; ""
        where the probabilities are NaN). Without it, ``predicted`` is the 0-1 loss decision.
    workers : int, optional
        Threads evaluating tiles of rows (default: the usable cores, at most 4); the
        numbers do not depend on it.
    keep_draws : bool, optional
        Deprecated name of ``return_draws`` (whose default is now False); still honoured,
        with a ``FutureWarning``.
    missing : {"error", "drop"}, optional
        What a blank feature cell of a DataFrame ``X`` (NaN, None, an empty or ``NA`` text) does, as in
        ``bayesclass predict --missing``: ``"error"`` (the default) refuses ``X``, naming the column, the row and
        the fix; ``"drop"`` predicts the other rows and keeps every row, with NaN probabilities and an empty
        ``predicted`` where a feature is blank. A NaN in an array is refused as not finite either way.
    draws : {"auto", "all"}, default "auto"
        The posterior draws that predict. ``"auto"``: every draw, but a family whose prediction costs much per
        draw (the latent GP: one n x n factor per draw) uses every k-th draw of each chain, about as many as the
        posterior's effective sample size (:mod:`bayesclass.inference.prediction.draws`; the ``draws`` and
        ``monte_carlo_error`` attrs say which and how precise); ``"all"``: every draw.
    progress : bool, default True
        A progress bar over the rows on standard error (a terminal or a notebook) once the prediction has taken
        more than :data:`~bayesclass.inference.prediction.progress.PREDICTION_PROGRESS_DELAY` (1 s); False draws
        nothing.

    Returns
    -------
    xarray.Dataset
        ``class_proba`` (obs, class): the posterior mean when there are draws,
        else the fitted point estimate; ``class_proba_low`` / ``class_proba_high``
        (ETI bounds, exact per-row quantiles over draws) with draws;
        ``class_proba_draws`` (chain, draw, obs, class) when ``return_draws``;
        ``class_proba_<kind>`` (``class_proba_map``, ``class_proba_mle`` ...) for each
        stored point estimate, with ``class_proba_<kind>_low`` / ``class_proba_<kind>_high``, its
        delta-method interval of probability ``interval_prob`` (the family's
        :meth:`~bayesclass.models.base.ClassifierModel.class_proba_interval_kernel`), where the result stores
        the estimate's covariance; ``predicted`` (obs), the class of highest ``class_proba``
        ("" for a row whose probabilities are NaN because it is impossible under every
        class, e.g. under a naive Bayes MLE; a ``RuntimeWarning`` says so).

    Raises
    ------
    ValueError
        ``X`` without the fitted columns, with NaN/inf or values the model cannot take (a
        binary feature that is not 0/1, an unseen category), a blank cell of a DataFrame unless
        ``missing="drop"`` (or every row blank), labels of a Dataset that were not fitted, or
        ``interval_prob`` outside (0, 1).

    See Also
    --------
    predict_chunks : the same for rows that arrive in pieces, e.g. from a large CSV file.
    """
    if keep_draws is not None:
        warnings.warn(
            "predict(keep_draws=...) is deprecated: use return_draws=... (default False: the per-draw "
            "probabilities take rows x draws x classes x 8 bytes)",
            FutureWarning,
            stacklevel=2,
        )
        return_draws = bool(keep_draws)
    missing = TableOptions(missing=missing or "error").missing
    predictor = Predictor.of(result, interval_prob=interval_prob, return_draws=return_draws, loss=loss, draws=draws)
    if isinstance(X, Dataset):  # check_features checks its feature names and takes its X
        _check_labels(X, predictor.class_names)
    complete = None
    if missing == "drop":  # a table's rows coded as a table file's are (bayesclass predict --missing drop)
        data = predictor.info.data
        names = predictor.info.feature_names
        X, complete = table_rows(X, feature_names=names, category_names=data.category_names, missing="drop")
        X = X if complete is None else _complete_rows(X, complete)
    output = _predict_rows(predictor, X, workers=workers, progress=progress)
    if complete is not None:  # every input row, NaN where a feature is blank
        output = {name: _spread(values, complete) for name, values in output.items()}
    dataset = predictor._dataset(output, first_row=0)
    predictor.warn_undefined(dataset if complete is None else dataset.isel(obs=complete))
    return dataset.drop_vars("obs")


def _predict_rows(predictor: Predictor, X: Any, *, workers: int | None, progress: bool) -> dict[str, np.ndarray]:
    """Every output of :func:`predict` for the rows of ``X``, tile by tile, with a progress bar after its delay."""
    if not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be True or False, got {progress!r}")
    n_rows = _n_rows(X)
    predictor.require_memory(n_rows)
    tiles = []  # per-row arrays: one Dataset at the end
    with progress_over_rows(n_rows or 1, hide=not progress, delay=PREDICTION_PROGRESS_DELAY) as advance:
        for _, output in predictor.tiles([X], workers=workers):
            tiles.append(output)
            advance(len(output["class_proba"]))
    return {name: np.concatenate([tile[name] for tile in tiles], axis=0) for name in tiles[0]}


def _complete_rows(X: Any, complete: np.ndarray) -> np.ndarray:
    """The rows of coded ``X`` without a blank feature; an error where there are none."""
    if not complete.any():
        raise ValueError(
            f"every one of the {len(complete)} rows of X has a blank cell in the fitted feature columns, so "
            f"{spelled('missing', 'drop')} leaves none to predict; fill the cells in"
        )
    return np.asarray(X)[complete]


def _spread(values: np.ndarray, complete: np.ndarray) -> np.ndarray:
    """Per-row ``values`` of the complete rows placed at their rows, NaN at the rows with a blank feature."""
    spread = np.full((len(complete), *values.shape[1:]), np.nan)
    spread[complete] = values
    return spread


def predict_chunks(
    result: xr.DataTree,
    chunks: Iterable[Any],
    *,
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    return_draws: bool = False,
    loss: LossMatrix | None = None,
    workers: int | None = None,
    draws: PredictionDraws = "auto",
) -> Iterator[xr.Dataset]:
    """:func:`predict` for rows that arrive in pieces, in bounded memory: one Dataset per tile of rows.

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    chunks : iterable of array-like (n_i, n_features)
        The new rows in order, in pieces of any size (e.g. read from a CSV file), in the
        original units. Read lazily: reading the next piece overlaps with predicting.
    interval_prob, return_draws, loss, workers, draws
        As in :func:`predict`.

    Yields
    ------
    xarray.Dataset
        The layout of :func:`predict` for consecutive rows, with an ``obs`` coordinate
        holding the row numbers counted over all chunks. Concatenated, they are the same
        floats as :func:`predict` on all rows at once, however the rows were chunked.

    Raises
    ------
    ValueError
        As :func:`predict`; rows are numbered over all chunks in the messages.
    """
    predictor = Predictor.of(result, interval_prob=interval_prob, return_draws=return_draws, loss=loss, draws=draws)
    for dataset in predictor.predict_chunks(chunks, workers=workers):
        predictor.warn_undefined(dataset)
        yield dataset


def predict_log_proba(result: xr.DataTree, X: Any, *, workers: int | None = None) -> xr.DataArray:
    """Log P(class | x) of the estimate :func:`predict` reports as ``class_proba``, in the log domain.

    With posterior draws it is the log of the posterior mean probability,
    ``logsumexp_s log P(class | x, theta_s) - log S`` over the S draws; otherwise the
    fitted point estimate's ``class_log_proba``. Rows whose probabilities underflow to 0
    keep their finite log values. Computed tile by tile (:mod:`bayesclass.inference.prediction.tiles`).

    Parameters
    ----------
    result : xarray.DataTree
        A fitted result.
    X : array-like of shape (n_obs, n_features) or Dataset
        New rows in the original units.
    workers : int, optional
        Threads of the chunked engine; default :func:`~bayesclass.inference.prediction.tiles.default_workers`.

    Returns
    -------
    xarray.DataArray
        Dims ``(obs, class)``.
    """
    predictor = Predictor.of(result)
    kernel = predictor.kernels["class_proba"]

    def log_proba(tile: np.ndarray) -> np.ndarray:
        values = kernel(tile, log=True)
        return values[..., 0] if kernel.n_draws == 1 else draw_log_mean_exp(values, kernel.draw_weights)

    tiles = map_row_chunks(log_proba, predictor.inputs([X]), tile_rows=predictor.tile_rows, workers=workers)
    pieces = [piece for _, piece in tiles]
    return xr.DataArray(
        np.concatenate(pieces, axis=0), dims=("obs", "class"), coords={"class": list(predictor.class_names)}
    )


@dataclass(frozen=True)
class Predictor:
    """Everything prediction needs from a result, prepared once: one kernel per estimate, the tile size.

    Build it with :meth:`of`. ``kernels`` maps each output variable to its
    :class:`~bayesclass.models.base.ClassProbaKernel`: ``class_proba`` (the posterior draws,
    or the fitted point estimate) and ``class_proba_<kind>`` for every stored point estimate
    beside draws. Other per-row, per-draw quantities reuse the same kernels, tiles and engine,
    e.g. the pointwise log-likelihood of labelled rows (chunks of ``(X, y)`` are cut at the
    same rows)::

        predictor = Predictor.of(result)
        kernel = predictor.kernels["class_proba"]

        def log_likelihood(tile):  # (rows, draws): log P(y_i | x_i, theta_s)
            X, y = tile
            return kernel(model_inputs(result, X), log=True)[np.arange(len(y)), y]

        for first_row, values in map_row_chunks(log_likelihood, zip(X_chunks, y_chunks), tile_rows=predictor.tile_rows):
            ...

    Parameters
    ----------
    result : xarray.DataTree
        The fitted result.
    kernels : dict of str to ClassProbaKernel
        One kernel per output variable (above).
    class_names : tuple of str
        The result's classes.
    tile_rows : int
        Rows per tile, so that the widest kernel's per-draw values of a tile stay in bounded memory.
    interval_prob : float
        Probability mass of the equal-tailed intervals over draws.
    return_draws : bool
        Whether the per-draw probabilities are returned (``class_proba_draws``).
    has_draws : bool
        Whether the result has posterior draws.
    info : ResultInfo
        The result's typed attrs, parsed once for every chunk and tile.
    loss : numpy.ndarray of shape (K, K), optional
        The loss matrix in the result's class order (adds expected losses and decisions).
    interval_kernels : dict of str to callable
        Per point-estimate variable (``class_proba_<kind>``) whose covariance the result stores, its
        delta-method bounds ``bounds(X) -> (low, high)`` at ``interval_prob``.
    draw_selection : DrawSelection, optional
        The posterior draws ``class_proba`` is predicted from (:mod:`bayesclass.inference.prediction.draws`); None
        without draws, or for a stack.
    stack : StackInfo, optional
        The records of a stack (:mod:`bayesclass.inference.stacking`): ``class_proba`` is then the weighted
        mixture of its members, each member's posterior mean ``class_proba_member_<i>`` beside it, ``info`` that
        of its first member (the shared columns and classes), and rows are given to the kernels in the data's
        units.
    """

    result: xr.DataTree
    kernels: dict[str, ClassProbaKernel]
    class_names: tuple[str, ...]
    tile_rows: int
    interval_prob: float
    return_draws: bool
    has_draws: bool
    info: ResultInfo
    loss: np.ndarray | None = None  # the loss matrix in the result's class order
    interval_kernels: dict[str, Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    stack: StackInfo | None = None
    draw_selection: DrawSelection | None = None

    @classmethod
    def of(
        cls,
        result: xr.DataTree,
        *,
        interval_prob: float = DEFAULT_INTERVAL_PROB,
        return_draws: bool = False,
        loss: LossMatrix | None = None,
        draws: PredictionDraws = "auto",
    ) -> Predictor:
        """Prepare the prediction of ``result``: one kernel per estimate and the tile size.

        Parameters
        ----------
        result : xarray.DataTree
            A fitted result.
        interval_prob : float, default DEFAULT_INTERVAL_PROB
            Probability mass of the equal-tailed intervals, in (0, 1).
        return_draws : bool, default False
            Return the per-draw probabilities.
        loss : LossMatrix, optional
            Adds the expected loss of every action and the decisions.
        draws : {"auto", "all"}, default "auto"
            The posterior draws that predict (see :func:`predict`).

        Returns
        -------
        Predictor
            The prepared predictor.

        Raises
        ------
        ValueError
            An argument out of range or of the wrong type, or a loss matrix over other classes.
        """
        if isinstance(interval_prob, bool) or not isinstance(interval_prob, (int, float, np.floating)):
            raise ValueError(f"interval_prob must be a number in (0, 1), e.g. 0.89; got {interval_prob!r}")
        if not 0.0 < float(interval_prob) < 1.0:
            raise ValueError(f"interval_prob must be in (0, 1), e.g. 0.89; got {interval_prob!r}")
        if not isinstance(return_draws, (bool, np.bool_)):
            raise ValueError(f"return_draws must be True or False, got {return_draws!r}")
        if not isinstance(draws, str) or draws not in PREDICTION_DRAWS:
            raise ValueError(f"draws must be one of {', '.join(map(repr, PREDICTION_DRAWS))}, got {draws!r}")
        stacked = is_stack(result)
        if stacked and return_draws:
            raise ValueError(
                "return_draws is not available for a stack (its draws are its members' draws, unequally weighted); "
                "predict each member (bayesclass.inference.result.stack_members) with return_draws=True"
            )
        info = result_info(data_result(result))
        selection = None
        if stacked:
            kernels, interval_kernels = _stack_kernels(result)
        else:
            kernels, interval_kernels, selection = _result_kernels(result, info, interval_prob, draws)
        has_draws = stacked or "posterior" in result
        class_names = info.class_names
        if loss is not None and not isinstance(loss, LossMatrix):
            raise ValueError(
                f"loss must be a bayesclass.inference.prediction.decisions.LossMatrix, got {type(loss).__name__}"
            )
        widest = max(kernel.n_classes * kernel.n_draws for kernel in kernels.values()) * (2 if loss is not None else 1)
        setup = max(kernel.setup_rows for kernel in kernels.values())
        _require_tile_memory(widest, setup)
        return cls(
            result=result,
            kernels=kernels,
            class_names=class_names,
            tile_rows=tile_rows_for(widest, setup_rows=setup),
            interval_prob=float(interval_prob),
            return_draws=bool(return_draws),
            has_draws=has_draws,
            loss=None if loss is None else loss.aligned(class_names),
            info=info,
            interval_kernels=interval_kernels,
            stack=stack_info(result) if stacked else None,
            draw_selection=selection,
        )

    def require_memory(self, n_rows: int | None) -> None:
        """Refuse :func:`predict` of ``n_rows`` rows whose outputs would not fit in memory, before any row is done.

        With ``return_draws`` the per-draw probabilities take rows x draws x classes x 8 bytes, held twice (the
        tiles and their concatenation); every output takes rows x classes x 8 bytes per variable.

        Parameters
        ----------
        n_rows : int or None
            The rows to predict (None: unknown, not checked).

        Raises
        ------
        InsufficientMemoryError
            The outputs exceed the available memory; the message gives the most rows that fit.
        """
        if n_rows is None:
            return
        draw_values = sum(kernel.n_draws * kernel.n_classes for kernel in self.kernels.values() if kernel.n_draws > 1)
        per_row = 8 * 2 * ((draw_values if self.return_draws else 0) + 8 * len(self.kernels) * len(self.class_names))

        def needed(rows: int) -> int:
            widest = max(kernel.n_classes * kernel.n_draws for kernel in self.kernels.values())
            return per_row * rows + tile_bytes(widest, rows)

        def fix(available: int) -> str:
            most = largest_fitting(needed, available, upper=n_rows)
            hint = " or return_draws=False (predict_chunks returns them tile by tile)" if self.return_draws else ""
            return (
                f"at most {most:,} rows fit in one call; predict fewer rows at a time (predict_chunks holds one tile "
                f"of rows at a time){hint}"
            )

        draws = " with return_draws=True" if self.return_draws else ""
        require_memory(
            needed(n_rows), what=f"predict of {n_rows:,} rows{draws} ({draw_values:,} values per row)", fix=fix
        )

    def inputs(self, chunks: Iterable[Any]) -> Iterator[np.ndarray]:
        """Each chunk of new rows as model inputs (:func:`model_inputs`), checked by every kernel.

        Rows are numbered over all chunks in the messages; empty chunks are skipped, and no rows at all is an
        error.

        Parameters
        ----------
        chunks : iterable of array-like
            The new rows in order, in pieces of any size, in the original units.

        Yields
        ------
        numpy.ndarray of shape (n_i, n_inputs)
            Each non-empty chunk as model inputs.

        Raises
        ------
        ValueError
            A row the model cannot take, or no rows at all.
        """
        first_row = 0
        for chunk in chunks:
            if isinstance(chunk, np.ndarray) and chunk.ndim == 2 and chunk.shape[0] == 0:
                continue
            values = (
                stack_inputs(self.result, chunk)
                if self.stack is not None
                else model_inputs(self.result, chunk, info=self.info)
            )
            for kernel in self.kernels.values():
                kernel.check(values, first_row)
            first_row += len(values)
            yield values
        if first_row == 0:
            raise ValueError("X has 0 rows; pass at least one row to predict")

    def summarise(self, tile: np.ndarray) -> dict[str, np.ndarray]:
        """Every output variable of :func:`predict` for one tile of model inputs (the engine's per-tile function).

        Parameters
        ----------
        tile : numpy.ndarray of shape (rows, n_inputs)
            One tile of model inputs.

        Returns
        -------
        dict of str to numpy.ndarray
            ``class_proba`` (and ``_low``/``_high``, ``_draws``, ``class_proba_<kind>``, ``expected_loss`` ...
            as they apply), each with the tile's rows first.
        """
        output: dict[str, np.ndarray] = {}
        done: dict[int, str] = {}  # a point-estimate fit reports its estimate twice (class_proba, class_proba_<kind>)
        for name, kernel in self.kernels.items():
            if id(kernel) in done:
                output[name] = output[done[id(kernel)]]
                continue
            done[id(kernel)] = name
            if self.has_draws and name == "class_proba":  # posterior draws (a single one included): intervals
                self._summarise_draws(kernel, tile, output)
                continue
            values = kernel(tile)  # a point estimate, or a stack member's posterior mean
            if name == "class_proba" and self.loss is not None:  # per draw: R[i, j, s] = sum_k P[i, k, s] L[k, j]
                output["expected_loss"] = draw_mean(np.einsum("iks,kj->ijs", values, self.loss), kernel.draw_weights)
            output[name] = values[..., 0] if kernel.n_draws == 1 else draw_mean(values)
        for name, bounds in self.interval_kernels.items():  # delta-method intervals of the point estimates
            output[f"{name}_low"], output[f"{name}_high"] = bounds(tile)
        return output

    def _summarise_draws(self, kernel: ClassProbaKernel, tile: np.ndarray, output: dict[str, np.ndarray]) -> None:
        """``class_proba`` with its interval (and the expected losses, the draws) of one tile, into ``output``.

        Each block of rows is reduced as soon as the kernel has normalised it (:meth:`ClassProbaKernel.in_blocks`),
        while it is in cache.
        """
        weights, prob = kernel.draw_weights, self.interval_prob

        def put(name: str, rows: slice, summary: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
            for suffix, values in zip(("", "_low", "_high"), summary, strict=True):
                if f"{name}{suffix}" not in output:
                    output[f"{name}{suffix}"] = np.empty((tile.shape[0], *values.shape[1:]))
                output[f"{name}{suffix}"][rows] = values

        def consume(rows: slice, block: np.ndarray) -> None:
            if self.loss is not None:  # per draw: R[i, j, s] = sum_k P[i, k, s] L[k, j], before the draws move
                losses = np.einsum("iks,kj->ijs", block, self.loss)
                put("expected_loss", rows, draw_summary(losses, prob, in_place=True, weights=weights))
            put("class_proba", rows, draw_summary(block, prob, in_place=not self.return_draws, weights=weights))

        values = kernel.in_blocks(tile, consume)
        if self.return_draws:  # after class_proba, before its bounds
            output["class_proba_draws"] = values
            output["class_proba_low"] = output.pop("class_proba_low")
            output["class_proba_high"] = output.pop("class_proba_high")

    def tiles(
        self, chunks: Iterable[Any], *, workers: int | None = None
    ) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
        """(first row, :meth:`summarise` arrays) per tile of rows, through the chunked engine.

        Parameters
        ----------
        chunks : iterable of array-like
            The new rows in order, in pieces of any size, in the original units.
        workers : int, optional
            Threads of the chunked engine; default :func:`~bayesclass.inference.prediction.tiles.default_workers`.

        Returns
        -------
        iterator of (int, dict of str to numpy.ndarray)
            The first row of each tile (counted over all chunks) and its arrays, in row order.
        """
        return map_row_chunks(self.summarise, self.inputs(chunks), tile_rows=self.tile_rows, workers=workers)

    def predict_chunks(self, chunks: Iterable[Any], *, workers: int | None = None) -> Iterator[xr.Dataset]:
        """One :func:`predict` Dataset per tile of rows (see :func:`predict_chunks`).

        Parameters
        ----------
        chunks : iterable of array-like
            The new rows in order, in pieces of any size, in the original units.
        workers : int, optional
            Threads of the chunked engine; default :func:`~bayesclass.inference.prediction.tiles.default_workers`.

        Yields
        ------
        xarray.Dataset
            The layout of :func:`predict` for consecutive rows, with their row numbers as ``obs``.
        """
        for first_row, output in self.tiles(chunks, workers=workers):
            yield self._dataset(output, first_row)

    def _dataset(self, output: dict[str, np.ndarray], first_row: int) -> xr.Dataset:
        n_rows = len(output["class_proba"])
        variables: dict[str, xr.DataArray] = {}
        for name, values in output.items():
            if name.endswith("_draws"):
                kernel = self.kernels["class_proba"]
                draws = xr.DataArray(
                    values.reshape(*values.shape[:2], *kernel.leading_shape),
                    dims=("obs", "class", *kernel.leading_dims),
                    coords=dict(kernel.leading_coords),
                )
                variables[name] = draws.transpose(*kernel.leading_dims, "obs", "class")
            else:
                variables[name] = xr.DataArray(values, dims=("obs", "class"))
        dataset = xr.Dataset(variables).assign_coords(
            {"class": list(self.class_names), "obs": np.arange(first_row, first_row + n_rows)}
        )
        proba = dataset["class_proba"].values
        undefined = np.isnan(proba).any(axis=1)  # rows impossible under every class (see the family's docs)
        best = np.where(undefined[:, None], 0.0, proba).argmax(axis=1)
        predicted = np.asarray(self.class_names, dtype=object)[best]
        predicted[undefined] = ""
        dataset["predicted"] = ("obs", predicted)
        if "expected_loss" in dataset:
            chosen = decide(dataset["expected_loss"].values)
            decision = np.asarray(self.class_names, dtype=object)[np.maximum(chosen, 0)]
            decision[chosen < 0] = ""
            dataset["decision"] = ("obs", decision)
        info = self.info
        dataset.attrs.update(  # the prediction's own labels (a new dataset, not the result)
            interval=f"equal-tailed interval (ETI) of probability {self.interval_prob:g} over posterior draws",
            point="posterior mean over draws" if self.has_draws else f"{info.method} plug-in",
            model=info.model.name,
            method=info.method,
        )
        if self.stack is not None:
            dataset.attrs.update(
                interval=f"equal-tailed interval of probability {self.interval_prob:g} of the mixture of the members' "
                "per-draw probabilities (weighted quantiles)",
                point=f"mixture of the members' posterior means by {self.stack.method} weights",
                model="stack",
                method=self.stack.method,
                members=", ".join(
                    f"member_{index} = {label} (weight {weight:.4f})"
                    for index, (label, weight) in enumerate(zip(self.stack.labels, self.stack.weights, strict=True))
                ),
            )
        if self.draw_selection is not None and self.draw_selection.step > 1:
            dataset.attrs["draws"] = self.draw_selection.statement()
            dataset.attrs["monte_carlo_error"] = self.draw_selection.error_statement(self.interval_prob)
        if self.interval_kernels:
            dataset.attrs["estimate_interval"] = (
                f"delta-method interval of probability {self.interval_prob:g} under the Gaussian approximation of "
                f"each point estimate ({', '.join(f'{name}_low/_high' for name in self.interval_kernels)})"
            )
        return dataset

    def warn_undefined(self, dataset: xr.Dataset) -> None:
        """One ``RuntimeWarning`` naming the estimates under which some rows have NaN probabilities.

        Such rows are impossible under every class (e.g. a value never seen in training under an MLE); the
        warning gives their count and the first of them. Nothing is warned where there are none.

        Parameters
        ----------
        dataset : xarray.Dataset
            One tile's (or all rows') predictions, with their row numbers as ``obs`` (counted over all chunks).
        """
        distinct = {id(kernel): name for name, kernel in reversed(self.kernels.items())}.values()  # each estimate once
        undefined = {
            name: np.isnan(dataset[name].values).any(axis=1)
            for name in self.kernels
            if name in distinct and np.isnan(dataset[name].values).any()
        }
        if not undefined:
            return
        rows = np.flatnonzero(np.logical_or.reduce(list(undefined.values())))
        estimates = ", ".join(
            ("the posterior draws" if self.has_draws else self.info.method)
            if name == "class_proba"
            else name.removeprefix("class_proba_")
            for name in undefined
        )
        warnings.warn(
            f"{rows.size} row(s) of X (first: row {int(dataset['obs'].values[rows[0]])}) have probability 0 under "
            f"every class under {estimates}; their probabilities there ({', '.join(undefined)}) are NaN and, where "
            f"that is the reported estimate, 'predicted' is empty. Use the posterior, "
            f"{spelled('kind', 'posterior_mean')}, or a MAP with concentrations > 1",
            RuntimeWarning,
            stacklevel=3,
        )


def _result_kernels(result: xr.DataTree, info: ResultInfo, interval_prob: float, draws: PredictionDraws):
    """(kernels, delta-method interval kernels, draw selection) of a result: its draws and every point estimate."""
    model = info.model
    kernels: dict[str, ClassProbaKernel] = {}
    has_draws = "posterior" in result
    selection = None
    if has_draws:
        thin = draws == "auto" and model.predicts_from_effective_draws
        posterior, selection = select_draws(result["posterior"].to_dataset(), thin=thin)
        kernels["class_proba"] = model.class_proba_kernel(posterior)
    interval_kernels = {}
    for group in result.children:
        if group.startswith("point_estimate_"):
            kind = group.removeprefix("point_estimate_")
            estimate = result[group].to_dataset()
            kernels[f"class_proba_{kind}"] = model.class_proba_kernel(estimate)
            approximation = gaussian_approximation(result, kind)
            bounds = (
                None
                if approximation is None
                else model.class_proba_interval_kernel(estimate, approximation, float(interval_prob))
            )
            if bounds is not None:
                interval_kernels[f"class_proba_{kind}"] = bounds
    if not has_draws:
        kernels = {"class_proba": kernels[f"class_proba_{info.method}"], **kernels}
    return kernels, interval_kernels, selection


def _stack_kernels(result: xr.DataTree):
    """(kernels, no interval kernels) of a stack: the mixture, then each member's posterior mean."""
    members = member_kernels(result)
    kernels = {"class_proba": stack_kernel(result, members)}
    kernels.update({f"class_proba_{name}": kernel for name, kernel in members.items()})
    return kernels, {}


def _require_tile_memory(values_per_row: int, setup_rows: int) -> None:
    """Refuse a result whose smallest tiles of rows (one row, or the kernels' setup rows) would not fit in memory.

    The engine sizes tiles within its budget, but never below ``setup_rows`` rows of every draw.
    """
    rows = max(1, setup_rows)
    row = 8 * values_per_row
    require_memory(
        tile_bytes(values_per_row, rows),
        what=f"prediction in tiles of {rows:,} rows x {values_per_row:,} values (draws x classes: "
        f"{format_bytes(row)} a row)",
        fix=lambda available: "the result holds too many draws to predict: refit with fewer draws or chains",
    )


def _n_rows(X: Any) -> int | None:
    """The rows of ``X`` where it says (a Dataset, an array or a table; 1 for one row), else None."""
    if isinstance(X, Dataset):
        return X.n_obs
    shape = getattr(X, "shape", None)
    if isinstance(shape, tuple) and len(shape) in (1, 2):
        return int(shape[0]) if len(shape) == 2 else 1
    return None


def _check_labels(data: Dataset, class_names: tuple[str, ...]) -> None:
    present = {data.class_names[code] for code in np.unique(data.y)}
    unseen = sorted(present - set(class_names))
    if unseen:
        raise ValueError(
            f"labels {', '.join(map(repr, unseen))} in {data.name!r} were not seen in training "
            f"(fitted classes: {', '.join(map(repr, class_names))}); drop those rows or refit with them"
        )
