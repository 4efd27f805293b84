"""Built-in data sets by name: :func:`load` and :func:`available`."""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from bayesclass._cache import cache_directory
from bayesclass._interrupts import atomic_write
from bayesclass.data.arguments import spelled
from bayesclass.data.csvfile import CsvFormat, load_csv
from bayesclass.data.dataset import Dataset, FeatureKind
from bayesclass.data.origin import MissingPolicy
from bayesclass.data.synthetic import logistic_known_weights, seed000_separable, seed001_gaussians, seed004_gp
from bayesclass.data.table import DEFAULT_MAX_LEVELS, TableOptions, TableSource, code_table

__all__ = [
    "TABLE_SUFFIXES",
    "DatasetInfo",
    "available",
    "builtin_table_file",
    "builtin_tables",
    "load",
    "load_parquet",
    "load_test",
    "table_suffix",
]

#: the file suffixes :func:`load` reads (case-insensitive): CSV, tab-separated text, parquet
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")


@dataclass(frozen=True)
class DatasetInfo:
    """One line of the catalogue printed by ``bayesclass datasets``.

    Parameters
    ----------
    name : str
        The name :func:`load` takes.
    description : str
        One line about the data.
    n_obs : int or "generated"
        Rows (of the whole table, blanks included); ``"generated"`` for synthetic sets, whose size is ``n``.
    n_features, n_classes : int
        Feature columns and classes (with the default target).
    source : str
        Where the data come from.
    """

    name: str
    description: str
    n_obs: int | Literal["generated"]
    n_features: int
    n_classes: int
    source: str


_SKLEARN_CITATIONS = {
    "iris": "Fisher, R. A. (1936) The use of multiple measurements in taxonomic problems, Annals of Eugenics 7(2), "
    "179-188; UCI https://archive.ics.uci.edu/dataset/53/iris",
    "wine": "Forina, M. et al. (1988) PARVUS, Inst. of Pharmaceutical and Food Analysis, Genoa; UCI "
    "https://archive.ics.uci.edu/dataset/109/wine",
    "breast_cancer": "Street, W. N., Wolberg, W. H., Mangasarian, O. L. (1993) Nuclear feature extraction for breast "
    "tumor diagnosis, Proc. SPIE 1905; UCI https://archive.ics.uci.edu/dataset/17/breast+cancer+wisconsin+diagnostic",
    "digits": "Alpaydin, E., Kaynak, C. (1998) Optical Recognition of Handwritten Digits (8x8 test part); UCI "
    "https://archive.ics.uci.edu/dataset/80/optical+recognition+of+handwritten+digits",
}
_SKLEARN_DESCRIPTIONS = {
    "iris": "Four flower measurements (cm) of 50 irises from each of three species.",
    "wine": "Thirteen chemical measurements of wines from three cultivars of one Italian region.",
    "breast_cancer": "Thirty features of cell nuclei in breast-mass images, malignant vs benign.",
    "digits": "8x8 images of handwritten digits 0-9; each pixel is a count 0..16 of set pixels in a 4x4 block.",
}


def _sklearn(name: str, kind: FeatureKind) -> Callable[[], Dataset]:
    """A loader for ``sklearn.datasets.load_<name>`` (bundled with scikit-learn, no download).

    The arrays are kept in the cache folder (:mod:`bayesclass._cache`) per scikit-learn version, so that
    a later process reads them in milliseconds instead of importing scikit-learn (a second).
    """

    def loader() -> Dataset:
        version = metadata.version("scikit-learn")
        arrays = _cached_sklearn_arrays(name, version)
        feature_names = tuple(str(feature) for feature in arrays["feature_names"])
        return Dataset(
            name=name,
            X=arrays["data"],
            y=arrays["target"],
            feature_names=feature_names,
            class_names=tuple(str(label) for label in arrays["target_names"]),
            feature_kinds=(kind,) * len(feature_names),
            description=_SKLEARN_DESCRIPTIONS[name],
            provenance=f"scikit-learn {version} sklearn.datasets.load_{name} (bundled); {_SKLEARN_CITATIONS[name]}",
        )

    loader.__name__ = f"load_{name}"
    return loader


