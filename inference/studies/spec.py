"""The declared grid of a comparison study: models x datasets x training sizes x repeats, read from TOML.

A study asks "when does the posterior beat the plug-in, by how much, and at what cost": every cell fits one
model (its posterior by NUTS or exact draws, with the point estimates the family has beside it) on a stratified
subsample of ``size`` rows of a training pool, and scores every estimate on a held-out test split through the one
evaluation path (:func:`bayesclass.inference.evaluation.heldout.evaluate`). :func:`read_spec` validates a whole file
before anything runs and reports every problem at once; :func:`cells` expands the grid, each cell with a key
(a hash of everything that determines its numbers: the cell's settings, the data's fingerprint and the package
versions), under which :mod:`bayesclass.inference.studies.runner` records it.

A model entry with ``family = "stack"`` (:data:`STACK_FAMILY`) and ``members = [...]`` (two or more labels of other
model entries, or family names with their defaults) is the stacked predictive of its members
(:func:`bayesclass.inference.stacking.stack`; ``method`` how its weights are computed, ``"stacking"`` or
``"pseudo_bma_plus"``): its cells fit every member on the cell's training rows and score the stack beside each
member's posterior (:data:`STACK_EXAMPLE_SPEC`: does stacking beat the best single family, at which n?).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, cast

from bayesclass.data import Dataset, available, load, load_test
from bayesclass.data.constraints import Constrained, Each, InRange, Integer, InvalidValueError, check_field
from bayesclass.data.kinds import FEATURE_KINDS
from bayesclass.data.origin import MissingPolicy
from bayesclass.inference.engines.fit import DEFAULT_STANDARDIZE
from bayesclass.inference.engines.methods import SAMPLERS
from bayesclass.inference.engines.sampling import SamplerSettings

__all__ = [
    "EXAMPLES",
    "EXAMPLE_SPEC",
    "MAX_CELLS",
    "STACK_EXAMPLE_SPEC",
    "STACK_FAMILY",
    "Cell",
    "Grid",
    "StudyDataset",
    "StudyModel",
    "StudySpec",
    "cells",
    "describe_grid",
    "grid_size",
    "models_on",
    "read_spec",
]

#: a sampler of :data:`~bayesclass.inference.engines.methods.SAMPLERS` (the registry)
PosteriorMethod = str

#: the built-in example (``bayesclass study --write-example ex.toml``): the seeds' story on 2 cores in minutes
EXAMPLE_SPEC = """\
# A bayesclass comparison study: the posterior against its maximum-likelihood (and MAP) plug-ins.
# Run:    bayesclass study ex.toml --out ex/        (resumable: rerun the same command to finish)
# Report: bayesclass study-report ex/ --out ex.html
name = "posterior vs plug-in: learning curves"
seed = 0                           # seeds every split, subsample and fit (each cell's own seed derives from it)
training_sizes = [10, 20, 50, 100, 400]   # subsamples of each data set's training pool (stratified; see redraw)
repeats = 3                        # different split and subsample seeds
test_fraction = 0.3                # the held-out test split of each data set, per repeat
# metrics = ["log_loss", "brier", "accuracy"]   # default: every metric of bayesclass.inference.evaluation.scores
# loss_matrix = "loss.csv"         # optional: adds each estimate's mean loss of its Bayes decisions

# NUTS settings (exact draws use draws and chains). 4 chains of 1000 draws: every NUTS cell of this example
# passes the convergence verdict (r_hat <= 1.01 is a rule for 4 or more chains; with 2 chains of 500 draws the
# r_hat of 3 of its 30 NUTS cells was 1.011 to 1.014). A cell that fails it is left out of the comparisons.
[sampler]
draws = 1000
tune = 500
chains = 4

# Logistic regression: at small n the classes are often separable and the MLE does not exist.
[[models]]
family = "logistic"
method = "nuts"
point_estimates = ["mle", "map"]
baselines = ["least_squares", "knn"]

# Naive Bayes: Gaussian features on seed001_gaussians; on binary pixels (digits_binary) some pixel is never 1
# in a class (a zero count), and the MLE plug-in (and the MAP of a uniform Beta(1, 1) prior, the same) gives an
# observed digit probability 0: log loss inf, at every size; the posterior (and its mean) never does.
[[models]]
family = "naive_bayes"
method = "exact"
point_estimates = ["mle", "map", "posterior_mean"]

[[datasets]]
name = "seed001_gaussians"         # generated: the true P(class | x) is known (KL to the truth, coverage)
generator = { n = 2000, random_seed = 1 }
models = ["logistic", "naive_bayes"]   # optional: which models run on this data set (default: all)

[[datasets]]
name = "digits_binary"
models = ["naive_bayes"]

# Interval coverage: on a generator with known truth (this one, seed001_gaussians, seed004_gp) every cell records
# how often each estimate's 89% and 95% intervals (the posterior's; the MLE's and MAP's Wald intervals) cover the
# true P(class | x) at the test rows and, for a logit model on a generator with linear log-odds, the true
# coefficients; the report draws coverage vs training rows against the nominal levels.
[[datasets]]
name = "logistic_known_weights"    # P(1 | x) = logistic(-0.5 + 0.75 x1 - 2 x2): the logit model is well specified
generator = { n = 2000, random_seed = 2 }
redraw = true                      # each repeat draws its own 2000 rows (random_seed + repeat): independent samples
models = ["logistic"]

