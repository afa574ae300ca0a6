"""Limits on rows, columns and characters per cell: checked before a table is read whole or scored."""

import io
import re
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io import parquet
from sgi_core.io.limits import (
    DEFAULT_MAX_ROWS,
    InputLimits,
    check_cells,
    check_shape,
    is_scored,
    parquet_shape,
)
from sgi_core.io.reading import read_table
from sgi_core.io.scored import scored_table
from sgi_core.io.triples import load_triples, validate_triples

TRIPLE = ["question", "context", "response"]
SCORES = {"theta_qc": 1.0, "theta_rq": 0.9, "theta_rc": 0.6, "sgi": 1.5, "sgi_status": "ok"}


def parquet_bytes(frame: pd.DataFrame, **options) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, **options)
    return buffer.getvalue()


def test_defaults_and_environment():
    assert InputLimits() == InputLimits(100_000, 5_000_000, 200, 100_000)
    limits = InputLimits.from_env({"SGI_MAX_ROWS": "250_000", "SGI_MAX_CELL_CHARS": "1,000", "SGI_MAX_COLUMNS": " "})
    assert (limits.max_rows, limits.max_cell_chars, limits.max_columns) == (250_000, 1_000, 200)
    assert InputLimits.from_env({}) == InputLimits()
    assert InputLimits.from_dict(limits.to_dict()) == limits


@pytest.mark.parametrize("value", ["0", "-3", "1.5", "many"])
def test_bad_environment_value_is_named(value):
    with pytest.raises(SGIInputError, match=f"^SGI_MAX_ROWS must be a whole number of at least 1; "
                                            f"got '{re.escape(value)}'"
                                            f"\\. Unset it to use the default of {DEFAULT_MAX_ROWS:,}$"):
        InputLimits.from_env({"SGI_MAX_ROWS": value})


@pytest.mark.parametrize("value", [0, True, 2.5])
def test_bad_limit_argument(value):
    with pytest.raises(SGIInputError, match="^The 'max_columns' limit must be an int >= 1"):
        InputLimits(max_columns=value)


def test_is_scored_needs_every_score_column():
    assert is_scored([*TRIPLE, *SCORES])
    for missing in SCORES:
        assert not is_scored([*TRIPLE, *(c for c in SCORES if c != missing)])


def test_check_shape_boundaries_and_messages():
    limits = InputLimits(max_rows=3, max_scored_rows=5, max_columns=8)
    check_shape(3, TRIPLE, "t.csv", limits)
    check_shape(5, [*TRIPLE, *SCORES], "t.csv", limits)  # 8 columns, scored: the higher row limit
    with pytest.raises(SGIInputError, match=r"^the file has 4 rows; the limit is 3 rows to score \(file 't.csv'\)\. "
                                            r"Raise the limit with SGI_MAX_ROWS .* `python -m sgi_core score FILE"):
        check_shape(4, TRIPLE, "t.csv", limits)
    with pytest.raises(SGIInputError, match=r"^the file has 6 rows; the limit is 5 rows of an already scored file "
                                            r"\(file 't.csv'\)\. Raise the limit with SGI_MAX_SCORED_ROWS"):
        check_shape(6, [*TRIPLE, *SCORES], "t.csv", limits)
    with pytest.raises(SGIInputError, match=r"^the file has 9 columns; the limit is 8 columns .*SGI_MAX_COLUMNS"):
        check_shape(1, [*TRIPLE, *SCORES, "extra"], "t.csv", limits)
    with pytest.raises(SGIInputError, match=r"^the file has more than 3 rows; the limit is 3 rows to score"):
        check_shape(4, TRIPLE, "t.csv", limits, at_least=True)


@pytest.mark.parametrize("kind", ["pandas-str", "pandas-object", "arrow"])
def test_check_cells_counts_characters_not_bytes(kind):
    cells = ["é" * 5, "ab", None, "x" * 6, "y" * 7]  # 5 characters of 2 bytes each pass a limit of 5
    frame = pd.DataFrame({"context": pd.Series(cells, dtype=object if kind == "pandas-object" else "str"),
                          "n": range(5)})
    table = pa.RecordBatch.from_pandas(frame) if kind == "arrow" else frame
    limits = InputLimits(max_cell_chars=5)
    with pytest.raises(SGIInputError, match=r"^a cell has 7 characters; the limit is 5 characters per cell "
                                            r"\(file 't', column 'context', rows 14, 15\)\. "
                                            r".*SGI_MAX_CELL_CHARS") as err:
        check_cells(table, "t", limits, first_row=11)
    assert err.value.rows == [14, 15]
    check_cells(table, "t", InputLimits(max_cell_chars=7))


