"""Fast clicks in a real browser: every label lands on the row its button was drawn for.

While the Review page draws the next row, the previous row's buttons stay on screen
(greyed) and stay clickable. A click on one of them must label the row it was drawn
for, or nothing, never the row drawn next. The test clicks several times per redraw,
without waiting for the page, in the one-file mode and in the two-runs mode: each click
presses, in one step of the browser, a button on screen that is the true label of the
row it was drawn for, whether that row is current or left over. Then every decision
written to either annotations file is checked against the true label of its key.
"""

from __future__ import annotations

import json
import re
import time

import pandas as pd
import pytest

from dashboard.app_pages.review_panel import label_button_key
from sgi_core.review.annotations import row_keys
from sgi_core.runs.matching import match_runs
from tests.app_server import running_app
from tests.conftest import SAMPLE_CSV
from tests.dashboard.test_browser_e2e import (
    ARTIFACTS,
    CHROMIUM_ARGS,
    PAGE_TIMEOUT_MS,
    VIEWPORT,
    assert_no_error,
    chromium,  # noqa: F401  (fixture)
    open_page,
    shoot,
    wait_idle,
)
from tests.dashboard.test_browser_review import upload

pytestmark = pytest.mark.e2e

N = 40
#: Bursts of BURST clicks CLICK_EVERY_MS apart (several per redraw of the page), until each annotations file holds
#: KEYS labelled keys.
BURST = 3
CLICK_EVERY_MS = 150
KEYS = 10
DEADLINE_S = 400

#: One browser step: press the first button on screen that is the true label of the row it was drawn for (named by
#: the class Streamlit gives a keyed widget, ``st-key-`` and the key of :func:`label_button_key`), whether that row is
#: the one being drawn or the one before it (greyed, still clickable).
CLICK = """(truth) => {
  for (const box of document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]')) {
    const name = [...box.classList].find(c => c in truth);
    const button = name && box.querySelector('button');
    if (button) {
      button.click();
      return {button: name, stale: box.getAttribute('data-stale')};
    }
  }
  return 'no button';
}"""


def css_class(key: str) -> str:
    """The class Streamlit gives the element of a widget keyed ``key``."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def plain(text: str) -> str:
    return " ".join(str(text).split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """40 questions: the base run hallucinates on every third, the new run on every second (no label columns).

    Returns the files, each row key's true label, and the true label's button of every row in each mode.
    """
    sample = pd.read_csv(SAMPLE_CSV)
    right = sample[sample["answer_type"] == "right"].head(N).reset_index(drop=True)
    wrong = sample[sample["answer_type"] != "right"].head(N).reset_index(drop=True)
    assert (right["question"] == wrong["question"]).all()
    folder = tmp_path_factory.mktemp("fast-runs")
    paths, frames, truth = {}, {}, {}
    for name, hallucinated in (("fast_base", lambda i: i % 3 == 0), ("fast_new", lambda i: i % 2 == 1)):
        frames[name] = pd.concat([wrong.iloc[[i]] if hallucinated(i) else right.iloc[[i]] for i in range(N)],
                                 ignore_index=True).drop(columns=["label"])
        paths[name] = folder / f"{name}.csv"
        frames[name].to_csv(paths[name], index=False)
        truth[name] = ["hallucinated" if hallucinated(i) else "grounded" for i in range(N)]
    by_key = {run: dict(zip(row_keys(frames[run]), truth[run])) for run in frames}
    # One file: a button is keyed by the row's number in the file (1-based).
    single = {css_class(label_button_key(truth["fast_base"][i], i + 1)): "" for i in range(N)}
    # Two runs: by the matched key's place, the order the page matches the runs in.
    matched = match_runs(frames["fast_base"], frames["fast_new"], key="question", scores=[])
    paired = {run: {css_class(label_button_key(truth[run][rows[at]], at, slot)): "" for at in range(N)}
              for run, slot, rows in (("fast_base", "base", matched.first_row_base),
                                      ("fast_new", "new", matched.first_row_new))}
    return paths, by_key, single, paired


def click_fast(page, buttons: tuple, stores) -> list[dict]:
    """Bursts of ``BURST`` clicks on each of ``buttons`` (maps of button classes), ``CLICK_EVERY_MS`` apart, without
    waiting for the page within a burst, until each store holds ``KEYS`` labelled keys (or ``DEADLINE_S`` pass)."""
    clicks = []
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and min(len({d["key"] for d in decisions(s)}) for s in stores) < KEYS:
        for _ in range(BURST):
            for truth in buttons:
                done = page.evaluate(CLICK, truth)
                if isinstance(done, dict):
                    clicks.append(done)
            page.wait_for_timeout(CLICK_EVERY_MS)
        wait_idle(page)
    return clicks


def decisions(path) -> list[dict]:
    """Every label written to an annotations file (undos and unsure left out), in order."""
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [line for line in lines if line.get("label") in ("grounded", "hallucinated")]


def test_fast_clicks_label_the_row_each_button_was_drawn_for(chromium, tmp_path_factory, runs):  # noqa: F811
    from playwright.sync_api import sync_playwright

    paths, truth, single_buttons, paired_buttons = runs
    ARTIFACTS.mkdir(exist_ok=True)
    data_dir = tmp_path_factory.mktemp("fast-data")
    env = {"SGI_CACHE_DIR": str(tmp_path_factory.mktemp("fast-cache")), "SGI_DASHBOARD_MODEL": "hashing",
           "SGI_DATA_DIR": str(data_dir)}
    log = tmp_path_factory.mktemp("fast-log") / "streamlit.log"
    with sync_playwright() as playwright, running_app(env, log, "--server.address", "127.0.0.1",
                                                      "--server.headless", "true",
                                                      "--browser.gatherUsageStats", "false") as port:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"http://127.0.0.1:{port}")
        upload(page, paths["fast_base"])
        open_page(page, "Review")
        base_store = data_dir / "annotations" / "fast_base.jsonl"
        new_store = data_dir / "annotations" / "fast_new.jsonl"
        single = click_fast(page, (single_buttons,), (base_store,))
        n_single = len(decisions(base_store))
        assert_no_error(page, "fast clicks, one file")
        shoot(page, "fast_labels_01_one_file")

        open_page(page, "Compare runs")
        page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(paths["fast_new"]))
        page.get_by_role("heading", name="How each score moved").wait_for()
        wait_idle(page)
        open_page(page, "Review")
        page.get_by_text("two runs side by side").click()
        page.get_by_role("heading", name="One question, two answers").wait_for()
        wait_idle(page)
        paired = click_fast(page, (paired_buttons["fast_base"], paired_buttons["fast_new"]), (new_store,))
        assert_no_error(page, "fast clicks, two runs")
        shoot(page, "fast_labels_02_two_runs")
        browser.close()

    base_given, new_given = decisions(base_store), decisions(new_store)
    wrong = [(run, d["key"][:12], d["label"]) for run, given in (("fast_base", base_given), ("fast_new", new_given))
             for d in given if truth[run][d["key"]] != d["label"]]
    assert not wrong, f"{len(wrong)} labels landed on another row than the one clicked: {wrong}"
    # Both modes labelled rows, and clicks on buttons left over from the row before (page still drawing) were made.
    assert len({d["key"] for d in base_given[:n_single]}) >= KEYS and len({d["key"] for d in new_given}) >= KEYS
    assert sum(click["stale"] == "true" for click in single) and sum(click["stale"] == "true" for click in paired)
    assert len(base_given) + len(new_given) <= len(single) + len(paired)
