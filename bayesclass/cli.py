"""The ``bayesclass`` command line.

Subcommands: ``datasets``, ``fit``, ``predict``, ``compare``, ``check``, ``diagnose``.
Exit codes: 0 success; 2 invalid arguments or input (one line on stderr);
1 a fit that failed (the reason on stderr).
"""

from __future__ import annotations

import argparse
import signal
import sys
import typing
from collections.abc import Sequence
from pathlib import Path

from bayesclass._flags import add_hyperparameter_flags, hyperparameters_from_flags
from bayesclass.data.dataset import FEATURE_KINDS
from bayesclass.inference.engines.methods import SAMPLERS, method_names
from bayesclass.inference.engines.sampling import Backend
from bayesclass.models import REGISTRY
from bayesclass.models.base import POINT_ESTIMATE_KINDS

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
    """Run the ``bayesclass`` command line and return its exit code.

    SIGTERM is handled as Ctrl-C for the whole command; the previous handler is restored at the end.

    Parameters
    ----------
    argv : sequence of str or None, default None
        The arguments after the program name (None: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 success; 2 invalid arguments or input (one line on stderr); 1 a fit that failed
        (the reason on stderr); 130 interrupted (nothing written, or the partial draws kept with
        ``--keep-partial``).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    previous = _terminate_as_interrupt()
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
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0


def _terminate_as_interrupt():
    """Handle SIGTERM as Ctrl-C for the whole command (exit 130, nothing half-written).

    Not only while a sampler runs; returns the previous handler (None off the main thread, where handlers
    cannot be set).
    """

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:
        return None


# -- argument parsing -----------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bayesclass", description="Bayesian classifiers beside their MLE/MAP.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    _add_datasets_command(commands)
    _add_fit_command(commands)
    _add_compare_command(commands)
    _add_report_command(commands)
    _add_study_command(commands)
    _add_study_report_command(commands)
    _add_loo_command(commands)
    _add_predict_command(commands)
    _add_check_command(commands)
    _add_diagnose_command(commands)
    return parser


def _add_datasets_command(commands) -> None:
    datasets = commands.add_parser("datasets", help="list the built-in datasets")
    datasets.set_defaults(command=_datasets, name="datasets")


def _add_fit_command(commands) -> None:
    fit = commands.add_parser("fit", help="fit a model and save the result as netCDF")
    _model_arguments(fit)
    fit.add_argument(
        "--method",
        choices=method_names(),
        default="auto",
        help=f"{_sampler_help()}; or one of the family's point estimates ({', '.join(POINT_ESTIMATE_KINDS)}; one "
        "the family lacks is refused with the list of those it has)",
    )
    fit.add_argument("--out", required=True, type=Path, help="result file to write (.nc)")
    fit.set_defaults(command=_fit, name="fit")


def _sampler_help() -> str:
    """The ``--method`` help of the samplers, from the method and family registries."""
    defaults = ", ".join(f"{family.default_sampling_method} for {name}" for name, family in REGISTRY.items())
    samplers = "; ".join(f"{name} = {sampler.description}" for name, sampler in SAMPLERS.items())
    return f"auto (default: the family's sampler, {defaults}; nuts when --backend is named); {samplers}"


def _add_compare_command(commands) -> None:
    compare = commands.add_parser(
        "compare", help="fit the posterior and every point estimate on a training split and print the comparison"
    )
    _model_arguments(compare)
    compare.add_argument(
        "--method",
        choices=("auto", *SAMPLERS),
        default="auto",
        help=f"how to draw the posterior: {_sampler_help()}",
    )
    compare.add_argument("--out", type=Path, help="also save the posterior result (.nc)")
    compare.add_argument(
        "--baselines",
        nargs="?",
        const="all",
        metavar="NAMES",
        help="also score the seeds' classical classifiers, fitted on the same training rows: 'all' (the default "
        f"when the flag has no value) or a comma-separated list of {', '.join(_baseline_names())}",
    )
    compare.add_argument(
        "--loss-matrix",
        type=Path,
        help="CSV loss matrix (header: predicted classes; first column: true classes); adds each estimate's mean "
        "loss of its Bayes decisions",
    )
    compare.add_argument(
        "--report", type=Path, metavar="OUT.html", help="also write the HTML report of this comparison (atomically)"
    )
    compare.set_defaults(command=_compare, name="compare")


def _add_report_command(commands) -> None:
    report = commands.add_parser(
        "report",
        help="one self-contained HTML page (opens offline) for saved results: convergence, posterior vs point "
        "estimates, held-out scores, calibration, decision boundaries, checks, decisions",
    )
    report.add_argument("--run", required=True, type=Path, action="append", help="result file (repeat for several)")
    report.add_argument(
        "--data",
        help="held-out rows to score: built-in dataset name or CSV file (default: the validation rows when the run "
        "was fitted on a split of a built-in dataset; else LOO only)",
    )
    report.add_argument("--target", help="class column of a CSV file given as --data")
    _csv_arguments(report)
    report.add_argument(
        "--loss-matrix",
        type=Path,
        help="CSV loss matrix (header: predicted classes; first column: true classes): adds the Decisions section",
    )
    report.add_argument(
        "--features", type=_feature_list, metavar="A,B", help="the two features of the decision-boundary plot"
    )
    report.add_argument(
        "--baselines",
        nargs="?",
        const="all",
        metavar="NAMES",
        help=f"also score the seeds' classical classifiers: 'all' or a comma-separated list of "
        f"{', '.join(_baseline_names())}",
    )
    report.add_argument("--seed", type=int, default=0, help="seed of the replicated data in the checks (default 0)")
    report.add_argument("--out", required=True, type=Path, help="HTML file to write (atomically)")
    report.set_defaults(command=_report, name="report")


def _add_study_command(commands) -> None:
    study = commands.add_parser(
        "study",
        help="run a comparison study (models x data x training sizes x repeats) on Dask, resumably; "
        "--write-example writes the built-in example spec",
    )
    study.add_argument("spec", nargs="?", type=Path, help="the study spec (TOML)")
    study.add_argument("--out", type=Path, help="results folder: one record per cell, results.parquet at the end")
    study.add_argument("--write-example", type=Path, metavar="SPEC.toml", help="write the example spec and exit")
    study.add_argument("--workers", type=int, help="process workers of the local Dask cluster (default: the cores)")
    study.add_argument("--scheduler", metavar="tcp://HOST:8786", help="run on an existing Dask scheduler instead")
    study.add_argument("--serial", action="store_true", help="run the cells one by one in this process (no Dask)")
    study.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    study.set_defaults(command=_study, name="study")


def _add_study_report_command(commands) -> None:
    study_report = commands.add_parser("study-report", help="the HTML page of a study's results folder")
    study_report.add_argument("results", type=Path, help="the folder given to 'bayesclass study --out'")
    study_report.add_argument("--out", required=True, type=Path, help="HTML file to write (atomically)")
    study_report.set_defaults(command=_study_report, name="study-report")


def _add_loo_command(commands) -> None:
    loo = commands.add_parser(
        "loo", help="PSIS-LOO of saved NUTS/exact results; with several runs on the same data, their comparison"
    )
    loo.add_argument("--run", required=True, type=Path, action="append", help="result file (repeat to compare)")
    loo.set_defaults(command=_loo, name="loo")


def _add_predict_command(commands) -> None:
    predict = commands.add_parser(
        "predict",
        help="class probabilities for new rows, written as CSV; a CSV file is streamed (read, predicted and written "
        "in chunks, any size)",
    )
    predict.add_argument("--run", required=True, type=Path, help="result file written by 'fit'")
    predict.add_argument("--data", required=True, help="built-in dataset name or CSV file")
    predict.add_argument("--target", help="label column of a CSV file (optional for prediction)")
    _csv_arguments(predict)
    predict.add_argument("--interval-prob", type=float, default=0.89, help="ETI probability (default 0.89)")
    predict.add_argument("--out", required=True, type=Path, help="CSV file to write (atomically)")
    predict.add_argument(
        "--draws-out",
        type=Path,
        help="also write the per-draw probabilities as netCDF (.nc), chunk by chunk: variable class_proba_draws "
        "(chain, draw, obs, class); rows x draws x classes x 8 bytes",
    )
    predict.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        help="rows read from a CSV file at a time (default 10000); memory is bounded by one chunk",
    )
    predict.add_argument("--no-progress", action="store_true", help="hide the progress bar over rows")
    predict.add_argument(
        "--loss-matrix",
        type=Path,
        help="CSV loss matrix (header: predicted classes; first column: true classes): adds 'decision', the class "
        "of least expected loss, and expected_loss_<class> (with _low/_high, the posterior interval, for draws)",
    )
    predict.set_defaults(command=_predict, name="predict")


def _add_check_command(commands) -> None:
    check = commands.add_parser(
        "check",
        help="posterior predictive check of a saved generative fit (naive_bayes, gcc): "
        "replicated vs real features per class",
    )
    check.add_argument("--run", required=True, type=Path, help="result file written by 'fit'")
    check.add_argument("--replicates", type=int, default=200, help="replicated data sets (default 200)")
    check.add_argument("--seed", type=int, default=0, help="seed of the replicates (default 0)")
    check.set_defaults(command=_check, name="check")


def _add_diagnose_command(commands) -> None:
    diagnose = commands.add_parser("diagnose", help="convergence verdict of a saved NUTS result")
    diagnose.add_argument("--run", required=True, type=Path)
    diagnose.set_defaults(command=_diagnose, name="diagnose")


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
    parser.add_argument(
        "--rows",
        type=int,
        help="rows of a generated data set (seed001_gaussians, seed000_separable, seed004_gp), e.g. --rows 50",
    )
    add_hyperparameter_flags(parser, REGISTRY)
    sampler = parser.add_argument_group("NUTS")
    sampler.add_argument("--draws", type=int, default=None, help="draws kept per chain (default: the family's)")
    sampler.add_argument(
        "--tune", type=int, default=None, help="warm-up (Gibbs: burn-in) steps per chain (default: the family's)"
    )
    sampler.add_argument("--chains", type=int, default=2)
    sampler.add_argument("--target-accept", type=float, default=0.8)
    sampler.add_argument(
        "--backend",
        "--sampler",
        dest="backend",
        choices=typing.get_args(Backend),
        default="auto",
        help="NUTS implementation (default auto: the family's fastest, blackjax on JAX for logistic, naive_bayes "
        "and gcc, nutpie for gp); recorded in the result",
    )
    sampler.add_argument("--no-progress", action="store_true", help="hide the sampling progress bar")
    sampler.add_argument(
        "--keep-partial",
        action="store_true",
        help="on Ctrl-C during sampling, save the draws made so far, marked partial (exit code 130 all the same)",
    )
    parser.add_argument("--seed", type=int, default=None, help="random seed (recorded in the result)")


def _baseline_names() -> tuple[str, ...]:
    from bayesclass.models.baselines import BASELINES

    return tuple(BASELINES)


def _baselines(value: str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if value == "all":
        return _baseline_names()
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = [name for name in names if name not in _baseline_names()]
    if unknown or not names:
        raise UsageError(
            f"--baselines {value!r}: unknown baseline(s) {unknown}; use 'all' or names among "
            f"{', '.join(_baseline_names())}"
        )
    return names


def _loss_matrix(path: Path | None):
    if path is None:
        return None
    from bayesclass.inference.prediction.decisions import LossMatrix

    try:
        return LossMatrix.from_csv(path)
    except ValueError as error:
        raise UsageError(f"--loss-matrix: {error}") from None


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
        sampler = SamplerSettings(
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            target_accept=args.target_accept,
            backend=args.backend,
            progressbar=not args.no_progress,
            keep_partial=args.keep_partial,
        )
        from bayesclass.inference.engines.fit import resolve_method
        from bayesclass.inference.engines.methods import methods_of

        args.method = resolve_method(model, args.method, sampler)  # "auto": the family's sampler
        accepted = methods_of(model)
        if args.method not in accepted:
            raise ValueError(
                f"--method {args.method} is not available for --model {args.model}; choose one of "
                f"{', '.join(accepted)}{model.unavailable_hint(args.method)}"
            )
        kinds = _feature_kinds(args.feature_kind)
        if kinds and not _is_csv(args.data):
            raise ValueError(f"--feature-kind applies to CSV files; {args.data!r} is a built-in dataset")
        if args.rows is not None:
            from bayesclass.data import available

            generated = [info.name for info in available() if info.n_obs == "generated"]
            if args.data not in generated:
                raise ValueError(f"--rows applies to the generated data sets {', '.join(generated)}, not {args.data!r}")
        if _is_csv(args.data):
            data = load(args.data, target=args.target, feature_kinds=kinds, csv_format=_csv_format(args))
        else:
            data = load(args.data, **({} if args.rows is None else {"n": args.rows}))
        if args.features is not None:
            data = data.select_features(args.features)
        model.check_training_data(data)
        if args.method in SAMPLERS and SAMPLERS[args.method].uses_backend:
            from bayesclass.inference.engines.nuts import nuts_backend

            nuts_backend(model, sampler)  # a backend the family cannot run is a usage error, before any work
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


def _check_output(path: Path, suffix: str, *, flag: str = "--out") -> None:
    if path.suffix != suffix:
        raise UsageError(f"{flag} {str(path)!r} must end in {suffix}")
    if not path.parent.resolve().is_dir():
        raise UsageError(f"{flag} directory {str(path.parent)!r} does not exist; create it first")


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
    from bayesclass.reports.text import format_datasets

    print(format_datasets(available()))


def _fit(args: argparse.Namespace) -> None:
    from bayesclass.inference import diagnose

    _check_output(args.out, ".nc")
    model, sampler, data = _setup(args)
    result = _run_fit(model, data, method=args.method, sampler=sampler, standardize=_standardize(args), seed=args.seed)
    _save(result, args.out)
    print(f"fitted {model.name} to {data.name} ({data.n_obs} rows) by {args.method}; saved {args.out}")
    if "posterior" in result:
        print(diagnose(result))
    info = result_info(result)
    for kind, status in info.point_estimate_status.items():
        print(f"{kind}: {status}")
    if info.partial:
        raise PartialResult(f"{info.partial_reason}; saved {args.out}")


def _compare(args: argparse.Namespace) -> None:
    from bayesclass._report import format_comparison
    from bayesclass.data import train_validation_test_split

    if args.out is not None:
        _check_output(args.out, ".nc")
    if args.report is not None:
        _check_output(args.report, ".html", flag="--report")
    baselines = _baselines(args.baselines)
    loss = _loss_matrix(args.loss_matrix)
    model, sampler, data = _setup(args)
    if loss is not None:
        try:
            loss.aligned(data.class_names)
        except ValueError as error:
            raise UsageError(f"--loss-matrix: {error}") from None
    seed = args.seed if args.seed is not None else 0
    try:
        train, validation, test = train_validation_test_split(data, random_seed=seed)
    except ValueError as error:
        raise UsageError(error) from None
    print(f"{data.name}: {train.n_obs} training, {validation.n_obs} validation, {test.n_obs} test rows (seed {seed})")
    result = _run_fit(model, train, method=args.method, sampler=sampler, standardize=_standardize(args), seed=seed)
    heldout = {"validation": validation, "test": test}
    print(format_comparison(result, heldout, baselines=baselines, loss=loss))
    if args.report is not None:
        from bayesclass._report import report

        page = report(result, heldout, loss=loss, baselines=baselines, random_seed=seed)
        _write_page(page, args.report)
    if args.out is not None:
        _save(result, args.out)
        print(f"saved {args.out}")
    info = result_info(result)
    if info.partial:
        raise PartialResult(info.partial_reason)


def _feature_list(value: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if len(names) != 2:
        raise argparse.ArgumentTypeError(f"give two feature names separated by a comma, got {value!r}")
    return names


def _report(args: argparse.Namespace) -> None:
    from bayesclass._report import report
    from bayesclass.data import load
    from bayesclass.inference import load as load_result

    _check_output(args.out, ".html")
    baselines = _baselines(args.baselines)
    loss = _loss_matrix(args.loss_matrix)
    try:
        results = {str(path): load_result(path) for path in args.run}
        heldout = None
        if args.data is not None:
            if _is_csv(args.data) and args.target is None:
                raise ValueError(f"--data {args.data} is a CSV file: name its class column with --target COLUMN")
            if _is_csv(args.data):
                heldout = load(args.data, target=args.target, csv_format=_csv_format(args))
            else:
                heldout = load(args.data)
        if loss is not None:
            for result in results.values():
                loss.aligned(result_info(result).class_names)
        page = report(results, heldout, loss=loss, features=args.features, baselines=baselines, random_seed=args.seed)
    except (ValueError, TypeError) as error:
        raise UsageError(error) from None
    _write_page(page, args.out)


def _write_page(page: str, path: Path) -> None:
    from bayesclass.reports.html import write_report

    try:
        write_report(path, page)
    except OSError as error:
        raise FitFailed(f"the report could not be written to {path}: {error}") from None
    print(f"wrote {path} ({len(page.encode('utf-8')) / 1e6:.2f} MB)")


def _study(args: argparse.Namespace) -> None:
    import bayesclass.study as studies

    if args.write_example is not None:
        try:
            studies.write_example(args.write_example)
        except ValueError as error:
            raise UsageError(error) from None
        print(f"wrote the example study spec {args.write_example}; run: bayesclass study {args.write_example} --out "
              "results/")  # fmt: skip
        return
    if args.spec is None or args.out is None:
        raise UsageError("give a spec and --out (bayesclass study SPEC.toml --out results/), or --write-example")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers {args.workers}: give 1 or more worker processes (or --serial)")
    if args.scheduler is not None and (args.serial or args.workers is not None):
        raise UsageError("--scheduler runs on that cluster's workers: drop --serial and --workers")
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"--out {str(args.out)!r} is a file; give a folder")
    try:
        spec = studies.read_spec(args.spec)
    except ValueError as error:
        raise UsageError(error) from None
    table = studies.run(
        spec,
        args.out,
        workers=args.workers,
        scheduler=args.scheduler,
        serial=args.serial,
        progress=not args.no_progress,
    )
    print(table.attrs["summary"])


def _study_report(args: argparse.Namespace) -> None:
    import bayesclass.study as studies

    _check_output(args.out, ".html")
    try:
        page = studies.report(args.results)
    except ValueError as error:
        raise UsageError(error) from None
    _write_page(page, args.out)


def _loo(args: argparse.Namespace) -> None:
    from bayesclass.inference import load as load_result
    from bayesclass.inference.criticism.loo import compare, loo
    from bayesclass.reports.text import format_loo

    results = {}
    for path in args.run:
        try:
            results[str(path)] = load_result(path)
        except (OSError, ValueError) as error:
            raise UsageError(error) from None
    try:
        summaries = {name: loo(result) for name, result in results.items()}
        table = compare(results) if len(results) > 1 else None
    except (TypeError, ValueError) as error:
        raise UsageError(error) from None
    print(format_loo(results, summaries, table))


def _predict(args: argparse.Namespace) -> None:
    """Stream the new rows through the chunked engine.

    The engine is :func:`~bayesclass.inference.prediction.writers.write_predictions`: read a chunk, predict its
    tiles, append their rows to a temporary CSV (and the per-draw probabilities to a temporary netCDF file),
    rename at the end.
    An error or an interrupt (Ctrl-C, SIGTERM) removes the temporary files: nothing is written, an earlier file is
    left as it was.
    """
    from bayesclass.data.csvfile import CSV_CHUNK_ROWS
    from bayesclass.inference import load as load_result
    from bayesclass.inference.prediction.predict import Predictor
    from bayesclass.inference.prediction.writers import PredictionRows, write_predictions
    from bayesclass.models import ConvergenceError

    _check_output(args.out, ".csv")
    if args.draws_out is not None:
        _check_output(args.draws_out, ".nc", flag="--draws-out")
        if args.draws_out.resolve() == args.out.resolve():
            raise UsageError("--draws-out and --out name the same file; give the draws their own .nc file")
    chunk_rows = CSV_CHUNK_ROWS if args.chunk_rows is None else args.chunk_rows
    if chunk_rows < 1:
        raise UsageError(f"--chunk-rows must be a positive number of rows, got {chunk_rows}; e.g. --chunk-rows 20000")
    try:
        result = load_result(args.run)
        if args.draws_out is not None and "posterior" not in result:
            raise ValueError(
                f"--draws-out needs posterior draws; {args.run} holds a {result_info(result).method} point estimate "
                "(fit with --method nuts or exact)"
            )
        loss = _loss_matrix(args.loss_matrix)
        predictor = Predictor.of(
            result, interval_prob=args.interval_prob, return_draws=args.draws_out is not None, loss=loss
        )
        csv_format = _csv_format(args) if _is_csv(args.data) else None
        rows = PredictionRows.open(args.data, result, chunk_rows=chunk_rows, target=args.target, csv_format=csv_format)
    except (ValueError, TypeError, KeyError, ConvergenceError) as error:
        raise UsageError(error) from None
    try:
        summary = write_predictions(
            predictor,
            rows,
            args.out,
            draws_out=args.draws_out,
            result=result,
            run=args.run,
            progress=not args.no_progress,
        )
    except (ValueError, TypeError, KeyError, ConvergenceError) as error:
        raise UsageError(error) from None
    except OSError as error:
        raise UsageError(f"could not write {args.out}: {error}") from None
    extra = f" and the per-draw probabilities to {args.draws_out}" if args.draws_out is not None else ""
    point = "posterior mean over draws" if predictor.has_draws else f"{result_info(result).method} plug-in"
    print(f"wrote {summary.written} predictions to {args.out}{extra} ({point})")
    if summary.undefined:
        print(
            f"warning: {summary.undefined} row(s) have probability 0 under every class under some estimate (NaN "
            "probabilities; empty 'predicted' where that is the reported estimate)",
            file=sys.stderr,
        )


def _check(args: argparse.Namespace) -> None:
    from bayesclass.inference import load as load_result
    from bayesclass.inference import posterior_predictive_check
    from bayesclass.inference.evaluation.report_evaluation import predictive_check_record
    from bayesclass.reports.text import format_predictive_check

    try:
        check = posterior_predictive_check(load_result(args.run), n_replicates=args.replicates, random_seed=args.seed)
    except (ValueError, KeyError) as error:
        raise UsageError(error) from None
    print(format_predictive_check(predictive_check_record(check)))


def _diagnose(args: argparse.Namespace) -> None:
    from bayesclass.inference import diagnose
    from bayesclass.inference import load as load_result

    try:
        report = diagnose(load_result(args.run))
    except ValueError as error:
        raise UsageError(error) from None
    print(report)
    print(report.table.to_string())


def result_info(result):
    """The typed attrs of ``result`` (:func:`bayesclass.inference.result.result_info`), imported on first use."""
    from bayesclass.inference.result import result_info as typed_attrs

    return typed_attrs(result)


if __name__ == "__main__":
    sys.exit(main())