def test_read_table_without_limits_is_unchanged():
    raw = b"question,context,response\n" + b"q,c,r\n" * 5
    assert len(read_table(raw, name="t.csv")) == 5


def test_csv_row_limit_and_exact_fit():
    raw = b"question,context,response\n" + b"q,c,r\n" * 5
    assert len(read_table(raw, name="t.csv", limits=InputLimits(max_rows=5))) == 5
    with pytest.raises(SGIInputError, match=r"^the file has more than 4 rows; the limit is 4 rows to score"):
        read_table(raw, name="t.csv", limits=InputLimits(max_rows=4))


def test_scored_csv_gets_the_scored_row_limit():
    frame = pd.DataFrame({"question": ["q"] * 5, "context": ["c"] * 5, "response": ["r"] * 5, **SCORES})
    raw = frame.to_csv(index=False).encode()
    assert len(read_table(raw, name="s.csv", limits=InputLimits(max_rows=1, max_scored_rows=5))) == 5


def test_jsonl_limits_and_csv_cells():
    raw = b'{"question": "q", "context": "c", "response": "r"}\n' * 3
    with pytest.raises(SGIInputError, match="^the file has 3 rows; the limit is 2 rows to score"):
        read_table(raw, name="t.jsonl", limits=InputLimits(max_rows=2))
    csv = b"question,context,response\nq,abcdef,r\n"
    with pytest.raises(SGIInputError, match=r"column 'context', row 1\)"):
        read_table(csv, name="t.csv", limits=InputLimits(max_cell_chars=5))


def test_parquet_shape_from_metadata(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"question": ["q"] * 7, "context": ["c"] * 7, "response": ["r"] * 7}).to_parquet(path)
    assert parquet_shape(path) == (7, TRIPLE)


def test_parquet_bomb_is_refused_from_metadata_before_reading(monkeypatch):
    """The issue's hostile file: a few KB of Parquet that expand to 3 million rows."""
    n = 3_000_000
    frame = pd.DataFrame({"question": pd.Series(["q"] * n, dtype="category"), "context": np.zeros(n, dtype=np.int8),
                          "response": np.zeros(n, dtype=np.int8)})
    raw = parquet_bytes(frame, compression="zstd")
    assert len(raw) < 64 * 1024

    def refuse(*args, **kwargs):
        raise AssertionError("rows were read")
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", refuse)
    start = time.perf_counter()
    with pytest.raises(SGIInputError, match=r"^the file has 3,000,000 rows; the limit is 100,000 rows to score "
                                            r"\(file 'bomb.parquet'\)"):
        read_table(raw, name="bomb.parquet", limits=InputLimits())
    assert time.perf_counter() - start < 5


def test_tiny_rows_csv_is_refused_quickly():
    """The issue's other hostile file: 2.7 MB of CSV holding 200,000 tiny rows (600,000 texts to embed)."""
    raw = b"question,context,response\n" + b"q1,c1,r12345\n" * 200_000
    assert 2.5e6 < len(raw) < 2.9e6
    start = time.perf_counter()
    with pytest.raises(SGIInputError, match=r"^the file has more than 100,000 rows; the limit is 100,000 rows"):
        load_triples(raw, name="tiny.csv", limits=InputLimits())
    assert time.perf_counter() - start < 5


def test_parquet_path_read_by_columns_equals_a_plain_read(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "PARQUET_BATCH_ROWS", 3)
    frame = pd.DataFrame({"question": [f"q{i}" for i in range(10)], "context": ["c"] * 9 + [None],
                          "response": ["r"] * 10, "score": np.arange(10) / 4})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path, row_group_size=4)
    monkeypatch.setenv("SGI_MAX_INPUT_MB", "0.000001")  # a Parquet path is read by columns, not as bytes
    got = read_table(path, limits=InputLimits())
    pd.testing.assert_frame_equal(got, pd.read_parquet(path))
    frame.loc[8, "response"] = "x" * 11
    frame.to_parquet(path, row_group_size=4)
    with pytest.raises(SGIInputError, match=r"column 'response', row 9\)"):
        read_table(path, limits=InputLimits(max_cell_chars=10))


