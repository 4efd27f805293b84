"""The ``bayesclass`` command line.

Subcommands: ``datasets``, ``fit``, ``predict``, ``compare``, ``check``, ``diagnose``.
Exit codes: 0 success; 2 invalid arguments or input (one line on stderr);
1 a fit that failed (the reason on stderr).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import typing
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bayesclass._flags import add_hyperparameter_flags, hyperparameters_from_flags
from bayesclass.data.dataset import FEATURE_KINDS
from bayesclass.inference.fit import Method
from bayesclass.models import REGISTRY

__all__ = ["main"]

# Heavy imports (PyMC, ArviZ) happen inside the commands, so `--help` and
# argument errors answer at once.


class UsageError(Exception):
    """Invalid arguments or input: exit code 2."""


class FitFailed(Exception):
    """The fit ran and failed: exit code 1."""


class PartialResult(Exception):
    """An interrupted NUTS run whose draws were kept (--keep-partial) and saved: exit code 130."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        args.command(args)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (see inference.sampling.interrupt_guard)
        print(f"bayesclass {args.name}: interrupted; nothing was written", file=sys.stderr)
        return 130
    except PartialResult as partial:
        print(f"bayesclass {args.name}: interrupted: {partial}", file=sys.stderr)
        return 130
    except UsageError as error:
        print(f"bayesclass {args.name}: error: {error}", file=sys.stderr)
        return 2
    except FitFailed as error:
        print(f"bayesclass {args.name}: fit failed: {error}", file=sys.stderr)
        return 1
    return 0


# -- argument parsing -----------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bayesclass", description="Bayesian classifiers beside their MLE/MAP.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    datasets = commands.add_parser("datasets", help="list the built-in datasets")
    datasets.set_defaults(command=_datasets, name="datasets")

    fit = commands.add_parser("fit", help="fit a model and save the result as netCDF")
    _model_arguments(fit)
    fit.add_argument(
        "--method",
        choices=typing.get_args(Method),
        default="nuts",
        help="nuts (default); exact = independent draws from a conjugate posterior (naive_bayes; gcc with "
        "--covariance-prior inverse_wishart); or a point estimate (map, mle; gp: map = Laplace; naive_bayes and gcc "
        "also unbiased, "
        "posterior_mean; gcc inverse_wishart also posterior_predictive, the Student-t predictive)",
    )
    fit.add_argument("--out", required=True, type=Path, help="result file to write (.nc)")
    fit.set_defaults(command=_fit, name="fit")

    compare = commands.add_parser(
        "compare", help="fit the posterior and every point estimate on a training split and print the comparison"
    )
    _model_arguments(compare)
    compare.add_argument(
        "--method", choices=("nuts", "exact"), default="nuts", help="how to draw the posterior (default: nuts)"
    )
    compare.add_argument("--out", type=Path, help="also save the NUTS result (.nc)")
    compare.set_defaults(command=_compare, name="compare")

    predict = commands.add_parser("predict", help="class probabilities for new rows, written as CSV")
    predict.add_argument("--run", required=True, type=Path, help="result file written by 'fit'")
    predict.add_argument("--data", required=True, help="built-in dataset name or CSV file")
    predict.add_argument("--target", help="label column of a CSV file (optional for prediction)")
    _csv_arguments(predict)
    predict.add_argument("--interval-prob", type=float, default=0.89, help="ETI probability (default 0.89)")
    predict.add_argument("--out", required=True, type=Path, help="CSV file to write")
    predict.set_defaults(command=_predict, name="predict")

    check = commands.add_parser(
        "check",
        help="posterior predictive check of a saved generative fit (naive_bayes, gcc): "
        "replicated vs real features per class",
    )
    check.add_argument("--run", required=True, type=Path, help="result file written by 'fit'")
    check.add_argument("--replicates", type=int, default=200, help="replicated data sets (default 200)")
    check.add_argument("--seed", type=int, default=0, help="seed of the replicates (default 0)")
    check.set_defaults(command=_check, name="check")

    diagnose = commands.add_parser("diagnose", help="convergence verdict of a saved NUTS result")
    diagnose.add_argument("--run", required=True, type=Path)
    diagnose.set_defaults(command=_diagnose, name="diagnose")
    return parser


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="logistic", choices=sorted(REGISTRY), help="model family (default logistic)")
    parser.add_argument("--data", required=True, help="built-in dataset name (see 'bayesclass datasets') or CSV file")
    parser.add_argument("--target", help="label column of a CSV file")
    parser.add_argument(
        "--standardize",
        action="store_true",
        help="centre and scale the continuous columns (binary, categorical and count columns are left as they are "
        "unless --standardize-binary); the result records which columns were scaled",
    )
    parser.add_argument(
        "--standardize-binary",
        action="store_true",
        help="scale the binary (0/1) columns too, as continuous inputs (implies --standardize)",
    )
    _csv_arguments(parser)
    parser.add_argument(
        "--feature-kind",
        action="append",
        metavar="COLUMN=KIND",
        help=f"declare a CSV column's kind ({', '.join(FEATURE_KINDS)}) instead of the inferred one; "
        "repeatable, e.g. --feature-kind smoker=continuous",
    )
    parser.add_argument("--features", help="comma-separated feature names to keep, e.g. a 2-input slice for --model gp")
    add_hyperparameter_flags(parser, REGISTRY)
    sampler = parser.add_argument_group("NUTS")
    sampler.add_argument("--draws", type=int, default=1000)
    sampler.add_argument("--tune", type=int, default=1000)
    sampler.add_argument("--chains", type=int, default=2)
    sampler.add_argument("--target-accept", type=float, default=0.8)
    sampler.add_argument("--sampler", choices=("nutpie", "pymc"), default="nutpie", help="NUTS backend")
    sampler.add_argument("--no-progress", action="store_true", help="hide the sampling progress bar")
    sampler.add_argument(
        "--keep-partial",
        action="store_true",
        help="on Ctrl-C during sampling, save the draws made so far, marked partial (exit code 130 all the same)",
    )
    parser.add_argument("--seed", type=int, default=None, help="random seed (recorded in the result)")


