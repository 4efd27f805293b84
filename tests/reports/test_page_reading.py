"""The report pages as a reader sees them in a real browser: what is above the fold, and that nothing spills.

Each family's page (fitted on the training part of a split, scored on its validation rows, as ``bayesclass
compare --report`` does) and a study's page are laid out in headless Chromium in a 1280 x 900 window:

- the conclusion comes first: its heading, the convergence verdict and the first finding end within the first
  900 px, above the contents; a run's page shows its headline comparison (posterior vs plug-ins on held-out
  rows, with intervals) there;
- no figure is wider than the page's text column (none is shrunk to fit, none overflows), every image is laid
  out with a positive size, and the page never scrolls sideways;
- no table shows more than ``FOLD_ROWS`` rows before a fold; every figure's caption is above it.

The screenshots (first screen and whole page) are saved under ``build/screenshots/`` of the repository (or
``$BAYESCLASS_SCREENSHOTS``), named after the page, for a reader to look at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import bayesclass as bc
import bayesclass.study as bs
from bayesclass.reports.html import write_report
from bayesclass.reports.sections import FOLD_ROWS
from tests.reports.browser import ABOVE_THE_FOLD, PageLayout
from tests.reports.test_study import SMALL
from tests.test_cli_test_data import multi_run_page, pima, three_runs  # noqa: F401 (fixtures)

#: where the screenshots go (kept after the run, for a reader)
SCREENSHOTS = Path(os.environ.get("BAYESCLASS_SCREENSHOTS", Path(__file__).resolve().parents[2] / "build/screenshots"))
#: short fits: the pages' layout, not the posterior, is under test
SETTINGS = bc.SamplerSettings(draws=300, tune=300, chains=2)
MEASUREMENTS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


def _penguins(target: str = "species", features=None):
    data = bc.load("penguins", missing="drop", target=target)
    return data.select_features(features) if features else data


#: family -> (data, fit keywords): each family at the data a reader would give it
FAMILY_PAGES = {
    "logistic": (lambda: _penguins(), {}),
    "naive_bayes": (lambda: _penguins(), {}),
    "gcc": (lambda: _penguins(features=MEASUREMENTS), {}),
    "gp": (lambda: _penguins("sex", ["bill_depth_mm", "body_mass_g"]), {}),
}


def _family_page(family: str, folder: Path) -> Path:
    make_data, keywords = FAMILY_PAGES[family]
    train, validation, _ = bc.train_validation_test_split(make_data(), random_seed=0)
    result = bc.fit(family, train, sampler=SETTINGS, standardize=True, random_seed=0, **keywords)
    page = bc.report(result, {"validation": validation})
    return write_report(folder / f"{family}.html", page)


def _check_reading(layout: PageLayout, html: str, *, headline: bool) -> None:
    """The checks every page passes; ``headline``: a run's page, whose opening holds the held-out table."""
    opening = layout.section_blocks("conclusion")
    assert opening, "the page has no conclusion section"
    heading, first = opening[0], opening[1]
    assert heading.tag == "h2" and heading.text == "Conclusion"
    assert heading.box.bottom <= ABOVE_THE_FOLD and first.box.bottom <= ABOVE_THE_FOLD, (
        f"the conclusion starts at {heading.box.top:.0f} px and its first block ends at {first.box.bottom:.0f} px: "
        f"not within the first {ABOVE_THE_FOLD} px"
    )
    contents = html.index("<nav>")
    assert html.index('id="run0-conclusion"' if headline else 'id="conclusion"') < contents
    if headline:
        verdict = [block for block in opening if block.css_class in ("verdict", "alert")]
        conclusion = [block for block in opening if block.tag == "p"]
        assert verdict and verdict[0].box.bottom <= ABOVE_THE_FOLD, "no verdict in the first screen"
        assert conclusion and conclusion[0].box.bottom <= ABOVE_THE_FOLD, "no conclusion sentence in the first screen"
        tables = [block for block in opening if block.tag == "table" and "Posterior vs point estimates" in block.text]
        assert tables, "the opening has no headline comparison"
        assert re.search(r"posterior\s*\d\.\d+ \[\d\.\d+, \d\.\d+\]", tables[0].text), tables[0].text
    assert layout.scroll_width <= layout.viewport_width, "the page scrolls sideways"
    assert layout.images
    problems = [
        f"figure {image.alt[:70]!r} is laid out at {image.box.width:.0f} x {image.box.height:.0f} px"
        for image in layout.images
        if not (image.box.width > 0 and image.box.height > 0) or image.box.right > layout.viewport_width
    ]
    problems += [
        f"figure {image.alt[:70]!r} is {image.natural_width} px wide: wider than the page's "
        f"{layout.content_width:.0f} px text column, so it is shrunk"
        for image in layout.images
        if image.natural_width > layout.content_width + 1
    ]
    assert not problems, "\n".join(problems)
    _check_markup(html)


def _check_markup(html: str) -> None:
    """No table shows more than FOLD_ROWS rows before its fold; every figure's caption comes before its image."""
    visible = re.sub(r"<details.*?</details>", "", html, flags=re.S)
    for table in re.findall(r"<table.*?</table>", visible, flags=re.S):
        if "compact" in table.split(">", 1)[0]:
            continue
        rows = table.split("<tbody>", 1)[-1].count("<tr>")
        assert rows <= FOLD_ROWS, f"a table shows {rows} rows before its fold: {table[:200]}"
    for figure in re.findall(r"<figure>.*?</figure>", html, flags=re.S):
        assert figure.index("<figcaption>") < figure.index("<img"), "a caption sits below its figure"