def test_small_row_groups_are_checked_and_converted_in_batches_of_the_batch_size(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "PARQUET_BATCH_ROWS", 4)
    sizes = []
    real_large_strings = parquet.large_strings
    monkeypatch.setattr(parquet, "large_strings",
                        lambda batch: sizes.append(batch.num_rows) or real_large_strings(batch))
    frame = pd.DataFrame({"question": [f"q{i % 3}" for i in range(10)], "context": list("abcdefghij"),
                          "response": ["r"] * 10})
    path = tmp_path / "groups.parquet"
    frame.to_parquet(path, row_group_size=1)  # ten row groups of one row; the questions dictionary-encoded
    pd.testing.assert_frame_equal(read_table(path, limits=InputLimits()), pd.read_parquet(path))
    assert sizes == [4, 4, 2] * 3
    frame.loc[6, "context"] = "x" * 11
    frame.to_parquet(path, row_group_size=1)
    with pytest.raises(SGIInputError, match=r"column 'context', row 7\)"):
        read_table(path, limits=InputLimits(max_cell_chars=10))


def test_parquet_read_under_limits_allocates_with_malloc_and_restores_arrows_pool(tmp_path, monkeypatch):
    pools = []
    real_large_strings = parquet.large_strings
    monkeypatch.setattr(parquet, "large_strings",
                        lambda batch: pools.append(pa.default_memory_pool().backend_name) or real_large_strings(batch))
    before = pa.default_memory_pool().backend_name
    path = tmp_path / "t.parquet"
    pd.DataFrame({"question": ["q"] * 5, "context": ["c"] * 5,
                  "response": ["r", "r", "r", "r", "x" * 20]}).to_parquet(path)
    read_table(path, limits=InputLimits())
    assert pools == ["system"] * 3  # one batch per column, each read under the C library's allocator
    with pytest.raises(SGIInputError, match=r"column 'response', row 5\)"):
        read_table(path, limits=InputLimits(max_cell_chars=10))
    assert pa.default_memory_pool().backend_name == before  # also after a refusal


def test_corrupt_parquet_under_limits_is_an_input_error(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1 not really parquet PAR1")
    with pytest.raises(SGIInputError, match=r"^cannot read as Parquet"):
        read_table(path, limits=InputLimits())


def scored_frame() -> pd.DataFrame:
    return pd.DataFrame({"question": ["q1", "q2", "q3"], "context": ["c1", "c2", "c3"], "response": ["r1", "r2", ""],
                         "label": [1.0, 0.0, np.nan], "theta_qc": [1.0, 1.1, np.nan], "theta_rq": [0.9, 0.5, np.nan],
                         "theta_rc": [0.6, 0.7, np.nan], "sgi": [1.5, 0.5 / 0.7, np.nan],
                         "sgi_status": ["ok", "ok", "not scored: empty response"]})


def test_scored_table_keeps_scores_and_marks_unscored_rows():
    frame = scored_frame()
    table, scores = scored_table(frame, source="s.parquet")
    assert scores["sgi"].tolist()[:2] == frame["sgi"].tolist()[:2]
    assert scores["input_row"].tolist() == [1, 2, 3]
    assert table.unscorable == {3: "empty response"}
    assert table.mapping.to_dict() == {"question": "question", "context": "context", "response": "response",
                                       "label": "label"}
    assert "sgi" not in table.frame.columns and "input_row" not in frame.columns
    assert np.shares_memory(table.frame["label"].to_numpy(), scores["label"].to_numpy())


@pytest.mark.parametrize(("column", "value", "message"), [
    ("label", 2.0, r"^a scored file's label must be 1, 0 or empty \(file 's', column 'label', row 2\)"),
    ("sgi", "high", r"^a scored file's sgi must be a number or empty \(file 's', column 'sgi', row 2\)"),
])
def test_scored_table_refuses_bad_scores(column, value, message):
    frame = scored_frame().astype({column: object})
    frame.loc[1, column] = value
    with pytest.raises(SGIInputError, match=message):
        scored_table(frame, source="s")


def test_scored_table_needs_the_texts():
    with pytest.raises(SGIInputError, match="^a scored file needs the columns context"):
        scored_table(scored_frame().drop(columns="context"), source="s")


def test_subset_and_chunks_renumber_unscorable_rows():
    table = validate_triples(pd.DataFrame({"question": list("abcde"), "context": ["c"] * 5,
                                           "response": ["r", "", "r", "r", ""]}))
    parts = list(table.chunks(2))
    assert [p.frame["input_row"].tolist() for p in parts] == [[1, 2], [3, 4], [5]]
    assert [p.unscorable for p in parts] == [{2: "empty response"}, {}, {1: "empty response"}]
    assert table.subset([4, 0]).unscorable == {1: "empty response"}