_SKLEARN_ARRAYS = ("data", "target", "feature_names", "target_names")


def _cached_sklearn_arrays(name: str, version: str) -> dict[str, np.ndarray]:
    """The arrays of ``sklearn.datasets.load_<name>()``, from the cache folder when they are there."""
    path = cache_directory() / "datasets" / f"{name}-scikit-learn-{version}.npz"
    try:
        with np.load(path, allow_pickle=False) as stored:
            return {key: stored[key] for key in _SKLEARN_ARRAYS}
    except (OSError, KeyError, ValueError):  # not cached yet, or unreadable: rebuild it
        pass
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")()
    arrays = {
        "data": np.asarray(bunch.data, dtype=float),
        "target": np.asarray(bunch.target),
        "feature_names": np.asarray([str(feature) for feature in bunch.feature_names], dtype=str),
        "target_names": np.asarray([str(label) for label in bunch.target_names], dtype=str),
    }
    try:  # atomically: a concurrent reader sees the whole file or none, an interrupt leaves no temporary file
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path) as temporary, open(temporary, "wb") as file:
            np.savez(  # by keyword, as the stub cannot tell a ** dict's keys from allow_pickle
                file,
                data=arrays["data"],
                target=arrays["target"],
                feature_names=arrays["feature_names"],
                target_names=arrays["target_names"],
            )
    except OSError:  # a read-only home: the cache is only an optimisation
        pass
    return arrays


_BINARY: tuple[FeatureKind] = ("binary",)


def _digits_binary() -> Dataset:
    """The digits with each pixel binarised: 1 where the count exceeds 7 (of 0..16), else 0."""
    digits = _sklearn("digits", "count")()
    return replace(
        digits,
        name="digits_binary",
        X=(digits.X > 7).astype(float),
        feature_kinds=_BINARY * digits.n_features,
        description="8x8 handwritten digits 0-9 with each pixel binarised (count > 7 of 0..16 -> 1).",
        provenance=f"{digits.provenance}; binarised by bayesclass: pixel > 7",
    )


def _builtin_table(
    file: str,
    default_target: str,
    description: str,
    provenance: str,
) -> Callable[..., Dataset]:
    """A loader of a table shipped in ``data/files``, read through :func:`load_csv` (the one table coder).

    Its options are those of any table: another ``target`` column, ``features``, ``feature_kinds``,
    ``missing`` and ``max_levels``.
    """
    stem = file.removesuffix(".csv")

    def loader(
        *,
        target: str = default_target,
        features: Sequence[str] | str | None = None,
        feature_kinds: Mapping[str, FeatureKind] | str | None = None,
        missing: MissingPolicy = "error",
        max_levels: int = DEFAULT_MAX_LEVELS,
    ) -> Dataset:
        with resources.as_file(resources.files(__package__) / "files" / file) as path:
            dataset = load_csv(
                path,
                target=target,
                name=stem,
                features=features,
                feature_kinds=_kinds_mapping(feature_kinds),
                missing=missing,
                max_levels=max_levels,
            )
        return replace(dataset, description=description, provenance=f"{provenance}; {dataset.provenance}")

    loader.__name__ = f"load_{stem}"
    return loader


def _kinds_mapping(kinds: Mapping[str, FeatureKind] | str | None) -> Mapping[str, FeatureKind] | None:
    """``feature_kinds`` as a mapping; the text ``"year=categorical,sex=binary"`` (a recorded origin) is parsed."""
    if not isinstance(kinds, str):
        return kinds
    pairs = [item.partition("=") for item in kinds.split(",") if item.strip()]
    if any(not separator for _, separator, _ in pairs):
        raise ValueError(f"feature_kinds {kinds!r} must map columns to kinds, e.g. {{'year': 'categorical'}}")
    return {column.strip(): kind.strip() for column, _, kind in pairs}  # type: ignore[misc]


