"""Files too large to read at once are refused by their size, before they are read."""

import io
import re

import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.io import reading
from sgi_core.io.reading import max_input_bytes, read_table
from sgi_core.io.triples import validate_triples

MILLION = 1_000_000
HINT = ("Split it into smaller files, or raise the limit with SGI_MAX_INPUT_MB if this machine has several times "
        "the file's size in free memory")


@pytest.fixture(scope="module")
def million_rows(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "million.csv"
    # Texts repeat, as questions and contexts do in real files, so that encoding stays cheap.
    rows = (f"{i},question {i % 997} about a topic,context {i % 991} with some facts,response number {i % 1009} here"
            for i in range(MILLION))
    path.write_text("id,question,context,response\n" + "\n".join(rows) + "\n")
    return path


@pytest.fixture
def no_file_reads(monkeypatch):
    """Fail the test if the reader opens the file."""
    def refuse(*args, **kwargs):
        raise AssertionError("the file was opened")
    monkeypatch.setattr(reading, "open", refuse, raising=False)


def test_million_rows_under_the_limit_are_read_whole_in_order(million_rows):
    table = validate_triples(read_table(million_rows), source=million_rows.name)
    assert table.n_rows == MILLION
    assert table.frame["id"].tolist() == [str(i) for i in range(MILLION)]
    assert table.frame["input_row"].iloc[[0, -1]].tolist() == [1, MILLION]
    assert table.frame["response"].iloc[-1] == f"response number {(MILLION - 1) % 1009} here"


def test_million_rows_above_the_limit_are_refused_unread(million_rows, monkeypatch, no_file_reads):
    monkeypatch.setenv("SGI_MAX_INPUT_MB", "10")
    size_mb = million_rows.stat().st_size / 2**20
    message = (f"the file is {size_mb:.1f} MB, larger than the 10 MB that can be read at once "
               f"(file '{million_rows}'). {HINT}")
    with pytest.raises(SGIInputError, match=f"^{re.escape(message)}$"):
        read_table(million_rows)


def test_cli_streams_the_million_rows_whatever_the_limit(million_rows, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SGI_MAX_INPUT_MB", "10")  # the CLI reads chunk by chunk, so the limit never applies
    out = tmp_path / "scored.parquet"
    # A narrow test encoder: the test is about a million rows, not the embedding width.
    assert main(["score", str(million_rows), "-o", str(out), "--model", "hashing-16"]) == 0
    stderr = capsys.readouterr().err
    assert re.search(r"hashing-16: .*\d+/\d+ texts embedded", stderr)
    assert stderr.splitlines()[-1] == f"wrote {MILLION} rows ({MILLION} scored) to {out}"
    written = pd.read_parquet(out, columns=["id", "input_row", "sgi_status"])
    assert written["id"].tolist() == [str(i) for i in range(MILLION)]
    assert written["input_row"].tolist() == list(range(1, MILLION + 1))
    assert (written["sgi_status"] == "ok").all()


def test_sparse_five_gigabyte_file_is_refused_unread(tmp_path, no_file_reads):
    path = tmp_path / "huge.csv"
    with path.open("wb") as handle:
        handle.write(b"question,context,response\n")
        handle.truncate(5 * 2**30)
    with pytest.raises(SGIInputError,
                       match=r"^the file is 5120\.0 MB, larger than the 200 MB that can be read at once"):
        read_table(path)


class EndlessStream(io.RawIOBase):
    """A stream with no known size that never ends, like a pipe from /dev/zero."""

    def __init__(self):
        self.bytes_read = 0

    def readable(self):
        return True

    def read(self, n=-1):
        assert n >= 0, "the reader asked for everything"
        self.bytes_read += n
        return b"a" * n


def test_stream_of_unknown_size_is_cut_one_byte_past_the_limit():
    stream = EndlessStream()
    with pytest.raises(SGIInputError,
                       match=r"^the file is larger than the 1 MB that can be read at once \(file 'pipe.csv'\)"):
        read_table(stream, name="pipe.csv", max_bytes=2**20)
    assert stream.bytes_read == 2**20 + 1


def test_upload_with_a_size_is_refused_before_it_is_read():
    class Upload(EndlessStream):
        size = 300 * 2**20

    upload = Upload()
    with pytest.raises(SGIInputError, match=r"^the file is 300\.0 MB, larger than the 200 MB that can be read at once "
                                            r"\(file 'big.csv'\)"):
        read_table(upload, name="big.csv")
    assert upload.bytes_read == 0


def test_bytes_above_the_limit_are_refused():
    with pytest.raises(SGIInputError, match=r"^the file is 2\.0 MB, larger than the 1 MB that can be read at once"):
        read_table(b"x" * 2**21, name="b.csv", max_bytes=2**20)


def test_limit_from_the_environment(monkeypatch):
    monkeypatch.delenv("SGI_MAX_INPUT_MB", raising=False)
    assert max_input_bytes() == 200 * 2**20
    monkeypatch.setenv("SGI_MAX_INPUT_MB", " 0.5 ")
    assert max_input_bytes() == 2**19


@pytest.mark.parametrize("value", ["abc", "0", "-5", "inf", "nan"])
def test_bad_limit_in_the_environment_is_named(monkeypatch, value):
    monkeypatch.setenv("SGI_MAX_INPUT_MB", value)
    with pytest.raises(SGIInputError, match=(f"^SGI_MAX_INPUT_MB must be a positive number of megabytes; "
                                              f"got '{value}'. Unset it to use the default of 200 MB$")):
        read_table(b"question,context,response\nq,c,r\n", name="f.csv")