# A generated data set takes redraw = true to draw new rows for each repeat (else every repeat splits the same
# rows, and coverage is measured on one sample of the generator only).
# Your own table: path = "table.csv" (or .tsv, .parquet; relative to this file) with target = "COLUMN", and
# optionally name = "pima" (its name in the results; default: the file's stem); on a
# table (file or the built-in penguins), optionally missing = "drop" (rows with a blank in a used column),
# features = ["a", "b"], feature_kinds = { year = "categorical" } and max_levels = 50.
# A fixed test table: test = "table_test.csv" (with the same target column, coded as the training table): every
# cell of that data set is scored on its rows instead of a test_fraction split; the whole table is the training pool.
"""

#: the stacking example (``bayesclass study --write-example stack.toml --example stack``): does stacking beat the
#: best single family, and at which training size?
STACK_EXAMPLE_SPEC = """\
# A bayesclass study: does stacking beat the best single family, and at which n?
# Run:    bayesclass study stack.toml --out stack/        (resumable: rerun the same command to finish)
# Report: bayesclass study-report stack/ --out stack.html  (section "Stack vs the best single family")
name = "stacking vs the best single family"
seed = 0
training_sizes = [10, 20, 50, 150]
repeats = 3
test_fraction = 0.3
metrics = ["log_loss", "brier", "accuracy"]

# 4 chains of 1000 draws: every cell's NUTS members pass the convergence verdict (2 chains of 500 draws: 13 of the
# 24 cells failed it, r_hat up to 1.019); a cell that fails it is left out of the stack's comparison.
[sampler]
draws = 1000
tune = 500
chains = 4

# The families to stack, each with how its posterior is drawn. The data sets below run the stack only: its cells
# fit every member on the cell's training rows and record the stack's and each member's held-out scores (so these
# entries need no cells of their own; drop the data sets' models lists to run them as well).
[[models]]
family = "logistic"
method = "nuts"

[[models]]
family = "naive_bayes"
method = "exact"

[[models]]
family = "gcc"
method = "nuts"

# The stack: the mixture of its members' posterior predictives, weighted by LOO stacking on the training rows
# (method = "pseudo_bma_plus" for pseudo-BMA+ weights). A member is a label of a [[models]] entry above or a
# family's name (its defaults and default sampling method). Every cell records each member's weight.
[[models]]
family = "stack"
members = ["logistic", "naive_bayes", "gcc"]
method = "stacking"

[[datasets]]
name = "seed001_gaussians"         # two Gaussian classes: the truth is known (KL to the truth)
generator = { n = 1000, random_seed = 1 }
models = ["stack"]

