"""The ``bayesclass`` command line.

Subcommands: ``datasets``, ``fit``, ``compare``, ``report``, ``study``, ``study-report``, ``loo``, ``stack``,
``predict``, ``check``, ``diagnose``.

Options of every subcommand, before or after its name: ``-q``/``--quiet`` (warnings and errors only: no notes,
no progress bars) and ``-v``/``--verbose`` (also debug lines, and where each warning was raised). Notes and
warnings, Python's warnings from the libraries included, are one line each on stderr,
``bayesclass: warning: <message>`` (:mod:`bayesclass._logging`); results go to stdout.

Exit codes:

- 0 success;
- 1 a fit that failed (the reason on stderr);
- 2 invalid arguments or input (one line on stderr);
- 3 with ``--strict`` (fit, compare, diagnose, report): the convergence verdict failed; the outputs were written
  all the same, and stderr says which checks failed;
- 130 interrupted (Ctrl-C or SIGTERM; the ``bayesclass`` program only: :func:`main` called in-process passes
  the signal on to its caller's handlers): nothing written, or the partial draws kept with ``--keep-partial``; never
  a half-written or temporary file. The message says which files (if any) were completed before the interrupt,
  and, with ``--keep-partial``, why nothing could be kept (no draws yet: still compiling or tuning).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import typing
from collections.abc import Sequence
from pathlib import Path

from bayesclass._flags import (
    CheckedInteger,
    FamilyHelpParser,
    OneLineErrorParser,
    add_hyperparameter_flags,
    hyperparameters_from_flags,
)
from bayesclass.data.dataset import FEATURE_KINDS
from bayesclass.data.origin import MissingPolicy
from bayesclass.inference.engines.fit import DEFAULT_STANDARDIZE
from bayesclass.inference.engines.methods import SAMPLERS, method_names
from bayesclass.inference.engines.sampling import Backend
from bayesclass.models import REGISTRY
from bayesclass.models.base import POINT_ESTIMATE_KINDS

__all__ = ["main", "run"]

# Heavy imports (PyMC, ArviZ) happen inside the commands, so `--help` and
# argument errors answer at once.


class UsageError(Exception):
    """Invalid arguments or input: exit code 2."""


class FitFailed(Exception):
    """The fit ran and failed: exit code 1."""


class PartialResult(Exception):
    """An interrupted NUTS run whose draws were kept (--keep-partial) and saved: exit code 130."""


class VerdictFailed(Exception):
    """``--strict`` and a failed convergence verdict, after the outputs were written: exit code 3."""


#: the subcommands that take ``--strict``
STRICT_COMMANDS = ("fit", "compare", "report", "diagnose")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``bayesclass`` command line in this process and return its exit code.

    For callers in Python (tests, notebooks): SIGINT and SIGTERM stop the command and, after its cleanup, reach
    the caller's own handlers, restored when the command ends (:mod:`bayesclass._interrupts`). An interrupt never
    leaves a half-written or temporary file, nor a chain process running, and stderr says which files, if any,
    were completed before it; then Python's SIGINT handler raises ``KeyboardInterrupt`` here, and a SIGTERM at its
    default ends the process. Only the ``bayesclass`` program (:func:`bayesclass.__main__.console_main`) turns them
    into exit code 130. Notes and warnings (Python's included) are one line each on stderr while the command runs
    (``-q`` and ``-v`` set how many; :mod:`bayesclass._logging`), and every message names flags, not Python
    arguments (:mod:`bayesclass.data.arguments`; the caller's interface is restored after it).

    Parameters
    ----------
    argv : sequence of str or None, default None
        The arguments after the program name (None: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 success; 1 a fit that failed (the reason on stderr); 2 invalid arguments or input (one
        line on stderr); 3 with ``--strict``, a failed convergence verdict (the outputs written all the same);
        141 stdout closed by its reader (a pipe into ``head``), as a shell reports SIGPIPE.

    Raises
    ------
    KeyboardInterrupt
        Interrupted (SIGINT, or another signal whose handler raises it): nothing written, or the partial draws
        kept with ``--keep-partial``.
    """
    return run(argv, program=False)


def run(argv: Sequence[str] | None, *, program: bool) -> int:
    """Run the ``bayesclass`` command line: :func:`main`, or, with ``program``, as the ``bayesclass`` program.

    Parameters
    ----------
    argv : sequence of str or None
        The arguments after the program name (None: ``sys.argv[1:]``).
    program : bool
        True only for the process's own entry point (:func:`bayesclass.__main__.console_main`): an interrupt
        (Ctrl-C or SIGTERM) ends the command with exit code 130 and one line; False: as :func:`main`.

    Returns
    -------
    int
        The exit code (:func:`main`); with ``program``, 130 interrupted (nothing written, or the partial draws kept
        with ``--keep-partial``).

    Raises
    ------
    KeyboardInterrupt
        Without ``program``: interrupted (:func:`main`).
    """
    from bayesclass._interrupts import handling_interrupts, interrupt_pending, pass_on_interrupt
    from bayesclass.data.arguments import speaking

    name = "bayesclass"
    try:  # the parser too: an interrupt at any point ends with exit code 130, not a traceback
        with handling_interrupts(pass_on=False), speaking("cli"):  # messages name flags, until it ends
            parser = _parser()
            args = parser.parse_args(argv)
            name = f"bayesclass {args.name}"
            code = _run_command(parser, args)
        if not program:
            pass_on_interrupt()  # a signal the command dealt with and did not raise reaches the caller
        return code
    except KeyboardInterrupt as interrupt:  # Ctrl-C or SIGTERM (bayesclass._interrupts), also one a library lost
        print(f"{name}: interrupted; {_what_was_written(interrupt)}", file=sys.stderr)
        if not program:
            pass_on_interrupt()  # the caller's disposition: SIGTERM at its default ends the process here
            raise
        return 130
    except PartialResult as partial:
        print(f"{name}: interrupted: {partial}", file=sys.stderr)
        if not program:
            pass_on_interrupt()
            raise KeyboardInterrupt(str(partial)) from None
        return 130
    except BrokenPipeError:  # the reader of stdout has gone (`bayesclass datasets | head -1`): as SIGPIPE would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at the final flush
        return 141
    except Exception as error:  # a library that turned the interrupt into another error (it is recorded)
        if not interrupt_pending():
            raise
        print(f"{name}: interrupted; {_what_was_written(KeyboardInterrupt(str(error)))}", file=sys.stderr)
        if not program:
            pass_on_interrupt()
            raise KeyboardInterrupt(str(error)) from error
        return 130


