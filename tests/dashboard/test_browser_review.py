"""Labelling in a real browser: 30 rows labelled on the Review page survive a restart and a re-upload as Parquet.

The app runs as users start it, with the deterministic hashing encoder and its data
folder in a temporary directory; the same folder serves both runs. Screenshots go to
``test-artifacts/``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.review.annotations import AnnotationStore, normalise_text, row_keys
from sgi_core.scoring import score_table
from sgi_core.stats.ranking import roc_analysis
from tests.app_server import running_app
from tests.conftest import SAMPLE_CSV
from tests.dashboard.test_browser_e2e import (
    ARTIFACTS,
    CHROMIUM_ARGS,
    EXCEPTION,
    PAGE_TIMEOUT_MS,
    SCORING_TIMEOUT_MS,
    VIEWPORT,
    assert_no_error,
    chromium,  # noqa: F401  (fixture)
    metric_value,
    open_page,
    shoot,
    wait_idle,
)

pytestmark = pytest.mark.e2e

N_LABELLED = 30


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    """80 rows of the sample without their labels (CSV), the same rows shuffled as Parquet, and the true labels."""
    folder = tmp_path_factory.mktemp("review-data")
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).iloc[::3].head(80).reset_index(drop=True)
    pairs = zip(sample["question"].map(normalise_text), sample["response"].map(normalise_text))
    truth = dict(zip(pairs, sample["label"].map({"1": "grounded", "0": "hallucinated"})))
    assert len(truth) == len(sample)
    unlabelled = sample.drop(columns=["label"])
    csv, parquet = folder / "csv" / "review_rows.csv", folder / "parquet" / "review_rows.parquet"
    csv.parent.mkdir()
    parquet.parent.mkdir()
    unlabelled.to_csv(csv, index=False)
    unlabelled.sample(frac=1.0, random_state=5).to_parquet(parquet)
    return {"csv": csv, "parquet": parquet, "truth": truth}


def start(tmp_path_factory, data_dir, name: str):
    env = {"SGI_CACHE_DIR": str(tmp_path_factory.mktemp(f"{name}-cache")), "SGI_DASHBOARD_MODEL": "hashing",
           "SGI_DATA_DIR": str(data_dir)}
    log = tmp_path_factory.mktemp(f"{name}-log") / "streamlit.log"
    return running_app(env, log, "--server.address", "127.0.0.1", "--server.headless", "true",
                       "--browser.gatherUsageStats", "false")


def upload(page, path) -> None:
    page.get_by_role("heading", name="Data", level=1).wait_for()
    wait_idle(page, SCORING_TIMEOUT_MS)
    page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(path))
    page.get_by_text(path.name).first.wait_for()
    page.get_by_text("scored.", exact=False).first.wait_for(timeout=SCORING_TIMEOUT_MS)
    wait_idle(page, SCORING_TIMEOUT_MS)
    assert_no_error(page, f"upload of {path.name}")


def shown_triple(page) -> tuple[str, str]:
    """The question and the response on screen (the first and third plain texts of the page), whitespace as row keys
    normalise it (the browser's text of a cell lays out its line breaks)."""
    shown = page.get_by_test_id("stMain").get_by_test_id("stText")
    return normalise_text(shown.nth(0).inner_text()), normalise_text(shown.nth(2).inner_text())


def shown_row(page) -> str:
    heading = page.get_by_role("heading", level=3).filter(has_text=re.compile(r"^Row [\d,]+ of the file"))
    return heading.first.inner_text()


def test_labels_survive_a_restart_and_a_reupload_as_parquet(chromium, tmp_path_factory, texts):  # noqa: F811
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    data_dir = tmp_path_factory.mktemp("app-data")
    given = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        with start(tmp_path_factory, data_dir, "first") as port:
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            page.goto(f"http://127.0.0.1:{port}")
            upload(page, texts["csv"])
            open_page(page, "Review")
            assert_no_error(page, "Review")
            shoot(page, "review_01_first_row")
            for i in range(N_LABELLED):
                row, triple = shown_row(page), shown_triple(page)
                word = texts["truth"][triple]
                given[triple] = word
                page.get_by_role("button", name=word.capitalize(), exact=True).click()
                page.wait_for_function(
                    "(row) => ![...document.querySelectorAll('h3')].some(h => h.innerText.startsWith(row))", arg=row)
                wait_idle(page)
                assert_no_error(page, f"label {i + 1}")
            assert page.get_by_text(f"{N_LABELLED} of 100 rows labelled").count() == 1
            shoot(page, "review_02_after_30_labels")
            page.close()
        assert len(AnnotationStore(data_dir / "annotations" / "review_rows.jsonl").current()) == N_LABELLED

        with start(tmp_path_factory, data_dir, "second") as port:
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            page.goto(f"http://127.0.0.1:{port}")
            upload(page, texts["parquet"])
            open_page(page, "Review")
            assert page.get_by_text(f"{N_LABELLED} of 100 rows labelled").count() == 1
            assert page.get_by_text(f"{N_LABELLED} annotated;", exact=False).count() >= 1
            shoot(page, "review_03_after_restart_parquet")
            open_page(page, "Overview")
            # On 30 rows the Overview's verdict may rightly be an error box (SGI near chance): exceptions only.
            assert page.locator(EXCEPTION).count() == 0
            n_grounded = int(metric_value(page, "Labelled grounded"))
            n_hallucinated = int(metric_value(page, "Labelled hallucinated"))
            auroc_shown = metric_value(page, "AUROC")
            caption = ("labels: the file's label column and the annotations, where they agree "
                       f"({N_LABELLED} rows; 0 in the file, {N_LABELLED} annotated")
            assert page.get_by_text(caption, exact=False).count() == 1
            shoot(page, "review_04_overview_on_the_labels")
            page.close()
        browser.close()

    assert n_grounded + n_hallucinated == N_LABELLED
    assert n_grounded == sum(word == "grounded" for word in given.values())
    table = load_triples(texts["parquet"])
    pairs = list(zip(table.frame["question"].map(normalise_text), table.frame["response"].map(normalise_text)))
    labelled = np.array([pair in given for pair in pairs])
    assert labelled.sum() == N_LABELLED
    scored = score_table(table.subset(np.flatnonzero(labelled)), load_encoder("hashing"))
    y_true = np.array([given[normalise_text(q), normalise_text(r)] == "grounded"
                       for q, r in zip(scored["question"], scored["response"])], dtype=float)
    expected = roc_analysis(y_true, scored["sgi"].to_numpy(), n_boot=0)
    assert auroc_shown == f"{expected.auroc:.3f}"
    assert len(set(row_keys(scored))) == N_LABELLED