_transport = _builtin_table(
    "transport.csv",
    "Mode",
    "Ten trips: distance (miles), raining, flat tire -> mode of transport (walk/bike/bus/car).",
    "seed 003, transport table (Naive Bayes slides, toy transportation data), transcribed in "
    "data/files/transport.csv, see data/files/PROVENANCE.md",
)
_penguins = _builtin_table(
    "penguins.csv",
    "species",
    "Palmer penguins: island, bill length and depth, flipper length, body mass, sex and year of 344 penguins "
    "of three species (19 blank cells: load with missing='drop').",
    "Horst, Hill & Gorman (2020) palmerpenguins, doi:10.5281/zenodo.3960218, CC0; Gorman, Williams & Fraser (2014) "
    "PLoS ONE 9(3):e90081; data/files/penguins.csv (NA written as blank cells), see data/files/PROVENANCE.md",
)


_SCIKIT_LEARN = "scikit-learn (UCI)"
_REGISTRY: dict[str, tuple[DatasetInfo, Callable[..., Dataset]]] = {
    info.name: (info, loader)
    for info, loader in [
        (DatasetInfo("iris", _SKLEARN_DESCRIPTIONS["iris"], 150, 4, 3, _SCIKIT_LEARN), _sklearn("iris", "continuous")),
        (DatasetInfo("wine", _SKLEARN_DESCRIPTIONS["wine"], 178, 13, 3, _SCIKIT_LEARN), _sklearn("wine", "continuous")),
        (
            DatasetInfo("breast_cancer", _SKLEARN_DESCRIPTIONS["breast_cancer"], 569, 30, 2, _SCIKIT_LEARN),
            _sklearn("breast_cancer", "continuous"),
        ),
        (
            DatasetInfo("digits", _SKLEARN_DESCRIPTIONS["digits"], 1797, 64, 10, _SCIKIT_LEARN),
            _sklearn("digits", "count"),
        ),
        (
            DatasetInfo(
                "digits_binary",
                "The digits with each pixel binarised (count > 7 -> 1), for Bernoulli naive Bayes.",
                1797,
                64,
                10,
                _SCIKIT_LEARN,
            ),
            _digits_binary,
        ),
        (
            DatasetInfo(
                "transport",
                "Toy transport-mode table: distance, raining, flat tire -> mode.",
                10,
                3,
                4,
                "seed 003, transport table",
            ),
            _transport,
        ),
        (
            DatasetInfo(
                "penguins",
                "Palmer penguins: island, bill, flipper, body mass, sex, year -> species (19 blank cells).",
                344,
                7,
                3,
                "palmerpenguins (Horst et al. 2020), CC0",
            ),
            _penguins,
        ),
        (
            DatasetInfo(
                "seed001_gaussians",
                "Two Gaussian classes, P(C1)=0.7 (kwargs n=500, random_seed=0).",
                "generated",
                2,
                2,
                "seed 001 §B.1",
            ),
            seed001_gaussians,
        ),
        (
            DatasetInfo(
                "seed000_separable",
                "Separable: small isotropic vs 4x larger elongated class (kwargs n=200, random_seed=0).",
                "generated",
                2,
                2,
                "seed 000 Figure 9.1",
            ),
            seed000_separable,
        ),
        (
            DatasetInfo(
                "seed004_gp",
                "Binary labels from one latent GP draw, K = 0.5^2 + 3^2 exp(-25 (x-x')^2), x ~ U(0,1) "
                "(kwargs n=100, random_seed=0, link='logit').",
                "generated",
                1,
                2,
                "seed 004 illustration",
            ),
            seed004_gp,
        ),
        (
            DatasetInfo(
                "logistic_known_weights",
                "Logistic regression with known weights, P(1 | x) = logistic(-0.5 + 0.75 x1 - 2 x2) "
                "(kwargs n=500, random_seed=0).",
                "generated",
                2,
                2,
                "bayesclass (a well-specified logit model)",
            ),
            logistic_known_weights,
        ),
    ]
}


def available() -> tuple[DatasetInfo, ...]:
    """Every built-in data set name with its shape and source (for ``bayesclass datasets``).

    Returns
    -------
    tuple of DatasetInfo
        One per built-in data set, in catalogue order.
    """
    return tuple(info for info, _ in _REGISTRY.values())


