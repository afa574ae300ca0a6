"""A new user's first hour in a real browser: a scored CSV with copied-context rows, every page, nothing off this
machine.

The file is what `score -o x.csv` writes for a file where some responses copy their
context (SGI near 1e8). The Explorer must open it; the Overview, Strata and
Calibration pages are captured in ``test-artifacts/first_hour_*.png``; and every
request the pages make must go to the app on 127.0.0.1.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from sgi_core.cli import main
from tests.app_server import running_app
from tests.dashboard.test_browser_e2e import (
    ARTIFACTS,
    CHROMIUM_ARGS,
    PAGE_TIMEOUT_MS,
    SCORING_TIMEOUT_MS,
    VIEWPORT,
    assert_no_error,
    chromium,
    expect_charts,
    open_page,
    shoot,
    wait_idle,
)
from tests.evaluation.test_degenerate_rows import COPIED, with_copied_context

pytestmark = pytest.mark.e2e

__all__ = ["chromium"]  # the fixture, imported to be used here
PAGES = ("Overview", "Strata", "Calibration session", "Geometry", "Explorer", "Models", "Judge", "Detectors")


@pytest.fixture(scope="module")
def scored_csv(tmp_path_factory):
    folder = tmp_path_factory.mktemp("first-hour")
    with_copied_context(folder / "copied.csv")
    path = folder / "copied_scored.csv"
    assert main(["score", str(folder / "copied.csv"), "-o", str(path), "--model", "hashing"]) == 0
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app as users start it (its own .streamlit/config.toml, no extra options), with the hashing model."""
    env = {"SGI_CACHE_DIR": str(tmp_path_factory.mktemp("first-hour-cache")), "SGI_DASHBOARD_MODEL": "hashing"}
    with running_app(env, tmp_path_factory.mktemp("first-hour-log") / "streamlit.log") as port:
        yield f"http://127.0.0.1:{port}"


def test_scored_csv_on_every_page_with_no_request_off_this_machine(chromium, server, scored_csv):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    requested = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        context.on("request", lambda request: requested.append(request.url))
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(server)
        page.get_by_role("heading", name="Data", level=1).wait_for()
        wait_idle(page, SCORING_TIMEOUT_MS)
        page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(scored_csv))
        page.get_by_text("This file is already scored", exact=False).wait_for()
        wait_idle(page)
        assert_no_error(page, "scored CSV opened")

        for title in PAGES:
            open_page(page, title)
            assert_no_error(page, title)
            if title in ("Overview", "Strata", "Calibration session"):
                expect_charts(page, 2)
                shoot(page, f"first_hour_{title.split()[0].lower()}")
        # Downloads carry the data set's name.
        open_page(page, "Calibration session")
        with page.expect_download() as flagged:
            page.get_by_role("button", name="Download the scored file with P(grounded) and flags (CSV)").click()
        assert flagged.value.suggested_filename == "copied_scored_sgi_scores_flagged.csv"

        # The Explorer on the scored CSV: the first row, then another one typed in.
        open_page(page, "Explorer")
        assert page.get_by_text("Row 1 is labelled", exact=False).count() == 1
        row = page.get_by_label("Row of the file")
        row.fill(str(COPIED[1] + 1))
        row.press("Enter")
        wait_idle(page)
        assert_no_error(page, "Explorer, another row")
        assert page.get_by_text(f"Row {COPIED[1] + 1} is labelled", exact=False).count() == 1

        page.get_by_test_id("stSidebar").get_by_text("Log scale for SGI axes").click()
        wait_idle(page)
        open_page(page, "Calibration session")
        assert_no_error(page, "Calibration, log scale")
        assert page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')]"
                             ".some(gd => gd._fullLayout.xaxis.type === 'log')")
        shoot(page, "first_hour_calibration_log")
        browser.close()

    hosts = {urlparse(url).hostname for url in requested if urlparse(url).scheme in ("http", "https", "ws", "wss")}
    assert hosts == {"127.0.0.1"}, sorted(url for url in requested if urlparse(url).hostname != "127.0.0.1")
    assert len(requested) > 20  # the listener saw the pages' own traffic
