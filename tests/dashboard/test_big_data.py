"""Big files in the app: limits with a clear message, scored files opened as they are, chunked scoring."""

import io
import sys

import numpy as np
import pandas as pd
import pytest

from dashboard import devices, page, services, state
from dashboard.views import texts
from sgi_core import evaluation
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.models.device import resolve_device
from sgi_core.render import figures as charts
from sgi_core.scoring import score_table
from sgi_core.stats import bootstrap
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, array, assert_clean, figures, goto, metric, upload


@pytest.fixture(scope="module")
def scored_parquet(tmp_path_factory):
    """The bundled sample scored by ``score_table`` with a model other than the app's, written as Parquet."""
    path = tmp_path_factory.mktemp("scored") / "sample_scored.parquet"
    score_table(load_triples(SAMPLE_CSV), load_encoder("hashing-16")).to_parquet(path, index=False)
    return path


@pytest.fixture(autouse=True)
def local_files_root(tmp_path_factory, monkeypatch):
    """The Data page's path box opens files under pytest's temporary folder."""
    monkeypatch.setenv("SGI_LOCAL_FILES_ROOT", str(tmp_path_factory.getbasetemp()))


def open_path(at, path) -> None:
    goto(at, "data")
    at.text_input(key="data.path").set_value(str(path)).run()


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_scored_parquet_opens_with_its_own_scores(app, scored_parquet):
    open_path(app, scored_parquet)
    assert_clean(app)
    assert metric(app, "Rows read") == "300"
    assert any("already scored" in i.value for i in app.info)
    assert not app.main.selectbox  # no column mapping to choose
    expected = evaluation.evaluate(pd.read_parquet(scored_parquet))
    goto(app, "overview")
    assert_clean(app)
    # The file's hashing-16 scores are shown, not the app's hashing model re-scoring the texts.
    assert metric(app, "AUROC") == f"{expected.roc.auroc:.3f}"
    assert metric(app, "Cohen's d") == f"{expected.effect_size.cohens_d:+.2f}"
    assert any("nothing re-embedded" in c.value for c in app.caption)
    for name in ("strata", "calibration", "geometry", "explorer", "detectors"):
        goto(app, name)
        assert_clean(app)


def test_missing_path_is_named(app, tmp_path, tmp_path_factory):
    open_path(app, tmp_path / "nothing.parquet")
    assert errors(app) == [texts.plain(f"no file at this path (file '{tmp_path / 'nothing.parquet'}'). Give the path "
                                       "of a CSV, TSV, JSON Lines or Parquet file under "
                                       f"{tmp_path_factory.getbasetemp().resolve()}")]


def test_tiny_rows_upload_ends_in_a_message_and_the_limit_can_be_raised(app):
    raw = b"question,context,response\n" + b"q1,c1,r12345\n" * 200_000
    upload(app, "tiny.csv", raw)
    (message,) = errors(app)
    assert message.startswith(texts.plain("the file has more than 100,000 rows; the limit is 100,000 rows to score "
                                          "(file 'tiny.csv'). Raise the limit with SGI_MAX_ROWS (or the Limits "
                                          "setting on the Data page)"))
    app.number_input(key="data.limits.max_rows").set_value(10).run()
    app.number_input(key="data.limits.max_cell_chars").set_value(5).run()
    upload(app, "small.csv", b"question,context,response\nq,c,r123456\n")
    assert errors(app) == [texts.plain("a cell has 7 characters; the limit is 5 characters per cell (file "
                                       "'small.csv', column 'response', row 1). Raise the limit with "
                                       "SGI_MAX_CELL_CHARS (or the Limits setting on the Data page) if this machine "
                                       "has the memory")]


def test_parquet_bomb_upload_ends_in_a_message(app):
    n = 3_000_000
    buffer = io.BytesIO()
    pd.DataFrame({"question": pd.Series(["q"] * n, dtype="category"), "context": np.zeros(n, dtype=np.int8),
                  "response": np.zeros(n, dtype=np.int8)}).to_parquet(buffer, index=False, compression="zstd")
    upload(app, "bomb.parquet", buffer.getvalue())
    (message,) = errors(app)
    assert message.startswith(texts.plain("the file has 3,000,000 rows; the limit is 100,000 rows to score "
                                          "(file 'bomb.parquet')"))


def test_the_text_limit_can_be_set_on_the_page(app):
    app.number_input(key="data.limits.max_chars").set_value(20).run()
    upload(app, "text.csv", b"question,context,response\nwhat,some context,an answer\nq,c,r\n")
    (message,) = errors(app)
    assert texts.plain("the limit is 20 characters of text in a file to score") in message
    assert texts.plain("Raise the limit with SGI_MAX_CHARS (or the Limits setting on the Data page)") in message


