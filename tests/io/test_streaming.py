"""Chunked file scoring: the same rows, numbers and bytes as scoring the whole file at once."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.embedding import EmbeddingCache, HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.io import chunks
from sgi_core.io.export import write_table
from sgi_core.io.triples import load_triples
from sgi_core.pipelines import local_engine
from sgi_core.pipelines.local_engine import read_chunks, score_to_file
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV


class CountingEncoder(HashingEncoder):
    """Hashing encoder that records every text it is asked to encode."""

    def __init__(self):
        super().__init__(dim=32)
        self.seen: list[str] = []

    def encode(self, texts, **kwargs):
        self.seen.extend(texts)
        return super().encode(texts, **kwargs)


@pytest.fixture(params=["whole", "stream"])
def reader(request, monkeypatch):
    """Run a test with files read whole by read_table, then with the streaming readers."""
    if request.param == "stream":
        monkeypatch.setattr(chunks, "WHOLE_READ_BYTES", 0)
    return request.param


def sample_as(tmp_path, suffix: str):
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    path = tmp_path / f"sample{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(record) + "\n" for record in frame.to_dict("records")))
    elif suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path


def score_whole(path, tmp_path, suffix):
    """The simple path: read and score the whole file, write it in one go."""
    out = tmp_path / f"whole{suffix}"
    write_table(score_table(load_triples(path), HashingEncoder(32)), out)
    return out


@pytest.mark.parametrize("source_suffix", [".csv", ".jsonl", ".parquet"])
@pytest.mark.parametrize("chunk_rows", [7, 299, 10_000])
def test_chunked_parquet_equals_whole_file(tmp_path, reader, source_suffix, chunk_rows):
    source = sample_as(tmp_path, source_suffix)
    out = tmp_path / "chunked.parquet"
    summary = score_to_file(read_chunks(source, chunk_rows=chunk_rows), out, HashingEncoder(32))
    expected = pd.read_parquet(score_whole(source, tmp_path, ".parquet"))
    pd.testing.assert_frame_equal(pd.read_parquet(out), expected)
    assert summary.rows == 300 and summary.scored == 300
    assert summary.chunks == -(-300 // chunk_rows)


@pytest.mark.parametrize("chunk_rows", [64, 10_000])
def test_chunked_csv_bytes_equal_whole_file(tmp_path, reader, chunk_rows):
    source = sample_as(tmp_path, ".csv")
    out = tmp_path / "chunked.csv"
    score_to_file(read_chunks(source, chunk_rows=chunk_rows), out, HashingEncoder(32))
    assert out.read_bytes() == score_whole(source, tmp_path, ".csv").read_bytes()


def test_row_numbers_count_from_the_top_of_the_file(tmp_path, reader):
    rows = ["question,context,response,label"] + [f"q{i},c{i},r{i},1" for i in range(1, 10)]
    rows[6] = "q6,c6,,1"  # data row 6 has no response
    source = tmp_path / "t.csv"
    source.write_text("\n".join(rows) + "\n")
    chunks = list(read_chunks(source, chunk_rows=4))
    assert [c.frame["input_row"].tolist() for c in chunks] == [[1, 2, 3, 4], [5, 6, 7, 8], [9]]
    assert chunks[1].warnings[0].startswith("the question, context or response is empty in row 6:")
    out = tmp_path / "o.parquet"
    score_to_file(read_chunks(source, chunk_rows=4), out, HashingEncoder(16))
    status = pd.read_parquet(out)["sgi_status"].tolist()
    assert status[5] == "not scored: empty response" and status.count("ok") == 8


def test_bad_label_far_down_is_reported_at_its_file_row(tmp_path, reader):
    rows = ["question,context,response,label"] + [f"q{i},c{i},r{i},1" for i in range(1, 10)]
    rows[8] = "q8,c8,r8,maybe"
    source = tmp_path / "t.csv"
    source.write_text("\n".join(rows) + "\n")
    chunks = read_chunks(source, chunk_rows=3)
    with pytest.raises(SGIInputError, match=r"unknown label values 'maybe'.*row 8\)"):
        list(chunks)


def test_first_chunk_is_checked_before_anything_is_scored(tmp_path, reader):
    source = tmp_path / "t.csv"
    source.write_text("query,passage\nq,c\n")
    with pytest.raises(SGIInputError, match="no column for response"):
        read_chunks(source)


def test_chunks_are_read_lazily(tmp_path, reader, monkeypatch):
    """One chunk in memory at a time: later chunks are validated only when asked for."""
    validated = []
    real = local_engine.validate_triples
    monkeypatch.setattr(local_engine, "validate_triples",
                        lambda frame, **kw: validated.append(len(frame)) or real(frame, **kw))
    chunks = read_chunks(sample_as(tmp_path, ".csv"), chunk_rows=100)
    assert validated == [100]
    next(chunks)
    next(chunks)
    assert validated == [100, 100]


def test_cache_serves_texts_repeated_in_later_chunks(tmp_path):
    source = tmp_path / "t.csv"
    source.write_text("question,context,response\nsame q,c1,r1\nsame q,c2,r2\nsame q,c1,r3\n")
    encoder = CountingEncoder()
    cache = EmbeddingCache(encoder.model_id, tmp_path / "cache")
    summary = score_to_file(read_chunks(source, chunk_rows=1), tmp_path / "o.csv", encoder, cache=cache)
    assert sorted(encoder.seen) == ["c1", "c2", "r1", "r2", "r3", "same q"]
    assert summary.new_texts == 6
    again = score_to_file(read_chunks(source, chunk_rows=2), tmp_path / "o2.csv", encoder, cache=cache)
    assert again.new_texts == 0 and len(encoder.seen) == 6


def test_failure_midway_leaves_no_output(tmp_path):
    class FailsOnSecondCall(HashingEncoder):
        calls = 0

        def encode(self, texts, **kwargs):
            self.calls += 1
            if self.calls == 2:
                raise RuntimeError("model crashed")
            return super().encode(texts, **kwargs)

    out = tmp_path / "o.csv"
    with pytest.raises(RuntimeError, match="model crashed"):
        score_to_file(read_chunks(sample_as(tmp_path, ".csv"), chunk_rows=100), out, FailsOnSecondCall(16))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.csv"]


def test_jsonl_key_first_seen_in_a_later_chunk(tmp_path, reader):
    source = tmp_path / "t.jsonl"
    records = [{"question": "q1", "context": "c1", "response": "r1"},
               {"question": "q2", "context": "c2", "response": "r2", "note": "late"}]
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "o.parquet"
    score_to_file(read_chunks(source, chunk_rows=1), out, HashingEncoder(16))
    assert pd.read_parquet(out)["note"].tolist() == ["", "late"]


def test_header_only_file(tmp_path, reader):
    source = tmp_path / "t.csv"
    source.write_text("question,context,response\n")
    with pytest.raises(SGIInputError, match="column names but no data rows"):
        read_chunks(source)


@pytest.mark.parametrize("chunk_rows", [0, -1, 2.5, True])
def test_chunk_rows_must_be_a_positive_int(tmp_path, chunk_rows):
    with pytest.raises(SGIInputError, match=r"The 'chunk_rows' parameter of read_chunks must be an int >= 1"):
        read_chunks(SAMPLE_CSV, chunk_rows=chunk_rows)


def test_unsupported_output_is_refused_before_scoring(tmp_path):
    encoder = CountingEncoder()
    with pytest.raises(SGIInputError, match=r"cannot write '\.xlsx' files"):
        score_to_file(read_chunks(SAMPLE_CSV), tmp_path / "o.xlsx", encoder)
    assert encoder.seen == []


def test_cli_streams_a_file_above_the_read_at_once_limit(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SGI_MAX_INPUT_MB", "0.01")
    source = sample_as(tmp_path, ".csv")
    assert source.stat().st_size > 0.01 * 2**20
    out = tmp_path / "o.parquet"
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--chunk-rows", "64"]) == 0
    written = pd.read_parquet(out)
    assert written["input_row"].tolist() == list(range(1, 301))
    assert written["id"].tolist() == pd.read_csv(SAMPLE_CSV, dtype=str)["id"].tolist()
    assert np.isfinite(written["sgi"]).all()
    assert capsys.readouterr().err.splitlines()[-1] == f"wrote 300 rows (300 scored) to {out}"


@pytest.mark.parametrize("bad_row, expected", [
    ("q8,c8,r8,extra", r"a row has 4 fields but the header has 3 \(file '.*', row 8\)"),
    ('q8,"c8,r8', r"a double quote opens a cell that is never closed \(file '.*', row 8\)"),
])
def test_malformed_row_far_down_is_reported_as_a_whole_read_reports_it(tmp_path, reader, bad_row, expected):
    rows = ["question,context,response"] + [f"q{i},c{i},r{i}" for i in range(1, 11)]
    rows[8] = bad_row
    source = tmp_path / "t.csv"
    source.write_text("\n".join(rows) + "\n")
    with pytest.raises(SGIInputError, match=expected):
        list(read_chunks(source, chunk_rows=3))


ENCODED_FILES = {
    "utf-8 with BOM": "\ufeffquestion,context,response\nq1,c1,r1\nq2,c2 é,r2\nq3,c3,r3\n".encode("utf-8"),
    "utf-16 with BOM": "question\tcontext\tresponse\nq1\tc1\tr1\nq2\tc2 é\tr2\nq3\tc3\tr3\n".encode("utf-16"),
    "windows-1252": "question;context;response\nq1;c1 \u20ac;r1\nq2;c2 é;r2\nq3;c3;r3\n".encode("cp1252"),
    "excel sep line": b"sep=|\nquestion|context|response\nq1|c1|r1\nq2|c2|r2\nq3|c3|r3\n",
    "quoted newlines": b'question,context,response\nq1,"c1\nline two",r1\nq2,c2,"r2, with ""quotes"""\nq3,c3,r3\n',
}


