"""The Compare runs page in a real browser: `streamlit run dashboard/app.py` and Debian's chromium.

The base run (the sample's grounded answers) is uploaded on the Data page, the new run
(its hallucinated answers to the same questions) on the Compare runs page; the table of
deltas, one paired plot per score and the keys that changed most must be drawn, and a
key must open in the Explorer. The deterministic hashing encoder keeps the test quick;
the real model's numbers are pinned in tests/commands/test_compare_sample_regression.py.
Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.app_server import running_app
from tests.conftest import SAMPLE_CSV
from tests.dashboard.test_browser_e2e import (
    ARTIFACTS,
    CHART,
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGE_TIMEOUT_MS,
    VIEWPORT,
    assert_no_error,
    choose_first_option,
    expect_charts,
    metric_value,
    open_page,
    shoot,
    wait_idle,
)

pytestmark = pytest.mark.e2e

#: Scores compared on two files scored by the app: SGI, three angles, two baselines.
SCORES = 6


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    sample = pd.read_csv(SAMPLE_CSV)
    folder = tmp_path_factory.mktemp("runs")
    paths = []
    for name, rows in (("base_grounded.csv", sample["answer_type"] == "right"),
                       ("new_hallucinated.csv", sample["answer_type"] != "right")):
        sample[rows].to_csv(folder / name, index=False)
        paths.append(folder / name)
    return paths


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    env = {"SGI_CACHE_DIR": str(tmp_path_factory.mktemp("compare-cache")), "SGI_DASHBOARD_MODEL": "hashing"}
    log = tmp_path_factory.mktemp("compare-log") / "streamlit.log"
    ARTIFACTS.mkdir(exist_ok=True)
    with running_app(env, log, "--server.address", "127.0.0.1", "--server.headless", "true",
                     "--browser.gatherUsageStats", "false") as port, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"http://127.0.0.1:{port}")
        page.get_by_role("heading", name="Data", level=1).wait_for()
        wait_idle(page)
        yield page
        browser.close()


def test_two_runs_compared_in_the_browser(browser_page, runs):
    page = browser_page
    base, new = runs
    page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(base))
    wait_idle(page)
    page.get_by_text("base_grounded.csv").first.wait_for()
    assert_no_error(page, "base upload")

    open_page(page, "Compare runs")
    page.get_by_text("Choose the new run").wait_for()
    page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(new))
    wait_idle(page)
    page.get_by_role("heading", name="Which run hallucinates less: the labels").wait_for()
    page.get_by_role("heading", name="How each score moved").wait_for()
    assert_no_error(page, "compare")
    assert metric_value(page, "Keys matched") == "150"
    # The labels lead: every base answer grounded, every new one hallucinated.
    assert metric_value(page, "Hallucination rate, base (labels only)") == "0.0%"
    assert metric_value(page, "Hallucination rate, new (labels only)") == "100.0%"
    # The deltas and the keys that changed most; no AUROC table, since each run holds one class, so no score is
    # validated and the page says the scores' movements say nothing about grounding here.
    assert page.get_by_test_id("stDataFrame").count() == 2
    assert page.get_by_text("not validated on these labels").count() >= 1
    expect_charts(page, SCORES)
    assert page.locator(CHART).count() == SCORES
    shoot(page, "compare_01_runs_compared")

    choose_first_option(page, "Open in the Explorer")
    page.get_by_role("heading", name="Explorer", level=1).wait_for()
    wait_idle(page)
    assert_no_error(page, "explorer")
    shoot(page, "compare_02_key_in_explorer")
