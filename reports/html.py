"""One self-contained HTML page for one fitted model or several: ``report`` returns it, ``write_report`` saves it.

The page opens offline: figures are inline SVG images (``data:`` URLs), the style sheet is inline, and nothing
is loaded from the network (a Content-Security-Policy forbids scripts and any source but ``data:`` images).
Every string from the user (feature, class and data names, paths, attrs) goes through jinja2's autoescape.
The output is byte-identical for the same inputs and seed, except the one line under the title that says when
and how fast it was generated (``<p class="generated">``).

Sections (each only where it applies; :mod:`bayesclass.reports.sections` computes them): summary, convergence,
posterior vs point estimates, predictive performance (held-out scores, PSIS-LOO; several runs: their LOO
comparison), calibration, decision boundary, generative checks, decisions, warnings.
"""

from __future__ import annotations

import ast
import base64
import datetime
import re
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayesclass import __version__
from bayesclass._lazy import lazy_import
from bayesclass.data import Dataset
from bayesclass.inference.criticism.loo import compare
from bayesclass.inference.evaluation.heldout import fit_baselines, heldout_estimates
from bayesclass.inference.io import atomic_write, check_result
from bayesclass.inference.prediction.decisions import LossMatrix
from bayesclass.inference.prediction.predict import DEFAULT_INTERVAL_PROB
from bayesclass.reports import sections as sec

xr = lazy_import("xarray")

__all__ = ["SECTION_TITLES", "PageSection", "render_page", "report", "write_report"]

#: the section titles in page order (a run's sections carry its label when the page holds several runs)
SECTION_TITLES = {
    "comparison": "Model comparison",
    "summary": "Summary",
    "convergence": "Convergence",
    "estimates": "Posterior vs point estimates",
    "performance": "Predictive performance",
    "calibration": "Calibration",
    "boundary": "Decision boundary",
    "generative": "Generative checks",
    "decisions": "Decisions",
    "warnings": "Warnings",
}


@dataclass(frozen=True)
class PageSection:
    """A section of the page: its anchor, heading and blocks (:mod:`bayesclass.reports.sections`)."""

    anchor: str
    heading: str
    blocks: tuple


