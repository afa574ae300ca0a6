"""A scored run in Parquet shards, streamed: every row once, only the columns asked for, a bounded batch at a time."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io.export import table_writer
from sgi_core.io.shards import map_shards, parquet_shards, shards_scored_with, stream_shards

ROWS = (7, 0, 5)  # rows of each shard; the middle one is empty
RECORD = {"model": "minilm", "precision": "fp32", "backend": "onnx", "context_strategy": "joined"}


def scored_frame(n: int, start: int) -> pd.DataFrame:
    rows = np.arange(start, start + n)
    return pd.DataFrame({"input_row": rows + 1, "sgi": rows / 10.0, "label": rows % 2,
                         "response": [f"response {i} " + "x" * 2000 for i in rows]})


@pytest.fixture
def run(tmp_path):
    folder = tmp_path / "scored"
    folder.mkdir()
    start = 0
    for i, n in enumerate(ROWS):
        with table_writer(folder / f"part-{i}.parquet", scored_by=RECORD) as write:
            write(scored_frame(n, start) if n else scored_frame(0, 0))
        start += n
    return folder


def test_every_row_comes_once_in_shard_order_with_only_the_columns_asked(run):
    frames = list(stream_shards(run, ["sgi", "input_row"], batch_rows=3))
    assert [len(f) for f in frames] == [3, 3, 1, 3, 2]
    assert all(list(f.columns) == ["sgi", "input_row"] for f in frames)
    streamed = pd.concat(frames, ignore_index=True)
    whole = pd.concat([pd.read_parquet(p) for p in sorted(run.glob("*.parquet"))], ignore_index=True)
    np.testing.assert_array_equal(streamed["sgi"], whole["sgi"])
    assert streamed["input_row"].tolist() == list(range(1, sum(ROWS) + 1))


def test_a_glob_and_a_single_file_name_the_same_shards(run):
    assert [p.name for p in parquet_shards(f"{run}/part-*.parquet")] == ["part-0.parquet", "part-1.parquet",
                                                                         "part-2.parquet"]
    assert sum(len(f) for f in stream_shards(run / "part-2.parquet", ["sgi"])) == ROWS[2]


def test_optional_columns_are_read_only_where_every_shard_has_them(run):
    pd.DataFrame({"sgi": [9.0]}).to_parquet(run / "part-3.parquet")
    frames = list(stream_shards(run, ["sgi"], optional=["label", "absent"]))
    assert all(list(f.columns) == ["sgi"] for f in frames)
    frames = list(stream_shards(f"{run}/part-[02].parquet", ["sgi"], optional=["label"]))
    assert all(list(f.columns) == ["sgi", "label"] for f in frames)


def test_the_texts_of_one_row_group_at_most_are_held_at_once(tmp_path):
    # score writes a row group per chunk (local) or per block (Ray): the reader decodes one at a time.
    big = tmp_path / "big"
    big.mkdir()
    pd.concat([scored_frame(2000, 0)] * 4, ignore_index=True).to_parquet(big / "part-0.parquet", row_group_size=500)
    text_bytes = 8000 * 2010
    before = pa.total_allocated_bytes()
    peak = 0
    for frame in stream_shards(big, ["response"], batch_rows=100):
        assert len(frame) <= 100
        peak = max(peak, pa.total_allocated_bytes() - before)
    # One row group of 500 texts is about 1 MB (the reader holds a few MB of it); the whole column is 16 MB.
    assert peak < text_bytes / 4


def test_a_missing_column_names_the_shard_before_any_row_is_read(run):
    pd.DataFrame({"label": [1]}).to_parquet(run / "part-3.parquet")
    with pytest.raises(SGIInputError, match="the shard has no column sgi") as err:
        next(stream_shards(run, ["sgi"]))
    assert err.value.source.endswith("part-3.parquet")


def test_csv_files_and_bad_batch_sizes_are_refused(run, tmp_path):
    (tmp_path / "x.csv").write_text("sgi\n1\n")
    with pytest.raises(SGIInputError, match="a sharded run is read from Parquet files; got x.csv"):
        parquet_shards(tmp_path / "x.csv")
    with pytest.raises(SGIInputError, match="'batch_rows' parameter of stream_shards must be an int >= 1. Got 0"):
        stream_shards(run, ["sgi"], batch_rows=0)
    with pytest.raises(SGIInputError, match="no input files match"):
        parquet_shards(tmp_path / "nothing-*.parquet")


def test_every_shard_must_record_the_same_scoring(run):
    assert shards_scored_with(run) == RECORD
    with table_writer(run / "part-3.parquet", scored_by={**RECORD, "model": "mpnet"}) as write:
        write(scored_frame(1, 0))
    with pytest.raises(SGIInputError, match="the shard records another scoring than 'part-0.parquet'"):
        shards_scored_with(run)


def test_per_row_values_are_computed_one_bounded_batch_at_a_time(run):
    seen = []

    def lengths(frame):
        seen.append(len(frame))
        return {"length": frame["response"].str.len().to_numpy(), "sgi": frame["sgi"].to_numpy()}

    values = map_shards(run, lengths, ["response", "sgi"], batch_rows=4)
    whole = pd.concat([pd.read_parquet(p) for p in sorted(run.glob("*.parquet"))], ignore_index=True)
    assert seen == [4, 3, 4, 1]
    np.testing.assert_array_equal(values["length"], whole["response"].str.len())
    np.testing.assert_array_equal(values["sgi"], whole["sgi"])


def test_values_of_another_length_or_name_are_refused(run):
    with pytest.raises(ValueError, match="compute returned 1 values of 'x' for a batch of 4 rows"):
        map_shards(run, lambda frame: {"x": [0.0]}, ["sgi"], batch_rows=4)
    names = iter([{"a": [0.0] * 4}, {"b": [0.0] * 3}])
    with pytest.raises(ValueError, match=r"compute returned \['b'\] for one batch and \['a'\] for another"):
        map_shards(run, lambda frame: next(names), ["sgi"], batch_rows=4)