def builtin_tables() -> tuple[str, ...]:
    """The built-in data sets that are tables (read through the table coder: options ``target``, ``feature_kinds``).

    Returns
    -------
    tuple of str
        Their names (``transport``, ``penguins``).
    """
    return tuple(name for name, (_, loader) in _REGISTRY.items() if "missing" in inspect.signature(loader).parameters)


def builtin_table_file(name: str) -> tuple[Path, str]:
    """The shipped CSV file of a built-in table and its default target (to stream it like any table file).

    Parameters
    ----------
    name : str
        One of :func:`builtin_tables`.

    Returns
    -------
    path : pathlib.Path
        The file (inside the installed package).
    target : str
        Its default class column.
    """
    if name not in builtin_tables():
        raise ValueError(f"{name!r} is not a built-in table; the built-in tables are {', '.join(builtin_tables())}")
    loader = _REGISTRY[name][1]
    default = inspect.signature(loader).parameters["target"].default
    return Path(str(resources.files(__package__) / "files" / f"{name}.csv")), default


def table_suffix(name: object) -> str | None:
    """The table suffix (``.csv``, ``.tsv``, ``.parquet``, lower case) of a path, or None for a built-in name.

    Parameters
    ----------
    name : object
        A path or a data set name.

    Returns
    -------
    str or None
        The suffix when ``name`` is a path (or a string) ending in one of :data:`TABLE_SUFFIXES`.
    """
    if not isinstance(name, (str, os.PathLike)):
        return None
    text = os.fspath(name).lower()
    return next((suffix for suffix in TABLE_SUFFIXES if text.endswith(suffix)), None)


def load_parquet(
    path: str | os.PathLike[str],
    *,
    target: str,
    name: str | None = None,
    features: Sequence[str] | str | None = None,
    feature_kinds: Mapping[str, FeatureKind] | None = None,
    missing: MissingPolicy = "error",
    max_levels: int = DEFAULT_MAX_LEVELS,
    category_names: Mapping[str, tuple[str, ...]] | None = None,
    class_names: tuple[str, ...] | None = None,
) -> Dataset:
    """Load a parquet file (read by pyarrow) through the one table coder, as :meth:`Dataset.from_frame`.

    Parameters
    ----------
    path : str or PathLike
        The parquet file.
    target : str
        The class column.
    name : str, optional
        Dataset name; defaults to the file name without extension.
    features, feature_kinds, missing, max_levels, category_names, class_names
        As for :meth:`Dataset.from_frame`.

    Returns
    -------
    Dataset
        With ``provenance = "parquet file <absolute path> (sha256 <first 12 hex digits>)"``.

    Raises
    ------
    ValueError
        Not an existing file, not a parquet file, and every error of :meth:`Dataset.from_frame`.
    """
    options = TableOptions(missing=missing, max_levels=max_levels)
    file, frame, digest = _read_parquet(path)
    coded = code_table(
        frame,
        target=target,
        features=features,
        feature_kinds=feature_kinds,
        options=options,
        category_names=category_names,
        class_names=class_names,
        source=TableSource(f"parquet file {file}"),
    )
    return Dataset.from_coded_table(
        coded,
        name=file.stem if name is None else name,
        description=f"{len(coded.y)} rows of {file.name}, classes from column {target!r}",
        provenance=f"parquet file {file} (sha256 {digest[:12]})",
    )


