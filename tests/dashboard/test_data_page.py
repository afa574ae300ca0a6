"""Data page: uploads, column mapping, label direction, rejected rows, unlabelled and one-class files."""

import io

import pandas as pd
import pytest

from dashboard import devices, services
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, PAGES, app_n_boot, array, assert_clean, figures, goto, metric, upload

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)


def table_with(at, column: str) -> pd.DataFrame:
    """The first table on the page that has ``column``."""
    return next(df.value for df in at.dataframe if column in df.value.columns)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def test_uploaded_file_with_other_column_names_is_mapped_and_label_direction_guessed(app):
    renamed = SAMPLE.head(40).rename(columns={"question": "query", "context": "passage", "response": "answer"})
    renamed["is_hallucinated"] = (renamed.pop("label") == "0").astype(int).astype(str)
    upload(app, "renamed.csv", csv_bytes(renamed))
    assert_clean(app)
    mapping = {s.key: s.value for s in app.selectbox if s.key.startswith("data.mapping.")}
    assert mapping == {"data.mapping.question": "query", "data.mapping.context": "passage",
                       "data.mapping.response": "answer", "data.mapping.label": "is_hallucinated"}
    assert app.radio(key="data.label_positive").value == "hallucinated"
    goto(app, "overview")
    assert metric(app, "Labelled grounded") == f"{(SAMPLE.head(40)['label'] == '1').sum():,}"


def test_changing_the_mapping_rescores(app):
    upload(app, "two.csv", csv_bytes(SAMPLE.head(30).assign(other_answer=SAMPLE["context"].head(30))))
    app.selectbox(key="data.mapping.response").set_value("other_answer").run()
    assert_clean(app)
    status = table_with(app, "sgi_status")
    # Response = context makes every row degenerate: the page must say so, not hide it.
    assert set(status["sgi_status"]) == {"degenerate: response equals context (SGI unbounded)"}
    assert len(status) == 30


def test_rows_that_cannot_be_scored_are_listed_with_reasons(app):
    frame = SAMPLE.head(20).copy()
    frame.loc[3, "response"] = ""
    frame.loc[7, "question"] = "  "
    upload(app, "gaps.csv", csv_bytes(frame))
    assert_clean(app)
    assert metric(app, "Rows read") == "20"
    assert metric(app, "Rows that cannot be scored") == "2"
    rejected = table_with(app, "reason")
    assert rejected.to_dict("list") == {"row": [4, 8], "reason": ["empty response", "empty question"]}
    goto(app, "overview")
    assert metric(app, "Rows") == "20" and metric(app, "Scored") == "18"


@pytest.mark.parametrize("name, content, message", [
    ("labels.csv", b"question,context,response,label\nq,c,r,maybe\n", "unknown label values 'maybe'"),
    ("columns.csv", b"a,b\n1,2\n", "no column for question, context, response"),
    ("binary.csv", b"\x00\x01\x02PK", "the file is binary"),
    ("empty.csv", b"", "the file is empty"),
])
def test_bad_files_show_the_reason_on_every_page(app, name, content, message):
    upload(app, name, content)
    assert not app.exception
    assert message in app.error[0].value
    for page in PAGES[1:]:
        goto(app, page)
        assert message in app.error[0].value, page


def test_bad_label_error_names_rows_and_what_to_do(app):
    upload(app, "labels.csv", b"question,context,response,label\nq,c,r,1\nq,c,r,sure\nq,c,r,0\n")
    text = app.error[0].value
    assert "row 2" in text and "column 'label'" in text and "Use 1/0" in text


def test_parquet_and_jsonl_uploads(app):
    buffer = io.BytesIO()
    SAMPLE.head(12).to_parquet(buffer, index=False)
    upload(app, "sample.parquet", buffer.getvalue())
    assert_clean(app)
    assert metric(app, "Rows read") == "12"
    upload(app, "sample.jsonl", SAMPLE.head(9).to_json(orient="records", lines=True).encode())
    assert_clean(app)
    assert metric(app, "Rows read") == "9"


