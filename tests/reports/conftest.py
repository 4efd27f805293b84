"""Fixtures of the report tests: one headless Chromium shared by the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reports.browser import BrowserInspector, browser_available


@pytest.fixture(scope="session")
def browser() -> Iterator[BrowserInspector]:
    """A started :class:`~tests.reports.browser.BrowserInspector`, closed at the end of the session.

    Skips (with the reason, which ``-ra`` prints) where selenium, Chromium or chromedriver is missing.
    Call ``browser.inspect(html_path, screenshot=tmp_path / "page.png")`` for a ``PageInspection``.
    """
    reason = browser_available()
    if reason is not None:
        pytest.skip(f"no headless browser for the HTML report checks: {reason}")
    with BrowserInspector.start() as inspector:
        yield inspector