def _hyperparameters(args: argparse.Namespace) -> dict[str, object]:
    """The family's keyword arguments from its flags; a flag of another family is a usage error."""
    return hyperparameters_from_flags(args, args.model, REGISTRY)


# -- setup (errors here are usage errors) -----------------------------------------------------


def _setup(args: argparse.Namespace):
    from bayesclass.data import load
    from bayesclass.data._validation import require_seed
    from bayesclass.inference import SamplerSettings
    from bayesclass.models import get_model

    try:
        model = get_model(args.model, **_hyperparameters(args))
        if args.method not in model.methods():
            raise ValueError(
                f"--method {args.method} is not available for --model {args.model}; choose one of "
                f"{', '.join(model.methods())}{model.unavailable_hint(args.method)}"
            )
        sampler = SamplerSettings(
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            target_accept=args.target_accept,
            backend=args.sampler,
            progressbar=not args.no_progress,
            keep_partial=args.keep_partial,
        )
        kinds = _feature_kinds(args.feature_kind)
        if kinds and not _is_csv(args.data):
            raise ValueError(f"--feature-kind applies to CSV files; {args.data!r} is a built-in dataset")
        if _is_csv(args.data):
            data = load(args.data, target=args.target, feature_kinds=kinds, csv_format=_csv_format(args))
        else:
            data = load(args.data)
        if args.features is not None:
            data = data.select_features(args.features)
        model.check_training_data(data)
        if args.seed is not None:
            require_seed(args.seed, argument="--seed")
    except (ValueError, TypeError) as error:
        raise UsageError(error) from None
    return model, sampler, data


def _csv_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("CSV files")
    group.add_argument("--delimiter", help="field separator of a CSV file (default: detected among , ; TAB |)")
    group.add_argument("--decimal", choices=(".", ","), default=".", help="decimal mark of its numbers (default .)")
    group.add_argument("--encoding", default="utf-8", help="its text encoding (default utf-8, e.g. latin-1)")


def _csv_format(args: argparse.Namespace):
    from bayesclass.data import CsvFormat

    delimiter = "\t" if args.delimiter in ("\\t", "tab", "TAB") else args.delimiter
    return CsvFormat(delimiter=delimiter, decimal=args.decimal, encoding=args.encoding)


