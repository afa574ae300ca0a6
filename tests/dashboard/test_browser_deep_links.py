"""A page's own URL opens it through ``app.py``: behind the access gate, with the sidebar and the navigation.

Streamlit serves every file of a ``pages/`` folder beside the main script as a page of its own; the app's pages
live in ``app_pages/`` so that no URL runs a page without the script that guards and frames it.
"""

from __future__ import annotations

import pytest

from tests.app_server import running_app
from tests.dashboard.test_browser_e2e import CHROMIUM_ARGS, chromium  # noqa: F401 - fixture

TOKEN = "deep-link-token-0123456789abcdef"
REFUSAL = "Open the app with the URL printed in the terminal when it started"
#: What only app.py draws: a sidebar setting and a navigation section.
FRAME = ("Device for the embedding models", "Judge a file")


def page_text(port: int, chromium, path: str) -> str:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"http://127.0.0.1:{port}/{path}")
        page.get_by_text(REFUSAL).or_(page.get_by_text("Device for the embedding models")).first.wait_for(
            timeout=60_000)
        page.wait_for_timeout(1500)  # the rest of the run's elements
        text = page.inner_text("body")
        browser.close()
    return text


@pytest.mark.e2e
@pytest.mark.parametrize("path", ["detectors", "review", "review_panel", "data"])
def test_a_pages_url_without_the_token_is_refused(tmp_path, chromium, path):
    with running_app({"SGI_DASHBOARD_MODEL": "hashing"}, tmp_path / "app.log", token=TOKEN) as port:
        text = page_text(port, chromium, path)
    assert REFUSAL in text
    assert not any(word in text for word in FRAME)


@pytest.mark.e2e
def test_a_pages_url_with_the_token_opens_it_in_the_apps_frame(tmp_path, chromium):
    with running_app({"SGI_DASHBOARD_MODEL": "hashing"}, tmp_path / "app.log", token=TOKEN) as port:
        text = page_text(port, chromium, f"detectors?token={TOKEN}")
    assert "Detector families computed here" in text and REFUSAL not in text
    assert all(word in text for word in FRAME)
    assert "review panel" not in text.lower()
