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
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesclass.data.arguments import spelled
from bayesclass.data.csvfile import CSV_CHUNK_ROWS, refuse_absent_columns
from bayesclass.inference.prediction.progress import progress_over_rows
from bayesclass.inference.result import data_result, result_info

__all__ = [
    "DrawsFile",
    "PredictionRows",
    "PredictionSummary",
    "csv_cells",
    "prediction_columns",
    "prediction_header",
    "write_predictions",
]


def _table_suffix(data: str | os.PathLike) -> str | None:
    from bayesclass.data.loaders import table_suffix

    return table_suffix(data) if not isinstance(data, os.PathLike) else table_suffix(data) or ".csv"


@dataclass
class _Pending:
    """Rows read but not yet written: which are complete (predicted), their labels and ids, in input order."""

    complete: list[np.ndarray]
    labels: list[np.ndarray]
    ids: list[np.ndarray]

    def take(self, n_complete: int | None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """The rows up to and including the ``n_complete``-th complete one (None: every row left)."""
        complete = np.concatenate(self.complete) if self.complete else np.zeros(0, dtype=bool)
        if n_complete is None:
            stop = len(complete)
        else:
            positions = np.flatnonzero(complete)
            stop = int(positions[n_complete - 1]) + 1
        parts = []
        for queue in (self.labels, self.ids):
            joined = np.concatenate(queue) if queue else None
            parts.append(joined)
            queue[:] = [] if joined is None or stop == len(joined) else [joined[stop:]]
        self.complete[:] = [] if stop == len(complete) else [complete[stop:]]
        labels, ids = parts
        return complete[:stop], None if labels is None else labels[:stop], None if ids is None else ids[:stop]


class PredictionRows:
    """The new rows to predict: a table file (CSV, TSV, parquet) read in chunks, or a built-in dataset in chunks.

    With their labels when there are any (``labelled``), and an id column copied to the output when asked
    (``id_column``). Rows with a blank feature (``missing="drop"``) are not predicted but still written, with
    empty probabilities, in their place. Open with :meth:`open`.

    Parameters
    ----------
    chunks : iterable
        The rows in chunks, each ``(features, labels or None, complete mask, ids or None)``.
    total_rows : int
        The number of rows over all chunks (for the progress bar).
    labelled : bool
        Whether the rows carry their observed classes.
    class_names : tuple of str
        The fitted classes (labels are kept as their codes, -1 for a blank label).
    id_column : str, optional
        The name of the id column copied to the output.
    """

    def __init__(
        self, chunks, total_rows: int, labelled: bool, class_names: tuple[str, ...], id_column: str | None = None
    ) -> None:
        self._chunks = chunks
        self.total_rows = total_rows
        self.labelled = labelled
        self.id_column = id_column
        self.class_names = np.asarray(class_names, dtype=object)
        self._pending = _Pending([], [], [])
        self.undefined = 0
        self.incomplete = 0
        self.read = 0  # rows read so far (the position of the next row)
        self._positions: list[np.ndarray] = []  # input positions of the complete rows read, not yet written

    @classmethod
    def open(
        cls,
        data: str | os.PathLike,
        result,
        *,
        chunk_rows: int = CSV_CHUNK_ROWS,
        target: str | None = None,
        csv_format=None,
        missing: str = "error",
        id_column: str | None = None,
    ) -> PredictionRows:
        """The rows of ``data`` (a table file, or a built-in dataset's name) with the features ``result`` was fitted on.

        ``target`` names a file's label column (optional), ``csv_format`` a CSV/TSV file's
        :class:`~bayesclass.data.CsvFormat`; ``missing="drop"`` writes rows with a blank feature with empty
        probabilities instead of refusing them; ``id_column`` names a column copied to the output. A file's
        header, columns and first chunk are checked here, before anything is written (``ValueError`` otherwise).
        """
        from bayesclass.data import load
        from bayesclass.data.loaders import builtin_table_file, builtin_tables
        from bayesclass.inference.prediction.predict import _check_labels

        info = result_info(data_result(result))  # a stack: its members' shared columns and classes
        feature_names, class_names = info.feature_names, info.class_names
        if missing not in ("error", "drop"):
            raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
        if id_column is not None and not id_column.strip():
            raise ValueError(
                f"{spelled('id_column', id_column)} names no column; give the name of the file's id column"
            )
        suffix = _table_suffix(data)
        if suffix is None and isinstance(data, str) and data in builtin_tables():  # streamed as the file it is
            data, default_target = builtin_table_file(data)
            origin = dict(info.data.origin.arguments) if info.data.origin.source == data.stem else {}
            target, suffix = target or str(origin.get("target", default_target)), ".csv"
        if suffix is not None:
            schema: dict[str, Any] = {
                "feature_names": feature_names,
                "category_names": dict(info.data.category_names),
                "target": target,
                "class_names": class_names,
                "missing": missing,
                "chunk_rows": chunk_rows,
                "extra_columns": () if id_column is None else (id_column,),
            }
            if suffix == ".parquet":
                chunks, total = _parquet_chunks(data, **schema)
            else:
                chunks, total = _csv_chunks(data, suffix, csv_format, **schema)
            first = next(chunks)  # the header, the columns and the first rows are checked before anything is written
            return cls(_chain(first, chunks), total, target is not None, class_names, id_column)
        if target:
            raise ValueError(
                f"{spelled('target')} applies to CSV files and other table files (.tsv, .parquet); "
                f"{data!r} is a built-in dataset with its labels"
            )
        if id_column:
            raise ValueError(
                f"{spelled('id_column')} applies to CSV files and other table files (.tsv, .parquet); {data!r} is a "
                "built-in one"
            )
        new = load(data)
        if new.feature_names != feature_names:
            new = new.select_features(feature_names)  # the fitted slice (--features)
        _check_labels(new, class_names)
        fitted_code = {name: code for code, name in enumerate(class_names)}  # every label present is fitted (checked)
        observed = np.asarray([fitted_code.get(name, -1) for name in new.class_names])[new.y]

        def slices():
            for start in range(0, new.n_obs, chunk_rows):
                stop = min(start + chunk_rows, new.n_obs)
                yield new.X[start:stop], observed[start:stop], np.ones(stop - start, dtype=bool), None

        return cls(slices(), new.n_obs, True, class_names)

    def features(self):
        """The complete rows of each chunk, for the predictor; every row is queued for :meth:`take_rows`."""
        for X, labels, complete, ids in self._chunks:
            self._pending.complete.append(np.asarray(complete, dtype=bool))
            if labels is not None:
                self._pending.labels.append(labels)
            if ids is not None:
                self._pending.ids.append(ids)
            self._positions.append(self.read + np.flatnonzero(complete))
            self.read += len(complete)
            self.incomplete += int((~np.asarray(complete)).sum())
            if np.any(complete):
                yield X[complete]
        if self.read and self.incomplete == self.read:
            raise ValueError(
                f"every one of the {self.read} rows has a blank cell in the fitted feature columns, so "
                f"{spelled('missing', 'drop')} leaves none to predict; fill the cells in"
            )

    def take_rows(self, n_complete: int | None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """The next rows to write: up to the ``n_complete``-th complete one (None: all left), in input order.

        Parameters
        ----------
        n_complete : int or None
            Complete rows in the tile being written (None: the rows left after the last tile).

        Returns
        -------
        complete : numpy.ndarray of bool
            Which of the rows were predicted.
        observed : numpy.ndarray or None
            Their observed class names ("" for a blank label), when labelled.
        ids : numpy.ndarray or None
            Their ids, with an id column.
        """
        complete, labels, ids = self._pending.take(n_complete)
        observed = None
        if labels is not None:
            names = np.append(self.class_names, "")  # code -1 (a blank label) -> ""
            observed = names[np.where(labels < 0, len(self.class_names), labels)]
        return complete, observed, ids

    def positions(self, n: int) -> np.ndarray:
        """The input positions (0-based) of the next ``n`` complete rows (for the draws file's ``obs``).

        Parameters
        ----------
        n : int
            Complete rows in the tile.

        Returns
        -------
        numpy.ndarray of int
            Their positions in the input.
        """
        joined = np.concatenate(self._positions) if self._positions else np.zeros(0, dtype=np.int64)
        self._positions = [joined[n:]]
        return joined[:n]


def _chain(first, rest):
    yield first
    yield from rest


def _csv_chunks(data, suffix: str, csv_format, *, chunk_rows: int, **schema):
    """The chunks of a CSV/TSV file (streamed by :func:`~bayesclass.data.read_csv_chunks`) and its row count."""
    from dataclasses import replace

    from bayesclass.data import CsvFormat, count_csv_rows, read_csv_chunks

    csv_format = csv_format or CsvFormat()
    if suffix == ".tsv" and csv_format.delimiter is None:
        csv_format = replace(csv_format, delimiter="\t")
    extra = schema.get("extra_columns", ())

    def chunks():
        for chunk in read_csv_chunks(data, csv_format=csv_format, chunk_rows=chunk_rows, **schema):
            ids = chunk.extras[extra[0]] if extra else None
            yield chunk.X, chunk.y, chunk.complete, ids

    return chunks(), count_csv_rows(data)


def _parquet_chunks(data, *, chunk_rows: int, feature_names, extra_columns, target, **schema):
    """The chunks of a parquet file (record batches read by pyarrow) and its row count."""
    import pyarrow as pa

    from bayesclass.data.loaders import damaged_parquet, open_parquet
    from bayesclass.data.table import TableSource, code_new_rows

    file, parquet = open_parquet(data)
    wanted = list(dict.fromkeys([*feature_names, *([target] if target else []), *extra_columns]))
    refuse_absent_columns(f"parquet file {file}", parquet.schema_arrow.names, feature_names, target, extra_columns)

    def chunks():
        start = 0
        batches = parquet.iter_batches(batch_size=chunk_rows, columns=wanted)
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError) as error:
                raise damaged_parquet(file, error, start) from None
            if batch is None:
                return
            frame = batch.to_pandas()
            source = TableSource(f"parquet file {file}", first_row=start)
            rows = code_new_rows(frame, feature_names=feature_names, target=target, source=source, **schema)
            ids = None
            if extra_columns:
                column = frame[extra_columns[0]]
                ids = column.astype(object).where(column.notna(), "").map(str).to_numpy(dtype=object)
            yield rows.X, rows.y, rows.complete, ids
            start += len(frame)

    return chunks(), parquet.metadata.num_rows


def prediction_header(predictor, *, labelled: bool, id_column: str | None = None) -> list[str]:
    """The CSV header of the predictions.

    The id column first when one is copied, then ``p_<class>`` (with ``_low``/``_high`` and the plug-in
    estimates ``p_<class>_<kind>`` when there are draws; ``p_<class>_<kind>_low``/``_high``, the delta-method
    interval of each point estimate whose covariance the result stores), ``predicted``, the decisions under a
    loss matrix, and ``observed`` when ``labelled``.

    Parameters
    ----------
    predictor : Predictor
        The :class:`~bayesclass.inference.prediction.predict.Predictor` of the fitted result.
    labelled : bool
        Whether the rows carry their observed classes (adds ``observed``).
    id_column : str, optional
        The id column copied from the input (written first, under its own name).

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
        for variable, interval in _estimate_columns(predictor):
            kind = variable.removeprefix("class_proba_")
            header += [f"p_{name}_{kind}"] if not interval else [f"p_{name}_{kind}_low", f"p_{name}_{kind}_high"]
    header.append("predicted")
    if predictor.loss is not None:
        header.append("decision")
        for name in predictor.class_names:
            header.append(f"expected_loss_{name}")
            if predictor.has_draws:
                header += [f"expected_loss_{name}_low", f"expected_loss_{name}_high"]
    return [*([id_column] if id_column is not None else []), *header, *(["observed"] if labelled else [])]


def _row_cells(columns: list[list[str]], complete: np.ndarray) -> list[list[str]]:
    """The tile's columns spread over its input rows: the cells at the complete rows, "" at the others."""
    if complete.all():
        return columns
    spread = []
    positions = np.flatnonzero(complete)
    for column in columns:
        cells = [""] * len(complete)
        for position, cell in zip(positions, column, strict=True):
            cells[position] = cell
        spread.append(cells)
    return spread


def _plug_ins(predictor) -> list[str]:
    """The point-estimate variables written beside the posterior mean (only when there are draws)."""
    return [name for name in predictor.kernels if name != "class_proba"] if predictor.has_draws else []


def _estimate_columns(predictor) -> list[tuple[str, bool]]:
    """(variable, whether its interval) per column group after ``p_<class>``: plug-ins beside draws, intervals.

    A plug-in is followed by its delta-method interval where the result stores its covariance; a point-estimate
    fit writes its estimate's interval only (its probability is ``p_<class>``).
    """
    if not predictor.has_draws:
        fitted = f"class_proba_{predictor.info.method}"
        return [(fitted, True)] if fitted in predictor.interval_kernels else []
    columns = []
    for variable in _plug_ins(predictor):
        columns.append((variable, False))
        if variable in predictor.interval_kernels:
            columns.append((variable, True))
    return columns


def prediction_columns(predictor, tile, rows: PredictionRows) -> list[list[str]]:
    """The CSV cells of one tile of predictions, column by column, in the order of :func:`prediction_header`.

    Without the id and ``observed`` columns (the writer adds them for every input row, predicted or not).
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
        for variable, interval in _estimate_columns(predictor):
            for suffix in ("_low", "_high") if interval else ("",):
                columns.append(csv_cells(tile[f"{variable}{suffix}"].values[:, index]))
    columns.append(csv_cells(tile["predicted"].values))
    if predictor.loss is not None:
        columns.append(csv_cells(tile["decision"].values))
        for index in range(len(predictor.class_names)):
            columns.append(csv_cells(tile["expected_loss"].values[:, index]))
            if predictor.has_draws:
                columns.append(csv_cells(tile["expected_loss_low"].values[:, index]))
                columns.append(csv_cells(tile["expected_loss_high"].values[:, index]))
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

    def append(self, tile, positions: np.ndarray | None = None) -> None:
        """Append the tile's ``class_proba_draws``.

        Parameters
        ----------
        tile : xarray.Dataset
            One tile of predictions with per-draw probabilities (``return_draws``).
        positions : numpy.ndarray of int, optional
            The input row (0-based) of each of the tile's rows, stored as ``obs`` (default: consecutive; rows
            left out for blank cells leave gaps).
        """
        if self.dataset is None:
            return
        values = tile["class_proba_draws"].transpose("chain", "draw", "obs", "class").values
        start, stop = self.rows, self.rows + values.shape[2]
        self.dataset["class_proba_draws"][:, :, start:stop, :] = values
        self.dataset["obs"][start:stop] = np.arange(start, stop) if positions is None else positions
        self.rows = stop


@dataclass(frozen=True)
class PredictionSummary:
    """What :func:`write_predictions` wrote.

    Parameters
    ----------
    written : int
        Rows written.
    undefined : int
        Of those, rows with probability 0 under every class under some estimate (NaN probabilities).
    incomplete : int
        Of those, rows with a blank feature, written with empty probabilities (``missing="drop"``).
    """

    written: int
    undefined: int
    incomplete: int = 0


def require_draws_disk(path: str | os.PathLike, predictor, n_rows: int) -> None:
    """Refuse a per-draw probabilities file that would not fit on its disk, before anything is written.

    Parameters
    ----------
    path : str or os.PathLike
        The netCDF file of per-draw probabilities (``draws_out``).
    predictor : Predictor
        The :class:`~bayesclass.inference.prediction.predict.Predictor` of the fitted result.
    n_rows : int
        The rows to predict.

    Raises
    ------
    ValueError
        rows x draws x classes x 8 bytes exceed the free space of the file's folder.
    """
    import shutil
    from pathlib import Path

    from bayesclass.inference._memory import format_bytes

    kernel = predictor.kernels["class_proba"]
    needed = 8 * n_rows * kernel.n_draws * kernel.n_classes
    free = shutil.disk_usage(Path(path).resolve().parent).free
    if needed > free:
        most = free // (8 * kernel.n_draws * kernel.n_classes)
        raise ValueError(
            f"the per-draw probabilities of {n_rows:,} rows x {kernel.n_draws:,} draws x {kernel.n_classes} classes "
            f"take about {format_bytes(needed)}, but {format_bytes(free)} is free where {str(path)!r} goes: at most "
            f"{most:,} rows fit; write them to a larger disk or predict fewer rows"
        )


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
        The rows written, how many of them are undefined and how many incomplete (empty probabilities).
    """
    from bayesclass.inference.engines.sampling import interrupt_guard
    from bayesclass.inference.io import atomic_write

    if draws_out is not None:
        require_draws_disk(draws_out, predictor, rows.total_rows)
    header = prediction_header(predictor, labelled=rows.labelled, id_column=rows.id_column)
    if rows.id_column is not None and rows.id_column in header[1:]:
        raise ValueError(
            f"{spelled('id_column', rows.id_column)} is also the name of an output column, so the predictions would "
            f"hold two {rows.id_column!r} columns; rename that column of the input file"
        )
    width = len(prediction_header(predictor, labelled=False))
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
            n = tile.sizes["obs"]
            complete, observed, ids = rows.take_rows(n)
            _write_rows(writer, _row_cells(prediction_columns(predictor, tile, rows), complete), observed, ids)
            draws.append(tile, rows.positions(n))
            written += len(complete)
            advance(len(complete))
        complete, observed, ids = rows.take_rows(None)  # incomplete rows after the last predicted one
        if len(complete):
            _write_rows(writer, [[""] * len(complete)] * width, observed, ids)
            written += len(complete)
            advance(len(complete))
    return PredictionSummary(written=written, undefined=rows.undefined, incomplete=rows.incomplete)


def _write_rows(writer, columns: list[list[str]], observed: np.ndarray | None, ids: np.ndarray | None) -> None:
    """Write the rows: the id (if any), the prediction cells, the observed class (if labelled)."""
    if ids is not None:
        columns = [[str(value) for value in ids], *columns]
    if observed is not None:
        columns = [*columns, csv_cells(observed)]
    writer.writerows(zip(*columns, strict=True))