def require_known_data(name: object) -> None:
    """Refuse a data name that is neither a built-in data set nor a path with a table suffix, saying which it is.

    Parameters
    ----------
    name : object
        What ``--data`` (``load(name)``) was given, with no table suffix.

    Raises
    ------
    ValueError
        For a file (or a path) without a table suffix: that files are read by their suffix, and the fix; for
        any other name: the built-in names.
    """
    if isinstance(name, str) and name in _REGISTRY:
        return
    shown = os.fspath(name) if isinstance(name, (str, os.PathLike)) else repr(name)
    path = Path(shown).expanduser()
    if path.is_file() or path.suffix or os.sep in shown:
        found = "is a file" if path.is_file() else "is neither a built-in data set nor an existing file"
        raise ValueError(
            f"{spelled('data', shown)} {found}; table files are read by their suffix (.csv, .tsv or .parquet, any "
            f"case) and {path.name!r} has {'the suffix ' + repr(path.suffix) if path.suffix else 'none'}: rename "
            f"it, e.g. to {path.with_suffix('.csv').name!r} for a CSV file, or name a built-in data set, one of "
            f"{sorted(_REGISTRY)}"
        )
    raise ValueError(
        f"unknown dataset name {name!r}; choose one of {sorted(_REGISTRY)} "
        f"or pass the path of a .csv, .tsv or .parquet file with {spelled('target', metavar='COLUMN')}"
    )


def _read_parquet(path: str | os.PathLike[str], columns: Sequence[str] | None = None):
    """(resolved path, DataFrame, sha256 hex) of a parquet file; a missing or unreadable file is a ValueError."""
    import pandas as pd
    import pyarrow as pa

    file, parquet = open_parquet(path)
    try:
        table = parquet.read(columns=None if columns is None else list(columns))
    except (pa.ArrowException, OSError) as error:
        raise damaged_parquet(file, error) from None
    frame: pd.DataFrame = table.to_pandas()
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    return file, frame, digest


