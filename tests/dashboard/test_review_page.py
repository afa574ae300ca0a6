"""The Review page in AppTest: labelling, undo, the label source every page uses, agreement and import."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dashboard.app_pages.review_panel import label_button_key
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.judge.cache import AnswerCache
from sgi_core.judge.client import JudgeClient
from sgi_core.judge.runner import plan_judging
from sgi_core.review.annotations import AnnotationStore, annotations_path, row_keys
from sgi_core.scoring import score_table
from sgi_core.stats.kappa import cohens_kappa
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, goto, metric, upload


@pytest.fixture
def review(tmp_path, monkeypatch, app):
    """The app on the Review page, its annotations kept in a fresh data folder."""
    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path / "data"))
    goto(app, "review")
    assert_clean(app)
    return app


def shown_row(at) -> int:
    (heading,) = [h.value for h in at.subheader if h.value.startswith("Row ")]
    return int(re.match(r"Row ([\d,]+) of the file", heading).group(1).replace(",", ""))


def store() -> AnnotationStore:
    return AnnotationStore(annotations_path(SAMPLE_CSV.name))


def label(at, word: str, note: str = "") -> int:
    """Label the row on screen; returns its 1-based file row."""
    row = shown_row(at)
    if note:
        at.text_input(key="review.note").input(note)
    at.button(key=label_button_key(word, row)).click().run()
    assert_clean(at)
    return row


def test_labels_are_saved_by_row_key_and_undo_retracts(review):
    table = load_triples(SAMPLE_CSV).frame
    keys = row_keys(table)
    at = review
    first = label(at, "hallucinated", note="wrong year")
    second = label(at, "grounded")
    assert first != second and shown_row(at) not in (first, second)
    current = store().current().set_index("key")
    assert current.loc[keys[first - 1], "label"] == "hallucinated"
    assert current.loc[keys[first - 1], "note"] == "wrong year"
    assert current.loc[keys[second - 1], "label"] == "grounded"
    assert "2 of 100 rows labelled" in at.get("progress")[0].proto.text
    at.button(key="review.undo").click().run()
    assert store().current()["key"].tolist() == [keys[first - 1]]
    assert shown_row(at) == second  # the undone row comes back first


def test_the_same_seed_serves_the_same_rows(review, app):
    at = review
    at.selectbox(key="review.strategy").set_value("stratified").run()
    at.number_input(key="review.seed").set_value(4).run()
    first = shown_row(at)
    at.number_input(key="review.seed").set_value(5).run()
    at.number_input(key="review.seed").set_value(4).run()
    assert shown_row(at) == first
    assert_clean(at)


def test_overview_uses_the_annotations_when_chosen(review):
    at = review
    truth = load_triples(SAMPLE_CSV).frame
    rows = []
    for _ in range(12):
        row = shown_row(at)
        word = "grounded" if truth["label"].iloc[row - 1] == 1.0 else "hallucinated"
        rows.append(label(at, word))
    at.radio(key="labels.source").set_value("annotations").run()
    goto(at, "overview")  # no exception; on 12 rows the verdict may well be an error box saying SGI is near chance
    captions = [c.value for c in at.caption]
    assert "labels: the annotations made on the Review page (12 rows; 300 in the file, 12 annotated" in captions[0]
    scored = score_table(load_triples(SAMPLE_CSV), load_encoder("hashing"))
    positions = np.asarray(rows) - 1
    expected = roc_analysis(truth["label"].to_numpy()[positions], scored["sgi"].to_numpy()[positions], n_boot=0)
    assert metric(at, "AUROC") == f"{expected.auroc:.3f}"
    assert metric(at, "Labelled grounded") == f"{int((truth['label'].to_numpy()[positions] == 1).sum()):,}"


def test_agreement_of_file_labels_and_annotations_and_one_click_review(review):
    at = review
    truth = load_triples(SAMPLE_CSV).frame["label"].to_numpy()
    given = np.full(len(truth), np.nan)
    for i in range(8):
        row = shown_row(at)
        word = "hallucinated" if (truth[row - 1] == 1.0) == (i % 3 == 0) else "grounded"
        label(at, word)
        given[row - 1] = 1.0 if word == "grounded" else 0.0
    expected = cohens_kappa(truth, given)
    assert metric(at, "Cohen's kappa") == f"{expected.kappa:.3f}"
    assert metric(at, "Rows where they disagree") == f"{expected.n_disagree:,}"
    assert any(f"[{expected.kappa_ci[0]:.3f}, {expected.kappa_ci[1]:.3f}]" in c.value for c in at.caption)
    at.button(key="review.focus.the file's labels and the annotations").click().run()
    assert shown_row(at) == expected.disagree_rows[0] + 1
    assert any("Reviewing the rows where" in i.value for i in at.info)


def test_damaged_lines_and_other_data_are_reported(review):
    path = store().path
    path.parent.mkdir(parents=True, exist_ok=True)
    other = AnnotationStore(path)
    other.add("0" * 32, "grounded")
    with path.open("ab") as out:
        out.write(b'{"key": "broken\n')
    at = review
    at.run()
    warnings = [w.value for w in at.warning]
    assert any("line 2 skipped" in w for w in warnings)
    assert any("None of the 1 labelled rows in the annotations file is in this file" in w for w in warnings)


def test_import_keeps_this_files_rows_only_and_importing_twice_adds_nothing(review):
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    part = sample.sample(n=20, random_state=1)
    stranger = pd.DataFrame({"question": ["q"], "context": ["c"], "response": ["r"], "label": ["1"]})
    upload = ("labels.csv", pd.concat([part, stranger]).to_csv(index=False).encode(), "text/csv")
    at = review
    at.file_uploader(key="review.import").set_value(upload).run()
    at.button(key="review.import_button").click().run()
    assert [s.value for s in at.success] == ["20 of 21 labels matched rows of this file: 20 added (0 replacing "
                                             "another label), 0 already in force. Left out: 1 of other data, 0 "
                                             "conflicting, 0 unsure."]
    current = store().current()
    table = load_triples(SAMPLE_CSV)
    assert set(current["key"]) == set(row_keys(table.frame.iloc[part.index]))  # not the stranger's
    assert set(current["annotator"]) == {"import: labels.csv"}
    lines = len(store().read())
    at.button(key="review.import_button").click().run()
    assert "20 of 21 labels matched rows of this file: 0 added" in at.success[0].value
    assert len(store().read()) == lines
    at.file_uploader(key="review.import").set_value(("other.csv", stranger.to_csv(index=False).encode(),
                                                     "text/csv")).run()
    at.button(key="review.import_button").click().run()
    assert any("the labels come from other data" in e.value for e in at.error)
    assert len(store().current()) == 20


def test_a_judge_verdict_column_against_the_annotations(review, tmp_path, monkeypatch):
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(60).drop(columns=["label"])
    verdicts = np.arange(60) % 3 != 0
    sample["judge_answer_consistency_binary"] = verdicts.astype(int)
    sample["judge_model"] = "m"
    # The judge's statements of every row, cached under the keys a judging run with this endpoint and model uses.
    endpoint = "http://127.0.0.1:9/v1"
    monkeypatch.setenv("SGI_JUDGE_ENDPOINT", endpoint)
    monkeypatch.setenv("SGI_JUDGE_CACHE_DIR", str(tmp_path / "judge"))
    plan = plan_judging(sample, JudgeClient(endpoint, "m"), ["answer_consistency"])
    cache = AnswerCache()
    for keys in plan.rows:
        cache.put(keys["support"], "support", {"statements": [{"statement": "First claim.", "supported": True},
                                                              {"statement": "Second claim.", "supported": False}]})
    cache.close()
    at = upload(review, "judged.csv", sample.to_csv(index=False).encode())
    goto(at, "review")
    (statements,) = [d.value for d in at.dataframe if "judge's statement" in d.value.columns]
    assert statements.values.tolist() == [["First claim.", "supported"], ["Second claim.", "unsupported"]]
    given = np.full(60, np.nan)
    for i in range(9):
        row = label(at, "grounded" if i % 2 else "hallucinated")
        given[row - 1] = float(i % 2)
    expected = cohens_kappa(verdicts.astype(float), given)
    assert metric(at, "Cohen's kappa") == f"{expected.kappa:.3f}"
    assert metric(at, "Rows where they disagree") == f"{expected.n_disagree:,}"
    assert any("Every statement supported" in m.value or "not supported" in m.value for m in at.markdown)


def test_registered_detector_columns_are_named_and_oriented_by_the_registry(review):
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(40)
    share = np.linspace(0.0, 1.0, 40)
    sample["specifics_unsupported_share"] = share
    sample["my_judge"] = share[::-1]
    at = upload(review, "detectors.csv", sample.to_csv(index=False).encode())
    goto(at, "review")
    options = at.selectbox(key="review.score").options
    assert "unsupported specifics (share), negated" in options and "my_judge (file column)" in options
    assert "specifics_unsupported_share" not in options
    # Oriented higher = grounded: the worst false alarm under the negated share is the grounded row sharing most.
    # The queue's score is chosen by name; its display name is only drawn.
    at.selectbox(key="review.score").set_value("neg_specifics_unsupported_share").run()
    at.selectbox(key="review.strategy").set_value("false_alarms").run()
    grounded = np.flatnonzero(sample["label"].to_numpy() == "1")
    assert shown_row(at) == grounded[np.argmax(share[grounded])] + 1


def test_most_uncertain_serves_the_row_nearest_the_policy_threshold(review):
    at = review
    at.session_state["calibration.threshold"] = 1.0
    at.selectbox(key="review.strategy").set_value("uncertain").run()
    scored = score_table(load_triples(SAMPLE_CSV), load_encoder("hashing"))
    distance = np.abs(scored["sgi"].to_numpy() - 1.0)
    assert distance[shown_row(at) - 1] == np.nanmin(distance)  # ties (two rows at SGI 1.0 here) go by the seed
    assert any("nearest the threshold 1.000" in c.value for c in at.caption)


def test_the_review_page_reads_scores_by_name_whatever_their_display_names(app, tmp_path, monkeypatch):
    from dataclasses import replace

    from sgi_core.scores import registry

    # A display name is words on screen: renaming SGI's label must neither break the page nor its uncertainty queue.
    monkeypatch.setitem(registry.SCORES, "sgi", replace(registry.SCORES["sgi"], label="Semantic Grounding Index"))
    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path / "data"))
    at = goto(app, "review")
    assert_clean(at)
    at.session_state["calibration.threshold"] = 1.0
    at.selectbox(key="review.strategy").set_value("uncertain").run()
    assert_clean(at)
    assert "Semantic Grounding Index" in at.selectbox(key="review.score").options
    scored = score_table(load_triples(SAMPLE_CSV), load_encoder("hashing"))
    distance = np.abs(scored["sgi"].to_numpy() - 1.0)
    assert distance[shown_row(at) - 1] == np.nanmin(distance)
