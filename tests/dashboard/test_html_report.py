"""A report to share: `report --html` and `compare --html` write one self-contained file that renders offline."""

from __future__ import annotations

import shutil

import pytest

from sgi_core.cli import main
from tests.conftest import REPO, SAMPLE_CSV
from tests.dashboard.conftest import goto
from tests.dashboard.test_browser_e2e import CHROMIUM_ARGS, chromium  # noqa: F401  (fixture)

RUNS = REPO / "sample_data" / "runs"
#: A report of a 1,000-row file stays under this (the chart library alone is about 4.8 MB).
MAX_BYTES = 6 * 2**20


def rendered(path, chromium):
    """Open the file with every request off the file blocked: the charts drawn, the requests tried, console errors."""
    from playwright.sync_api import sync_playwright

    requests, errors = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        # A laptop's window beside another: the text column is the window, less the margins.
        page = browser.new_page(viewport={"width": 900, "height": 900})
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else (
            requests.append(route.request.url), route.abort()))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.goto(path.as_uri())
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
        charts, text = page.locator(".js-plotly-plot").count(), page.inner_text("body")
        layout = page.evaluate(LAYOUT)
        browser.close()
    return charts, text, requests, errors, layout


#: What a reader would see cut off: the page wider than the window, a table wider than the text column, an axis's
#: tick label or title outside its chart's drawing area.
LAYOUT = """() => {
  const body = document.body.getBoundingClientRect();
  const clipped = [];
  for (const chart of document.querySelectorAll('.js-plotly-plot')) {
    const svg = chart.querySelector('.main-svg').getBoundingClientRect();
    for (const label of chart.querySelectorAll('.ytick text, .xtick text, .g-ytitle text, .g-xtitle text')) {
      const box = label.getBoundingClientRect();
      if (box.width && (box.left < svg.left - 1 || box.right > svg.right + 1 || box.bottom > svg.bottom + 1))
        clipped.push(label.textContent);
    }
  }
  const wide = [...document.querySelectorAll('table')].filter(t => t.closest('.table-box')
      ? t.closest('.table-box').getBoundingClientRect().right > body.right + 1
      : t.getBoundingClientRect().right > body.right + 1).length;
  return {page_wider: document.documentElement.scrollWidth > window.innerWidth, wide_tables: wide, clipped: clipped};
}"""


def assert_nothing_cut_off(layout: dict) -> None:
    assert layout == {"page_wider": False, "wide_tables": 0, "clipped": []}


@pytest.mark.e2e
def test_a_files_report_renders_offline_with_its_provenance_and_verdict(tmp_path, chromium):
    out = tmp_path / "report.html"
    # A path longer than the window is wide, as a checkout deep in a home folder gives: the title wraps.
    source = tmp_path / "a_folder_deep_in_a_home_directory" / "evaluation_runs_of_november" / SAMPLE_CSV.name
    source.parent.mkdir(parents=True)
    shutil.copy(SAMPLE_CSV, source)
    assert main(["report", str(source), "--models", "hashing", "--n-boot", "100", "--html", str(out)]) == 0
    assert out.stat().st_size < MAX_BYTES
    charts, text, requests, errors, layout = rendered(out, chromium)
    assert charts == 2 and requests == [] and errors == []
    assert_nothing_cut_off(layout)
    for fact in ("halueval_qa_sample.csv", "fingerprint", "sha256:", "hashing", "backend", "fp32",
                 "the file's label column", "sgi-workbench 0.1.0"):
        assert fact in text, fact
    assert "No detector beats the best trivial score on this file" in text
    assert "response length (shorter = grounded)" in text


@pytest.mark.e2e
def test_a_comparisons_report_leads_with_the_labels_and_renders_offline(tmp_path, chromium):
    out = tmp_path / "comparison.html"
    assert main(["compare", str(RUNS / "base.csv"), str(RUNS / "new.csv"), "--key", "id", "--model", "hashing",
                 "--labels", str(RUNS / "labels_sample.csv"), "--n-boot", "100", "--html", str(out)]) == 0
    charts, text, requests, errors, layout = rendered(out, chromium)
    assert charts == 6 and requests == [] and errors == []
    assert_nothing_cut_off(layout)
    assert text.index("hallucination rate (labels)") < text.index("How each score moved")
    assert "labels_sample.csv" in text and "matched keys" in text


def test_text_from_the_data_is_escaped(tmp_path):
    import pandas as pd

    frame = pd.read_csv(SAMPLE_CSV).head(60)
    name = tmp_path / "<script>alert(1)<script>.csv"
    frame.to_csv(name, index=False)
    out = tmp_path / "report.html"
    assert main(["report", str(name), "--models", "hashing", "--n-boot", "0", "--html", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_the_overview_offers_the_report(app):
    page = goto(app, "overview")
    labels = [button.proto.label for button in page.get("download_button")]
    assert "Download the report (HTML)" in labels