@pytest.mark.parametrize("family", sorted(FAMILY_PAGES))
def test_each_familys_page_reads_from_the_top(family, browser, tmp_path):
    path = _family_page(family, tmp_path)
    layout = browser.layout(path, screenshots=SCREENSHOTS, name=f"report_{family}")
    _check_reading(layout, path.read_text(encoding="utf-8"), headline=True)
    assert layout.screenshot_top.stat().st_size > 0 and layout.screenshot_full.stat().st_size > 0


def _study_page(spec_text: str, folder: Path, name: str) -> Path:
    spec_path = folder / "spec.toml"
    spec_path.write_text(spec_text, encoding="utf-8")
    bs.run(bs.read_spec(spec_path), folder / "out", serial=True, progress=False)
    return write_report(folder / f"{name}.html", bs.report(folder / "out"))


def _check_study(path: Path, browser, name: str) -> None:
    layout = browser.layout(path, screenshots=SCREENSHOTS, name=name)
    html = path.read_text(encoding="utf-8")
    _check_reading(layout, html, headline=False)
    opening = [block.text for block in layout.section_blocks("conclusion") if block.tag == "p"]
    assert opening[0].split(" cells finished")[0].split(" of ")[0].isdigit(), opening[0]
    assert any("held-out log loss of the posterior vs the" in text for text in opening), opening


def test_a_studys_page_reads_from_the_top(browser, tmp_path):
    _check_study(_study_page(SMALL, tmp_path, "study_small"), browser, "study_small")


@pytest.mark.slow
def test_the_example_studys_page_reads_from_the_top(browser, tmp_path):
    bs.write_example(tmp_path / "example.toml")
    spec_text = (tmp_path / "example.toml").read_text(encoding="utf-8")
    _check_study(_study_page(spec_text, tmp_path, "study_example"), browser, "study_example")


# -- the analyst's own test table: compare --test-data, and a report of several runs on it ----------------------


def test_the_compare_test_data_pages_read_from_the_top(browser, pima, tmp_path):  # noqa: F811 (a fixture)
    """``compare --test-data``: the one family's page opens with its headline on the test table's rows (Laplace
    draws: no convergence verdict to box); the page of several families (parquet test table) is self-contained and
    draws its figures."""
    from tests.test_cli_test_data import _run

    one, families = tmp_path / "one.html", tmp_path / "families.html"
    common = ("--data", str(pima / "pima_tr.csv"), "--target", "type", "--no-progress")
    test_csv, test_parquet = ("--test-data", str(pima / "pima_te.csv")), ("--test-data", str(pima / "pima_te.parquet"))
    assert _run("compare", *common, "--method", "laplace", *test_csv, "--report", str(one))[0] == 0
    layout = browser.layout(one, screenshots=SCREENSHOTS, name="compare_test_data")
    html = one.read_text(encoding="utf-8")
    opening = layout.section_blocks("conclusion")
    assert opening[0].text == "Conclusion" and html.index('id="run0-conclusion"') < html.index("<nav>")
    headline = next(block for block in opening if block.tag == "table")
    assert "Posterior vs point estimates on pima_te.csv (332 held-out rows" in headline.text
    assert headline.box.bottom <= ABOVE_THE_FOLD
    assert re.search(r"posterior\s*\d\.\d+ \[\d\.\d+, \d\.\d+\]", headline.text), headline.text
    assert layout.scroll_width <= layout.viewport_width and layout.images
    assert all(image.box.width > 0 and image.natural_width <= layout.content_width + 1 for image in layout.images)
    _check_markup(html)
    flags = ("--model", "logistic,naive_bayes", "--method", "exact", "--draws", "200", "--baselines", "none")
    assert _run("compare", *common, *flags, *test_parquet, "--report", str(families))[0] == 0
    seen = browser.inspect(families, screenshot=tmp_path / "families.png")
    assert seen.console_errors == () and seen.foreign_requests == () and not seen.ran_script
    assert seen.images and seen.broken_images == ()


def test_a_report_of_several_runs_on_a_test_table_is_short_and_opens_with_their_ranking(
    browser,
    multi_run_page,  # noqa: F811 (a fixture)
    tmp_path,
):
    """One conclusion and the runs' ranking in the first screen; each run's sections folded below, so the page is
    a few screens tall; opened, every folded section lays out as a run's page does."""
    html = multi_run_page.read_text(encoding="utf-8")
    layout = browser.layout(multi_run_page, screenshots=SCREENSHOTS, name="report_runs_on_test_table")
    opening = layout.section_blocks("conclusion")
    assert opening[0].tag == "h2" and opening[0].text == "Conclusion"
    ranking = next(block for block in opening if block.tag == "table")
    assert "The runs ranked by held-out log loss on pima_te.csv" in ranking.text
    assert ranking.box.bottom <= ABOVE_THE_FOLD, f"the ranking ends at {ranking.box.bottom:.0f} px"
    sentence = next(block for block in opening if block.tag == "p")
    assert "scores best by held-out log loss" in sentence.text and sentence.box.bottom <= ABOVE_THE_FOLD
    assert layout.page_height < 3 * ABOVE_THE_FOLD, f"the folded page is {layout.page_height} px tall"
    assert layout.scroll_width <= layout.viewport_width
    _check_markup(html)
    seen = browser.inspect(multi_run_page, screenshot=tmp_path / "runs.png")
    assert seen.console_errors == () and seen.foreign_requests == () and not seen.ran_script
    assert seen.broken_images == ()
    opened = tmp_path / "runs_open.html"
    opened.write_text(html.replace('<details class="run">', '<details class="run" open>'), encoding="utf-8")
    layout = browser.layout(opened, screenshots=SCREENSHOTS, name="report_runs_on_test_table_open")
    _check_reading(layout, html, headline=False)
    assert layout.page_height > 3 * ABOVE_THE_FOLD