[[datasets]]
name = "penguins"                  # three species; gcc models continuous features only: the four measurements
missing = "drop"
features = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
models = ["stack"]
"""
#: the built-in examples by name (``bayesclass study --write-example SPEC.toml --example NAME``)
EXAMPLES = {"plugin": EXAMPLE_SPEC, "stack": STACK_EXAMPLE_SPEC}

_TOP_KEYS = {
    "name", "seed", "training_sizes", "repeats", "test_fraction", "metrics", "loss_matrix", "sampler", "models",
    "datasets",
}  # fmt: skip
_MODEL_KEYS = {"family", "options", "method", "point_estimates", "baselines", "label", "standardize", "members"}
#: the ``family`` of a [[models]] entry that stacks its ``members`` (no family of the registry: a study-spec word)
STACK_FAMILY = "stack"
#: the keys of a stack entry (``options``, ``point_estimates``, ``standardize`` belong to its members)
_STACK_KEYS = {"family", "members", "method", "baselines", "label"}
_DATASET_KEYS = {
    "name",
    "path",
    "target",
    "generator",
    "models",
    "label",
    "missing",
    "features",
    "feature_kinds",
    "max_levels",
    "redraw",
    "test",
}


@dataclass(frozen=True)
class StudyModel(Constrained):
    """One model of the grid: a family with its hyperparameters, how its posterior is drawn, what is scored.

    Parameters
    ----------
    label : str
        The model's name in the results.
    family : str
        The family's registry name.
    options : tuple of (str, object)
        The family's hyperparameters, sorted and frozen (nested tables as ``("__mapping__", ...)`` pairs).
    method : str
        How the posterior is drawn (a sampling method of :func:`fit`).
    point_estimates : tuple of str
        The point estimate kinds fitted and scored beside the posterior.
    baselines : tuple of str
        The baselines scored beside the model.
    standardize : bool
        Whether :func:`fit` standardizes the continuous features (a [[models]] entry's ``standardize``, default
        true: :data:`~bayesclass.inference.engines.fit.DEFAULT_STANDARDIZE`; false states the priors in the data's
        units).
    members : tuple of StudyModel, default ()
        A stack's members (``family`` is :data:`STACK_FAMILY`, ``method`` how the weights are computed: a key of
        :data:`~bayesclass.inference.criticism.loo.WEIGHT_METHODS`); each is fitted on the cell's training rows
        and their posteriors stacked (:func:`bayesclass.inference.stacking.stack`). Empty for one family.
    """

    label: str
    family: str
    options: tuple[tuple[str, Any], ...]
    method: PosteriorMethod
    point_estimates: tuple[str, ...]
    baselines: tuple[str, ...]
    standardize: bool
    members: tuple[StudyModel, ...] = ()

    def build(self):
        """The family with its hyperparameters.

        Returns
        -------
        ClassifierModel
            ``get_model(family, **options)``.
        """
        from bayesclass.models import get_model

        return get_model(self.family, **_thawed(dict(self.options)))

    def as_dict(self) -> dict[str, Any]:
        """The model as plain data (for cell keys and records).

        Returns
        -------
        dict
            Every field, the options thawed back to nested dicts and lists; ``members`` (each as a dict) for a
            stack only, so that the keys of one family's cells are those of a bayesclass without stacks.
        """
        described = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        described["options"] = _thawed(dict(self.options))
        del described["members"]
        if self.members:
            described["members"] = [member.as_dict() for member in self.members]
        return described


@dataclass(frozen=True)
class StudyDataset:
    """One data set of the grid: a built-in name (a generator with its parameters) or a table file and target.

    Parameters
    ----------
    label : str
        The data set's name in the results.
    name : str or None
        A built-in data set's name; with ``path``, the table's name (its label in records, page and cell keys),
        never a built-in data set's; None for a file named by its stem.
    path : str or None
        A table file's path: ``.csv``, ``.tsv`` or ``.parquet`` (None for a built-in data set).
    target : str or None
        The file's label column (or another class column of a built-in table, e.g. penguins' ``sex``).
    generator : tuple of (str, object)
        A built-in generator's parameters (``n``, ``random_seed`` ...).
    models : tuple of str or None
        The labels of the models that run on it (None: all).
    missing : {"error", "drop"}
        What a blank cell in a used column does (:meth:`bayesclass.data.Dataset.from_frame`).
    features : tuple of str or None
        The feature columns to use (None: all); only these and the target are checked for blanks.
    feature_kinds : tuple of (str, str)
        Declared kinds of some columns, e.g. ``(("year", "categorical"),)``.
    max_levels : int or None
        The most levels a categorical column may have (None: the default of :func:`bayesclass.data.load`).
    redraw : bool, default False
        A generated data set drawn afresh for each repeat (its ``random_seed`` plus the repeat), so that the
        repeats are independent samples of the generator (what interval coverage is about); False: every repeat
        splits and subsamples the same generated rows.
    test : str or None, default None
        A fixed test table's path (``.csv``, ``.tsv`` or ``.parquet``, with the ``target`` column): every cell is
        scored on its rows (coded as the data set: :func:`bayesclass.data.load_test`) instead of a split's held-out
        rows, and the whole data set is the training pool.
    """

    label: str
    name: str | None
    path: str | None
    target: str | None
    generator: tuple[tuple[str, Any], ...]
    models: tuple[str, ...] | None
    missing: str = "error"
    features: tuple[str, ...] | None = None
    feature_kinds: tuple[tuple[str, str], ...] = ()
    max_levels: int | None = None
    redraw: bool = False
    test: str | None = None

    def load_test(self, training: Dataset) -> Dataset:
        """The fixed test table, coded as ``training`` (the data set's rows).

        Parameters
        ----------
        training : Dataset
            The data set's rows (:meth:`load`).

        Returns
        -------
        Dataset
            The test rows, named after the file.

        Raises
        ------
        ValueError
            No ``test`` table, or one that is not coded like the data set (a column missing, an unseen level or
            class, a blank cell under ``missing = "error"``).
        """
        if self.test is None:
            raise ValueError(f"data set {self.label!r} has no fixed test table (test = FILE)")
        missing = cast(MissingPolicy, self.missing)  # checked when the spec was read
        return load_test(self.test, training, argument=f"test {self.test!r}", target=self.target, missing=missing)

    def load(self, repeat: int = 0) -> Dataset:
        """Load the data set.

        Parameters
        ----------
        repeat : int, default 0
            The repeat whose rows to load (with ``redraw``, the generator's ``random_seed`` plus ``repeat``).

        Returns
        -------
        Dataset
            The file's rows, or the built-in data set (generated with ``generator``).
        """
        options: dict[str, Any] = {} if self.missing == "error" else {"missing": self.missing}
        options.update({key: value for key, value in self.table_options().items() if value is not None and value != {}})
        if self.path is not None:
            return load(self.path, target=self.target, **options)
        if self.target is not None:
            options["target"] = self.target
        generator = dict(self.generator)
        seed = generator.get("random_seed", 0)
        if self.redraw and isinstance(seed, int) and not isinstance(seed, bool):  # (another seed: load refuses it)
            generator["random_seed"] = seed + repeat
        return load(cast(str, self.name), **generator, **options)  # a data set without a path has a name

    def as_dict(self) -> dict[str, Any]:
        """The data set as plain data (for cell keys and records).

        Returns
        -------
        dict
            Every field (the table options only when not the default, so that older cell keys stay valid).
        """
        fields = dataclasses.asdict(self)
        defaults = {"missing": "error", "features": None, "feature_kinds": (), "max_levels": None, "redraw": False}
        defaults["test"] = None
        for key, default in defaults.items():
            if fields[key] == default:
                del fields[key]
        return fields

    def table_options(self) -> dict[str, Any]:
        """The options that choose and code the table's columns.

        Returns
        -------
        dict
            ``features``, ``feature_kinds`` (a dict) and ``max_levels``, None (or empty) where not given.
        """
        return {"features": self.features, "feature_kinds": dict(self.feature_kinds), "max_levels": self.max_levels}


@dataclass(frozen=True)
class StudySpec(Constrained):
    """A validated study (see the module docstring and :data:`EXAMPLE_SPEC`).

    Parameters
    ----------
    name : str
        The study's name (default: the spec file's stem).
    seed : int
        The study seed (>= 0); every cell's seeds derive from it.
    training_sizes : tuple of int
        Training subsample sizes (each >= 2).
    repeats : int
        Repeats of every (data set, model, size) cell, each with its own split.
    test_fraction : float
        Share of the rows held out for testing, in (0, 1).
    metrics : tuple of str or None
        The metrics recorded (None: all).
    loss_matrix : str or None
        The path of a loss-matrix CSV file (adds decisions and their mean loss).
    sampler : SamplerSettings
        The sampler settings of every fit.
    models : tuple of StudyModel
        The models of the grid.
    datasets : tuple of StudyDataset
        The data sets of the grid.
    source : str, default ""
        Where the spec was read from.
    """

    name: str
    seed: Annotated[int, Integer(minimum=0)]
    training_sizes: Annotated[tuple[int, ...], Each(Integer(minimum=2))]
    repeats: Annotated[int, Integer(minimum=1)]
    test_fraction: Annotated[float, InRange(0, 1, closed="neither")]
    metrics: tuple[str, ...] | None
    loss_matrix: str | None
    sampler: SamplerSettings
    models: tuple[StudyModel, ...]
    datasets: tuple[StudyDataset, ...]
    source: str = ""


@dataclass(frozen=True)
class Cell:
    """One fit and its scores: ``model`` on a ``size``-row subsample of ``dataset`` in repeat ``repeat``.

    Parameters
    ----------
    study : str
        The study's name.
    model : StudyModel
        The model fitted.
    dataset : StudyDataset
        The data set it is fitted on.
    size : int
        Training rows.
    repeat : int
        The repeat (0-based).
    seed : int
        The study seed.
    test_fraction : float
        Share of the rows held out for testing.
    sampler : SamplerSettings
        The sampler settings.
    metrics : tuple of str or None
        The metrics recorded (None: all).
    loss_matrix : tuple of tuple of float, or None
        The loss matrix's values, in the order of ``loss_classes``.
    loss_classes : tuple of str or None
        Its classes (the data set's).
    data_fingerprint : str
        The data set's content fingerprint.
    versions : tuple of (str, str)
        Versions of the packages that determine the numbers.
    """

    study: str
    model: StudyModel
    dataset: StudyDataset
    size: int
    repeat: int
    seed: int
    test_fraction: float
    sampler: SamplerSettings
    metrics: tuple[str, ...] | None
    loss_matrix: tuple[tuple[float, ...], ...] | None
    loss_classes: tuple[str, ...] | None
    data_fingerprint: str
    versions: tuple[tuple[str, str], ...]

    def key(self) -> str:
        """SHA-256 of everything that determines the cell's numbers (its record's file name).

        Returns
        -------
        str
            The first 24 hex digits.
        """
        description = {
            "model": self.model.as_dict(),  # the label too: it names the cell's rows in the results
            "dataset": self.dataset.as_dict() | {"models": None},
            "size": self.size,
            "repeat": self.repeat,
            "seed": self.seed,
            "test_fraction": self.test_fraction,
            "sampler": dataclasses.asdict(self.sampler) | {"progressbar": None},
            "metrics": self.metrics,
            "loss_matrix": self.loss_matrix,
            "loss_classes": self.loss_classes,
            "data_fingerprint": self.data_fingerprint,
            "versions": self.versions,
        }
        return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()[:24]

    def fit_seed(self) -> int:
        """The seed of this cell's split, subsample and fit: from the key, so it does not depend on run order.

        Returns
        -------
        int
            In ``0 .. 2**31 - 1``.
        """
        return int(self.key()[:8], 16) % 2**31

    def describe(self) -> dict[str, Any]:
        """What names the cell in records and messages.

        Returns
        -------
        dict
            ``study``, ``model`` (label), ``family``, ``method``, ``dataset`` (label), ``size`` and ``repeat``.
        """
        return {
            "study": self.study,
            "model": self.model.label,
            "family": self.model.family,
            "method": self.model.method,
            "dataset": self.dataset.label,
            "size": self.size,
            "repeat": self.repeat,
        }


def read_spec(path: str | Path) -> StudySpec:
    """Read and validate a study spec (TOML).

    Parameters
    ----------
    path : str or pathlib.Path
        The spec file; relative paths in it (CSV files, the loss matrix) are relative to its folder.

    Returns
    -------
    StudySpec
        The validated study.

    Raises
    ------
    ValueError
        ``study spec <path> has <n> problem(s):`` then one line per problem: unknown keys, families, options,
        methods, point estimates, baselines, metrics or data sets; a training size larger than a data set's
        training pool or smaller than its number of classes; a loss matrix that does not fit a data set.
    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(
            f"no study spec at {str(path)!r}; write the example with 'bayesclass study --write-example {path.name}'"
        ) from None
    except IsADirectoryError:
        raise ValueError(
            f"study spec {str(path)!r} is a folder; give the spec's TOML file, e.g. {path / 'spec.toml'}"
        ) from None
    except OSError as error:
        raise ValueError(f"study spec {str(path)!r} cannot be read ({error.strerror or error})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(
            f"study spec {str(path)!r} is not valid TOML ({error}); a spec is a TOML file like the example of "
            "'bayesclass study --write-example ex.toml'"
        ) from None
    return parse_spec(raw, source=str(path), base=path.parent)


def parse_spec(raw: Mapping[str, Any], *, source: str = "<spec>", base: Path = Path(".")) -> StudySpec:
    """Validate a spec already parsed from TOML (see :func:`read_spec`)."""
    problems: list[str] = []
    for key in sorted(set(raw) - _TOP_KEYS):
        problems.append(f"unknown key {key!r} (known: {', '.join(sorted(_TOP_KEYS))})")
    _typed(raw, "spec", problems, texts=("name", "loss_matrix"))
    name = raw.get("name", Path(source).stem)
    seed = _declared("seed", raw.get("seed", 0), problems, fallback=0)
    repeats = _declared("repeats", raw.get("repeats", 1), problems, fallback=1)
    sizes = raw.get("training_sizes")
    if not isinstance(sizes, list) or not sizes:
        problems.append(f"training_sizes must be a non-empty list of row counts, got {sizes!r}")
        sizes = []
    sizes = tuple(size for size in _declared("training_sizes", sizes, problems, fallback=()) if size >= 2)
    test_fraction = _declared("test_fraction", raw.get("test_fraction", 0.3), problems, fallback=0.3)
    metrics = raw.get("metrics")
    if metrics is not None:
        from bayesclass.inference.evaluation.scores import METRICS

        if not isinstance(metrics, list) or not metrics:
            problems.append(f"metrics must be a list of metric names, got {metrics!r}")
            metrics = None
        else:
            unknown = [metric for metric in metrics if metric not in METRICS]
            if unknown:
                problems.append(f"unknown metric(s) {unknown}; choose among {', '.join(METRICS)}")
            metrics = tuple(metric for metric in metrics if metric in METRICS) or None
    sampler_raw = raw.get("sampler", {})
    known = {field.name for field in dataclasses.fields(SamplerSettings)} - {"progressbar"}
    if not _is_table(sampler_raw, "sampler", known, problems):
        sampler_raw = {}
    try:
        sampler = SamplerSettings(**{**{k: v for k, v in sampler_raw.items() if k in known}, "progressbar": False})
    except (TypeError, ValueError) as error:
        problems.append(f"sampler: {error}")
        sampler = SamplerSettings(progressbar=False)
    models = _models(raw.get("models"), problems)
    datasets = _datasets(raw.get("datasets"), {model.label for model in models}, problems, base)
    loss_matrix = raw.get("loss_matrix")
    loss_matrix = loss_matrix if isinstance(loss_matrix, str) else None  # (another type is a problem above)
    if loss_matrix is not None:
        loss_matrix = str((base / loss_matrix) if not Path(loss_matrix).is_absolute() else loss_matrix)
    loaded = {}
    for dataset in datasets:  # sizes and the loss matrix against the data themselves
        try:
            loaded[dataset.label] = dataset.load()
        except (ValueError, OSError) as error:
            problems.append(f"dataset {dataset.label!r}: {error}")
        except MemoryError as error:  # e.g. a generator's n = 10**15
            problems.append(
                f"dataset {dataset.label!r}: it does not fit in this machine's memory ({error}); use a smaller "
                f"generator n or a smaller table"
            )
    by_label = {dataset.label: dataset for dataset in datasets}
    for label, data in loaded.items():
        pool = _training_pool(by_label[label], data, test_fraction, problems)
        n_classes = len(data.class_names)
        for size in sizes:
            if size > pool:
                problems.append(
                    f"training size {size} is larger than the training pool of {label!r} ({pool} of {data.n_obs} "
                    f"rows after the {test_fraction:g} test split)"
                )
            elif pool - n_classes < size < pool:
                problems.append(
                    f"training size {size} of {label!r} leaves fewer rows than classes ({n_classes}) out of its pool "
                    f"of {pool}, so no stratified subsample exists; use {pool} or at most {pool - n_classes}"
                )
            if size < len(data.class_names):
                problems.append(f"training size {size} cannot hold one row of each of the {len(data.class_names)} "
                                f"classes of {label!r}")  # fmt: skip
        if loss_matrix is not None:
            from bayesclass.inference.prediction.decisions import LossMatrix

            try:
                LossMatrix.from_csv(loss_matrix).aligned(data.class_names)
            except (ValueError, OSError) as error:
                problems.append(f"loss_matrix {loss_matrix!r} for {label!r}: {error}")
    if problems:
        listing = "\n".join(f"  - {problem}" for problem in problems)
        raise ValueError(f"study spec {source} has {len(problems)} problem(s):\n{listing}")
    return StudySpec(
        name=str(name),
        seed=seed,
        training_sizes=tuple(sorted(set(sizes))),
        repeats=repeats,
        test_fraction=float(test_fraction),
        metrics=metrics,
        loss_matrix=loss_matrix,
        sampler=sampler,
        models=models,
        datasets=datasets,
        source=source,
    )


def _training_pool(dataset: StudyDataset, data: Dataset, test_fraction: float, problems: list[str]) -> int:
    """The rows a data set's training subsamples are drawn from: all of them with a fixed test table (checked)."""
    if dataset.test is None:
        return data.n_obs - math.ceil(test_fraction * data.n_obs)  # as scikit-learn's train_test_split counts
    try:
        dataset.load_test(data)
    except (ValueError, TypeError) as error:
        problems.append(f"dataset {dataset.label!r}: {error}")
    return data.n_obs


#: the most cells a study runs without confirmation (``bayesclass study --yes``, ``run_study(confirm_large=True)``):
#: a cell takes seconds to minutes, so 10,000 cells are hours to days of a few workers
MAX_CELLS = 10_000


def models_on(spec: StudySpec, dataset: StudyDataset) -> tuple[StudyModel, ...]:
    """The models of ``spec`` that run on ``dataset`` (its ``models`` list, or all).

    Parameters
    ----------
    spec : StudySpec
        A validated study.
    dataset : StudyDataset
        One of its data sets.

    Returns
    -------
    tuple of StudyModel
        In the spec's order.
    """
    return tuple(model for model in spec.models if dataset.models is None or model.label in dataset.models)


def grid_size(spec: StudySpec) -> int:
    """The number of cells of the grid, counted (never expanded): data set x its models x sizes x repeats.

    Parameters
    ----------
    spec : StudySpec
        A validated study.

    Returns
    -------
    int
        The length of :func:`cells`.
    """
    return sum(len(models_on(spec, dataset)) for dataset in spec.datasets) * len(spec.training_sizes) * spec.repeats


def describe_grid(spec: StudySpec) -> str:
    """The grid's size as a product, for messages: ``20,000,000 cells (2 model x data set pairs x ...)``.

    Parameters
    ----------
    spec : StudySpec
        A validated study.

    Returns
    -------
    str
        The count and its factors.
    """
    pairs = sum(len(models_on(spec, dataset)) for dataset in spec.datasets)
    return (
        f"{grid_size(spec):,} cells ({pairs} model x data set pair(s) x {len(spec.training_sizes)} training size(s) "
        f"x {spec.repeats:,} repeat(s))"
    )


class Grid:
    """The cells of a study, generated on demand: ``len`` counts them (:func:`grid_size`), iterating makes them.

    Each iteration makes the cells again, in a fixed order (dataset, model, size, repeat), loading each data set
    once; nothing holds the whole grid.

    Parameters
    ----------
    spec : StudySpec
        A validated study.
    """

    def __init__(self, spec: StudySpec) -> None:
        self.spec = spec

    def __len__(self) -> int:
        return grid_size(self.spec)

    def __iter__(self) -> Iterator[Cell]:
        spec = self.spec
        versions = _versions()
        loss = None
        if spec.loss_matrix is not None:
            from bayesclass.inference.prediction.decisions import LossMatrix

            loss = LossMatrix.from_csv(spec.loss_matrix)
        for dataset in spec.datasets:
            data = dataset.load()
            matrix = tuple(map(tuple, loss.aligned(data.class_names).tolist())) if loss is not None else None
            fingerprint = data.fingerprint()
            if dataset.test is not None:  # the cells' numbers depend on the test table's content too
                fingerprint = f"{fingerprint}+{dataset.load_test(data).fingerprint()}"
            for model in models_on(spec, dataset):
                for size in spec.training_sizes:
                    for repeat in range(spec.repeats):
                        yield Cell(
                            study=spec.name,
                            model=model,
                            dataset=dataset,
                            size=size,
                            repeat=repeat,
                            seed=spec.seed,
                            test_fraction=spec.test_fraction,
                            sampler=spec.sampler,
                            metrics=spec.metrics,
                            loss_matrix=matrix,
                            loss_classes=tuple(data.class_names) if matrix is not None else None,
                            data_fingerprint=fingerprint,
                            versions=versions,
                        )


def cells(spec: StudySpec) -> Grid:
    """Every cell of the grid, in a fixed order (dataset, model, size, repeat), generated lazily.

    Parameters
    ----------
    spec : StudySpec
        A validated study.

    Returns
    -------
    Grid
        One cell per data set x model (that runs on it) x training size x repeat; ``len()`` counts them without
        making them.
    """
    return Grid(spec)


def _versions() -> tuple[tuple[str, str], ...]:
    """Versions of the packages that determine a cell's numbers (part of its key)."""
    from bayesclass.inference.engines.fit import _version

    names = ("bayesclass", "pymc", "pytensor", "nutpie", "jax", "blackjax", "numba", "numpy", "scipy", "scikit-learn",
             "arviz", "arviz-base", "arviz-stats")  # fmt: skip
    return tuple((name, _version(name)) for name in names)


# -- validation helpers ---------------------------------------------------------------------------------------------


def _declared(name: str, value: Any, problems: list[str], *, fallback: Any) -> Any:
    """``value`` checked against the declaration of :class:`StudySpec`'s field ``name``, or ``fallback``.

    A refusal is added to ``problems`` (so that every problem of a spec is reported at once).
    """
    try:
        return check_field(StudySpec, name, value)
    except InvalidValueError as error:
        problems.append(str(error))
        return fallback


def _is_table(entry: Any, where: str, known: set[str], problems: list[str]) -> bool:
    """Whether ``entry`` is a TOML table; its unknown keys are problems (it is still checked)."""
    if not isinstance(entry, Mapping):
        problems.append(f"{where} must be a table, got {entry!r}")
        return False
    for key in sorted(set(entry) - known):
        problems.append(f"{where}: unknown key {key!r} (known: {', '.join(sorted(known))})")
    return True


def _typed(
    entry: Mapping[str, Any],
    where: str,
    problems: list[str],
    *,
    texts: tuple[str, ...] = (),
    text_lists: tuple[str, ...] = (),
    booleans: tuple[str, ...] = (),
) -> bool:
    """Whether the keys of ``entry`` that are present have their types: a text, a list of texts, true or false.

    Each wrong one is added to ``problems``, naming the key, the value and an example of the right form.
    """
    wrong = []
    for key in texts:
        if key in entry and (not isinstance(entry[key], str) or not entry[key].strip()):
            wrong.append(f'{where}: {key} must be a non-empty text, got {entry[key]!r}; e.g. {key} = "..."')
    for key in text_lists:
        value = entry.get(key)
        if key in entry and (not isinstance(value, list) or not all(isinstance(item, str) for item in value)):
            wrong.append(f'{where}: {key} must be a list of texts, got {value!r}; e.g. {key} = ["..."]')
    for key in booleans:
        if key in entry and not isinstance(entry[key], bool):
            wrong.append(f"{where}: {key} must be true or false (TOML booleans, unquoted), got {entry[key]!r}")
    problems.extend(wrong)
    return not wrong


def _frozen(options: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((key, _freeze(value)) for key, value in options.items()))


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return ("__mapping__", _frozen(value))
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    return value


def _thawed(options: Mapping[str, Any]) -> dict[str, Any]:
    def thaw(value: Any) -> Any:
        if isinstance(value, tuple) and len(value) == 2 and value[0] == "__mapping__":
            return {key: thaw(item) for key, item in value[1]}
        if isinstance(value, tuple):
            return [thaw(item) for item in value]
        return value

    return {key: thaw(value) for key, value in options.items()}


def _models(raw: Any, problems: list[str]) -> tuple[StudyModel, ...]:
    from bayesclass.models import REGISTRY, get_model
    from bayesclass.models.baselines import BASELINES

    if not isinstance(raw, list) or not raw:
        problems.append("models must be a non-empty list of [[models]] tables")
        return ()
    models: list[StudyModel] = []
    stacks: list[tuple[int, Mapping[str, Any]]] = []  # made once every family's entry is known (their members)
    for index, entry in enumerate(raw):
        where = f"models[{index}]"
        if not _is_table(entry, where, _MODEL_KEYS, problems) or not _typed(
            entry, where, problems, texts=("family", "method", "label"),
            text_lists=("point_estimates", "baselines", "members"), booleans=("standardize",),
        ):  # fmt: skip
            continue
        family = entry.get("family")
        if family == STACK_FAMILY:
            stacks.append((index, entry))
            continue
        if "members" in entry:
            problems.append(f'{where} ({family}): members applies to family = "{STACK_FAMILY}" only (the stack of '
                            "those models); drop it, or make this entry a stack")  # fmt: skip
        if family not in REGISTRY:
            problems.append(f"{where}: unknown family {family!r}; choose among {', '.join(sorted(REGISTRY))} (or "
                            f'"{STACK_FAMILY}" with members, the stack of several)')  # fmt: skip
            continue
        options = entry.get("options", {})
        if not isinstance(options, Mapping):
            problems.append(f'{where} ({family}): options must be a table, e.g. options = {{ link = "probit" }}')
            options = {}
        try:
            model = get_model(family, **options)
        except (TypeError, ValueError) as error:
            problems.append(f"{where} ({family}): options {options!r}: {error}")
            model = get_model(family)  # the family's defaults, to check the rest of the entry
        method = entry.get("method", "nuts")
        if method not in SAMPLERS or not SAMPLERS[method].accepts(model):
            problems.append(
                f"{where} ({family}): method {method!r} cannot draw its posterior; choose "
                f"{' or '.join(repr(name) for name, sampler in SAMPLERS.items() if sampler.accepts(model))}"
            )
            method = "nuts"  # (a declared choice, so that the rest of the entry is still checked)
        available_estimates = model.available_point_estimates()
        estimates = entry.get("point_estimates", list(available_estimates))
        estimates = estimates if isinstance(estimates, list) else []
        missing = [kind for kind in estimates if kind not in available_estimates]
        if missing:
            problems.append(
                f"{where} ({family}): point estimate(s) {missing} do not exist for this family; it has "
                f"{', '.join(available_estimates)}"
            )
        baselines = entry.get("baselines", [])
        baselines = baselines if isinstance(baselines, list) else []
        unknown = [name for name in baselines if name not in BASELINES]
        if unknown:
            problems.append(f"{where} ({family}): unknown baseline(s) {unknown}; choose among {', '.join(BASELINES)}")
        label = entry.get("label") or (family if not options else f"{family} {json.dumps(options, sort_keys=True)}")
        if any(existing.label == label for existing in models):
            problems.append(f"{where}: the label {label!r} is used twice; give each model a distinct 'label'")
        models.append(
            StudyModel(
                label=str(label),
                family=family,
                options=_frozen(options),
                method=method,
                point_estimates=tuple(kind for kind in estimates if kind in available_estimates),
                baselines=tuple(name for name in baselines if name in BASELINES),
                standardize=bool(entry.get("standardize", DEFAULT_STANDARDIZE)),
            )
        )
    return _with_stacks(models, stacks, problems)


def _with_stacks(
    models: list[StudyModel], stacks: list[tuple[int, Mapping[str, Any]]], problems: list[str]
) -> tuple[StudyModel, ...]:
    """``models`` with the stacks of ``stacks`` (their index in the spec, their entry) made and put in their places."""
    if not stacks:
        return tuple(models)
    placed = list(models)
    stack_labels = {str(entry.get("label") or STACK_FAMILY) for _, entry in stacks}
    for index, entry in sorted(stacks, key=lambda item: item[0]):
        stack = _stack_model(entry, f"models[{index}]", models, stack_labels, problems)
        if any(existing.label == stack.label for existing in placed):
            problems.append(f"models[{index}]: the label {stack.label!r} is used twice; give each model a distinct "
                            "'label'")  # fmt: skip
        placed.insert(min(index, len(placed)), stack)
    return tuple(placed)


def _stack_model(
    entry: Mapping[str, Any], where: str, models: list[StudyModel], stack_labels: set[str], problems: list[str]
) -> StudyModel:
    """A ``family = "stack"`` entry as a :class:`StudyModel` with its members (problems appended).

    A member is a model label of the spec (that entry's family, options, method and standardisation; only its
    posterior enters the stack) or a family's registry name (its defaults and default sampling method).
    """
    from bayesclass.inference.criticism.loo import WEIGHT_METHODS
    from bayesclass.models import REGISTRY, get_model
    from bayesclass.models.baselines import BASELINES

    where = f"{where} ({STACK_FAMILY})"
    example = 'e.g. members = ["logistic", "naive_bayes"]'
    for key in sorted(set(entry) - _STACK_KEYS):
        problems.append(f"{where}: {key} applies to a member, not to the stack; set it on a [[models]] entry of that "
                        "family and name the entry's label in members")  # fmt: skip
    names = entry.get("members")
    if names is None:
        problems.append(f"{where}: members is missing; name the two or more models to stack, {example}")
        names = []
    if isinstance(names, list) and len(names) == 1:
        problems.append(f"{where}: members = {names!r} names one model; a stack needs two or more, {example}")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        problems.append(f"{where}: members {twice} listed more than once in {names!r}; name each model once (two "
                        "settings of one family: two [[models]] entries with distinct labels)")  # fmt: skip
    by_label = {model.label: model for model in models}
    members: list[StudyModel] = []
    for name in dict.fromkeys(names):
        if name in stack_labels:
            problems.append(f"{where}: member {name!r} is a stack; stack the families themselves (list its members)")
        elif name in by_label:
            members.append(dataclasses.replace(by_label[name], point_estimates=(), baselines=()))
        elif name in REGISTRY:
            method = get_model(name).default_sampling_method
            members.append(StudyModel(label=name, family=name, options=(), method=method, point_estimates=(),
                                      baselines=(), standardize=bool(DEFAULT_STANDARDIZE)))  # fmt: skip
        else:
            problems.append(
                f"{where}: unknown member {name!r}; give the label of a [[models]] entry ("
                f"{', '.join(sorted(by_label)) or 'none'}) or a family ({', '.join(sorted(REGISTRY))})"
            )
    method = entry.get("method", "stacking")
    if method not in WEIGHT_METHODS:
        problems.append(f"{where}: method {method!r} is not a way to weigh a stack; choose "
                        f"{' or '.join(repr(name) for name in WEIGHT_METHODS)}")  # fmt: skip
    baselines = entry.get("baselines", [])
    unknown = [name for name in baselines if name not in BASELINES]
    if unknown:
        problems.append(f"{where}: unknown baseline(s) {unknown}; choose among {', '.join(BASELINES)}")
    return StudyModel(
        label=str(entry.get("label") or STACK_FAMILY),
        family=STACK_FAMILY,
        options=(),
        method=str(method),
        point_estimates=(),
        baselines=tuple(name for name in baselines if name in BASELINES),
        standardize=bool(DEFAULT_STANDARDIZE),
        members=tuple(members),
    )


def _datasets(raw: Any, model_labels: set[str], problems: list[str], base: Path) -> tuple[StudyDataset, ...]:
    if not isinstance(raw, list) or not raw:
        problems.append("datasets must be a non-empty list of [[datasets]] tables")
        return ()
    known = {info.name: info for info in available()}
    datasets = []
    seen: dict[str, Mapping[str, Any]] = {}  # label -> the first entry with it
    for index, entry in enumerate(raw):
        where = f"datasets[{index}]"
        if not _is_table(entry, where, _DATASET_KEYS, problems) or not _typed(
            entry, where, problems, texts=("name", "path", "target", "label", "missing"), text_lists=("models",)
        ):
            continue
        name, path, target = entry.get("name"), entry.get("path"), entry.get("target")
        generator = entry.get("generator", {})
        if not _names_its_data(entry, where, known, problems):
            continue
        missing = entry.get("missing", "error")
        if missing not in ("error", "drop"):
            problems.append(f"{where}: missing = {missing!r}; give 'error' (refuse blank cells) or 'drop' (drop rows)")
            missing = "error"
        if path is not None:
            path = str(base / path) if not Path(path).is_absolute() else str(path)
            if target is None:
                problems.append(f"{where}: table file {path!r} needs target = COLUMN")
        elif name not in known:
            problems.append(f"{where}: unknown data set {name!r}; choose among {', '.join(sorted(known))}")
            continue
        elif generator and known[name].n_obs != "generated":
            problems.append(f"{where}: {name!r} is not generated; 'generator' applies to generated data sets only")
        if not isinstance(generator, Mapping):
            problems.append(f"{where}: generator must be a table of parameters, e.g. {{ n = 2000, random_seed = 1 }}")
            generator = {}
        models = entry.get("models")
        if models is not None and not isinstance(models, list):
            problems.append(f'{where}: models must be a list of model labels, e.g. models = ["logistic"]')
            models = None
        if models == []:
            problems.append(f'{where}: models = [] runs no model on it; name some, e.g. models = ["logistic"], or drop '
                            "the key (all models)")  # fmt: skip
        if models is not None:
            unknown = [label for label in models if label not in model_labels]
            if unknown:
                problems.append(f"{where}: models {unknown} are not among the models' labels {sorted(model_labels)}")
        label = entry.get("label") or name or Path(path).stem
        if not isinstance(label, str):
            problems.append(f'{where}: label = {label!r} must be a text, e.g. label = "small sample"')
            label = str(label)
        twin = seen.setdefault(label, entry)
        if twin is not entry:
            problems.append(
                f"{where}: the label {label!r} is used twice ({_describe_entry(twin)} and "
                f"{_describe_entry(entry)}); their cells would be mixed in one table: give each data set a distinct "
                "'label'"
            )
        features, kinds, max_levels = _table_options(entry, where, problems)
        redraw = entry.get("redraw", False)
        if not isinstance(redraw, bool):
            problems.append(f"{where}: redraw must be true or false (TOML booleans, unquoted), got {redraw!r}")
            redraw = False
        elif redraw and (name not in known or known[name].n_obs != "generated"):
            problems.append(f"{where}: redraw = true applies to generated data sets only (each repeat draws new rows "
                            f"from the generator); {name or path!r} is not generated: drop redraw")  # fmt: skip
            redraw = False
        datasets.append(
            StudyDataset(
                label=str(label),
                name=name,
                path=path,
                target=target,
                generator=tuple(sorted(generator.items())),
                models=tuple(models) if models is not None else None,
                missing=missing,
                features=features,
                feature_kinds=kinds,
                max_levels=max_levels,
                redraw=redraw,
                test=_test_table(entry, where, base, problems),
            )
        )
    return tuple(datasets)


def _test_table(entry: Mapping[str, Any], where: str, base: Path, problems: list[str]) -> str | None:
    """A data set entry's fixed ``test`` table: its path (relative to the spec's folder), checked."""
    test = entry.get("test")
    if test is not None and (not isinstance(test, str) or entry.get("target") is None):
        problems.append(f'{where}: test = {test!r} must be the path of a table file, with target = COLUMN (its class '
                        'column, as in the data set), e.g. test = "table_test.csv"')  # fmt: skip
        return None
    return None if test is None else str(base / test) if not Path(test).is_absolute() else test


def _names_its_data(entry: Mapping[str, Any], where: str, known: Mapping[str, Any], problems: list[str]) -> bool:
    """Whether a [[datasets]] entry says which data it is (problems appended).

    A built-in ``name``, or a table file's ``path``, which a ``name`` labels unless it is a built-in data set's
    (which data would it be?).
    """
    name, path = entry.get("name"), entry.get("path")
    if path is None:
        if name is None:
            problems.append(
                f"{where}: give name (a built-in data set) or path (a .csv, .tsv or .parquet file with target)"
            )
        return name is not None
    if "generator" in entry:
        problems.append(f"{where}: generator applies to a built-in generated data set, not to the table file "
                        f"{path!r}: drop generator")  # fmt: skip
    if name in known:
        problems.append(
            f"{where}: name = {name!r} is a built-in data set, and path = {path!r} a table file; with path, name "
            f'labels the table: give it a name that no built-in data set has (e.g. name = "my_{name}"), or drop '
            "path to use the built-in one"
        )
        return False
    return True


def _describe_entry(entry: Mapping[str, Any]) -> str:
    """A [[datasets]] entry in one line, for messages: its name or path and its parameters."""
    shown = {key: value for key, value in entry.items() if key in ("name", "path", "target", "generator")}
    return "{" + ", ".join(f"{key} = {value!r}" for key, value in shown.items()) + "}"


def _table_options(
    entry: Mapping[str, Any], where: str, problems: list[str]
) -> tuple[tuple[str, ...] | None, tuple[tuple[str, str], ...], int | None]:
    """A data set entry's ``features``, ``feature_kinds`` and ``max_levels``, checked (problems appended)."""
    features = entry.get("features")
    if features is not None and (
        not isinstance(features, list) or not features or not all(isinstance(f, str) and f for f in features)
    ):
        problems.append(f'{where}: features must be a non-empty list of column names, e.g. features = ["a", "b"]')
        features = None
    kinds = entry.get("feature_kinds", {})
    if not isinstance(kinds, Mapping) or not all(kind in FEATURE_KINDS for kind in kinds.values()):
        problems.append(
            f"{where}: feature_kinds must be a table of column = kind with kinds among {', '.join(FEATURE_KINDS)}, "
            f'e.g. feature_kinds = {{ year = "categorical" }}; got {kinds!r}'
        )
        kinds = {}
    max_levels = entry.get("max_levels")
    if max_levels is not None and (isinstance(max_levels, bool) or not isinstance(max_levels, int) or max_levels < 2):
        problems.append(f"{where}: max_levels must be an integer >= 2, e.g. max_levels = 100; got {max_levels!r}")
        max_levels = None
    return (None if features is None else tuple(features)), tuple(sorted(kinds.items())), max_levels
