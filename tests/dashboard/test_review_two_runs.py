"""Review page, two runs: both answers to a key side by side, each label in its own file's store, the paired
estimate."""

import numpy as np
import pandas as pd

from dashboard.app_pages.review_panel import label_button_key
from sgi_core.review.annotations import AnnotationStore, annotations_path, row_key
from sgi_core.review.queues import paired_queue
from sgi_core.runs.matching import match_runs
from sgi_core.runs.rates import paired_rate_difference
from sgi_core.stats.proportions import keys_to_decide
from tests.dashboard.conftest import assert_clean, goto, metric
from tests.dashboard.test_compare_runs_page import GROUNDED, HALLUCINATED, open_compare

N = 40


def runs():
    """The base run answers the first 40 questions right; the new run answers the odd ones wrong."""
    base = GROUNDED.head(N).drop(columns=["label"]).reset_index(drop=True)
    new = pd.concat([HALLUCINATED.head(N).iloc[i:i + 1] if i % 2 else GROUNDED.head(N).iloc[i:i + 1]
                     for i in range(N)], ignore_index=True).drop(columns=["label"])
    return base, new


def queue(base, new):
    """The matched keys' positions in the page's order, and each one's row in the base and in the new run."""
    matched = match_runs(base, new, key="question", scores=[])
    order = paired_queue(np.zeros(N, bool), np.zeros(N, bool), seed=0, keys=matched.keys)
    return order, matched.first_row_base, matched.first_row_new


def two_runs_mode(app):
    base, new = runs()
    open_compare(app, base, new)
    page = goto(app, "review")
    page.radio(key="review.mode").set_value("two runs").run()
    assert_clean(page)
    return page, base, new


def test_the_mode_asks_for_the_new_run_first(app):
    page = goto(app, "review")
    page.radio(key="review.mode").set_value("two runs").run()
    assert_clean(page)
    assert any("Open the new run on the Compare runs page first" in i.value for i in page.info)


def test_labels_go_to_each_files_store_in_the_seeded_random_order_and_the_estimate_follows(app):
    page, base, new = two_runs_mode(app)
    order, base_row, new_row = queue(base, new)
    first = int(order[0])
    shown = [t.value for t in page.text]
    assert base["response"].iloc[base_row[first]] in shown and new["response"].iloc[new_row[first]] in shown
    truth_new = ["hallucinated" if i % 2 else "grounded" for i in range(N)]
    for position in order[:12]:
        page.button(key=label_button_key("grounded", position, "base")).click().run()
        page.button(key=label_button_key(truth_new[new_row[position]], position, "new")).click().run()
    assert_clean(page)
    base_store = AnnotationStore(annotations_path("base.csv")).current()
    new_store = AnnotationStore(annotations_path("new.csv")).current()
    labelled = order[:12]
    assert set(base_store["key"]) == {row_key(*base.iloc[base_row[i]][["question", "context", "response"]])
                                      for i in labelled}
    assert set(new_store["key"]) == {row_key(*new.iloc[new_row[i]][["question", "context", "response"]])
                                     for i in labelled}
    halluc_new = np.array([truth_new[new_row[i]] == "hallucinated" for i in labelled], dtype=float)
    expected = paired_rate_difference(np.zeros(12), halluc_new)
    assert metric(page, "Hallucination rate, base (labels only)") == "0.0%"
    assert metric(page, "Hallucination rate, new (labels only)") == f"{expected.rate_new:.1%}"
    assert any(f"{N - 12:,} of {N:,} matched keys left" in c.value for c in page.caption)
    needed = keys_to_decide(expected.base_only, expected.new_only, 12, effect=0.1, n_left=N - 12)
    assert any(f"About {needed.n_more:,} more keys" in c.value for c in page.caption)
    assert needed.n_more <= N - 12


def test_undo_in_the_two_runs_mode_takes_back_the_last_label_in_the_store_it_went_to(app):
    page, base, new = two_runs_mode(app)
    first = int(queue(base, new)[0][0])
    page.button(key=label_button_key("grounded", first, "base")).click().run()
    page.button(key=label_button_key("hallucinated", first, "new")).click().run()
    assert len(AnnotationStore(annotations_path("new.csv")).current()) == 1
    page.button(key="review.pair.undo").click().run()
    assert_clean(page)
    assert len(AnnotationStore(annotations_path("new.csv")).current()) == 0
    assert len(AnnotationStore(annotations_path("base.csv")).current()) == 1


def test_the_match_key_is_kept_across_pages_and_the_two_runs_mode_matches_on_it(app):
    base, new = runs()
    # Half the questions reworded in the new run, the pair ids kept: only the id matches all 40 keys.
    new = new.assign(question=[f"reworded {q}" if i % 2 else q for i, q in enumerate(new["question"])])
    open_compare(app, base, new)
    assert metric(app, "Keys matched") == f"{N // 2:,}"
    app.selectbox(key="compare.key").set_value("pair_id").run()
    assert_clean(app)
    assert metric(app, "Keys matched") == f"{N:,}"
    goto(app, "overview")
    page = goto(app, "compare_runs")
    assert page.selectbox(key="compare.key").value == "pair_id"
    assert metric(page, "Keys matched") == f"{N:,}"
    page = goto(app, "review")
    page.radio(key="review.mode").set_value("two runs").run()
    assert_clean(page)
    # Markdown-escaped, as every text from the data is.
    assert any(c.value.startswith("Matched on pair\\_id: ") for c in page.caption)
    assert any(f"{N:,} of {N:,} matched keys left" in c.value for c in page.caption)
