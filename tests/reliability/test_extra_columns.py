"""Extra columns are kept by every reader, in `score` and in the app's reader: a Parquet index among them."""

import json

import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.io import chunks
from sgi_core.io.limits import InputLimits
from sgi_core.io.reading import read_table
from sgi_core.io.triples import load_triples
from tests.reliability.hostile_files import C, Q, R

ROWS = pd.DataFrame({"question": [Q, Q + " Again?"], "context": [C, C], "response": [R, R + " Yes."],
                     "notes": ["first", "second"]})


def write(path, kind):
    if kind == "csv":
        ROWS.to_csv(path, index=False)
    elif kind == "tsv":
        ROWS.to_csv(path, index=False, sep="\t")
    elif kind == "jsonl":
        path.write_text("".join(json.dumps(record) + "\n" for record in ROWS.to_dict("records")))
    elif kind == "parquet named index":
        ROWS.set_index(pd.Index(["d7", "d9"], name="doc_id")).to_parquet(path)
    else:  # an unnamed index that is not 0..n-1, which pandas stores as __index_level_0__
        ROWS.set_axis([10, 20]).to_parquet(path)
    return path


EXTRA = {"csv": {"notes": ["first", "second"]}, "tsv": {"notes": ["first", "second"]},
         "jsonl": {"notes": ["first", "second"]},
         "parquet named index": {"notes": ["first", "second"], "doc_id": ["d7", "d9"]},
         "parquet unnamed index": {"notes": ["first", "second"], "__index_level_0__": [10, 20]}}
SUFFIX = {"csv": ".csv", "tsv": ".tsv", "jsonl": ".jsonl"}


@pytest.fixture(params=["whole", "streamed"])
def reading_mode(request, monkeypatch):
    if request.param == "streamed":
        monkeypatch.setattr(chunks, "WHOLE_READ_BYTES", 0)
    return request.param


@pytest.mark.parametrize("kind", list(EXTRA))
def test_score_keeps_every_extra_column(tmp_path, kind, reading_mode):
    source = write(tmp_path / f"in{SUFFIX.get(kind, '.parquet')}", kind)
    out = tmp_path / "out.parquet"
    assert main(["score", str(source), "-o", str(out), "--model", "hashing-16", "--no-cache"]) == 0
    scored = pd.read_parquet(out)
    assert {column: scored[column].tolist() for column in EXTRA[kind]} == EXTRA[kind]


@pytest.mark.parametrize("kind", list(EXTRA))
def test_the_apps_reader_and_the_plain_reader_keep_every_extra_column(tmp_path, kind):
    source = write(tmp_path / f"in{SUFFIX.get(kind, '.parquet')}", kind)
    for frame in (read_table(source.read_bytes(), name=source.name, limits=InputLimits()),  # an upload
                  read_table(source, limits=InputLimits()), load_triples(source).frame):
        assert {column: frame[column].tolist() for column in EXTRA[kind]} == EXTRA[kind]
