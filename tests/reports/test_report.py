"""The HTML report: one test per family, sections driven by what the result holds, escaping of every user string,
tampered results refused, byte-identical output, the CLI, and the page in a real browser (tests/reports/browser.py).
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bayesclass import data, inference, report
from bayesclass.inference import SamplerSettings
from bayesclass.inference.prediction.decisions import LossMatrix
from bayesclass.models import GaussianClassConditional, GaussianClassConditionalPrior, LatentGaussianProcess
from bayesclass.reports.html import SECTION_TITLES, write_report

SAMPLER = SamplerSettings(draws=200, tune=300, chains=2, progressbar=False)
GENERATED_LINE = re.compile(r'<p class="generated">[^<]*</p>')


def headings(page: str) -> list[str]:
    return [html.unescape(text) for text in re.findall(r"<h2>(.*?)</h2>", page)]


def masked(page: str) -> str:
    """The page without its one provenance line (time of generation)."""
    return GENERATED_LINE.sub("", page)


@pytest.fixture(scope="module")
def separable():
    """Seed 000's separable set: the MLE does not exist (separation)."""
    dataset = data.load("seed000_separable")
    train, validation, test = data.train_validation_test_split(dataset, random_seed=0)
    return inference.fit("logistic", train, method="nuts", sampler=SAMPLER, random_seed=1), validation


@pytest.fixture(scope="module")
def separable_page(separable):
    result, validation = separable
    return report(result, validation)


@pytest.fixture(scope="module")
def transport_nb():
    return inference.fit("naive_bayes", data.load("transport"), method="exact", sampler=SAMPLER, random_seed=2)


@pytest.fixture(scope="module")
def wine_gcc():
    wine = data.load("wine")
    train, validation, _ = data.train_validation_test_split(wine, random_seed=0)
    model = GaussianClassConditional(
        covariance="per-class", prior=GaussianClassConditionalPrior(covariance_prior="inverse_wishart")
    )
    return inference.fit(model, train, method="exact", sampler=SAMPLER, random_seed=3), validation


@pytest.fixture(scope="module")
def gp_1d():
    dataset = data.seed004_gp(30, random_seed=2)
    return inference.fit(LatentGaussianProcess(), dataset, method="nuts", sampler=SAMPLER, random_seed=4)


def test_logistic_separable_report_says_why_the_mle_is_missing(separable_page):
    page = separable_page
    for key in ("summary", "convergence", "estimates", "performance", "calibration", "boundary", "warnings"):
        assert SECTION_TITLES[key] in headings(page), key
    assert SECTION_TITLES["generative"] not in headings(page)  # a discriminative family
    assert SECTION_TITLES["decisions"] not in headings(page)  # no loss matrix
    assert "MLE is not shown:" in page and "linearly separable" in page  # the explicit line, with the reason
    assert "Held-out scores on held-out data" in page
    assert "intercept ~ Normal(0, 10^2)" in page  # priors as formulas
    assert page.count("<img ") >= 7  # rank, trace, forest, scores, Pareto k, calibration, boundary


def test_naive_bayes_transport_report_has_generative_checks(transport_nb):
    page = report(transport_nb)
    titles = headings(page)
    assert SECTION_TITLES["generative"] in titles
    assert SECTION_TITLES["boundary"] not in titles  # three features and no --features
    assert "No held-out scores:" in page and "PSIS-LOO" in page  # fitted on all rows: LOO instead
    assert "binary_proba[c, j] ~ Beta(1, 1)" in page
    assert "Posterior predictive p-values" in page


def test_naive_bayes_boundary_for_two_named_features(transport_nb):
    page = report(transport_nb, features=("Distance", "Raining"))
    assert SECTION_TITLES["boundary"] in headings(page)
    assert "must be numeric features" in page  # Raining is binary: said, not drawn
    with pytest.raises(ValueError, match="features=.*name two of the fitted features"):
        report(transport_nb, features=("Distance", "Speed"))


