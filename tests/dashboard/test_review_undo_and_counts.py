"""The Review page: undo takes back this session's own label in its own store; counts, ids, exports and the
Overview's hint."""

from __future__ import annotations

import io

import pandas as pd

from dashboard.services import label_exchange_services
from dashboard.views import texts
from sgi_core.io.triples import load_triples
from sgi_core.review.annotations import AnnotationStore, annotations_path, row_keys
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, goto, metric, upload
from tests.dashboard.test_review_page import label, review, shown_row, store  # noqa: F401 (the fixture)

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
KEYS = row_keys(load_triples(SAMPLE_CSV).frame)


def in_force() -> dict:
    return store().current().set_index("key")["label"].to_dict()


def test_undo_takes_back_my_label_and_not_the_one_another_tab_gave_since(review):
    at = review
    row = label(at, "grounded")
    key = KEYS[row - 1]
    AnnotationStore(store().path).add(key, "hallucinated", annotator="another tab")
    at.button(key="review.undo").click().run()
    assert_clean(at)
    assert in_force() == {key: "hallucinated"}
    assert at.button(key="review.undo").disabled


def test_undo_after_switching_files_goes_to_the_store_the_label_was_written_to(review):
    at = review
    row = label(at, "hallucinated")
    other = SAMPLE.head(80).to_csv(index=False).encode()  # the same rows under another name: the same keys
    upload(at, "other.csv", other)
    goto(at, "review")
    explained = at.button(key="review.undo").help
    at.button(key="review.undo").click().run()
    assert_clean(at)
    assert KEYS[row - 1] not in in_force()
    assert not annotations_path("other.csv").exists()
    assert f"another file's annotations ({texts.plain('halueval_qa_sample.jsonl')})" in explained


def test_unsure_is_not_counted_as_a_labelled_row(review):
    at = review
    label(at, "unsure")
    assert at.get("progress")[0].proto.text == "0 of 100 rows labelled (1 more marked unsure: no label, not counted)"
    label(at, "grounded")
    assert at.get("progress")[0].proto.text.startswith("1 of 100 rows labelled")


def test_the_row_shows_the_files_own_id_column(review):
    at = review
    row = shown_row(at)
    assert f"id: {texts.plain(SAMPLE['id'].iloc[row - 1])} (the file's own id column)" in [c.value for c in at.caption]
    assert at.text[0].value == SAMPLE["question"].iloc[row - 1]  # the texts come first, as before


def test_more_labels_never_asks_for_more_rows_than_are_left(review):
    half = SAMPLE.head(120).copy()
    half.loc[60:, "label"] = ""  # 60 labelled rows, 60 left
    at = upload(review, "half.csv", half.to_csv(index=False).encode())
    goto(at, "review")
    at.number_input(key="review.half_width").set_value(0.01).run()
    assert_clean(at)
    assert metric(at, "More labels needed") == "60"
    (note,) = [i.value for i in at.info if i.value.startswith("Only ")]
    assert note.startswith("Only 60 rows are left to label, fewer than the target needs")


def test_the_exports_are_built_only_when_downloaded(review, monkeypatch):
    at = review
    rows = [label(at, "grounded", note="fine"), label(at, "unsure")]
    built, handed = [], {}
    original = label_exchange_services.annotation_table
    monkeypatch.setattr(label_exchange_services, "annotation_table", lambda *a: built.append(1) or original(*a))
    for name in ("export_jsonl", "export_table"):  # keep what the page hands each button, to click it here
        made = getattr(label_exchange_services, name)
        monkeypatch.setattr(label_exchange_services, name, lambda *a, _made=made, _name=name: handed.setdefault(
            _name, _made(*a)))
    at.run()
    assert_clean(at)
    buttons = at.get("download_button")
    assert [b.proto.label for b in buttons] == ["Export the annotations (JSON Lines)",
                                                "Export this file's labelled rows (CSV)"]
    assert all(b.proto.deferred_file_id and not b.proto.url for b in buttons)  # a callable, not the bytes
    assert built == []
    assert handed["export_jsonl"]() == store().path.read_bytes()
    table = pd.read_csv(io.BytesIO(handed["export_table"]()), dtype=str, keep_default_na=False)
    assert built == [1]
    assert table[["key", "id", "label", "note"]].values.tolist() == [
        [KEYS[r - 1], SAMPLE["id"].iloc[r - 1], word, note] for r, word, note in sorted(
            zip(rows, ["grounded", ""], ["fine", ""]))]
    assert (table["question"] == SAMPLE["question"].iloc[sorted(r - 1 for r in rows)].to_numpy()).all()


def test_a_long_upload_name_still_labels(review):
    at = upload(review, "n" * 251 + ".csv", SAMPLE.head(40).to_csv(index=False).encode())
    goto(at, "review")
    label(at, "grounded")
    for name in ("review", "overview", "data"):
        goto(at, name)
        assert_clean(at)
    assert len(AnnotationStore(annotations_path("n" * 251 + ".csv")).current()) == 1


def test_the_unlabelled_overview_points_to_the_review_page(app):
    upload(app, "unlabelled.csv", SAMPLE.head(50).drop(columns=["label"]).to_csv(index=False).encode())
    goto(app, "overview")
    assert any("label rows yourself on the **Review** page" in i.value for i in app.info)
