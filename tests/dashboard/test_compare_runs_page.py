"""Compare runs page: a second run uploaded or opened by path, the deltas, the paired plots, keys opened in the
Explorer."""

import io

import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.runs.comparison import compare_runs
from sgi_core.runs.matching import match_runs
from sgi_core.runs.reading import read_run
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, app_n_boot, array, assert_clean, figures, goto, metric, upload

SAMPLE = pd.read_csv(SAMPLE_CSV)
GROUNDED = SAMPLE[SAMPLE["answer_type"] == "right"].reset_index(drop=True)
HALLUCINATED = SAMPLE[SAMPLE["answer_type"] != "right"].reset_index(drop=True)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def open_compare(app, base: pd.DataFrame, new: pd.DataFrame):
    upload(app, "base.csv", csv_bytes(base))
    goto(app, "compare_runs")
    app.file_uploader(key="compare.upload").set_value(("new.csv", csv_bytes(new), "text/csv"))
    app.run()
    assert_clean(app)
    return app


def expected_comparison(base: pd.DataFrame, new: pd.DataFrame):
    encoder = load_encoder(MODEL)
    runs = [read_run(frame, source=name, scorer=lambda table: score_table(table, encoder))
            for name, frame in (("base.csv", base), ("new.csv", new))]
    matched = match_runs(runs[0].frame, runs[1].frame, key="question", scores=runs[0].scores)
    return compare_runs(matched, n_boot=app_n_boot(2000), seed=0), matched


def test_the_page_asks_for_a_second_run_first(app):
    goto(app, "compare_runs")
    assert_clean(app)
    assert any("Choose the new run" in info.value for info in app.info)


def test_grounded_against_hallucinated_answers_is_a_regression_by_the_labels_and_no_score_is_validated(app):
    open_compare(app, GROUNDED, HALLUCINATED)
    result, matched = expected_comparison(GROUNDED, HALLUCINATED)
    assert metric(app, "Keys matched") == "150" and metric(app, "Only in base") == "0"
    (table, *_) = [frame.value for frame in app.dataframe]
    sgi = table[table["score"] == "SGI"].iloc[0]
    expected = result.scores[0]
    # Each run holds one class: no score can be shown to track the labels, so none earns a word.
    assert expected.score == "sgi" and expected.verdict == "not validated" and expected.ci[1] < 0
    assert (sgi["mean base"], sgi["mean new"], sgi["new − base"]) == pytest.approx(
        (expected.mean_base, expected.mean_new, expected.difference))
    assert (sgi["95% CI low"], sgi["95% CI high"]) == pytest.approx(expected.ci)
    assert sgi["verdict"] == "not validated" and sgi["why"].startswith("no AUROC interval in base")
    assert table["score"].tolist()[:2] == ["SGI", "θ(r,q) response-question"] and len(table) == len(matched.scores)
    plots = figures(app)
    assert len(plots) == len(matched.scores)
    first = plots[0]
    points = sum(len(array(trace["x"])) for trace in first["data"] if trace["mode"] == "markers")
    assert points == 150 and first["layout"]["title"]["text"] == "SGI"
    assert metric(app, "Hallucination rate, base (labels only)") == "0.0%"
    assert metric(app, "Hallucination rate, new (labels only)") == "100.0%"
    assert metric(app, "New − base (labels only): regression") == "+1.000"
    headline = next(md.value for md in app.markdown if md.value.startswith("hallucination rate"))
    plain = headline.replace("\\", "")  # Markdown-escaped on the page
    assert plain.startswith("hallucination rate (labels): regression by the labels (paired) estimate")
    assert "labels only: base 0.0%, new 100.0%, new - base +1.000" in plain
    assert "detectable change" in plain and "refuses a smaller margin" in plain
    assert any("not validated on these labels" in w.value for w in app.warning)
    assert [b.label for b in app.get("download_button")] == ["Download the table (CSV)", "Download the report (HTML)"]


def test_the_new_runs_review_annotations_are_its_labels(app):
    from sgi_core.review.annotations import annotations_path, append_lines, decision_line, row_key

    unlabelled = HALLUCINATED.drop(columns=["label"])
    keys = [row_key(r.question, r.context, r.response) for r in unlabelled.head(40).itertuples()]
    append_lines(annotations_path("new.csv"), [decision_line(k, "hallucinated", annotator="t") for k in keys])
    open_compare(app, GROUNDED, unlabelled)
    assert any("New run labels: 0 in its file, 40 annotated on the Review page" in c.value for c in app.caption)
    assert metric(app, "Hallucination rate, new (labels only)") == "100.0%"


def test_unmatched_and_duplicated_keys_are_counted(app):
    new = pd.concat([HALLUCINATED.iloc[:100], HALLUCINATED.iloc[:10]], ignore_index=True)
    open_compare(app, GROUNDED, new)
    assert metric(app, "Keys matched") == "100"
    assert metric(app, "Only in base") == "50" and metric(app, "Only in new") == "0"
    assert metric(app, "Keys averaged (base / new)") == "0 / 10"