@pytest.mark.parametrize("content", ENCODED_FILES.values(), ids=ENCODED_FILES.keys())
def test_streamed_cells_equal_whole_read(tmp_path, monkeypatch, content):
    source = tmp_path / "t.csv"
    source.write_bytes(content)
    whole = load_triples(source).frame
    monkeypatch.setattr(chunks, "WHOLE_READ_BYTES", 0)
    streamed = pd.concat([chunk.frame for chunk in read_chunks(source, chunk_rows=2)], ignore_index=True)
    pd.testing.assert_frame_equal(streamed, whole)


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40, b"PK\x03\x04" + b"\x00" * 500],
                         ids=["png", "zip"])
def test_streamed_binary_file_is_refused_as_a_whole_read_refuses_it(tmp_path, monkeypatch, content):
    source = tmp_path / "t.csv"
    source.write_bytes(content)
    with pytest.raises(SGIInputError) as whole:
        load_triples(source)
    monkeypatch.setattr(chunks, "WHOLE_READ_BYTES", 0)
    with pytest.raises(SGIInputError) as streamed:
        read_chunks(source)
    assert str(streamed.value) == str(whole.value)


@pytest.mark.parametrize("labels, expected", [
    (["1", "0", "1", "1", "1"], []),
    (["1", "1", "1", "1", "1"], ["only one label class is present (every labelled row is grounded)"]),
    (["", "", "", "", ""], ["the label column 'label' is empty in every row"]),
])
def test_file_wide_label_warnings_speak_of_the_whole_file(tmp_path, labels, expected):
    from sgi_core.embedding import HashingEncoder
    from sgi_core.pipelines.local_engine import read_chunks, score_to_file

    rows = "".join(f"question {i},context {i},response {i},{label}\n" for i, label in enumerate(labels))
    source = tmp_path / "in.csv"
    source.write_text("question,context,response,label\n" + rows)
    said = []
    score_to_file(read_chunks(source, chunk_rows=2), tmp_path / "out.csv", HashingEncoder(), warn=said.append)
    about_classes = [w for w in said if "label class" in w or "empty in every row" in w]
    assert len(about_classes) == len(expected)
    for text, start in zip(about_classes, expected):
        assert text.startswith(start)