def _feature_kinds(items: list[str] | None) -> dict[str, str] | None:
    """``--feature-kind COLUMN=KIND`` items as a mapping (the columns are checked by the data loader)."""
    if not items:
        return None
    kinds = {}
    for item in items:
        column, separator, kind = item.rpartition("=")
        if not separator or not column or not kind:
            raise ValueError(f"--feature-kind {item!r} must be COLUMN=KIND, e.g. --feature-kind smoker=continuous")
        if kind not in FEATURE_KINDS:
            allowed = ", ".join(FEATURE_KINDS)
            raise ValueError(f"--feature-kind {item!r}: {kind!r} is not a feature kind; use one of {allowed}")
        kinds[column] = kind
    return kinds


def _standardize(args: argparse.Namespace) -> bool | str:
    return "all" if args.standardize_binary else args.standardize


def _is_csv(name: str) -> bool:
    return name.lower().endswith(".csv")


def _check_output(path: Path, suffix: str) -> None:
    if path.suffix != suffix:
        raise UsageError(f"--out {str(path)!r} must end in {suffix}")
    if not path.parent.resolve().is_dir():
        raise UsageError(f"--out directory {str(path.parent)!r} does not exist; create it first")


def _run_fit(model, data, *, method, sampler, standardize, seed):
    from bayesclass.inference import fit
    from bayesclass.models import ConvergenceError

    try:
        return fit(model, data, method=method, sampler=sampler, standardize=standardize, random_seed=seed)
    except (ValueError, ConvergenceError, RuntimeError) as error:
        raise FitFailed(error) from None


def _save(result, path: Path) -> None:
    from bayesclass.inference import save

    try:
        save(result, path)
    except OSError as error:
        raise FitFailed(f"the fit succeeded but {path} could not be written: {error}") from None


# -- commands ---------------------------------------------------------------------------------


def _datasets(args: argparse.Namespace) -> None:
    from bayesclass.data import available

    print(f"{'name':<20} {'rows':>9} {'features':>8} {'classes':>7}  description")
    for info in available():
        print(f"{info.name:<20} {info.n_obs!s:>9} {info.n_features:>8} {info.n_classes:>7}  {info.description}")


def _fit(args: argparse.Namespace) -> None:
    from bayesclass.inference import diagnose

    _check_output(args.out, ".nc")
    model, sampler, data = _setup(args)
    result = _run_fit(model, data, method=args.method, sampler=sampler, standardize=_standardize(args), seed=args.seed)
    _save(result, args.out)
    print(f"fitted {model.name} to {data.name} ({data.n_obs} rows) by {args.method}; saved {args.out}")
    if "posterior" in result:
        print(diagnose(result))
    for kind, status in json.loads(result.attrs["point_estimate_status"]).items():
        print(f"{kind}: {status}")
    if int(result.attrs.get("partial", 0)):
        raise PartialResult(f"{result.attrs['partial_reason']}; saved {args.out}")


def _compare(args: argparse.Namespace) -> None:
    from bayesclass.data import train_validation_test_split
    from bayesclass.reports.comparison import format_comparison

    if args.out is not None:
        _check_output(args.out, ".nc")
    model, sampler, data = _setup(args)
    seed = args.seed if args.seed is not None else 0
    try:
        train, validation, test = train_validation_test_split(data, random_seed=seed)
    except ValueError as error:
        raise UsageError(error) from None
    print(f"{data.name}: {train.n_obs} training, {validation.n_obs} validation, {test.n_obs} test rows (seed {seed})")
    result = _run_fit(model, train, method=args.method, sampler=sampler, standardize=_standardize(args), seed=seed)
    print(format_comparison(result, {"validation": validation, "test": test}))
    if args.out is not None:
        _save(result, args.out)
        print(f"saved {args.out}")
    if int(result.attrs.get("partial", 0)):
        raise PartialResult(result.attrs["partial_reason"])