def test_a_key_that_changed_opens_in_the_explorer(app):
    open_compare(app, GROUNDED, HALLUCINATED)
    _, matched = expected_comparison(GROUNDED, HALLUCINATED)
    app.selectbox(key="compare.score").set_value("sgi").run()
    rows = app.selectbox(key="compare.row").options
    first = int(rows[0].removeprefix("row "))
    change = (matched.new["sgi"] - matched.base["sgi"]).abs()
    biggest = matched.first_row_base[int(change.to_numpy().argmax())] + 1
    assert first == biggest
    app.selectbox(key="compare.row").set_value(first).run()
    assert not app.exception
    assert app.session_state["explorer.row"] == first
    assert app.session_state["explorer.response"] == GROUNDED["response"].iloc[first - 1]


def test_the_path_box_opens_only_under_the_local_files_root(app, tmp_path, monkeypatch):
    monkeypatch.delenv("SGI_LOCAL_FILES_ROOT", raising=False)
    goto(app, "compare_runs")
    assert any("Opening files on this machine by path is off" in c.value for c in app.caption)
    root = tmp_path / "runs"
    root.mkdir()
    monkeypatch.setenv("SGI_LOCAL_FILES_ROOT", str(root))
    outside = tmp_path / "outside.csv"
    outside.write_bytes(csv_bytes(HALLUCINATED))
    goto(app, "compare_runs")
    app.text_input(key="compare.path").set_value(str(outside)).run()
    assert any("this path leads outside the folder files may be opened from" in e.value for e in app.error)
    app.text_input(key="compare.path").set_value("missing.csv").run()
    assert any("no file" in e.value for e in app.error)
    (root / "reworded.csv").write_bytes(csv_bytes(HALLUCINATED.assign(question=HALLUCINATED["question"] + " (v2)")))
    app.text_input(key="compare.path").set_value("reworded.csv").run()
    assert any("the two runs share no value of 'question'" in e.value for e in app.error)
    (root / "new.csv").write_bytes(csv_bytes(HALLUCINATED))
    app.text_input(key="compare.path").set_value("new.csv").run()
    assert_clean(app)
    assert metric(app, "Keys matched") == "150"


def test_with_a_labelled_sample_both_named_estimates_are_shown_and_each_adds_up(app):
    rng = np.random.default_rng(4)
    base = GROUNDED.assign(label=np.where(np.arange(150) < 60, GROUNDED["label"], np.nan))
    worse = pd.concat([HALLUCINATED.iloc[[i]] if rng.random() < 0.3 else GROUNDED.iloc[[i]] for i in range(150)],
                      ignore_index=True)
    new = worse.assign(label=np.where(np.arange(150) < 60, worse["label"], np.nan))
    open_compare(app, base, new)
    shown = {}
    for name in ("labels only", "prediction-powered"):
        rate_base = float(metric(app, f"Hallucination rate, base ({name})").rstrip("%")) / 100
        rate_new = float(metric(app, f"Hallucination rate, new ({name})").rstrip("%")) / 100
        (difference,) = [float(m.value) for m in app.metric if m.label.startswith(f"New − base ({name})")]
        # Each rounded to 0.1% or 0.001: the shown difference is the difference of the shown rates.
        assert difference == pytest.approx(rate_new - rate_base, abs=0.0015)
        shown[name] = (rate_base, rate_new, difference)
    halluc_new = 1 - worse["label"].to_numpy()[:60]
    assert shown["labels only"][1] == pytest.approx(halluc_new.mean(), abs=0.0005)
    assert shown["labels only"][0] == 0.0


def sampled_pair():
    """The base run's and a worse run's answers to 150 questions, the first 60 keys labelled in both."""
    rng = np.random.default_rng(4)
    base = GROUNDED.assign(label=np.where(np.arange(150) < 60, GROUNDED["label"], np.nan))
    worse = pd.concat([HALLUCINATED.iloc[[i]] if rng.random() < 0.3 else GROUNDED.iloc[[i]] for i in range(150)],
                      ignore_index=True)
    return base, worse.assign(label=np.where(np.arange(150) < 60, worse["label"], np.nan))


def same_numbers(app, first) -> tuple:
    """The page's metrics and table of score differences, checked equal to ``first`` (NaN equal to NaN) when given."""
    (table, *_) = [frame.value for frame in app.dataframe]
    shown = ({m.label: m.value for m in app.metric}, table)
    if first is not None:
        assert shown[0] == first[0]
        pd.testing.assert_frame_equal(shown[1], first[1])
    return shown


def test_shuffled_rows_of_either_run_show_the_same_numbers(app):
    base, new = sampled_pair()
    open_compare(app, base, new)
    first = same_numbers(app, None)
    assert "Hallucination rate, new (prediction-powered)" in first[0]
    app.file_uploader(key="compare.upload").set_value(
        ("new.csv", csv_bytes(new.sample(frac=1.0, random_state=3)), "text/csv")).run()
    assert_clean(app)
    same_numbers(app, first)
    upload(app, "base.csv", csv_bytes(base.sample(frac=1.0, random_state=8)))
    page = goto(app, "compare_runs")
    assert_clean(page)
    same_numbers(page, first)