def test_unlabelled_file_keeps_scores_and_explains_empty_label_panels(app):
    upload(app, "unlabelled.csv", csv_bytes(SAMPLE.head(50).drop(columns=["label"])))
    assert_clean(app)
    assert app.selectbox(key="data.mapping.label").value == "(no label column)"
    goto(app, "overview")
    assert_clean(app)
    assert "no labels" in app.info[0].value
    assert len(figures(app)) == 1  # the score histogram, without label panels
    for page in ("strata", "calibration"):
        goto(app, page)
        assert_clean(app)
        assert "no labels" in app.info[0].value
    goto(app, "calibration")
    assert app.get("download_button")
    for page in ("geometry", "explorer"):
        goto(app, page)
        assert_clean(app)
        assert figures(app)
    goto(app, "explorer")
    assert metric(app, "P(grounded)") == "n/a"


def test_one_class_file_is_explained(app):
    grounded = SAMPLE[SAMPLE["label"] == "1"].head(30)
    upload(app, "grounded_only.csv", csv_bytes(grounded))
    assert_clean(app)
    assert any("only one label class" in w.value for w in app.warning)
    for page in ("overview", "strata", "calibration"):
        goto(app, page)
        assert_clean(app)
        assert "Every labelled row is grounded" in app.info[0].value


def test_reuploading_the_same_file_does_not_embed_again(app, monkeypatch):
    encoder = services.encoder(MODEL, devices.default_device(), devices.default_backend())  # what the app starts on
    calls = []
    real_encode = encoder.encode

    def counting_encode(texts, **kwargs):
        calls.append(len(texts))
        return real_encode(texts, **kwargs)

    monkeypatch.setattr(encoder, "encode", counting_encode)
    fresh = SAMPLE.head(25).copy()
    for role in ("question", "context", "response"):
        fresh[role] = fresh[role] + " (new text)"  # not embedded when the app opened on the sample
    content = csv_bytes(fresh)
    upload(app, "first.csv", content)
    assert calls, "the first upload must embed its texts"
    embedded = list(calls)
    goto(app, "overview")
    goto(app, "geometry")
    upload(app, "first.csv", content)
    upload(app, "copy.csv", content)
    assert calls == embedded


def test_unavailable_models_say_how_to_get_them(app):
    names, unavailable = services.model_choices()
    assert app.multiselect(key="data.models").options == names
    if not unavailable:
        pytest.skip("every registered model is installed here")
    table = table_with(app, "how to get it")
    assert table["model"].tolist() == [m.name for m in unavailable]
    assert table["how to get it"].tolist() == [m.how_to_get for m in unavailable]


def test_overview_extra_score_column_gets_its_roc(app, sample_scores):
    judged = SAMPLE.assign(judge=sample_scores["theta_rq"].map(repr))
    upload(app, "judged.csv", csv_bytes(judged))
    goto(app, "overview")
    app.multiselect(key="detectors.columns").set_value(["judge"]).run()
    assert_clean(app)
    assert app.multiselect(key="detectors.columns").options == ["judge"]  # pair_id names rows: no score
    expected = roc_analysis(sample_scores["label"], sample_scores["theta_rq"], n_boot=app_n_boot())
    names = [trace["name"] for trace in figures(app)[1]["data"]]
    assert f"judge (file column) (AUROC {expected.auroc:.3f})" in names


def test_degenerate_rows_are_counted_where_plots_leave_them_out(app, tmp_path):
    echo = SAMPLE.head(30).copy()
    echo.loc[:4, "response"] = echo.loc[:4, "context"]
    upload(app, "echo.csv", csv_bytes(echo))
    goto(app, "overview")
    assert_clean(app)
    assert any(c.value.startswith("5 rows with degenerate geometry") for c in app.caption)
    histogram = figures(app)[0]
    assert sum(len(array(trace["x"])) for trace in histogram["data"]) == 25
    # Means leave the degenerate rows (SGI in the millions) out; the caption says so.
    (tmp_path / "echo.csv").write_bytes(csv_bytes(echo))
    scored = score_table(load_triples(tmp_path / "echo.csv"), load_encoder(MODEL))
    ordinary = scored[scored["sgi_status"] == "ok"]
    assert metric(app, "Mean SGI, grounded") == f"{ordinary.loc[ordinary['label'] == 1, 'sgi'].mean():.3f}"
    assert any("out of the means and Cohen's d" in c.value for c in app.caption)