def open_parquet(path: str | os.PathLike[str]) -> tuple[Path, Any]:
    """A parquet file opened for reading: its resolved path and ``pyarrow.parquet.ParquetFile``.

    Parameters
    ----------
    path : str or PathLike
        The file.

    Returns
    -------
    file : pathlib.Path
        The resolved path.
    parquet : pyarrow.parquet.ParquetFile
        The open file, whose column names are unique.

    Raises
    ------
    ValueError
        A missing file, one that is no parquet file (its footer unreadable), or one repeating a column name.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise ValueError(f"path {os.fspath(path)!r} is not an existing file (resolved to {file}); check the file name")
    try:
        parquet = pq.ParquetFile(file)
    except (pa.ArrowException, OSError) as error:
        raise ValueError(f"{file} is not a readable parquet file ({_one_line(error)}); check the file") from None
    names = parquet.schema_arrow.names
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(
            f"parquet file {file} repeats the column name(s) {repeated}; give each column a unique name and write "
            "the file again"
        )
    return file, parquet


def damaged_parquet(file: Path, error: BaseException, first_row: int = 0) -> ValueError:
    """The error of a parquet file whose footer reads but whose rows (from ``first_row`` on) do not.

    Parameters
    ----------
    file : pathlib.Path
        The file.
    error : BaseException
        pyarrow's error.
    first_row : int, default 0
        The first row of the batch that failed.

    Returns
    -------
    ValueError
        One line naming the file, where reading failed, pyarrow's reason and the fix.
    """
    return ValueError(
        f"parquet file {file} is damaged: its rows from row {first_row} on cannot be read ({_one_line(error)}); "
        "write the file again, or check the copy"
    )


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _load_table_file(path: str | os.PathLike[str], suffix: str, kwargs: dict[str, object]) -> Dataset:
    """A CSV, TSV or parquet file by its suffix (the keyword arguments of :func:`load_csv` / :func:`load_parquet`)."""
    shown = os.fspath(path)
    if "target" not in kwargs:
        raise ValueError(
            f"loading table file {shown!r} needs the class column: pass {spelled('target', metavar='COLUMN')}"
        )
    accepted = {
        "target", "name", "feature_kinds", "features", "missing", "max_levels", "category_names", "class_names",
        "csv_format",
    }  # fmt: skip
    unexpected = sorted(set(kwargs) - accepted)
    if unexpected:
        raise ValueError(
            f"load({shown!r}) got unexpected keyword arguments {unexpected}; a {suffix} file accepts "
            f"{', '.join(f'{key}=' for key in sorted(accepted))}"
        )
    if suffix == ".parquet":
        if kwargs.get("csv_format", "absent") is None:  # the command line passes none for a parquet file
            kwargs.pop("csv_format")
        if "csv_format" in kwargs:
            raise ValueError(f"csv_format applies to CSV and TSV files, not to the parquet file {shown!r}")
        return load_parquet(path, **kwargs)  # type: ignore[arg-type]
    if suffix == ".tsv":
        given = kwargs.get("csv_format") or CsvFormat()
        if not isinstance(given, CsvFormat):
            raise ValueError(f"csv_format must be a CsvFormat, got {type(given).__name__}")
        kwargs = {**kwargs, "csv_format": replace(given, delimiter=given.delimiter or "\t")}
    return load_csv(path, **kwargs)  # type: ignore[arg-type]


#: options every built-in data set accepts (applied while coding a built-in table, after loading the others)
_COMMON_OPTIONS = ("features", "feature_kinds", "missing", "max_levels")


def load(name: str | os.PathLike[str], **kwargs: object) -> Dataset:
    """Load a built-in data set by name, or a table file (CSV, TSV, parquet) by path.

    Parameters
    ----------
    name : str or PathLike
        One of the names in :func:`available` (``iris``, ``wine``, ``breast_cancer``, ``digits``,
        ``digits_binary``, ``transport``, ``penguins``, ``seed001_gaussians``, ``seed000_separable``,
        ``seed004_gp``), or a path ending in ``.csv``, ``.tsv`` or ``.parquet`` (any case).
    **kwargs
        For a file: ``target`` (required) and optionally ``name``, ``features``, ``feature_kinds``,
        ``missing``, ``max_levels`` and (CSV/TSV) ``csv_format`` (see :func:`load_csv`). For every built-in:
        ``features``, ``feature_kinds`` (a numeric column declared categorical is coded by its values),
        ``missing`` and ``max_levels``; for the built-in tables (``transport``, ``penguins``) also ``target``
        (another column as the class); for the generators ``n`` and ``random_seed``.

    Returns
    -------
    Dataset
        The rows, with ``origin`` recording the built-in name and every option given, so that
        ``load(origin.source, **dict(origin.arguments))`` makes them again.

    Raises
    ------
    ValueError
        Unknown name (the valid names are listed), unexpected keyword
        arguments (named), or a file path without ``target``.
    """
    suffix = table_suffix(name)
    if suffix is not None or isinstance(name, os.PathLike):
        return _load_table_file(name, suffix or ".csv", dict(kwargs))
    require_known_data(name)
    if "csv_format" in kwargs:
        raise ValueError(f"csv_format applies to CSV files, not to the built-in {name!r}")
    loader = _REGISTRY[name][1]
    accepted = [p for p, spec in inspect.signature(loader).parameters.items() if spec.kind is not spec.VAR_KEYWORD]
    table = "missing" in accepted  # a built-in table codes the options itself
    unexpected = sorted(set(kwargs) - set(accepted) - set(_COMMON_OPTIONS))
    if unexpected:
        hint = "; only the built-in tables (transport, penguins) take another target" if "target" in unexpected else ""
        raise ValueError(
            f"load({name!r}) got unexpected keyword arguments {unexpected}; "
            f"{name!r} accepts {accepted if accepted else 'no keyword arguments'} and the table options "
            f"{', '.join(_COMMON_OPTIONS)}{hint}"
        )
    options = {key: kwargs.pop(key) for key in _COMMON_OPTIONS if key in kwargs and not table}
    dataset = loader(**kwargs)
    if options:
        dataset = _with_options(dataset, **options)  # type: ignore[arg-type]
    recorded = {**dict(dataset.origin.arguments), **_recordable(kwargs if table else options)}
    return replace(
        dataset,
        origin=replace(dataset.origin, source=dataset.origin.source or name, arguments=tuple(sorted(recorded.items()))),
    )


def load_test(
    table: object,
    training: Dataset,
    *,
    argument: str = "test",
    target: str | None = None,
    missing: MissingPolicy = "error",
    csv_format: CsvFormat | None = None,
) -> Dataset:
    """The analyst's own test table, coded as the training data (:meth:`Dataset.coded_as`).

    Parameters
    ----------
    table : Dataset, pandas.DataFrame, str or PathLike
        The test rows: a Dataset, a DataFrame holding the training columns and the class column ``target``, or a
        CSV, TSV or parquet file holding them.
    training : Dataset
        The rows the models are fitted on: their columns, levels and classes code the test table.
    argument : str, default "test"
        How messages name the table (``"--test-data"`` on the command line).
    target : str, optional
        The class column of a DataFrame or file (required for them).
    missing : {"error", "drop"}, default "error"
        A blank cell in a used column of a DataFrame or file: refuse the table, or drop the row.
    csv_format : CsvFormat, optional
        Delimiter, decimal mark and encoding of a CSV or TSV file.

    Returns
    -------
    Dataset
        The test rows with the training data's features, kinds, levels and classes; named after the file.

    Raises
    ------
    TypeError
        ``table`` is none of these.
    ValueError
        No ``target`` for a DataFrame or file, a training column missing, an unseen level or class, a blank cell
        under ``missing="error"``: the message starts with ``argument``.
    """
    import pandas as pd

    schema: dict[str, object] = {
        "features": list(training.feature_names),
        "missing": missing,
        "category_names": dict(training.category_names),
        "class_names": tuple(training.class_names),
    }
    shown = table.name if isinstance(table, Dataset) else "a DataFrame" if isinstance(table, pd.DataFrame) else table
    where = f"{argument} ({shown})"
    try:
        if not isinstance(table, Dataset) and not (isinstance(target, str) and target):
            raise ValueError(f"name the class column of {shown} (target=COLUMN, --target on the command line)")
        if isinstance(table, Dataset):
            rows = table
        elif isinstance(table, pd.DataFrame):
            rows = Dataset.from_frame(table, target=cast(str, target), name="test", **schema)  # type: ignore[arg-type]
        elif isinstance(table, (str, os.PathLike)) and table_suffix(table) is not None:
            file_format = {} if table_suffix(table) == ".parquet" else {"csv_format": csv_format}
            rows = replace(load(table, target=target, **schema, **file_format), name=Path(table).name)
        else:
            raise TypeError(
                f"{argument} must be a Dataset, a pandas DataFrame or the path of a .csv, .tsv or .parquet file, got "
                f"{table!r}"
            )
        return rows.coded_as(training, argument=where)
    except ValueError as error:
        message = str(error)
        prefix = "" if message.startswith(where) else f"{where}: "
        raise ValueError(
            f"{prefix}{message} (a test table is coded as the training data {training.name!r}: its columns "
            f"{list(training.feature_names)}, their levels and its classes {list(training.class_names)})"
        ) from None


def _with_options(
    dataset: Dataset,
    *,
    features: Sequence[str] | str | None = None,
    feature_kinds: Mapping[str, FeatureKind] | str | None = None,
    missing: MissingPolicy = "error",
    max_levels: int = DEFAULT_MAX_LEVELS,
) -> Dataset:
    """A built-in array data set with the table options applied (it has no blanks: ``missing`` is only checked)."""
    TableOptions(missing=missing, max_levels=max_levels)
    if features is not None:
        dataset = dataset.select_features(features)
    kinds = _kinds_mapping(feature_kinds)
    if kinds:
        dataset = dataset.with_feature_kinds(kinds, max_levels=max_levels)
    return dataset


def _recordable(options: Mapping[str, object]) -> dict[str, int | float | str | bool]:
    """The options as the plain values a DataOrigin records (lists joined by commas, kinds as ``col=kind``)."""
    recorded: dict[str, int | float | str | bool] = {}
    defaults = {"missing": "error", "max_levels": DEFAULT_MAX_LEVELS}
    for key, value in options.items():
        if value is None or (key in defaults and value == defaults[key]):
            continue
        if isinstance(value, Mapping):
            value = ",".join(f"{column}={kind}" for column, kind in value.items())
        elif isinstance(value, (list, tuple)):
            value = ",".join(map(str, value))
        if isinstance(value, (int, float, str, bool)):
            recorded[key] = value
    return recorded