def report(
    results,
    data: Dataset | Mapping[str, Dataset] | None = None,
    *,
    loss: LossMatrix | None = None,
    features: Sequence[str] | None = None,
    baselines: Sequence[str] = (),
    interval_prob: float = DEFAULT_INTERVAL_PROB,
    random_seed: int = 0,
    title: str | None = None,
    extra_warnings: Sequence[str] = (),
) -> str:
    """The HTML report of one or several fitted results.

    Parameters
    ----------
    results : xarray.DataTree, sequence of them, or mapping of label to DataTree
        Results of :func:`bayesclass.fit` (or :func:`bayesclass.load_result`). Labels default to
        ``"<model> (<method>)"``, numbered where they repeat.
    data : Dataset or mapping of split name to Dataset, optional
        Held-out rows to score (labels of the fitted classes). Without them: the validation rows when a run was
        fitted on the training part of :func:`bayesclass.train_validation_test_split` of a built-in data set (the
        split is reproduced from the result's provenance and checked against its fingerprint); otherwise the
        page says that no held-out scores exist and shows PSIS-LOO.
    loss : LossMatrix, optional
        Adds the Decisions section and each estimate's mean loss.
    features : sequence of two str, optional
        The two features of the decision-boundary plot (default: the data's two features when it has two).
    baselines : sequence of str
        The seeds' classical classifiers to score beside the estimates (:data:`bayesclass.models.baselines.BASELINES`).
    interval_prob : float
        Probability of every equal-tailed interval on the page (default 0.89).
    random_seed : int
        Seed of the replicated data (calibration bands, generative checks) and randomised baselines.
    title : str, optional
        The page title (default: the runs' models and data).
    extra_warnings : sequence of str
        Warnings raised before the report (e.g. by the fit that ``bayesclass compare`` just ran) to list verbatim.

    Returns
    -------
    str
        The page.

    Raises
    ------
    ValueError
        A result whose attrs do not pass :func:`bayesclass.inference.io.check_result` (altered or damaged file),
        held-out data of other classes, bad ``features``, ``interval_prob`` outside (0, 1).
    """
    start = time.perf_counter()
    runs = _labelled(results)
    if not 0 < interval_prob < 1:
        raise ValueError(f"interval_prob={interval_prob!r} must be in (0, 1), e.g. 0.89")
    heldout_given = _heldout(data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        page_sections: list[PageSection] = []
        alerts: list[str] = []
        several = len(runs) > 1
        if several:
            page_sections.append(_comparison_section(runs))
        fit_warnings: list[tuple[str, str]] = []
        for index, (label, result) in enumerate(runs.items()):
            heldout, reason = (heldout_given, "") if heldout_given is not None else _validation_rows(result)
            run_sections = _run_sections(
                result,
                label=label,
                heldout=heldout,
                no_heldout_reason=reason,
                loss=loss,
                features=features,
                baselines=baselines,
                interval_prob=interval_prob,
                random_seed=random_seed,
            )
            for section in run_sections:
                alerts.extend(f"{label}: {alert}" if several else alert for alert in section.alerts)
                heading = section.title if not several else f"{section.title}: {label}"
                page_sections.append(PageSection(f"run{index}-{section.key}", heading, section.blocks))
            fit_warnings += [(label, message) for message in sec.attr_json(result, "fit_warnings", [])]
    raised = [f"{w.category.__name__}: {w.message}" for w in caught]
    page_sections.append(_warnings_section(fit_warnings, list(extra_warnings), raised))
    if title is None:
        title = "bayesclass report: " + "; ".join(
            f"{result.attrs.get('model', '?')} on {result.attrs.get('data_name', '?')}" for result in runs.values()
        )
    return render_page(title, page_sections, alerts=alerts, started=start)


def render_page(title: str, sections: Sequence[PageSection], *, alerts: Sequence[str] = (), started: float) -> str:
    """The page around ``sections`` (the run report's, a study report's): title, the one provenance line (when
    and how fast it was generated, from ``started``, a :func:`time.perf_counter` value), alerts, contents."""
    seconds = time.perf_counter() - started
    generated = (
        f"Generated by bayesclass {__version__} on {datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')} "
        f"in {seconds:.1f} s."
    )
    return _template().render(title=title, generated=generated, alerts=list(alerts), sections=list(sections))


def write_report(path: str | Path, page: str) -> Path:
    """Write ``page`` (from :func:`report`) to ``path`` atomically: an interrupted write leaves no partial file
    and an earlier report as it was."""
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"report path {str(path)!r} must end in .html")
    with atomic_write(path) as temporary:
        temporary.write_text(page, encoding="utf-8")
    return path


# -- inputs ----------------------------------------------------------------------------------------------------------


def _labelled(results) -> dict[str, object]:
    if isinstance(results, xr.DataTree):
        results = [results]
    if isinstance(results, Mapping):
        runs = {str(label): result for label, result in results.items()}
    elif isinstance(results, Sequence) and not isinstance(results, str):
        runs = {}
        for result in results:
            base = f"{_attr(result, 'model')} ({_attr(result, 'method')})"
            label, n = base, 2
            while label in runs:
                label, n = f"{base} #{n}", n + 1
            runs[label] = result
    else:
        raise TypeError(
            f"results must be a result DataTree, a list of them or a dict label -> result, got {type(results)}"
        )
    if not runs:
        raise ValueError("results is empty; pass one or more fitted results")
    for label, result in runs.items():
        if not isinstance(result, xr.DataTree):
            raise TypeError(f"result {label!r} is a {type(result).__name__}, not a result DataTree (bayesclass.fit)")
        try:
            check_result(result)
            _check_numbers(result)
        except ValueError as error:
            raise ValueError(f"cannot report result {label!r}: {error}") from None
    return runs


def _attr(result, name: str) -> str:
    return str(getattr(result, "attrs", {}).get(name, "?"))


