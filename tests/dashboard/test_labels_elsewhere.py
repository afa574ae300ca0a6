"""The same rows opened under another file name find their labels: the Review page says where they are and copies
them."""

import pandas as pd

from sgi_core.review.annotations import AnnotationStore, annotations_path, row_key
from sgi_core.review.label_lookup import labels_elsewhere
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, goto, upload

ROWS = pd.read_csv(SAMPLE_CSV).head(40).drop(columns=["label"])


def label_under(name: str, n: int) -> list[str]:
    """Label the first ``n`` rows (the sample's truth) in the annotations of a file called ``name``."""
    store = AnnotationStore(annotations_path(name))
    truth = pd.read_csv(SAMPLE_CSV).head(n)
    keys = [row_key(r.question, r.context, r.response) for r in truth.itertuples()]
    for key, label in zip(keys, truth["label"]):
        store.add(key, "grounded" if label == 1 else "hallucinated")
    store.add(keys[0], "unsure")
    return keys


def test_the_review_page_says_which_file_holds_the_rows_labels_and_copies_them(app):
    label_under("traces_export.json", 12)
    AnnotationStore(annotations_path("unrelated.csv")).add(row_key("q", "c", "r"), "grounded")
    upload(app, "rows.csv", ROWS.to_csv(index=False).encode())
    page = goto(app, "review")
    assert_clean(page)
    # Markdown-escaped, as every name from the data is.
    (info,) = [i.value.replace("\\", "") for i in page.info if "traces\\_export" in i.value]
    assert info.startswith("12 rows of this file have decisions in the annotations of traces_export.jsonl (11 "
                           "labelled grounded or hallucinated)")
    assert not any("unrelated" in i.value for i in page.info)
    page.button(key=f"review.copy.{annotations_path('traces_export.json')}").click().run()
    assert_clean(page)
    copied = AnnotationStore(annotations_path("rows.csv")).current()
    assert len(copied) == 11 and set(copied["label"]) <= {"grounded", "hallucinated"}
    assert any("11 of 100 rows labelled" in str(p.proto) for p in page.get("progress"))

def test_labels_elsewhere_counts_rows_per_file_and_leaves_out_the_files_own(tmp_path, monkeypatch):
    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path))
    keys = label_under("export.json", 5)
    label_under("copy.parquet", 3)
    own = annotations_path("rows.csv")
    AnnotationStore(own).add(keys[1], "grounded")
    found = labels_elsewhere(keys + ["a row of no file"], own.parent, exclude=own)
    assert [(m.path.rsplit("/", 1)[-1], m.n_rows, m.n_labelled) for m in found] == [("export.jsonl", 5, 4),
                                                                                    ("copy.jsonl", 3, 2)]
    assert labels_elsewhere(keys, tmp_path / "absent") == ()