def test_gcc_wine_report_with_per_class_checks_and_decisions(wine_gcc):
    result, validation = wine_gcc
    loss = LossMatrix([[0, 1, 5], [1, 0, 1], [5, 1, 0]], ("class_0", "class_1", "class_2"))
    page = report(result, validation, loss=loss, baselines=("knn", "least_squares"))
    titles = headings(page)
    for key in ("generative", "decisions", "calibration", "performance"):
        assert SECTION_TITLES[key] in titles
    assert "Confusion matrix of posterior on held-out data" in page
    assert "baseline: " in page
    # the Bayes decisions minimise the posterior expected loss row by row: no estimate's decisions do better
    table = re.search(r"<caption>Loss of the decisions.*?</tbody>", page, flags=re.S).group(0)
    risks = {
        cells[0]: float(cells[2])
        for cells in (re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table))
        if len(cells) == 4
    }
    assert "posterior" in risks and len(risks) >= 4
    assert all(risks["posterior"] <= value + 1e-12 for value in risks.values()), risks
    # the decisions' confusion matrices count every held-out row once
    for table in re.findall(r"<caption>Confusion matrix of posterior.*?</tbody>", page, flags=re.S):
        counts = [int(cell) for cell in re.findall(r"<td>(\d+)</td>", table)]
        assert sum(counts) == validation.n_obs


def test_gp_one_input_report_draws_the_latent_curve(gp_1d):
    page = report(gp_1d)
    assert SECTION_TITLES["boundary"] in headings(page)
    assert "Latent f and P(class 1 | x)" in page
    assert "the true latent of the generator" in page  # seed004_gp carries its truth
    assert "lengthscale[feature] ~ PC(P(lengthscale &lt; 0.2) = 0.05)" in page


def test_a_point_estimate_has_no_convergence_section():
    result = inference.fit("logistic", data.seed001_gaussians(80, random_seed=3), method="map", random_seed=0)
    page = report(result)
    titles = headings(page)
    assert SECTION_TITLES["convergence"] not in titles
    assert "the result is a point estimate (method map), without draws" in page
    assert "LOO needs posterior draws" in page


def test_several_runs_get_the_loo_comparison(separable):
    result, validation = separable
    other = inference.fit("logistic", _training(result), method="nuts", sampler=SAMPLER, random_seed=5)
    page = report({"first": result, "second": other}, validation)
    assert SECTION_TITLES["comparison"] in headings(page)
    assert "Summary: first" in headings(page) and "Summary: second" in headings(page)
    assert "stacking weights" in page


def _training(result) -> data.Dataset:
    return data.Dataset(
        name=result.attrs["data_name"],
        X=result["constant_data"]["X"].values,
        y=result["observed_data"]["y"].values,
        feature_names=tuple(json.loads(result.attrs["feature_names"])),
        class_names=tuple(json.loads(result.attrs["class_names"])),
        feature_kinds=tuple(json.loads(result.attrs["feature_kinds"])),
    )


def test_validation_rows_are_found_from_the_split_provenance(separable):
    result, validation = separable
    page = report(result)  # no data: the split is reproduced from the result's provenance
    assert f"Held-out scores on validation ({validation.n_obs} rows of seed000_separable[validation])" in page


def test_same_inputs_give_the_same_bytes(separable, separable_page):
    result, validation = separable
    again = report(result, validation)
    assert masked(again) == masked(separable_page)
    assert len(GENERATED_LINE.findall(again)) == 1


def test_page_is_self_contained(separable_page):
    page = separable_page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<script" not in page and "<link" not in page
    assert len(page.encode("utf-8")) < 3e6