def _check_numbers(result) -> None:
    """The numeric attrs a report prints must be finite numbers in a sane range (a tampered file is refused)."""
    for name in ("compile_seconds", "sampling_seconds"):
        if name in result.attrs:
            value = result.attrs[name]
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"attr {name} should be a number of seconds, got {str(value)[:40]!r}") from None
            if not 0 <= value < 1e9:
                raise ValueError(f"attr {name} = {value!r} is not a plausible duration in seconds")
    seed = result.attrs.get("random_seed")
    if seed is not None and (
        isinstance(seed, bool)
        or not isinstance(seed, (int, float, np.integer, np.floating))
        or not float(seed).is_integer()
        or not 0 <= int(seed) < 2**32
    ):
        raise ValueError(f"attr random_seed = {str(seed)[:40]!r} is not a seed (an integer in [0, 2**32))")
    for name in ("compile_cache_hit", "partial", "standardize"):
        value = result.attrs.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value not in (0, 1):
            raise ValueError(f"attr {name} = {str(value)[:40]!r} should be 0 or 1")
    settings = sec.attr_json(result, "sampler_settings", {})
    if not isinstance(settings, dict):
        raise ValueError("attr sampler_settings should hold a JSON object")
    for key in ("draws", "tune", "chains"):
        value = settings.get(key)
        if value is not None and (not isinstance(value, int) or not 0 <= value < 10**9):
            raise ValueError(f"attr sampler_settings has {key} = {value!r}; expected a count")
    for name in ("package_versions", "fit_warnings", "standardized_features"):
        sec.attr_json(result, name, None)


def _heldout(data) -> dict[str, Dataset] | None:
    if data is None:
        return None
    if isinstance(data, Dataset):
        return {"held-out data": data}
    if isinstance(data, Mapping) and all(isinstance(value, Dataset) for value in data.values()):
        return {str(name): value for name, value in data.items()}
    raise TypeError(f"data must be a Dataset or a dict of split name -> Dataset, got {type(data).__name__}")


_SPLIT = re.compile(
    r"train part \((\d+) of (\d+) rows\) of train_validation_test_split\(fractions=(\([^)]*\)), "
    r"random_seed=(\d+), stratify=(True|False)\)"
)
_GENERATED = re.compile(r"generated by data\.(\w+)\(([^)]*)\)")


def _validation_rows(result) -> tuple[dict[str, Dataset], str]:
    """The validation part of the split the result's training rows came from, when it can be reproduced
    exactly (a built-in data set; the fingerprint of the reproduced training part must match)."""
    from bayesclass.data import available, load, train_validation_test_split

    name = str(result.attrs.get("data_name", ""))
    provenance = str(result.attrs.get("data_provenance", ""))
    split = _SPLIT.search(provenance)
    if not name.endswith("[train]") or split is None:
        return {}, (
            f"the run was fitted on {name!r}, not on the training part of a split; give held-out rows "
            "(--data NAME_OR_CSV), or see PSIS-LOO below"
        )
    base = name.removesuffix("[train]")
    if base not in {info.name for info in available()}:
        return {}, f"the split of {base!r} (not a built-in data set) cannot be reproduced; give --data"
    kwargs = {}
    generated = _GENERATED.search(provenance)
    if generated:
        try:
            call = ast.parse(f"f({generated.group(2)})", mode="eval").body
            kwargs = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}  # type: ignore[union-attr]
        except (SyntaxError, ValueError):
            return {}, f"the generator call of {base!r} in the provenance cannot be read; give --data"
    try:
        full = load(base, **kwargs)
        train, validation, _ = train_validation_test_split(
            full,
            fractions=ast.literal_eval(split.group(3)),
            random_seed=int(split.group(4)),
            stratify=split.group(5) == "True",
        )
    except (ValueError, TypeError) as error:
        return {}, f"the split of {base!r} could not be reproduced ({error}); give --data"
    if train.fingerprint() != result.attrs.get("data_fingerprint"):
        return {}, f"the reproduced split of {base!r} does not match the training rows' fingerprint; give --data"
    return {"validation": validation}, ""


