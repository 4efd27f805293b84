"""Streaming writers of predictions: new rows in chunks, class probabilities to CSV, draws to netCDF.

New rows are read in chunks, their class probabilities written as CSV tile by tile, and (optionally) the
per-draw probabilities appended to a netCDF file.

The command ``bayesclass predict`` is these functions called with its flags; from Python::

    from bayesclass.inference import load
    from bayesclass.inference.prediction.predict import Predictor
    from bayesclass.inference.prediction.writers import PredictionRows, write_predictions

    result = load("run.nc")
    predictor = Predictor.of(result)
    rows = PredictionRows.open("new.csv", result)
    summary = write_predictions(predictor, rows, "predictions.csv")

Both files are written atomically (a temporary file renamed at the end): an error or an interrupt (Ctrl-C,
SIGTERM) leaves nothing behind and an earlier file as it was.
"""

from __future__ import annotations

import contextlib
import csv
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from bayesclass.data.csvfile import CSV_CHUNK_ROWS
from bayesclass.inference.result import result_info

__all__ = [
    "DrawsFile",
    "PredictionRows",
    "PredictionSummary",
    "csv_cells",
    "prediction_columns",
    "prediction_header",
    "progress_over_rows",
    "write_predictions",
]


def _is_csv(data: str | os.PathLike) -> bool:
    return isinstance(data, os.PathLike) or str(data).lower().endswith(".csv")


class PredictionRows:
    """The new rows to predict: a CSV file read in chunks, or a built-in dataset cut in chunks.

    With their labels when there are any (``labelled``). Open with :meth:`open`.

    Parameters
    ----------
    chunks : iterable
        The rows in chunks, each ``(features, labels or None)``.
    total_rows : int
        The number of rows over all chunks (for the progress bar).
    labelled : bool
        Whether the rows carry their observed classes.
    class_names : tuple of str
        The fitted classes (labels are kept as their codes).
    """

    def __init__(self, chunks, total_rows: int, labelled: bool, class_names: tuple[str, ...]) -> None:
        self._chunks = chunks
        self.total_rows = total_rows
        self.labelled = labelled
        self.class_names = np.asarray(class_names, dtype=object)
        self._labels: list[np.ndarray] = []  # labels of rows read but not yet written, in order
        self.undefined = 0

    @classmethod
    def open(
        cls,
        data: str | os.PathLike,
        result,
        *,
        chunk_rows: int = CSV_CHUNK_ROWS,
        target: str | None = None,
        csv_format=None,
    ) -> PredictionRows:
        """The rows of ``data`` (a CSV file, or a built-in dataset's name) with the features ``result`` was fitted on.

        ``target`` names a CSV file's label column (optional), ``csv_format`` its
        :class:`~bayesclass.data.CsvFormat`. A CSV file's header, columns and first chunk are checked here,
        before anything is written (``ValueError`` otherwise).
        """
        from bayesclass.data import count_csv_rows, load, read_csv_chunks
        from bayesclass.inference.prediction.predict import _check_labels

        info = result_info(result)
        feature_names, class_names = info.feature_names, info.class_names
        if _is_csv(data):
            chunks = read_csv_chunks(
                data,
                feature_names=feature_names,
                category_names=dict(info.data.category_names),
                target=target,
                class_names=class_names,
                csv_format=csv_format,
                chunk_rows=chunk_rows,
            )
            first = next(chunks)  # the header, the columns and the first rows are checked before anything is written
            rest = chunks

            def pieces():
                yield first.X, first.y
                for chunk in rest:
                    yield chunk.X, chunk.y

            return cls(pieces(), count_csv_rows(data), target is not None, class_names)
        if target:
            raise ValueError(f"--target applies to CSV files; {data!r} is a built-in dataset with its labels")
        new = load(data)
        if new.feature_names != feature_names:
            new = new.select_features(feature_names)  # the fitted slice (--features)
        _check_labels(new, class_names)
        fitted_code = {name: code for code, name in enumerate(class_names)}  # every label present is fitted (checked)
        observed = np.asarray([fitted_code.get(name, -1) for name in new.class_names])[new.y]

        def slices():
            for start in range(0, new.n_obs, chunk_rows):
                yield new.X[start : start + chunk_rows], observed[start : start + chunk_rows]

        return cls(slices(), new.n_obs, True, class_names)

    def features(self):
        """The feature chunks, for the predictor; their labels are queued for :meth:`take_labels`."""
        for X, labels in self._chunks:
            if labels is not None:
                self._labels.append(labels)
            yield X

    def take_labels(self, n: int) -> np.ndarray:
        """The observed class names of the next ``n`` rows written.

        Parameters
        ----------
        n : int
            Rows written next (their labels are taken off the queue of rows read).

        Returns
        -------
        numpy.ndarray of shape (n,)
            Their observed class names.
        """
        taken, needed = [], n
        while needed:
            head = self._labels[0]
            taken.append(head[:needed])
            if len(head) <= needed:
                self._labels.pop(0)
            else:
                self._labels[0] = head[needed:]
            needed -= len(taken[-1])
        return self.class_names[np.concatenate(taken)]


