"""The app in a real browser: `streamlit run dashboard/app.py`, Debian's chromium, the real MiniLM model.

Opens on the sample, uploads a CSV with its own column names, visits every page,
moves the threshold slider, saves the calibration session and loads it back,
downloads the flagged file, picks a point on the Geometry page and edits the
response in the Explorer. Screenshots of each step go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.app_server import running_app
from tests.conftest import REPO, SAMPLE_CSV

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
#: Loading MiniLM and embedding the sample on a busy 2-core machine.
SCORING_TIMEOUT_MS = 300_000
PAGE_TIMEOUT_MS = 120_000
EXCEPTION = '[data-testid="stException"]'
ERROR = '[data-testid="stAlertContentError"]'
CHART = ".js-plotly-plot"
VIEWPORT = {"width": 1400, "height": 1000}


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("/usr/bin/chromium is missing in CI: .ci/run installs it with apt-get")
        pytest.skip("/usr/bin/chromium is not installed (apt-get install chromium)")
    return CHROMIUM


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app as users start it, on a free local port, with an empty embedding cache."""
    env = {"SGI_CACHE_DIR": str(tmp_path_factory.mktemp("e2e-cache")), "SGI_DASHBOARD_MODEL": "minilm"}
    log = tmp_path_factory.mktemp("e2e-log") / "streamlit.log"
    with running_app(env, log, "--server.address", "127.0.0.1", "--server.headless", "true",
                     "--browser.gatherUsageStats", "false") as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser_page(chromium, server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT, accept_downloads=True)
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        yield page
        browser.close()


def wait_idle(page, timeout_ms: int = PAGE_TIMEOUT_MS) -> None:
    """Wait until Streamlit's script run has ended and stayed ended for a moment."""
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since = None
    while time.monotonic() < deadline:
        state = page.get_by_test_id("stApp").get_attribute("data-test-script-state")
        if state in ("running", "rerunRequested"):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.5:
            return
        page.wait_for_timeout(250)
    raise AssertionError("the app kept running")


def expect_charts(page, count: int) -> None:
    """At least ``count`` plotly charts drawn."""
    page.locator(CHART).nth(count - 1).wait_for()
    assert page.locator(CHART).count() >= count


def assert_no_error(page, step: str) -> None:
    assert page.locator(EXCEPTION).count() == 0, \
        f"exception box on {step}: {page.locator(EXCEPTION).first.inner_text()}"
    assert page.locator(ERROR).count() == 0, f"error on {step}: {page.locator(ERROR).first.inner_text()}"


def shoot(page, name: str) -> None:
    """Screenshot of the whole page: Streamlit scrolls inside its main block, so grow the window to fit it."""
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height) + 50, 8000)})
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(VIEWPORT)
    page.wait_for_timeout(500)


def open_page(page, title: str) -> None:
    """Click the page's link, first "View N more" where the navigation shows only its first pages (as a user would)."""
    nav = page.get_by_test_id("stSidebarNav")
    link = nav.get_by_text(title, exact=True)
    more = nav.get_by_test_id("stSidebarNavViewButton")
    if not link.count() and more.count() and more.inner_text().startswith("View") \
            and more.inner_text().endswith("more"):
        more.click()
    link.click()
    page.get_by_role("heading", name=title, level=1).wait_for()
    wait_idle(page)


def choose_first_option(page, label: str, attempts: int = 5) -> None:
    """Open the select box labelled ``label`` and pick its first option.

    The select box is a combo box: a click in its field, ArrowDown in the focused field or its
    "Open" button shows the list, and any of them can be swallowed while a rerun redraws the box,
    so each is tried in turn until the list shows.
    """
    field = page.get_by_test_id("stSelectbox").filter(has_text=label).locator("input")
    # By attribute: the list is not in the accessibility tree that get_by_role reads while it opens.
    options = page.locator("[role=option]")
    openers = (
        lambda: field.click(),
        lambda: (field.focus(), page.keyboard.press("ArrowDown")),
        lambda: page.get_by_test_id("stSelectbox").filter(has_text=label).get_by_role("button", name="Open").click(),
    )
    for attempt in range(attempts):
        wait_idle(page)
        field.scroll_into_view_if_needed()
        openers[attempt % len(openers)]()
        if _shown(options):
            options.first.click()
            return
        page.keyboard.press("Escape")
    raise AssertionError(f"the select box {label!r} never showed its list")