# -- sections ------------------------------------------------------------------------------------------------------


def _run_sections(
    result, *, label, heldout, no_heldout_reason, loss, features, baselines, interval_prob, random_seed
) -> list[sec.Section]:
    fitted = fit_baselines(result, baselines, random_seed=random_seed) if baselines else None
    scored = {  # every estimate predicted once per split, shared by the scores and the decisions
        split: (data, heldout_estimates(result, data, baselines=fitted, interval_prob=interval_prob))
        for split, data in heldout.items()
    }
    sections = [
        sec.summary_section(result, label=label),
        sec.convergence_section(result),
        sec.estimates_section(result, interval_prob=interval_prob),
        sec.performance_section(
            result,
            scored,
            no_heldout_reason=no_heldout_reason,
            baselines=baselines,
            loss=loss,
            interval_prob=interval_prob,
        ),
    ]
    which, calibration_rows = next(iter(heldout.items()), (None, None))
    if calibration_rows is None:
        calibration_rows, which = _training_rows(result), "the training rows (no held-out rows)"
    sections.append(sec.calibration_section(result, calibration_rows, which=which, random_seed=random_seed))
    sections.append(sec.decision_boundary_section(result, features=features, interval_prob=interval_prob))
    sections.append(sec.generative_section(result, random_seed=random_seed))
    sections.append(sec.decisions_section(result, scored, loss=loss))
    return [section for section in sections if section is not None]


def _training_rows(result) -> Dataset:
    """The training rows stored in a result, as a Dataset in its classes (for calibration without held-out rows)."""
    import json

    class_names = tuple(json.loads(result.attrs["class_names"]))
    feature_names = tuple(json.loads(result.attrs["feature_names"]))
    kinds = tuple(json.loads(result.attrs["feature_kinds"]))
    categories = {name: tuple(levels) for name, levels in json.loads(result.attrs["category_names"]).items()}
    return Dataset(
        name=f"{result.attrs.get('data_name', 'training rows')}",
        X=result["constant_data"]["X"].values,
        y=result["observed_data"]["y"].values,
        feature_names=feature_names,
        class_names=class_names,
        feature_kinds=kinds,
        category_names=categories,
    )


def _comparison_section(runs: Mapping[str, object]) -> PageSection:
    """PSIS-LOO comparison of several runs fitted on the same rows (arviz_stats.compare), or why there is none."""
    title = SECTION_TITLES["comparison"]
    with_draws = {label: result for label, result in runs.items() if "log_likelihood" in result.children}
    if len(with_draws) < 2:
        return PageSection("comparison", title, (sec.Text("No LOO comparison: fewer than two runs have draws."),))
    try:
        table = compare(with_draws)
    except ValueError as error:
        return PageSection("comparison", title, (sec.Text(f"No LOO comparison: {error}."),))
    columns = [column for column in ("rank", "elpd", "se", "p", "elpd_diff", "dse", "weight") if column in table]
    rows = tuple(
        (str(label), *(sec.number(row[column], ".0f" if column == "rank" else ".3f") for column in columns))
        for label, row in table.iterrows()
    )
    caption = (
        "PSIS-LOO comparison of the runs fitted on the same rows (arviz_stats.compare): elpd_loo, its standard "
        "error, p_loo, the difference to the best and its standard error, stacking weights; best first"
    )
    return PageSection("comparison", title, (sec.Table(caption, ("run", *columns), rows),))


def _warnings_section(fit_warnings, extra, raised) -> PageSection:
    lines = [f"fit of {label}: {message}" for label, message in fit_warnings]
    lines += [f"before the report: {message}" for message in extra]
    lines += [f"report (checks, scores, figures): {message}" for message in raised]
    unique = list(dict.fromkeys(lines))
    blocks = (sec.Text("\n".join(unique), kind="pre"),) if unique else (sec.Text("No warnings were raised."),)
    return PageSection("warnings", SECTION_TITLES["warnings"], blocks)


def _template():
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("bayesclass.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    environment.filters["svg_base64"] = lambda svg: base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return environment.get_template("report.html.j2")