def prediction_header(predictor, *, labelled: bool) -> list[str]:
    """The CSV header of the predictions.

    ``p_<class>`` (with ``_low``/``_high`` and the plug-in estimates when there are draws), ``predicted``, the
    decisions under a loss matrix, and ``observed`` when ``labelled``.

    Parameters
    ----------
    predictor : Predictor
        The :class:`~bayesclass.inference.prediction.predict.Predictor` of the fitted result.
    labelled : bool
        Whether the rows carry their observed classes (adds ``observed``).

    Returns
    -------
    list of str
        The column names.
    """
    header = []
    for name in predictor.class_names:
        header.append(f"p_{name}")
        if predictor.has_draws:
            header += [f"p_{name}_low", f"p_{name}_high"]
            header += [f"p_{name}_{variable.removeprefix('class_proba_')}" for variable in _plug_ins(predictor)]
    header.append("predicted")
    if predictor.loss is not None:
        header.append("decision")
        for name in predictor.class_names:
            header.append(f"expected_loss_{name}")
            if predictor.has_draws:
                header += [f"expected_loss_{name}_low", f"expected_loss_{name}_high"]
    return [*header, *(["observed"] if labelled else [])]


def _plug_ins(predictor) -> list[str]:
    """The point-estimate variables written beside the posterior mean (only when there are draws)."""
    return [name for name in predictor.kernels if name != "class_proba"] if predictor.has_draws else []


def prediction_columns(predictor, tile, rows: PredictionRows) -> list[list[str]]:
    """The CSV cells of one tile of predictions, column by column, in the order of :func:`prediction_header`.

    Counts the rows with undefined (NaN) probabilities in ``rows.undefined``.

    Parameters
    ----------
    predictor : Predictor
        The :class:`~bayesclass.inference.prediction.predict.Predictor` of the fitted result.
    tile : xarray.Dataset
        One tile of :meth:`Predictor.summarise`'s predictions.
    rows : PredictionRows
        The rows being written (their labels, and the count of undefined rows).

    Returns
    -------
    list of list of str
        One list of cells per column.
    """
    columns = []
    for index in range(len(predictor.class_names)):
        columns.append(csv_cells(tile["class_proba"].values[:, index]))
        if predictor.has_draws:
            columns.append(csv_cells(tile["class_proba_low"].values[:, index]))
            columns.append(csv_cells(tile["class_proba_high"].values[:, index]))
            columns += [csv_cells(tile[variable].values[:, index]) for variable in _plug_ins(predictor)]
    columns.append(csv_cells(tile["predicted"].values))
    if predictor.loss is not None:
        columns.append(csv_cells(tile["decision"].values))
        for index in range(len(predictor.class_names)):
            columns.append(csv_cells(tile["expected_loss"].values[:, index]))
            if predictor.has_draws:
                columns.append(csv_cells(tile["expected_loss_low"].values[:, index]))
                columns.append(csv_cells(tile["expected_loss_high"].values[:, index]))
    if rows.labelled:
        columns.append(csv_cells(rows.take_labels(tile.sizes["obs"])))
    rows.undefined += int(
        np.logical_or.reduce([np.isnan(tile[name].values).any(axis=1) for name in predictor.kernels]).sum()
    )
    return columns


def csv_cells(values: np.ndarray) -> list[str]:
    """CSV cells: floats as their shortest round-trip text (``repr``: 0.1, 1e-05, nan), the rest as ``str``.

    Parameters
    ----------
    values : numpy.ndarray
        One column of values.

    Returns
    -------
    list of str
        Its cells.
    """
    if values.dtype.kind == "f":
        return list(map(repr, values.tolist()))
    return [str(value) for value in values]


