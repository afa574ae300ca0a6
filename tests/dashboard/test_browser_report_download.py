"""The HTML report downloads on the Overview and Compare runs pages, clicked in a real browser (Debian's chromium).

The report is built when the button is clicked, in a thread other than the page's: the test takes the file the
browser saves and checks that it is the report of the data on screen (its title names the file, its provenance
the label source), not an empty file or an error page.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.app_server import running_app
from tests.conftest import SAMPLE_CSV
from tests.dashboard.test_browser_e2e import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGE_TIMEOUT_MS,
    VIEWPORT,
    assert_no_error,
    open_page,
    wait_idle,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    sample = pd.read_csv(SAMPLE_CSV)
    folder = tmp_path_factory.mktemp("report-runs")
    base, new = folder / "base_run.csv", folder / "new_run.csv"
    sample.to_csv(base, index=False)
    sample.assign(response=sample["response"].str.upper()).to_csv(new, index=False)
    return base, new


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    env = {"SGI_CACHE_DIR": str(tmp_path_factory.mktemp("report-cache")), "SGI_DASHBOARD_MODEL": "hashing",
           "SGI_DATA_DIR": str(tmp_path_factory.mktemp("report-data"))}
    log = tmp_path_factory.mktemp("report-log") / "streamlit.log"
    with running_app(env, log, "--server.address", "127.0.0.1", "--server.headless", "true",
                     "--browser.gatherUsageStats", "false") as port, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT, accept_downloads=True)
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"http://127.0.0.1:{port}")
        page.get_by_role("heading", name="Data", level=1).wait_for()
        wait_idle(page)
        yield page, log
        browser.close()


def download(page, tmp_path, name: str) -> str:
    """Click the report's download button; the text of the file the browser saved."""
    with page.expect_download(timeout=PAGE_TIMEOUT_MS) as saved:
        page.get_by_role("button", name="Download the report (HTML)").click()
    target = tmp_path / name
    saved.value.save_as(target)
    return target.read_text(encoding="utf-8")


def test_the_report_buttons_download_the_reports(browser_page, runs, tmp_path):
    page, log = browser_page
    base, new = runs
    page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(base))
    wait_idle(page)
    page.get_by_text("base_run.csv").first.wait_for()

    open_page(page, "Overview")
    assert_no_error(page, "overview")
    report = download(page, tmp_path, "report.html")
    assert report.startswith('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>SGI report: '
                             'base_run.csv')
    assert "the file&#x27;s label column" in report or "the file's label column" in report
    assert report.rstrip().endswith("</html>")

    open_page(page, "Compare runs")
    page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(new))
    wait_idle(page)
    page.get_by_role("heading", name="How each score moved").wait_for()
    assert_no_error(page, "compare runs")
    comparison = download(page, tmp_path, "run_comparison.html")
    assert comparison.startswith('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Run comparison: '
                                 'base_run.csv against new_run.csv')
    assert comparison.rstrip().endswith("</html>")
    assert "has no key" not in log.read_text()  # no builder failed on the session's state