def test_limits_from_the_environment_start_the_setting(monkeypatch, app):
    monkeypatch.setenv("SGI_MAX_SCORED_ROWS", "250")
    goto(app, "data")
    assert app.number_input(key="data.limits.max_rows").value == 100_000
    assert services.env_limits().max_scored_rows == 250


def test_chunked_scoring_equals_one_pass(monkeypatch, isolated_cache):
    monkeypatch.setattr(services, "SCORE_CHUNK_ROWS", 7)
    monkeypatch.setattr(services, "chosen_device", lambda: "cpu")
    services.scored_frame.clear()
    table = load_triples(SAMPLE_CSV)
    chunked = services.scored_frame(state.DataKey("sample", "chunked", (), "grounded"), MODEL, table)
    pd.testing.assert_frame_equal(chunked, score_table(table, load_encoder(MODEL)))


def test_drawn_samples_rows_in_order_and_says_so():
    frame = pd.DataFrame({"sgi": np.arange(50.0)})
    shown, caption = page.drawn(frame, limit=10)
    assert len(shown) == 10 and shown["sgi"].is_monotonic_increasing
    assert caption == "Drawn: a random sample of 10 of the 50 rows; the numbers use every row."
    pd.testing.assert_frame_equal(page.drawn(frame, limit=10)[0], shown)
    assert page.drawn(frame, limit=50) == (frame, "")


def test_plottable_picks_columns_before_rows():
    frame = pd.DataFrame({"input_row": [1, 2, 3], "label": [1.0, 0.0, np.nan], "sgi": [1.2, 1e8, 0.9],
                          "sgi_status": ["ok", "degenerate: r = c", "ok"], "context": ["long text"] * 3})
    shown = charts.plottable(frame)
    assert shown.columns.tolist() == ["input_row", "label", "sgi"]
    assert shown["input_row"].tolist() == [1, 3]


def test_curve_points_keep_both_ends_and_at_most_the_limit():
    assert charts.curve_points(5, limit=10).tolist() == [0, 1, 2, 3, 4]
    # 0, 99/4 = 24.75, 49.5, 74.25, 99 rounded (half to even).
    assert charts.curve_points(100, limit=5).tolist() == [0, 25, 50, 74, 99]


def test_big_file_pages_say_what_they_draw_and_how_intervals_were_made(monkeypatch, app, sample_scores):
    monkeypatch.setattr(page, "DRAWN_ROWS", 50)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_MAX_ROWS", 100)
    monkeypatch.setattr(services, "BOOTSTRAP_MAX_ROWS", 100)
    monkeypatch.setattr(charts, "CURVE_POINTS", 40)
    goto(app, "overview")
    assert_clean(app)
    captions = [c.value for c in app.caption]
    n_ok = int((sample_scores["sgi_status"] == "ok").sum())
    assert f"Drawn: a random sample of 50 of the {n_ok:,} rows; the numbers use every row." in captions
    (histogram,) = [f for f in figures(app) if f["layout"]["title"]["text"].startswith("SGI by label")]
    assert sum(len(array(trace["x"])) for trace in histogram["data"]) == 50
    assert any("(delta method), AUROC" in c and "(DeLong's variance)" in c and "closed forms" in c for c in captions)
    assert any(c.startswith("Length-matched AUROC") and c.endswith("Interval: delta method.") for c in captions)
    (roc,) = [f for f in figures(app) if f["layout"]["title"]["text"].startswith("ROC")]
    assert max(len(array(trace["x"])) for trace in roc["data"]) <= 40
    assert any(c.startswith("Each curve is drawn through at most 40 of its points") for c in captions)
    goto(app, "explorer")
    assert_clean(app)
    assert f"Drawn: a random sample of 50 of the {n_ok:,} rows; the numbers use every row." in [
        c.value for c in app.caption]
    goto(app, "calibration")
    assert_clean(app)
    n_thresholds = sample_scores["sgi"].nunique() + 1
    assert (f"Drawn through 40 of the {n_thresholds:,} thresholds; the metrics above use every row."
            in [c.value for c in app.caption])
    (curves,) = [f for f in figures(app) if f["layout"]["title"]["text"].startswith("Metrics as the threshold")]
    assert [len(array(trace["x"])) for trace in curves["data"]] == [40] * 4


def test_the_device_is_named_without_importing_torch_for_it(monkeypatch):
    import torch  # noqa: F401  (present so that it can be hidden and put back)

    assert devices.known_device("auto") == resolve_device("auto")
    monkeypatch.delitem(sys.modules, "torch")
    assert devices.known_device("cpu") == "cpu"
    assert devices.known_device(" CPU ") == "cpu"
    assert devices.known_device("auto") is None and devices.known_device("cuda") is None
    assert "torch" not in sys.modules


def test_the_app_takes_arrow_memory_from_malloc_which_hands_it_back(app):
    import pyarrow as pa

    assert_clean(app)  # the app ran, so its services are loaded in this process
    assert pa.default_memory_pool().backend_name == "system"