HOSTILE_FEATURE = "<script>alert(1)</script>"
HOSTILE_CLASS = '"><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    """A CSV whose feature and class names are HTML: every user string must come out escaped."""
    folder = tmp_path_factory.mktemp("hostile")
    rng = np.random.default_rng(0)
    n = 60
    x = rng.normal(size=(n, 2))
    labels = np.where(x[:, 0] + 0.5 * rng.normal(size=n) > 0, HOSTILE_CLASS, "plain")
    path = folder / "hostile.csv"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(f'"{HOSTILE_FEATURE}",other,"label"\n')
        for row, label in zip(x, labels, strict=True):
            escaped = label.replace('"', '""')
            handle.write(f'{row[0]},{row[1]},"{escaped}"\n')
    dataset = data.load(path, target="label")
    result = inference.fit("logistic", dataset, method="nuts", sampler=SAMPLER, random_seed=6)
    return report(result, dataset), folder


def test_user_strings_are_escaped(hostile_page):
    page, _ = hostile_page
    assert HOSTILE_FEATURE not in page and "<script" not in page
    assert "<img src=x" not in page and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")
    assert html.escape(HOSTILE_FEATURE) in page or "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # no tag in the page other than the template's own
    tags = set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", page))
    assert tags <= {
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "div", "nav", "ul", "li", "a",
        "section", "pre", "figure", "img", "figcaption", "table", "caption", "thead", "tbody", "tr", "th", "td",
    }, tags  # fmt: skip


def test_tampered_results_are_refused(separable):
    result, _ = separable
    cases = {
        "model_hyperparameters": ("{not json", "model_hyperparameters is not valid JSON"),
        "compile_seconds": (1e300, "not a plausible duration"),
        "random_seed": (10**30, "is not a seed"),
        "sampler_settings": ('{"draws": 1e400}', "expected a count"),
        "fit_warnings": ("[unterminated", "fit_warnings is not valid JSON"),
    }
    for name, (value, message) in cases.items():
        tampered = result.copy()
        tampered.attrs = {**result.attrs, name: value}
        with pytest.raises(ValueError, match=message):
            report(tampered)