def _predict(args: argparse.Namespace) -> None:
    from bayesclass.data import features_from_csv, load, load_csv
    from bayesclass.inference import load as load_result
    from bayesclass.inference import predict
    from bayesclass.models import ConvergenceError

    _check_output(args.out, ".csv")
    try:
        result = load_result(args.run)
        feature_names = tuple(json.loads(result.attrs["feature_names"]))
        class_names = tuple(json.loads(result.attrs["class_names"]))
        category_names = json.loads(result.attrs.get("category_names", "{}"))
        labels = None
        if not _is_csv(args.data):
            new = load(args.data)
            features, labels = new, new
        elif args.target:
            new = load_csv(
                args.data,
                target=args.target,
                category_names=category_names,
                class_names=class_names,
                csv_format=_csv_format(args),
            )
            features, labels = new, new
        else:
            features = features_from_csv(
                args.data, feature_names=feature_names, category_names=category_names, csv_format=_csv_format(args)
            )
        if not isinstance(features, np.ndarray) and features.feature_names != feature_names:
            features = labels = features.select_features(feature_names)  # the fitted slice (--features)
        prediction = predict(result, features, interval_prob=args.interval_prob, keep_draws=False)
    except (ValueError, TypeError, KeyError, ConvergenceError) as error:
        raise UsageError(error) from None
    columns: dict[str, np.ndarray] = {}
    for index, name in enumerate(class_names):
        columns[f"p_{name}"] = prediction["class_proba"].values[:, index]
        if "class_proba_low" in prediction:
            columns[f"p_{name}_low"] = prediction["class_proba_low"].values[:, index]
            columns[f"p_{name}_high"] = prediction["class_proba_high"].values[:, index]
        if "posterior" in result:
            for variable in prediction.data_vars:
                if variable.startswith("class_proba_") and variable not in (
                    "class_proba_low",
                    "class_proba_high",
                    "class_proba_draws",
                ):
                    kind = variable.removeprefix("class_proba_")
                    columns[f"p_{name}_{kind}"] = prediction[variable].values[:, index]
    columns["predicted"] = prediction["predicted"].values
    if labels is not None:
        columns["observed"] = np.asarray(labels.class_names, dtype=object)[labels.y]
    _write_csv_atomically(args.out, columns)
    print(f"wrote {len(columns['predicted'])} predictions to {args.out} ({prediction.attrs['point']})")


def _check(args: argparse.Namespace) -> None:
    from bayesclass.inference import load as load_result
    from bayesclass.inference import posterior_predictive_check

    try:
        check = posterior_predictive_check(load_result(args.run), n_replicates=args.replicates, random_seed=args.seed)
    except (ValueError, KeyError) as error:
        raise UsageError(error) from None
    print(
        f"posterior predictive check ({check.attrs['n_replicates']} replicates from the {check.attrs['source']}); "
        "p = P(T_rep > T_obs) + P(T_rep = T_obs)/2, * outside [0.025, 0.975]"
    )
    cells = []  # (class, feature or level, statistic, observed, p)
    for name in check.data_vars:
        if not name.startswith("p_value_"):
            continue
        statistic = name.removeprefix("p_value_")
        p_values, observed = check[name], check[f"observed_{statistic}"]
        other = next(dim for dim in p_values.dims if dim != "class")
        for class_name in check["class"].values:
            for label in check[other].values:
                where = {"class": class_name, other: label}
                p = float(p_values.sel(where))
                if not np.isnan(p):  # NaN: the statistic does not apply to this feature's kind
                    cells.append((str(class_name), str(label), statistic, float(observed.sel(where)), p))
    print(f"{'class':<16} {'feature':<28} {'statistic':<16} {'observed':>11} {'p':>7}")
    flagged = 0
    for class_name, label, statistic, value, p in cells:
        mark = "*" if not 0.025 <= p <= 0.975 else ""
        flagged += bool(mark)
        print(f"{class_name[:16]:<16} {label[:28]:<28} {statistic:<16} {value:>11.4g} {p:>7.3f}{mark}")
    print(f"{flagged} of {len(cells)} statistics flagged")


def _diagnose(args: argparse.Namespace) -> None:
    from bayesclass.inference import diagnose
    from bayesclass.inference import load as load_result

    try:
        report = diagnose(load_result(args.run))
    except ValueError as error:
        raise UsageError(error) from None
    print(report)
    print(report.table.to_string())


def _write_csv_atomically(path: Path, columns: dict[str, np.ndarray]) -> None:
    from bayesclass.inference.io import atomic_write

    with atomic_write(path) as temporary, open(temporary, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(columns)
        writer.writerows(zip(*(_cells(values) for values in columns.values()), strict=True))


def _cells(values: np.ndarray) -> list[str]:
    if values.dtype.kind == "f":
        return [repr(float(value)) if math.isfinite(value) else str(value) for value in values]
    return [str(value) for value in values]


if __name__ == "__main__":
    sys.exit(main())
