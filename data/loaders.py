"""Built-in data sets by name: :func:`load` and :func:`available`."""

from __future__ import annotations

import inspect
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import metadata, resources
from typing import Literal

import numpy as np

from bayesclass._cache import cache_directory
from bayesclass.data.csvfile import load_csv
from bayesclass.data.dataset import Dataset, FeatureKind
from bayesclass.data.origin import DataOrigin
from bayesclass.data.synthetic import seed000_separable, seed001_gaussians, seed004_gp


@dataclass(frozen=True)
class DatasetInfo:
    """One line of the catalogue printed by ``bayesclass datasets``.

    ``n_obs`` is ``"generated"`` for synthetic sets, whose size is the ``n`` argument.
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
    try:  # atomically: a concurrent reader sees the whole file or none
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                np.savez(  # by keyword, as the stub cannot tell a ** dict's keys from allow_pickle
                    file,
                    data=arrays["data"],
                    target=arrays["target"],
                    feature_names=arrays["feature_names"],
                    target_names=arrays["target_names"],
                )
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
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


def _transport() -> Dataset:
    """The toy transportation table of seed 003, read through :func:`load_csv` from ``files/transport.csv``."""
    with resources.as_file(resources.files(__package__) / "files" / "transport.csv") as path:
        dataset = load_csv(path, target="Mode", name="transport")
    return replace(
        dataset,
        description="Ten trips: distance (miles), raining, flat tire -> mode of transport (walk/bike/bus/car).",
        provenance="seed 003, transport table (Naive Bayes slides, toy transportation data), transcribed in "
        f"data/files/transport.csv, see data/files/PROVENANCE.md; {dataset.provenance}",
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
    ]
}


def available() -> tuple[DatasetInfo, ...]:
    """Every built-in data set name with its shape and source (for ``bayesclass datasets``)."""
    return tuple(info for info, _ in _REGISTRY.values())


def load(name: str | os.PathLike[str], **kwargs: object) -> Dataset:
    """Load a built-in data set by name, or a CSV file by path.

    Parameters
    ----------
    name : str or PathLike
        One of the names in :func:`available` (``iris``, ``wine``,
        ``breast_cancer``, ``digits``, ``digits_binary``, ``transport``, ``seed001_gaussians``,
        ``seed000_separable``, ``seed004_gp``), or a path ending in ``.csv``.
    **kwargs
        For the generators: ``n`` and ``random_seed``. For a CSV path:
        ``target`` (required) and optionally ``name`` and ``feature_kinds`` (see
        :func:`load_csv`). Other names take none.

    Raises
    ------
    ValueError
        Unknown name (the valid names are listed), unexpected keyword
        arguments (named), or a CSV path without ``target``.
    """
    if isinstance(name, os.PathLike) or (isinstance(name, str) and name.lower().endswith(".csv")):
        if "target" not in kwargs:
            raise ValueError(
                f"loading CSV file {os.fspath(name)!r} needs the class column: pass target=COLUMN (--target)"
            )
        unexpected = sorted(set(kwargs) - {"target", "name", "feature_kinds", "csv_format"})
        if unexpected:
            raise ValueError(
                f"load({os.fspath(name)!r}) got unexpected keyword arguments {unexpected}; "
                "a CSV file accepts target=, name=, feature_kinds= and csv_format="
            )
        return load_csv(name, **kwargs)  # type: ignore[arg-type]
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(
            f"unknown dataset name {name!r}; choose one of {sorted(_REGISTRY)} "
            "or pass the path of a .csv file with target=COLUMN"
        )
    if "csv_format" in kwargs:
        raise ValueError(f"csv_format applies to CSV files, not to the built-in {name!r}")
    if "feature_kinds" in kwargs:
        raise ValueError(
            f"feature_kinds applies to CSV files; for the built-in {name!r} use "
            f"load({name!r}).with_feature_kinds({{column: kind}})"
        )
    loader = _REGISTRY[name][1]
    accepted = [p for p, spec in inspect.signature(loader).parameters.items() if spec.kind is not spec.VAR_KEYWORD]
    unexpected = sorted(set(kwargs) - set(accepted))
    if unexpected:
        raise ValueError(
            f"load({name!r}) got unexpected keyword arguments {unexpected}; "
            f"{name!r} accepts {accepted if accepted else 'no keyword arguments'}"
        )
    dataset = loader(**kwargs)
    if not dataset.origin.source:  # fixed data: the name alone makes the rows again (generators record themselves)
        dataset = replace(dataset, origin=DataOrigin(source=name))
    return dataset