def test_write_report_is_atomic(tmp_path, monkeypatch):
    target = tmp_path / "r.html"
    write_report(target, "<p>first</p>")

    def broken(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", broken)
    with pytest.raises(KeyboardInterrupt):
        write_report(target, "<p>second</p>")
    monkeypatch.undo()
    assert target.read_text() == "<p>first</p>"
    assert [path.name for path in tmp_path.iterdir()] == ["r.html"]
    with pytest.raises(ValueError, match="must end in .html"):
        write_report(tmp_path / "r.txt", "x")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bayesclass.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def test_cli_report_and_its_usage_errors(separable, tmp_path):
    result, _ = separable
    run = tmp_path / "r.nc"
    inference.save(result, run)
    done = _cli("report", "--run", str(run), "--out", str(tmp_path / "r.html"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Held-out scores on validation" in page
    for args, message in (
        (["--features", "x1"], "give two feature names"),
        (["--features", "x1,nope"], "name two of the fitted features"),
        (["--data", "no_such_dataset"], "no_such_dataset"),
        (["--data", "held_out.csv"], "--target COLUMN"),
    ):
        failed = _cli("report", "--run", str(run), "--out", str(tmp_path / "bad.html"), *args, cwd=tmp_path)
        assert failed.returncode == 2, (args, failed.stderr)
        assert message in failed.stderr and "Traceback" not in failed.stderr
    failed = _cli("report", "--run", str(tmp_path / "missing.nc"), "--out", str(tmp_path / "x.html"), cwd=tmp_path)
    assert failed.returncode == 2 and "no result file" in failed.stderr
    failed = _cli("report", "--run", str(run), "--out", str(tmp_path / "x.txt"), cwd=tmp_path)
    assert failed.returncode == 2 and "must end in .html" in failed.stderr
    assert not (tmp_path / "bad.html").exists()


def _inspect(browser, page: str, folder: Path, name: str):
    path = folder / f"{name}.html"
    write_report(path, page)
    return browser.inspect(path, screenshot=folder / f"{name}.png")


def test_the_page_in_a_real_browser(browser, separable_page, tmp_path):
    """Headless Chromium: no console error, no request but the file, every image decoded, every section heading,
    no script; the screenshot of the top of the page is kept under the test's tmp dir."""
    seen = _inspect(browser, separable_page, tmp_path, "separable")
    assert seen.console_errors == (), seen.console_errors
    assert seen.foreign_requests == (), seen.foreign_requests
    assert seen.images and seen.broken_images == (), seen.broken_images
    assert all(image.natural_width > 0 for image in seen.images)
    expected = [SECTION_TITLES[key] for key in ("summary", "convergence", "estimates", "performance")]
    expected += [SECTION_TITLES[key] for key in ("calibration", "boundary", "warnings")]
    assert [text for text in seen.heading_texts if text in expected] == expected
    assert not seen.ran_script and seen.script_hook_count == 0
    assert seen.screenshot.stat().st_size > 10_000


def test_hostile_names_run_no_script_in_a_real_browser(browser, hostile_page, tmp_path):
    page, _ = hostile_page
    seen = _inspect(browser, page, tmp_path, "hostile")
    assert not seen.ran_script and seen.script_hook_count == 0
    assert seen.console_errors == () and seen.foreign_requests == ()
    assert seen.broken_images == ()


def test_every_family_page_renders_in_a_real_browser(browser, transport_nb, wine_gcc, gp_1d, tmp_path):
    result, validation = wine_gcc
    for name, page in {
        "naive_bayes": report(transport_nb),
        "gcc": report(result, validation),
        "gp": report(gp_1d),
    }.items():
        seen = _inspect(browser, page, tmp_path, name)
        assert seen.console_errors == () and seen.foreign_requests == (), name
        assert seen.images and seen.broken_images == (), name
        assert SECTION_TITLES["summary"] in seen.heading_texts and SECTION_TITLES["warnings"] in seen.heading_texts


def test_a_ten_class_report_renders_its_calibration_for_a_documented_subset_of_classes():
    """Ten classes by naive Bayes: the posterior and four point estimates x ten classes is 50 panels, beyond
    arviz_plots' 40; the report rendered nothing (exit 2 on digits). The record picks the classes with the most
    rows, and the caption says which."""
    from bayesclass.inference.evaluation.report_data import MAX_CALIBRATION_PANELS

    rng = np.random.default_rng(0)
    y = np.r_[np.arange(10), rng.integers(0, 10, 290)]
    X = rng.normal(np.c_[np.cos(y), np.sin(y)] * 3, 1.0)
    blobs = data.Dataset(
        name="ten_blobs",
        X=X,
        y=y,
        feature_names=("x1", "x2"),
        class_names=tuple(f"c{k}" for k in range(10)),
        feature_kinds=("continuous", "continuous"),
    )
    train, validation, _ = data.train_validation_test_split(blobs, random_seed=0)
    settings = SamplerSettings(draws=20, chains=2, progressbar=False)
    result = inference.fit("naive_bayes", train, method="exact", sampler=settings, random_seed=0)
    page = html.unescape(report(result, validation))
    assert "Calibration" in headings(page) and "Traceback" not in page
    match = re.search(r"(\d+) of the 10 classes, those with the most rows here: ([^;]*);", page)
    assert match is not None, "the caption names the classes drawn"
    shown = match.group(2).split(", ")
    assert len(shown) == int(match.group(1)) == MAX_CALIBRATION_PANELS // 5  # the posterior and 4 point estimates
    counts = np.bincount(validation.y, minlength=10)
    drawn = [validation.class_names.index(name) for name in shown]
    assert min(counts[drawn]) >= max(np.delete(counts, drawn))
    assert f"at most {MAX_CALIBRATION_PANELS} panels" in page