def _run_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the parsed command; its errors as exit codes (interrupts are :func:`main`'s)."""
    from bayesclass._interrupts import raise_unhandled_interrupt
    from bayesclass._logging import configure

    if args.quiet and args.verbose:  # one before the subcommand, the other after it
        parser.error("argument -q/--quiet: not allowed with argument -v/--verbose")
    verbosity = -1 if args.quiet else 1 if args.verbose else 0
    if args.quiet and hasattr(args, "no_progress"):
        args.no_progress = True
    try:
        with configure(verbosity):
            _debug_arguments(args)
            args.command(args)
        raise_unhandled_interrupt()  # one that a library caught and lost ("Exception ignored in ...")
    except (UsageError, FitFailed, VerdictFailed) as error:
        raise_unhandled_interrupt()  # a lost interrupt can be what broke the command (a library's garbled result)
        prefix = {UsageError: "error", FitFailed: "fit failed", VerdictFailed: "--strict"}[type(error)]
        print(f"bayesclass {args.name}: {prefix}: {error}", file=sys.stderr)
        return {UsageError: 2, FitFailed: 1, VerdictFailed: 3}[type(error)]
    return 0


def _what_was_written(interrupt: KeyboardInterrupt) -> str:
    """What an interrupted command leaves on disk: the files it completed before the interrupt, or nothing.

    A file is either complete or absent (``atomic_write``); ``interrupt`` may say why nothing could be kept
    (``--keep-partial`` before the first draw).
    """
    from bayesclass._interrupts import NoDrawsYet, written_files

    written = written_files()
    reason = f"{interrupt}; " if isinstance(interrupt, NoDrawsYet) else ""
    if not written:
        return f"{reason}nothing was written"
    names, verb = ", ".join(str(path) for path in written), "was" if len(written) == 1 else "were"
    return f"{reason}{names} {verb} written completely before the interrupt, nothing else"


def _debug_arguments(args: argparse.Namespace) -> None:
    """With ``-v``: the parsed arguments, one debug line."""
    from bayesclass._logging import LOGGER

    shown = {name: value for name, value in vars(args).items() if name not in ("command", "name")}
    LOGGER.debug("%s with %s", args.name, ", ".join(f"{name}={value!r}" for name, value in shown.items()))


def _debug_timings(result) -> None:
    """With ``-v``: the timings and the sampler backend the result recorded, one debug line."""
    from bayesclass._logging import LOGGER

    info = result_info(result)
    timings = ", ".join(f"{name.replace('_', ' ')} {seconds:.2f} s" for name, seconds in info.timings.items())
    LOGGER.debug("%s: %s (backend %s)", info.method, timings or "no timings recorded", info.sampler_backend)


# -- argument parsing -----------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="bayesclass", description="Bayesian classifiers beside their MLE/MAP.")
    # fit/compare --help: the common flags and one family's (--model NAME in the arguments, else the default)
    commands = parser.add_subparsers(required=True, metavar="COMMAND", parser_class=FamilyHelpParser)
    _add_datasets_command(commands)
    _add_fit_command(commands)
    _add_compare_command(commands)
    _add_report_command(commands)
    _add_study_command(commands)
    _add_study_report_command(commands)
    _add_loo_command(commands)
    _add_stack_command(commands)
    _add_predict_command(commands)
    _add_check_command(commands)
    _add_diagnose_command(commands)
    _add_verbosity_arguments(parser, default=False)
    for name, command in commands.choices.items():
        _add_verbosity_arguments(command, default=argparse.SUPPRESS)  # after the subcommand too; the first wins
        if name in STRICT_COMMANDS:
            command.add_argument(
                "--strict",
                action="store_true",
                help="exit with code 3 when the convergence verdict fails (after writing the outputs)",
            )
    return parser


def _add_verbosity_arguments(parser: argparse.ArgumentParser, *, default) -> None:
    """``-q``/``-v``: on the main parser with a default; on a subcommand without one, so it cannot reset it."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-q", "--quiet", action="store_true", default=default, help="warnings and errors only: no notes, no progress"
    )
    group.add_argument(
        "-v", "--verbose", action="store_true", default=default, help="also debug lines and where warnings arise"
    )


def _add_datasets_command(commands) -> None:
    datasets = commands.add_parser("datasets", help="list the built-in datasets")
    datasets.set_defaults(command=_datasets, name="datasets")


def _add_fit_command(commands) -> None:
    fit = commands.add_parser(
        "fit",
        help="fit a model and save the result as netCDF",
        usage="%(prog)s --data DATA --out OUT [--model NAME] [--method METHOD] [options]",
    )
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
    return (
        f"auto (default: the family's sampler, {defaults}, or the cheaper method a family declares for data where "
        f"its sampler would take too long, recorded with the reason; nuts when --backend is named); {samplers}"
    )


def _add_compare_command(commands) -> None:
    compare = commands.add_parser(
        "compare",
        help="fit the posterior and every point estimate on a training split and print the comparison",
        usage="%(prog)s --data DATA [--model NAME|all|NAME,NAME,...] [--method METHOD] [--split T,V,T] [options]",
    )
    _model_arguments(compare)
    model = next(action for action in compare._actions if action.dest == "model")
    model.choices, model.type, model.metavar = None, _families_value, "NAME|all|NAME,NAME,..."
    model.help = (
        f"model family (default logistic), or several on the same split, ranked by PSIS-LOO and held-out scores: "
        f"'all' or a comma-separated list of {', '.join(REGISTRY)}"
    )
    compare.add_argument(
        "--method",
        choices=("auto", *SAMPLERS),
        default="auto",
        help=f"how to draw the posterior: {_sampler_help()}",
    )
    compare.add_argument(
        "--out",
        type=Path,
        help="also save the posterior result (.nc); with several families a folder (created if absent) for one "
        "result per family, FAMILY.nc",
    )
    compare.add_argument(
        "--split",
        default=None,
        metavar="TRAIN,VALIDATION,TEST",
        help="shares of the rows for training, validation and test: three positive fractions summing to 1, or "
        "percentages summing to 100 (default 0.6,0.2,0.2; e.g. 0.8,0.1,0.1 or 70,15,15); stratified by class, "
        "recorded in the result",
    )
    compare.add_argument(
        "--test-data",
        metavar="FILE",
        help="your own test table (CSV, TSV or parquet, with the --target column): the fit uses every row of --data "
        "(no split) and the held-out scores and ranking are on this table's rows; it is coded as --data (the same "
        "columns, levels and classes) and its blank cells follow --missing",
    )
    compare.add_argument(
        "--baselines",
        nargs="?",
        const="all",
        metavar="NAMES",
        help="also score the seeds' classical classifiers, fitted on the same training rows: 'all' (the default "
        f"when the flag has no value), 'none' or a comma-separated list of {', '.join(_baseline_names())}; with "
        "several families (--model all) every baseline is scored unless --baselines says otherwise",
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


def _families_value(value: str) -> str:
    """``compare --model``: one family, ``all`` or a comma-separated list (checked here; kept as given)."""
    from bayesclass.inference.evaluation.model_comparison import parse_families

    try:
        parse_families(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {value!r} (choose 'all', one of {', '.join(map(repr, REGISTRY))}, or several of them "
            "separated by commas)"
        ) from None
    return value


def _split_fractions(args: argparse.Namespace) -> tuple[float, float, float]:
    """``--split TRAIN,VALIDATION,TEST`` as fractions (default 0.6,0.2,0.2); with ``--test-data`` no split is made."""
    if args.split is not None and args.test_data is not None:
        raise UsageError(
            f"--split {args.split} and --test-data {args.test_data}: with your own test table nothing is split (the "
            "fit uses every row of --data); drop one of them"
        )
    return _fractions("0.6,0.2,0.2" if args.split is None else args.split)


def _fractions(value: str) -> tuple[float, float, float]:
    """Three positive numbers summing to 1, or to 100 (percent), as fractions."""
    parts = [part.strip() for part in value.split(",")]
    try:
        shares = [float(part) for part in parts]
    except ValueError:
        shares = []
    example = "e.g. --split 0.6,0.2,0.2 or --split 60,20,20"
    if len(shares) != 3 or not all(math.isfinite(share) for share in shares):
        raise UsageError(f"--split {value!r} must be three numbers TRAIN,VALIDATION,TEST; {example}")
    if min(shares) <= 0:
        raise UsageError(f"--split {value!r}: every share must be positive (each part needs rows); {example}")
    total = math.fsum(shares)
    for scale in (1.0, 100.0):
        if math.isclose(total, scale, rel_tol=0, abs_tol=1e-9 * scale):
            train, validation, test = (share / scale for share in shares)
            return train, validation, test
    raise UsageError(
        f"--split {value!r} sums to {total:g}; give fractions summing to 1 or percentages summing to 100, {example}"
    )


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
    _missing_argument(
        report,
        "a blank cell in a column the runs use (target or feature) of --data: refuse the table (default "
        "error) or drop the row (drop; the count is shown on the page)",
    )
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
    report.add_argument(
        "--seed",
        action=CheckedInteger,
        check=_seed,
        default=0,
        help="seed of the replicated data in the checks (default 0)",
    )
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
    study.add_argument("--example", metavar="NAME",
                       help="with --write-example: 'plugin' (posterior vs plug-in, default) or 'stack' (stacking vs "
                       "the best single family)")  # fmt: skip
    study.add_argument("--workers", type=int, help="process workers of the local Dask cluster (default: the cores)")
    study.add_argument("--scheduler", metavar="tcp://HOST:8786", help="run on an existing Dask scheduler instead")
    study.add_argument("--serial", action="store_true", help="run the cells one by one in this process (no Dask)")
    study.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    study.add_argument("--yes", action="store_true", help="run a grid of more than 10,000 cells (refused without)")
    study.set_defaults(command=_study, name="study")


def _add_study_report_command(commands) -> None:
    study_report = commands.add_parser("study-report", help="the HTML page of a study's results folder")
    study_report.add_argument("results", type=Path, help="the folder given to 'bayesclass study --out'")
    study_report.add_argument("--out", required=True, type=Path, help="HTML file to write (atomically)")
    study_report.set_defaults(command=_study_report, name="study-report")


def _add_loo_command(commands) -> None:
    loo = commands.add_parser(
        "loo",
        help="PSIS-LOO of saved NUTS/exact results; with several runs fitted on the same rows and labels (whatever "
        "their features, family or standardisation), their comparison; ArviZ's warnings are printed as notes",
    )
    loo.add_argument("--run", required=True, type=Path, action="append", help="result file (repeat to compare)")
    loo.set_defaults(command=_loo, name="loo")


def _add_stack_command(commands) -> None:
    stack = commands.add_parser(
        "stack",
        help="stack saved NUTS/exact results fitted on the same rows into one result (LOO stacking or pseudo-BMA+ "
        "weights, arviz_stats.compare), which predict, report and --loss-matrix take like any result",
    )
    stack.add_argument("runs", nargs="+", type=Path, metavar="RUN.nc", help="two or more result files")
    stack.add_argument(
        "--method",
        choices=("stacking", "pseudo_bma_plus"),
        default="stacking",
        help="LOO stacking (Yao, Vehtari, Simpson and Gelman 2018; default) or pseudo-BMA+ (Bayesian bootstrap)",
    )
    stack.add_argument("--out", required=True, type=Path, help="stack file to write (.nc; embeds its members)")
    stack.set_defaults(command=_stack, name="stack")


def _add_predict_command(commands) -> None:
    predict = commands.add_parser(
        "predict",
        help="class probabilities for new rows, written as CSV; a CSV file is streamed (read, predicted and written "
        "in chunks, any size)",
    )
    predict.add_argument("--run", required=True, type=Path, help="result file written by 'fit'")
    predict.add_argument("--data", required=True, help="built-in dataset name or a table file: .csv, .tsv or .parquet")
    predict.add_argument("--target", help="label column of the file (optional for prediction)")
    _missing_argument(
        predict,
        "a blank feature cell: refuse the file (default error), or write that row with empty probabilities "
        "(drop; the rows keep their order and number)",
    )
    predict.add_argument("--id-column", metavar="COLUMN", help="copy this column of the file to the output (first)")
    _csv_arguments(predict)
    predict.add_argument("--interval-prob", type=float, default=0.89, help="ETI probability (default 0.89)")
    predict.add_argument(
        "--draws",
        choices=("auto", "all"),
        default="auto",
        help="the posterior draws that predict: auto (default: every draw, but a latent GP uses about as many as "
        "the posterior's effective sample size, each draw costing an n x n factor) or all",
    )
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
    check.add_argument(
        "--replicates",
        action=CheckedInteger,
        check=_at_least(1),
        default=200,
        help="replicated data sets (default 200)",
    )
    check.add_argument(
        "--seed", action=CheckedInteger, check=_seed, default=0, help="seed of the replicates (default 0)"
    )
    check.set_defaults(command=_check, name="check")


def _add_diagnose_command(commands) -> None:
    diagnose = commands.add_parser(
        "diagnose",
        help="convergence verdict of a saved result's posterior draws, with its r_hat / ESS table",
        description="The convergence verdict of a saved result's draws, then ArviZ's table of r_hat, ESS and MCSE. A "
        "latent block (a latent GP's value at every training row) is one row of its worst values, how many of its "
        "elements fail and which is worst; the verdict is judged on every element all the same.",
    )
    diagnose.add_argument("--run", required=True, type=Path, help="the saved result (.nc) whose draws to diagnose")
    diagnose.add_argument(
        "--full", action="store_true", help="list every parameter element, a latent block's too (one row each)"
    )
    diagnose.set_defaults(command=_diagnose, name="diagnose")


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="logistic", choices=sorted(REGISTRY), help="model family (default logistic)")
    parser.add_argument(
        "--data",
        required=True,
        help="built-in dataset name (see 'bayesclass datasets') or a table file: .csv, .tsv or .parquet",
    )
    parser.add_argument(
        "--target",
        help="label column of a table file, or another class column of a built-in table (e.g. penguins: --target sex)",
    )
    _missing_argument(
        parser,
        "a blank cell (empty, NA, N/A, nan) in a used column (target or feature): refuse the table, counting "
        "the blanks per column (default error), or drop the row (drop; the count is recorded in the result)",
    )
    parser.add_argument(
        "--standardize",
        action=argparse.BooleanOptionalAction,
        default=bool(DEFAULT_STANDARDIZE),
        help="scale continuous columns to mean 0, sd 1 (default): results free of their units, priors on "
        "standardised inputs; --no-standardize: the data's units",
    )
    parser.add_argument(
        "--standardize-binary",
        action="store_true",
        help="scale the binary (0/1) columns too, as continuous inputs",
    )
    _csv_arguments(parser)
    parser.add_argument(
        "--feature-kind",
        action="append",
        metavar="COLUMN=KIND",
        help=f"declare a column's kind ({', '.join(FEATURE_KINDS)}) instead of the inferred one; repeatable, e.g. "
        "--feature-kind smoker=continuous; numbers declared categorical are coded by their distinct values "
        "(--feature-kind year=categorical: levels 2007, 2008, ...)",
    )
    parser.add_argument(
        "--max-levels",
        type=int,
        default=50,
        help="the most levels a categorical column may have (default 50; more is refused, naming the column)",
    )
    parser.add_argument("--features", help="comma-separated feature names to keep, e.g. a 2-input slice for --model gp")
    parser.add_argument(
        "--rows",
        type=int,
        help="rows of a generated data set (seed001_gaussians, seed000_separable, seed004_gp), e.g. --rows 50",
    )
    add_hyperparameter_flags(parser, REGISTRY)
    sampler = parser.add_argument_group("sampling (NUTS, Gibbs, exact draws)")
    sampler.add_argument("--draws", type=int, default=None, help="draws kept per chain (default: the family's)")
    sampler.add_argument(
        "--tune", type=int, default=None, help="warm-up (Gibbs: burn-in) steps per chain (default: the family's)"
    )
    sampler.add_argument(
        "--chains", type=int, default=4, help="chains (default 4: the r_hat <= 1.01 rule needs at least 4)"
    )
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
    parser.add_argument(
        "--seed", action=CheckedInteger, check=_seed, default=None, help="random seed (recorded in the result)"
    )


def _seed(value: object, *, argument: str) -> int:
    """A seed flag's check (:class:`~bayesclass._flags.CheckedInteger`): the library's ``require_seed``."""
    from bayesclass.data._validation import require_seed

    return require_seed(value, argument=argument)


def _at_least(minimum: int):
    """The check of an integer flag >= ``minimum`` (:class:`~bayesclass.data.constraints.Integer`)."""
    from bayesclass.data.constraints import Integer

    return Integer(minimum=minimum).check


def _baseline_names() -> tuple[str, ...]:
    from bayesclass.models.baselines import BASELINES

    return tuple(BASELINES)


def _baselines(value: str | None) -> tuple[str, ...]:
    if value is None or value == "none":
        return ()
    if value == "all":
        return _baseline_names()
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = [name for name in names if name not in _baseline_names()]
    if unknown or not names:
        raise UsageError(
            f"--baselines {value!r}: unknown baseline(s) {unknown}; use 'all', 'none' or names among "
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
    from bayesclass.data._validation import require_seed
    from bayesclass.models import get_model

    try:
        model = get_model(args.model, **_hyperparameters(args))
        sampler = _sampler_settings(args)
        from bayesclass.inference.engines.fit import resolve_method
        from bayesclass.inference.engines.methods import methods_of

        requested = args.method
        args.method = resolve_method(model, requested, sampler)  # "auto": the family's sampler
        accepted = methods_of(model)
        if args.method not in accepted:
            raise ValueError(
                f"--method {args.method} is not available for --model {args.model}; choose one of "
                f"{', '.join(accepted)}{model.unavailable_hint(args.method)}"
            )
        data = _load_data(args)
        model.check_training_data(data)
        args.method = resolve_method(model, requested, sampler, data=data)  # "auto": the family's choice for data
        try:
            _ignored_sampler_flags(args.method, sampler)
        except ValueError as error:  # under "auto": say why the family chose this method for these data
            note = model.method_note(args.method, data) if requested == "auto" else ""
            raise ValueError(f"{error} ({note})" if note else str(error)) from None
        if args.method in SAMPLERS and SAMPLERS[args.method].uses_backend:
            from bayesclass.inference.engines.nuts import nuts_backend

            nuts_backend(model, sampler)  # a backend the family cannot run is a usage error, before any work
        if args.seed is not None:
            require_seed(args.seed, argument="--seed")
    except (ValueError, TypeError) as error:
        raise UsageError(error) from None
    return model, sampler, data


def _sampler_settings(args: argparse.Namespace):
    from bayesclass.inference import SamplerSettings

    return SamplerSettings(
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        target_accept=args.target_accept,
        backend=args.backend,
        progressbar=not args.no_progress,
        keep_partial=args.keep_partial,
    )


def _load_data(args: argparse.Namespace):
    """The table ``--data`` names, loaded with the data flags (raises ValueError on bad input)."""
    from bayesclass.data import load

    kinds = _feature_kinds(args.feature_kind)
    if (kinds or args.target) and not _is_table_file(args.data):
        from bayesclass.data.loaders import builtin_tables

        flag = "--feature-kind" if kinds else "--target"
        if args.data not in builtin_tables():
            raise ValueError(
                f"{flag} applies to CSV/TSV/parquet files and the built-in tables ({', '.join(builtin_tables())}); "
                f"{args.data!r} is a built-in dataset with a fixed target and coding: drop {flag}"
            )
    if args.rows is not None:
        from bayesclass.data import available

        generated = [info.name for info in available() if info.n_obs == "generated"]
        if args.data not in generated:
            raise ValueError(f"--rows applies to the generated data sets {', '.join(generated)}, not {args.data!r}")
    options: dict[str, object] = {"missing": args.missing, "max_levels": args.max_levels}
    if kinds:
        options["feature_kinds"] = kinds
    if args.features is not None:
        options["features"] = args.features
    if args.target is not None:
        options["target"] = args.target
    if _is_table_file(args.data):
        data = load(args.data, csv_format=_csv_format(args), **options)
    else:
        _no_csv_format(args)
        data = load(args.data, **options, **({} if args.rows is None else {"n": args.rows}))
    return data


def _ignored_sampler_flags(method: str, sampler) -> None:
    """A sampling flag the method ignores (per the method registry's ``settings``) is a usage error."""
    import dataclasses

    from bayesclass.inference import SamplerSettings

    default = SamplerSettings()
    given = [
        item.name
        for item in dataclasses.fields(SamplerSettings)
        if item.name != "progressbar"  # display only: harmless with any method
        and getattr(sampler, item.name) != getattr(default, item.name)
    ]
    reads = SAMPLERS[method].settings if method in SAMPLERS else ()
    ignored = [name for name in given if reads is not None and name not in reads]
    if ignored:
        from bayesclass.data.arguments import flag_of

        flags = [flag_of(name) for name in ignored]
        users = [name for name, used in SAMPLERS.items() if used.settings is None or set(ignored) <= set(used.settings)]
        raise ValueError(
            f"{', '.join(flags)} does nothing with --method {method} (which ignores it); it applies to --method "
            f"{' or '.join(users)}: drop it, or choose such a method"
        )


def _missing_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--missing {error,drop}`` (default error): what a blank cell in a used column does, as ``help`` says."""
    parser.add_argument("--missing", choices=typing.get_args(MissingPolicy), default="error", help=help)


def _csv_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("CSV files")
    group.add_argument("--delimiter", help="field separator of a CSV file (default: detected among , ; TAB |)")
    group.add_argument("--decimal", choices=(".", ","), default=".", help="decimal mark of its numbers (default .)")
    group.add_argument("--encoding", default="utf-8", help="its text encoding (default utf-8, e.g. latin-1)")


def _csv_format(args: argparse.Namespace):
    """The CSV format flags; None for a parquet file (a CSV flag given with one is a usage error)."""
    from bayesclass.data import CsvFormat

    delimiter = "\t" if args.delimiter in ("\\t", "tab", "TAB") else args.delimiter
    given = CsvFormat(delimiter=delimiter, decimal=args.decimal, encoding=args.encoding)
    if str(args.data).lower().endswith(".parquet"):
        if given != CsvFormat():
            raise ValueError(f"--delimiter, --decimal and --encoding apply to CSV and TSV files, not to {args.data}")
        return None
    return given


def _no_csv_format(args: argparse.Namespace) -> None:
    """The CSV format flags do nothing with a built-in data set (whose format is fixed): a usage error."""
    from bayesclass.data import CsvFormat

    given = CsvFormat(delimiter=args.delimiter, decimal=args.decimal, encoding=args.encoding)
    if given != CsvFormat():
        raise ValueError(
            f"--delimiter, --decimal and --encoding apply to CSV and TSV files, not to the built-in data set "
            f"{args.data!r}, whose format is fixed; drop them"
        )


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


def _standardize(args: argparse.Namespace) -> bool | typing.Literal["all"]:
    if args.standardize_binary and not args.standardize:
        raise ValueError("--standardize-binary scales the binary columns besides the continuous ones: drop it or "
                         "--no-standardize")  # fmt: skip
    return "all" if args.standardize_binary else bool(args.standardize)


def _is_table_file(name: str) -> bool:
    """Whether ``--data`` names a table file (.csv, .tsv or .parquet, any case) rather than a built-in data set.

    A name that is neither (a file of another suffix, a misspelt name) is a ValueError saying which it is.
    """
    from bayesclass.data.loaders import require_known_data, table_suffix

    if table_suffix(name) is None:
        require_known_data(name)  # neither a table file nor a built-in name: say which it is
        return False
    return True


def _check_output(path: Path, suffix: str, *, flag: str = "--out") -> None:
    if path.suffix != suffix:
        raise UsageError(f"{flag} {str(path)!r} must end in {suffix}")
    if path.is_dir():
        raise UsageError(
            f"{flag} {str(path)!r} is a directory; give the name of a file to write (e.g. {flag} run{suffix})"
        )
    if path.parent.exists() and not path.parent.resolve().is_dir():
        raise UsageError(f"{flag} {str(path)!r}: {str(path.parent)!r} is a file, not a directory")
    if not path.parent.resolve().is_dir():
        raise UsageError(f"{flag} directory {str(path.parent)!r} does not exist; create it first")


def _check_writable(path: Path, *, flag: str) -> None:
    """A file can be created beside ``path`` (a read-only folder is refused before the work, not after it)."""
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".check"):
            pass
    except OSError as error:
        raise UsageError(f"{flag} {str(path)!r}: cannot write in {str(path.parent)!r} ({error.strerror})") from None


def _run_fit(model, data, *, method, sampler, standardize, seed):
    from bayesclass.inference import fit
    from bayesclass.inference._memory import MemoryCheckError
    from bayesclass.models import ConvergenceError

    try:
        return fit(model, data, method=method, sampler=sampler, standardize=standardize, random_seed=seed)
    except MemoryCheckError as error:  # settings too large for the memory, found before any work: a usage error
        raise UsageError(error) from None
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
    dropped = f"; {data.missing.dropped_rows} with blank cells dropped" if data.missing.dropped_rows else ""
    print(f"fitted {model.name} to {data.name} ({data.n_obs} rows{dropped}) by {args.method}; saved {args.out}")
    _debug_timings(result)
    verdict = diagnose(result) if "posterior" in result else None
    if verdict is not None:
        print(verdict)
    info = result_info(result)
    if info.method_note:
        print(info.method_note)
    for kind, status in info.point_estimate_status.items():
        print(f"{kind}: {status}")
    if info.partial:
        raise PartialResult(f"{info.partial_reason}; saved {args.out}")
    _strict(args, {str(args.out): verdict})


def _compare(args: argparse.Namespace) -> None:
    from bayesclass._report import format_comparison
    from bayesclass.inference.evaluation.model_comparison import parse_families

    families = parse_families(args.model)
    if args.model == "all" or len(families) > 1 or "," in args.model:
        _compare_families(args, families)
        return
    if args.out is not None:
        _check_output(args.out, ".nc")
    if args.report is not None:
        _check_output(args.report, ".html", flag="--report")
    baselines = _baselines(args.baselines)
    fractions = _split_fractions(args)
    loss = _loss_matrix(args.loss_matrix)
    model, sampler, data = _setup(args)
    if loss is not None:
        try:
            loss.aligned(data.class_names)
        except ValueError as error:
            raise UsageError(f"--loss-matrix: {error}") from None
    seed = args.seed if args.seed is not None else 0
    train, heldout = _heldout_parts(args, data, fractions, seed)
    result = _run_fit(model, train, method=args.method, sampler=sampler, standardize=_standardize(args), seed=seed)
    _debug_timings(result)
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
    if args.strict and "posterior" in result:
        from bayesclass.inference import diagnose

        _strict(args, {"the posterior": diagnose(result)})


def _compare_families(args: argparse.Namespace, families: tuple[str, ...]) -> None:
    """``compare --model all`` (or a list): every family on the same split, ranked by PSIS-LOO and held-out scores."""
    import time

    from bayesclass.inference.evaluation.model_comparison import compare_models
    from bayesclass.reports.model_comparison import format_model_comparison

    if args.report is not None:
        _check_output(args.report, ".html", flag="--report")
        _check_writable(args.report, flag="--report")  # before the fits, which take minutes
    if args.loss_matrix is not None:
        raise UsageError(
            f"--loss-matrix with several families (--model {args.model}) is not ranked yet; give it with one family"
        )
    if args.out is not None and (args.out.suffix == ".nc" or (args.out.exists() and not args.out.is_dir())):
        raise UsageError(f"--out {str(args.out)!r}: with several families --out is a folder for one FAMILY.nc each")
    if args.out is not None and not args.out.parent.resolve().is_dir():
        raise UsageError(f"--out directory {str(args.out.parent)!r} does not exist; create it first")
    baselines = _baselines("all" if args.baselines is None else args.baselines)  # a comparison's default: all
    fractions = _split_fractions(args)
    seed = args.seed if args.seed is not None else 0
    try:
        hyperparameters = _family_hyperparameters(args, families)
        sampler = _sampler_settings(args)
        data = _load_data(args)
        from bayesclass.models import get_model

        for family, values in hyperparameters.items():
            get_model(family, **values)  # invalid values: before the split and any fit
    except (ValueError, TypeError) as error:
        raise UsageError(error) from None
    _, heldout = _heldout_parts(args, data, fractions, seed, quiet=True)  # a bad split or test table: before any fit
    test = next(iter(heldout.values())) if args.test_data else None
    started = time.perf_counter()
    try:
        comparison = compare_models(
            data,
            families,
            fractions=fractions,
            standardize=_standardize(args),
            method=args.method,
            sampler=sampler,
            hyperparameters=hyperparameters,
            baselines=baselines,
            random_seed=seed,
            test=test,
        )
    except (ValueError, TypeError) as error:  # found before any fit (a constant training column to scale ...)
        raise UsageError(error) from None
    if not comparison.results:  # every family refused the data by its own check (or its fit failed)
        reasons = "; ".join(f"{family}: {reason}" for family, reason in comparison.unavailable.items())
        raise UsageError(f"none of the families {', '.join(families)} can take {data.name}: {reasons}")
    rows = ", ".join(f"{n} {part}" for part, n in comparison.n_rows.items())
    split = "split " + "/".join(f"{fraction:g}" for fraction in fractions) if test is None else "no split (--test-data)"
    dropped = f" ({data.missing.dropped_rows} rows with blank cells dropped)" if data.missing.dropped_rows else ""
    print(f"{data.name}{dropped}: {rows} rows (seed {seed}), {split}; {time.perf_counter() - started:.1f} s in all")
    print(format_model_comparison(comparison))
    if args.out is not None:
        args.out.mkdir(exist_ok=True)
        for family, result in comparison.results.items():
            _save(result, args.out / f"{family}.nc")
        print(f"saved {', '.join(f'{family}.nc' for family in comparison.results)} in {args.out}")
    if args.report is not None:  # after the fits are saved: a page that cannot be written loses none of them
        from bayesclass import __version__
        from bayesclass.reports.model_comparison_page import render_model_comparison

        _write_page(render_model_comparison(comparison, version=__version__), args.report)
    _strict(args, comparison.convergence)  # the verdicts compare_models made (each family's draws diagnosed once)


def _heldout_parts(args: argparse.Namespace, data, fractions, seed: int, *, quiet: bool = False):
    """(training rows, held-out rows by name): the split of ``--data``, or all of it and the ``--test-data`` table."""
    from bayesclass.data import load_test, train_validation_test_split
    from bayesclass.data.loaders import table_suffix

    if args.test_data is None:
        try:
            train, validation, test = train_validation_test_split(data, fractions=fractions, random_seed=seed)
        except ValueError as error:
            raise UsageError(f"--split {args.split or '0.6,0.2,0.2'}: {error}") from None
        if not quiet:
            print(
                f"{data.name}: {train.n_obs} training, {validation.n_obs} validation, {test.n_obs} test rows (seed "
                f"{seed}), split {'/'.join(f'{fraction:g}' for fraction in fractions)}"
            )
        return train, {"validation": validation, "test": test}
    try:
        if table_suffix(args.test_data) is None:
            raise ValueError(f"--test-data {args.test_data!r} must be a .csv, .tsv or .parquet file")
        if args.target is None:
            raise ValueError(f"--test-data {args.test_data}: name the class column with --target COLUMN (as in --data)")
        csv_format = None if table_suffix(args.test_data) == ".parquet" else _csv_format(args)
        options = {"target": args.target, "missing": args.missing, "csv_format": csv_format}
        rows = load_test(args.test_data, data, argument="--test-data", **options)
    except (ValueError, TypeError) as error:
        raise UsageError(error) from None
    name = "test" if rows.name == "train" else rows.name
    if not quiet:
        dropped = f"; {rows.missing.dropped_rows} with blank cells dropped" if rows.missing.dropped_rows else ""
        print(
            f"{data.name}: fitted on all {data.n_obs} rows (seed {seed}); scored on {name}, {rows.n_obs} rows{dropped}"
        )
    return data, {name: rows}


def _family_hyperparameters(args: argparse.Namespace, families: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """Each family's hyperparameters from the flags it has; a flag none of ``families`` has is a usage error."""
    from bayesclass._flags import hyperparameter_flags

    flags = [flag for flag in hyperparameter_flags(REGISTRY) if getattr(args, flag.dest, None) is not None]
    for flag in flags:
        if not set(flag.families) & set(families):
            raise ValueError(
                f"{flag.flag} applies to --model {', '.join(flag.families)}, none of {', '.join(families)}"
            )
    chosen = {}
    for family in families:
        own = argparse.Namespace(**vars(args))
        for flag in flags:
            if family not in flag.families:
                setattr(own, flag.dest, None)
        chosen[family] = hyperparameters_from_flags(own, family, REGISTRY)
    return chosen


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
            from bayesclass.data import load_test
            from bayesclass.inference.evaluation.report_evaluation import training_rows

            if _is_table_file(args.data) and args.target is None:
                raise ValueError(f"--data {args.data} is a table file: name its class column with --target COLUMN")
            training = training_rows(next(iter(results.values())))  # its columns, levels and classes code the rows
            if _is_table_file(args.data):
                options = {"target": args.target, "missing": args.missing, "csv_format": _csv_format(args)}
                rows = load_test(args.data, training, argument="--data", **options)
            else:
                _no_csv_format(args)
                target = {} if args.target is None else {"target": args.target}
                builtin = load(args.data, missing=args.missing, features=list(training.feature_names), **target)
                rows = load_test(builtin, training, argument="--data")
            heldout = {rows.name: rows}
        if loss is not None:
            for result in results.values():
                loss.aligned(result_info(data_result(result)).class_names)
        page = report(results, heldout, loss=loss, features=args.features, baselines=baselines, random_seed=args.seed)
    except (ValueError, TypeError) as error:
        raise UsageError(error) from None
    _write_page(page, args.out)
    if args.strict:
        from bayesclass.inference import diagnose

        _strict(args, {name: diagnose(result) for name, result in results.items() if "posterior" in result})


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
            studies.write_example(args.write_example, example=args.example or "plugin")
        except ValueError as error:
            raise UsageError(error) from None
        print(f"wrote the example study spec {args.write_example}; run: bayesclass study {args.write_example} --out "
              "results/")  # fmt: skip
        return
    if args.example is not None:
        raise UsageError(f"--example {args.example} picks the spec that --write-example writes; add --write-example")
    if args.spec is None or args.out is None:
        raise UsageError("give a spec and --out (bayesclass study SPEC.toml --out results/), or --write-example")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers {args.workers}: give 1 or more worker processes (or --serial)")
    cores = len(os.sched_getaffinity(0))
    if args.workers is not None and args.workers > 4 * cores:
        raise UsageError(f"--workers {args.workers}: more than 4 per usable core ({cores} here), each a process "
                         f"with its own memory; give at most {4 * cores} (--scheduler for a cluster)")  # fmt: skip
    if args.scheduler is not None and (args.serial or args.workers is not None):
        raise UsageError("--scheduler runs on that cluster's workers: drop --serial and --workers")
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"--out {str(args.out)!r} is a file; give a folder")
    try:
        spec = studies.read_spec(args.spec)
    except ValueError as error:
        raise UsageError(error) from None
    from bayesclass.inference.studies.runner import GridTooLarge, SchedulerUnreachable

    try:
        table = studies.run(
            spec,
            args.out,
            workers=args.workers,
            scheduler=args.scheduler,
            serial=args.serial,
            progress=not args.no_progress,
            confirm_large=args.yes,
        )
    except (GridTooLarge, SchedulerUnreachable) as error:  # found before any cell runs
        raise UsageError(error) from None
    print(table.attrs["summary"])
    if table.attrs.get("lost"):
        raise FitFailed(f"{len(table.attrs['lost'])} cell(s) not recorded (listed above); rerun to run them")


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
    summaries = {}
    for name, result in results.items():
        try:
            summaries[name] = loo(result)
        except (TypeError, ValueError) as error:  # LooUnavailable included: why, and the draws it needs
            raise UsageError(f"{name}: {error}" if len(results) > 1 else error) from None
    try:
        table = compare(results) if len(results) > 1 else None
    except (TypeError, ValueError) as error:
        raise UsageError(error) from None
    print(format_loo(results, summaries, table))


def _stack(args: argparse.Namespace) -> None:
    from bayesclass.inference import load as load_result
    from bayesclass.inference.stacking import stack
    from bayesclass.reports.text import format_stack

    _check_output(args.out, ".nc")
    if len(args.runs) < 2:
        raise UsageError(f"give two or more result files to stack, got {len(args.runs)}")
    repeated = sorted({str(path) for path in args.runs if args.runs.count(path) > 1})
    if repeated:
        raise UsageError(f"{', '.join(repeated)} is given more than once; stack different result files")
    try:
        names = [path.name for path in args.runs]
        labels = names if len(set(names)) == len(names) else [str(path) for path in args.runs]
        results = {label: load_result(path) for label, path in zip(labels, args.runs, strict=True)}
        stacked = stack(results, method=args.method)
    except (TypeError, ValueError) as error:  # LooUnavailable included: which run, why, and what to do
        raise UsageError(error) from None
    _save(stacked, args.out)
    print(format_stack(stacked))
    print(f"saved {args.out}")


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
        if args.draws_out is not None and is_stack(result):
            raise ValueError(
                f"--draws-out: {args.run} is a stack, whose draws are its members' draws, unequally weighted; write "
                "the per-draw probabilities of each member's own result file instead"
            )
        if args.draws_out is not None and "posterior" not in result:
            raise ValueError(
                f"--draws-out needs posterior draws; {args.run} holds a {result_info(result).method} point estimate "
                "(fit with --method nuts or exact)"
            )
        loss = _loss_matrix(args.loss_matrix)
        predictor = Predictor.of(
            result,
            interval_prob=args.interval_prob,
            return_draws=args.draws_out is not None,
            loss=loss,
            draws=args.draws,
        )
        csv_format = None
        if _is_table_file(args.data):
            csv_format = _csv_format(args)
        else:
            _no_csv_format(args)
        rows = PredictionRows.open(
            args.data,
            result,
            chunk_rows=chunk_rows,
            target=args.target,
            csv_format=csv_format,
            missing=args.missing,
            id_column=args.id_column,
        )
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
    selection = predictor.draw_selection
    if selection is not None and selection.step > 1:
        point = (
            f"posterior mean over {selection.kept:,} of {selection.total:,} draws, about their ESS; --draws all uses "
            "every one"
        )
    if predictor.stack is not None:
        point = f"mixture of {len(predictor.stack.labels)} members' posterior means by {predictor.stack.method} weights"
    print(f"wrote {summary.written} predictions to {args.out}{extra} ({point})")
    from bayesclass._logging import LOGGER

    if summary.incomplete:
        LOGGER.info(
            "%d row(s) have a blank feature cell: written with empty probabilities (--missing drop)", summary.incomplete
        )
    if summary.undefined:
        LOGGER.warning(
            "%d row(s) have probability 0 under every class under some estimate (NaN probabilities; empty "
            "'predicted' where that is the reported estimate)",
            summary.undefined,
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
        report = diagnose(load_result(args.run), full=args.full)
    except ValueError as error:
        raise UsageError(error) from None
    print(report)
    print(report.table.to_string(na_rep="n/a"))  # n/a: not computable, or no mean of a latent block's row
    if report.table is not report.element_table:
        print(
            "(a latent block's row: its worst values over its elements, how many fail r_hat or ESS and where r_hat is "
            "largest and ESS smallest; --full lists every element)"
        )
    _strict(args, {str(args.run): report})


def _strict(args: argparse.Namespace, verdicts: dict) -> None:
    """With ``--strict``: exit code 3 (:class:`VerdictFailed`) when a verdict that applies failed.

    ``verdicts`` maps what was diagnosed (a file, "the posterior") to its ConvergenceReport or ConvergenceFinding
    (None: no draws). Independent exact draws have no verdict (``applies`` is False).
    """
    failed = {
        name: report for name, report in verdicts.items() if report is not None and report.applies and not report.passed
    }
    if args.strict and failed:
        raise VerdictFailed(
            "convergence FAIL: "
            + "; ".join(f"{name}: {', '.join(report.failures)}" for name, report in failed.items())
            + " (the outputs were written)"
        )


def is_stack(result) -> bool:
    """Whether ``result`` is a stack (:func:`bayesclass.inference.result.is_stack`), imported on first use."""
    from bayesclass.inference.result import is_stack as stacked

    return stacked(result)


def data_result(result):
    """The result describing ``result``'s data (:func:`bayesclass.inference.result.data_result`)."""
    from bayesclass.inference.result import data_result as described

    return described(result)


def result_info(result):
    """The typed attrs of ``result`` (:func:`bayesclass.inference.result.result_info`), imported on first use."""
    from bayesclass.inference.result import result_info as typed_attrs

    return typed_attrs(result)


if __name__ == "__main__":
    sys.exit(main())