def _shown(locator, timeout_ms: int = 5_000) -> bool:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        locator.first.wait_for(timeout=timeout_ms)
    except PlaywrightTimeout:
        return False
    return True


def metric_value(page, label: str) -> str:
    box = page.get_by_test_id("stMetric").filter(has=page.get_by_text(label, exact=True))
    return box.get_by_test_id("stMetricValue").inner_text()


@pytest.fixture(scope="module")
def user_csv(tmp_path_factory) -> Path:
    """A user's file: different column names, hallucination-positive labels, an extra judge score."""
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).iloc[::3].head(80)
    frame = frame.rename(columns={"question": "query", "context": "passage", "response": "answer"})
    frame["is_hallucinated"] = (frame.pop("label") == "0").astype(int)
    frame["judge_score"] = [(i % 7) / 7 for i in range(len(frame))]
    # the relevant document is ranked first in even rows and third in odd rows: MRR (1 + 1/3) / 2
    frame["retrieved_ids"] = [f"d{i}|x|y" if i % 2 == 0 else f'["x", "y", "d{i}"]' for i in range(len(frame))]
    frame["relevant_ids"] = [f"d{i}" for i in range(len(frame))]
    path = tmp_path_factory.mktemp("user") / "my_rag_eval.csv"
    frame.to_csv(path, index=False)
    return path


