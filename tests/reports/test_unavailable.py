"""Statistics that cannot be computed from a legal result are shown as "not available", with why (issue 26).

One chain: no r_hat and no rank plots, the traces drawn all the same; one draw: no ESS and no PSIS-LOO. The page
of such a result is whole (every section, every figure decoded, in a real browser), and the page of a normal
result says nothing of the kind.
"""

from __future__ import annotations

import pytest

import bayesclass as bc
from bayesclass.reports.html import SECTION_TITLES, write_report


@pytest.fixture(scope="module")
def one_chain():
    """Exact naive Bayes draws in one chain (a legal result: ``--chains 1``)."""
    from bayesclass.inference.engines.sampling import SamplerSettings

    settings = SamplerSettings(chains=1, draws=200, progressbar=False)
    return bc.fit("naive_bayes", bc.load("iris"), method="exact", sampler=settings, random_seed=3)


@pytest.fixture(scope="module")
def four_chains():
    from bayesclass.inference.engines.sampling import SamplerSettings

    settings = SamplerSettings(chains=4, draws=100, progressbar=False)
    return bc.fit("naive_bayes", bc.load("iris"), method="exact", sampler=settings, random_seed=3)


def test_a_one_chain_page_says_what_is_not_available_and_why(one_chain):
    page = bc.report(one_chain)
    assert "r_hat not available: the result has 1 chain of 200 draws; r_hat compares 2 or more chains" in page
    assert "Rank plots not available: the result has 1 chain of 200 draws" in page
    assert "Traces of" in page  # the traces need no second chain
    assert "Rank plots of" not in page


def test_a_normal_page_has_rank_plots_and_nothing_unavailable(four_chains):
    page = bc.report(four_chains)
    assert "not available" not in page
    assert "Rank plots of" in page and "Traces of" in page
    assert "elpd_loo" in page


def test_the_one_chain_page_in_a_real_browser(browser, one_chain, tmp_path):
    """Headless Chromium: the 1-chain page loads whole (no console error, every image decoded, every heading),
    with the alert at the top; the screenshot is kept under the test's tmp dir."""
    path = tmp_path / "one_chain.html"
    write_report(path, bc.report(one_chain))
    seen = browser.inspect(path, screenshot=tmp_path / "one_chain.png")
    assert seen.console_errors == (), seen.console_errors
    assert seen.foreign_requests == ()
    assert seen.images and seen.broken_images == (), seen.broken_images
    expected = [SECTION_TITLES[key] for key in ("summary", "convergence", "estimates", "performance", "warnings")]
    assert [text for text in seen.heading_texts if text in expected] == expected
    assert seen.screenshot.stat().st_size > 10_000