class DrawsFile:
    """The per-draw probabilities appended tile by tile to a netCDF4 file (``obs`` unlimited).

    Written to a temporary file renamed at the end; without a path, nothing. Open with :meth:`open`.

    Parameters
    ----------
    dataset : netCDF4.Dataset, optional
        The open file; None writes nothing.
    """

    def __init__(self, dataset=None) -> None:
        self.dataset = dataset
        self.rows = 0

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: str | os.PathLike | None, predictor, result, run: str | os.PathLike | None = None):
        """Variable ``class_proba_draws`` (chain, draw, obs, class) of the predictor's posterior draws.

        ``run`` (the result's file) is recorded in the file's attributes.
        """
        if path is None:
            yield cls()
            return
        import netCDF4

        from bayesclass.inference.io import atomic_write

        kernel = predictor.kernels["class_proba"]
        chains, draws = kernel.leading_shape  # the posterior's (chain, draw)
        with atomic_write(path) as temporary:
            dataset = netCDF4.Dataset(temporary, "w", format="NETCDF4")
            try:
                dataset.createDimension("chain", chains)
                dataset.createDimension("draw", draws)
                dataset.createDimension("obs", None)
                dataset.createDimension("class", len(predictor.class_names))
                names = dataset.createVariable("class", str, ("class",))
                for index, name in enumerate(predictor.class_names):
                    names[index] = name
                for dim, size in (("chain", chains), ("draw", draws)):
                    dataset.createVariable(dim, "i8", (dim,))[:] = kernel.leading_coords.get(dim, np.arange(size))
                dataset.createVariable("obs", "i8", ("obs",))
                variable = dataset.createVariable(
                    "class_proba_draws",
                    "f8",
                    ("chain", "draw", "obs", "class"),
                    chunksizes=(1, draws, predictor.tile_rows, len(predictor.class_names)),
                )
                variable.long_name = "P(class | x, theta_s) per posterior draw"
                info = result_info(result)
                dataset.setncatts(
                    {
                        "model": info.model.name,
                        "method": info.method,
                        "run": "" if run is None else str(run),
                        "description": "per-draw class probabilities written by bayesclass predict; the CSV holds "
                        "their mean and equal-tailed interval per row",
                    }
                )
                yield cls(dataset)
            finally:
                dataset.close()

    def append(self, tile) -> None:
        """Append the tile's ``class_proba_draws``.

        Parameters
        ----------
        tile : xarray.Dataset
            One tile of predictions with per-draw probabilities (``return_draws``).
        """
        if self.dataset is None:
            return
        values = tile["class_proba_draws"].transpose("chain", "draw", "obs", "class").values
        start, stop = self.rows, self.rows + values.shape[2]
        self.dataset["class_proba_draws"][:, :, start:stop, :] = values
        self.dataset["obs"][start:stop] = np.arange(start, stop)
        self.rows = stop


def _progress_console():
    """The console of the progress bar: stderr (stdout keeps the summary line)."""
    from rich.console import Console

    return Console(stderr=True)


@contextlib.contextmanager
def progress_over_rows(total: int, *, hide: bool = False) -> Iterator[Callable[[int], None]]:
    """A progress bar over rows (rich) on a terminal, yielding ``advance(n)``.

    With ``hide`` or when stderr is not a terminal (a log file, a pipe), nothing is drawn. On an error the bar
    is cleared, so that the error is the one line left.

    Parameters
    ----------
    total : int
        Rows in all.
    hide : bool, default False
        Draw nothing.

    Yields
    ------
    callable
        ``advance(n)``: ``n`` more rows are done.
    """
    console = None if hide else _progress_console()
    if console is None or not console.is_terminal:
        yield lambda n: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("predicting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("rows"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("rows", total=max(total, 1))
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            if done > total:  # the total was counted from lines: a cell with a line break makes it low
                progress.update(task, total=done)
            progress.update(task, completed=done)

        try:
            yield advance
        except BaseException:
            progress.live.transient = True
            raise
        progress.update(task, total=max(done, 1), completed=done)


@dataclass(frozen=True)
class PredictionSummary:
    """What :func:`write_predictions` wrote.

    Parameters
    ----------
    written : int
        Rows written.
    undefined : int
        Of those, rows with probability 0 under every class under some estimate (NaN probabilities).
    """

    written: int
    undefined: int


def write_predictions(
    predictor,
    rows: PredictionRows,
    out: str | os.PathLike,
    *,
    draws_out: str | os.PathLike | None = None,
    result=None,
    run: str | os.PathLike | None = None,
    progress: bool = True,
) -> PredictionSummary:
    """Stream ``rows`` through ``predictor``, writing the predictions to ``out`` atomically.

    Each tile's predictions are appended to a temporary CSV (and, with ``draws_out``, the per-draw
    probabilities to a temporary netCDF file), renamed to ``out`` at the end. An error or an interrupt (Ctrl-C,
    SIGTERM) removes the temporary files: nothing is written, an earlier file is left as it was.

    Parameters
    ----------
    predictor : Predictor
        The :class:`~bayesclass.inference.prediction.predict.Predictor` of the fitted result.
    rows : PredictionRows
        The new rows.
    out : str or os.PathLike
        The CSV file of predictions.
    draws_out : str or os.PathLike, optional
        The netCDF file of per-draw probabilities.
    result : xarray.DataTree, optional
        The fitted result (needed with ``draws_out``).
    run : str or os.PathLike, optional
        The result's file, recorded in the draws file's attributes.
    progress : bool, default True
        A bar over rows on a terminal (stderr).

    Returns
    -------
    PredictionSummary
        The rows written and how many of them are undefined.
    """
    from bayesclass.inference.engines.sampling import interrupt_guard
    from bayesclass.inference.io import atomic_write

    header = prediction_header(predictor, labelled=rows.labelled)
    written = 0
    with (
        interrupt_guard(),
        atomic_write(out) as temporary,
        open(temporary, "w", newline="") as stream,
        DrawsFile.open(draws_out, predictor, result, run) as draws,
        progress_over_rows(rows.total_rows, hide=not progress) as advance,
    ):
        writer = csv.writer(stream)
        writer.writerow(header)
        for tile in predictor.predict_chunks(rows.features()):
            writer.writerows(zip(*prediction_columns(predictor, tile, rows), strict=True))
            draws.append(tile)
            written += tile.sizes["obs"]
            advance(tile.sizes["obs"])
    return PredictionSummary(written=written, undefined=rows.undefined)