def test_browser_walkthrough(browser_page, server, user_csv, tmp_path):
    page = browser_page
    page.goto(server)
    page.get_by_role("heading", name="Data", level=1).wait_for()
    page.get_by_text("scored.", exact=False).first.wait_for(timeout=SCORING_TIMEOUT_MS)
    wait_idle(page)
    assert_no_error(page, "sample data")
    assert page.get_by_text("halueval_qa_sample.csv").count() > 0
    shoot(page, "01_data_sample")

    page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(user_csv))
    page.get_by_text("my_rag_eval.csv").first.wait_for()
    page.get_by_text("scored.", exact=False).first.wait_for(timeout=SCORING_TIMEOUT_MS)
    wait_idle(page, SCORING_TIMEOUT_MS)
    assert_no_error(page, "upload")
    assert metric_value(page, "Rows read") == "80"
    # mpnet is optional ('make mpnet'); where it is installed the Models page gets a real comparison.
    page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text("Embedding models to score with")).click()
    second_model = page.get_by_role("option", name="mpnet").count() == 1
    if second_model:
        page.get_by_role("option", name="mpnet").click()
    page.keyboard.press("Escape")
    page.get_by_text("mpnet: scored" if second_model else "minilm: scored").first.wait_for(timeout=SCORING_TIMEOUT_MS)
    wait_idle(page, SCORING_TIMEOUT_MS)
    assert_no_error(page, "second model")
    shoot(page, "02_data_uploaded")

    open_page(page, "Overview")
    assert_no_error(page, "Overview")
    expect_charts(page, 2)
    assert metric_value(page, "Labelled grounded") == "40"
    shoot(page, "03_overview")

    open_page(page, "Strata")
    assert_no_error(page, "Strata")
    expect_charts(page, 2)
    shoot(page, "04_strata")

    open_page(page, "Calibration session")
    assert_no_error(page, "Calibration")
    expect_charts(page, 4)
    shoot(page, "05_calibration")
    precision_before = metric_value(page, "Precision")
    slider = page.get_by_role("slider")
    slider.focus()
    for _ in range(120):
        slider.press("ArrowRight")
    wait_idle(page, SCORING_TIMEOUT_MS)  # every key press queues a rerun of the fragment
    assert metric_value(page, "Precision") != precision_before or metric_value(page, "Recall") != "1.000"
    threshold = float(slider.input_value())

    with page.expect_download() as saved:
        page.get_by_role("button", name="Save this session (JSON)").click()
    session_path = tmp_path / "session.json"
    saved.value.save_as(session_path)
    session = json.loads(session_path.read_text())
    assert session["model"] == "minilm" and session["threshold"] == pytest.approx(threshold, abs=1e-6)

    with page.expect_download() as flagged:
        page.get_by_role("button", name="Download the scored file with P(grounded) and flags (CSV)").click()
    flagged_path = tmp_path / "flagged.csv"
    flagged.value.save_as(flagged_path)
    scored = pd.read_csv(flagged_path)
    assert len(scored) == 80
    assert {"sgi", "p_grounded", "flagged_hallucinated"} <= set(scored.columns)
    assert (scored["flagged_hallucinated"] == (scored["sgi"] < threshold)).all()

    for _ in range(10):  # away from the saved threshold, which loading the session must bring back
        slider.press("ArrowLeft")
    wait_idle(page, SCORING_TIMEOUT_MS)
    assert float(slider.input_value()) != pytest.approx(threshold)
    page.locator('[data-testid="stFileUploader"] input[type=file]').last.set_input_files(str(session_path))
    page.get_by_text("Loaded the session").wait_for()
    wait_idle(page)
    assert float(page.get_by_role("slider").input_value()) == pytest.approx(threshold, abs=1e-6)
    assert_no_error(page, "session load")
    shoot(page, "06_calibration_session_loaded")

    open_page(page, "Geometry")
    assert_no_error(page, "Geometry")
    expect_charts(page, 1)
    shoot(page, "07_geometry")
    x, y, row = page.evaluate("""() => {
        const gd = document.querySelector('.js-plotly-plot');
        const trace = gd._fullData.find(t => t.name === 'response');
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
        const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
        return [box.left + xa.l2p(trace.x[0]), box.top + ya.l2p(trace.y[0]), trace.customdata[0]];
    }""")
    page.mouse.click(x, y)
    page.get_by_role("heading", name="Explorer", level=1).wait_for()
    wait_idle(page)
    assert page.get_by_label("Row of the file").input_value() == str(row)

    assert_no_error(page, "Explorer")
    expect_charts(page, 2)
    sgi_before = metric_value(page, "SGI = θ(r,q) / θ(r,c)")
    response = page.get_by_label("Response")
    response.fill("Completely unrelated words about cooking pasta at home.")
    response.press("Control+Enter")
    wait_idle(page)
    assert metric_value(page, "SGI = θ(r,q) / θ(r,c)") != sgi_before
    assert_no_error(page, "Explorer edit")
    shoot(page, "08_explorer")

    open_page(page, "Models")
    assert_no_error(page, "Models")
    if second_model:
        expect_charts(page, 3)
    else:
        assert page.get_by_text("Choose two or more models").count() == 1
    shoot(page, "09_models")

    open_page(page, "Detectors")
    page.get_by_test_id("stMultiSelect").click()
    page.get_by_role("option", name="judge_score").click()
    page.keyboard.press("Escape")
    wait_idle(page)
    assert_no_error(page, "Detectors")
    expect_charts(page, 2)
    page.get_by_role("button", name="Compute the detectors").click()
    page.get_by_text("The AUROC column is the honest one", exact=False).first.wait_for(timeout=SCORING_TIMEOUT_MS)
    wait_idle(page, SCORING_TIMEOUT_MS)
    assert_no_error(page, "Detector families")
    expect_charts(page, 3)
    shoot(page, "10_detectors")

    open_page(page, "Judge")
    assert_no_error(page, "Judge")
    page.get_by_role("button", name="Run the judge").wait_for()
    shoot(page, "12_judge")

    open_page(page, "Retrieval")
    assert_no_error(page, "Retrieval")
    assert metric_value(page, "MRR") == f"{(1 + 1 / 3) / 2:.3f}"
    assert metric_value(page, "Recall@3") == "1.000"
    expect_charts(page, 1)
    shoot(page, "11_retrieval")
