"""The headless-browser harness (tests/reports/browser.py) on hand-written pages: it sees what it must.

Each page here breaks one rule a report page must keep (self-contained, every image decoded, no
console error, no script), and each test shows that the harness reports the breach, beside a clean
page on which it reports nothing.
"""

from __future__ import annotations

import base64
import struct
import time
import zlib
from pathlib import Path

import pytest

from tests.reports.browser import (
    WINDOW_SIZE,
    BrowserInspector,
    BrowserStartError,
    PageInspection,
    browser_available,
    find_chromium,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def tiny_png(width: int = 3, height: int = 2) -> bytes:
    """A valid opaque-red RGB PNG of the given size, built with zlib and struct only."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))  # filter 0 + pixels
    return PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def page(title: str, body: str, head: str = "") -> str:
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>{head}</head>\n'
        f"<body>\n{body}\n</body></html>\n"
    )


@pytest.fixture
def inspect(browser: BrowserInspector, tmp_path: Path):
    """Write an HTML text to tmp_path and inspect it with the session's browser."""

    def write_and_inspect(html: str, name: str = "page") -> PageInspection:
        path = tmp_path / f"{name}.html"
        path.write_text(html, encoding="utf-8")
        return browser.inspect(path, screenshot=tmp_path / f"{name}.png")

    return write_and_inspect


CLEAN_PAGE = page(
    "Clean report",
    "<h1>Logistic regression on iris</h1>\n"
    "<h2>Posterior</h2>\n"
    '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100">'
    '<rect x="10" y="10" width="80" height="40" fill="steelblue"/>'
    '<svg x="100" width="50" height="50"><circle cx="25" cy="25" r="20"/></svg></svg>\n'
    "<h2>Calibration</h2>\n"
    f'<img alt="tiny" src="data:image/png;base64,{base64.b64encode(tiny_png()).decode("ascii")}">',
)


def test_a_clean_self_contained_page_passes_every_check(inspect):
    inspection = inspect(CLEAN_PAGE)
    assert inspection.console_errors == ()
    assert inspection.requested_urls == (inspection.page_url,)
    assert inspection.foreign_requests == ()
    assert [(image.natural_width, image.natural_height) for image in inspection.images] == [(3, 2)]
    assert inspection.broken_images == ()
    assert [(svg.width, svg.height) for svg in inspection.inline_svgs] == [(200, 100)]  # the nested svg is not counted
    assert inspection.heading_texts == ("Logistic regression on iris", "Posterior", "Calibration")
    assert [heading.level for heading in inspection.headings] == [1, 2, 2]
    assert inspection.title == inspection.source_title == "Clean report"
    assert not inspection.ran_script
    assert inspection.executed_scripts == ()
    assert inspection.script_hook_count == 0


def test_remote_resources_are_reported_although_the_network_is_unreachable(inspect):
    inspection = inspect(
        page(
            "Remote",
            '<h1>Remote</h1><img alt="remote" src="https://example.invalid/x.png">',
            head='<link rel="stylesheet" href="http://example.invalid/a.css">',
        )
    )
    assert set(inspection.foreign_requests) == {"https://example.invalid/x.png", "http://example.invalid/a.css"}
    assert inspection.requested_urls[0] == inspection.page_url
    assert [image.decoded for image in inspection.images] == [False]
    assert any("example.invalid" in error for error in inspection.console_errors)


def test_a_sibling_file_counts_as_a_request_but_a_data_url_does_not(inspect, tmp_path):
    (tmp_path / "figure.png").write_bytes(tiny_png())
    encoded = base64.b64encode(tiny_png()).decode("ascii")
    inspection = inspect(
        page("Sibling", f'<img alt="file" src="figure.png"><img alt="inline" src="data:image/png;base64,{encoded}">')
    )
    assert inspection.foreign_requests == ((tmp_path / "figure.png").resolve().as_uri(),)
    assert inspection.broken_images == ()


def test_an_undecodable_image_has_natural_width_zero(inspect):
    inspection = inspect(page("Broken", '<h1>Broken</h1><img alt="broken" src="data:image/png;base64,AAAA">'))
    assert [(image.natural_width, image.complete) for image in inspection.images] == [(0, True)]
    assert inspection.broken_images == inspection.images
    assert inspection.broken_images[0].source == "data:image/png;base64,AAAA"
    assert inspection.foreign_requests == ()  # inline, only undecodable


def test_console_error_is_reported(inspect):
    inspection = inspect(page("Console", "<h1>Console</h1><script>console.error('x')</script>"))
    assert len(inspection.console_errors) == 1
    assert '"x"' in inspection.console_errors[0]


def test_a_page_of_an_earlier_inspection_does_not_leak_into_the_next(inspect):
    inspect(page("Noisy", "<script>console.error('noise')</script><img alt='r' src='https://example.invalid/r.png'>"))
    inspection = inspect(CLEAN_PAGE, name="clean")
    assert inspection.console_errors == ()
    assert inspection.foreign_requests == ()
    assert not inspection.ran_script


@pytest.mark.parametrize(
    ("payload", "hooks"),
    [
        pytest.param("<img src=x onerror=\"document.title='pwned'\">", "event_handler_element_count", id="onerror"),
        pytest.param("<script>document.title='pwned'</script>", "script_element_count", id="script"),
        pytest.param(
            '<svg xmlns="http://www.w3.org/2000/svg"><script>document.title="pwned"</script></svg>',
            "script_element_count",
            id="svg-script",
        ),
        pytest.param("<svg onload=\"document.title='pwned'\"></svg>", "event_handler_element_count", id="svg-onload"),
    ],
)
def test_an_unescaped_script_payload_is_reported_as_script_that_ran(inspect, payload, hooks):
    inspection = inspect(page("Escaped title", f"<h1>Report of {payload}</h1>"))
    assert inspection.ran_script
    assert inspection.executed_scripts
    assert all(script.url == inspection.page_url for script in inspection.executed_scripts)
    assert inspection.title == "pwned"
    assert inspection.title_changed
    assert getattr(inspection, hooks) == 1


def test_script_that_runs_without_touching_the_title_is_still_reported(inspect):
    inspection = inspect(page("Quiet", "<h1>Quiet</h1><script>window.quiet = 1;</script>"))
    assert not inspection.title_changed
    assert inspection.ran_script
    assert inspection.executed_scripts[0].function_names == ("",)


def test_script_hooks_in_the_dom_are_counted_even_when_nothing_ran(inspect):
    inspection = inspect(
        page(
            "Hooks",
            '<a href="javascript:void(0)">link</a><button onclick="alert(1)">b</button>'
            '<script type="text/plain">not run</script>',
        )
    )
    assert not inspection.ran_script
    assert (
        inspection.javascript_url_count,
        inspection.event_handler_element_count,
        inspection.script_element_count,
    ) == (1, 1, 1)
    assert inspection.script_hook_count == 3


def test_escaped_markup_is_text_not_script(inspect):
    inspection = inspect(page("Escaped", "<h1>&lt;script&gt;document.title='pwned'&lt;/script&gt;</h1>"))
    assert not inspection.ran_script
    assert inspection.script_hook_count == 0
    assert inspection.heading_texts == ("<script>document.title='pwned'</script>",)


def test_the_screenshot_is_a_png_of_the_window(inspect, tmp_path):
    inspection = inspect(CLEAN_PAGE, name="shot")
    assert inspection.screenshot == tmp_path / "shot.png"
    content = inspection.screenshot.read_bytes()
    assert content.startswith(PNG_SIGNATURE)
    assert len(content) > 2_000
    width, height = struct.unpack(">II", content[16:24])  # the IHDR chunk follows the signature
    assert width == WINDOW_SIZE[0]
    assert WINDOW_SIZE[1] // 2 < height <= WINDOW_SIZE[1]  # the viewport: the window less the (headless) toolbar


def test_no_browser_on_path_is_a_skip_reason_naming_what_is_missing(monkeypatch, tmp_path):
    pytest.importorskip("selenium")
    monkeypatch.setenv("PATH", str(tmp_path))
    reason = browser_available()
    assert reason is not None and "no Chromium on PATH" in reason


def test_a_chromedriver_of_another_major_version_is_a_skip_reason(monkeypatch, tmp_path):
    pytest.importorskip("selenium")
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium on PATH")
    (tmp_path / "chromium").symlink_to(chromium)
    fake_driver = tmp_path / "chromedriver"
    fake_driver.write_text("#!/bin/sh\necho 'ChromeDriver 1.0.0.0 (fake)'\n")
    fake_driver.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    reason = browser_available()
    assert reason is not None and "does not match ChromeDriver 1.0.0.0" in reason


def test_a_browser_that_does_not_start_in_time_raises_instead_of_hanging():
    reason = browser_available()
    if reason is not None:
        pytest.skip(reason)
    started = time.perf_counter()
    with pytest.raises(BrowserStartError, match="did not start within"):
        BrowserInspector.start(start_timeout=0.05)
    assert time.perf_counter() - started < 20
