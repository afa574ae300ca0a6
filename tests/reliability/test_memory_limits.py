"""Small files that expand to gigabytes are refused before they do, in the app's reader and in `score`."""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.io import chunks
from sgi_core.io.limits import InputLimits
from sgi_core.io.reading import read_table
from sgi_core.pipelines.local_engine import read_chunks
from tests.conftest import REPO
from tests.reliability.hostile_files import TRIPLE, C, Q, R, csv_lines

LONG_CONTEXT = ("Paris is the capital of France. " * 3125)[:99_000]
COLUMNS_HINT = "Raise the limit with SGI_MAX_COLUMNS"


def wide_csv(n_columns: int = 1_000_000) -> bytes:
    header = "question,context,response," + ",".join(f"x{i}" for i in range(n_columns - 3))
    return (header + "\n" + ",".join(TRIPLE) + "," * (n_columns - 3) + "\n").encode()


def new_key_per_record(n: int = 10_000) -> bytes:
    records = (json.dumps({"question": Q, "context": C, "response": R, f"k{i}": 1}) + "\n" for i in range(n))
    return "".join(records).encode()


def one_context_many_times(path, n_rows: int = 20_000):
    """What ``to_parquet`` writes for 20,000 rows of one 99,000-character context, built without expanding it."""
    def repeated(text):
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n_rows, dtype=np.int32)), pa.array([text]))

    table = pa.table({"question": repeated(Q), "context": repeated(LONG_CONTEXT), "response": repeated(R)})
    pq.write_table(table.cast(pa.schema([(name, pa.string()) for name in table.column_names])), path)
    return path


@pytest.fixture(params=["whole", "streamed"])
def reading_mode(request, monkeypatch):
    """``read_chunks`` reads small files whole and large ones in chunks: both must refuse."""
    if request.param == "streamed":
        monkeypatch.setattr(chunks, "WHOLE_READ_BYTES", 0)
    return request.param


def test_a_million_column_header_is_refused_from_its_field_count(tmp_path, reading_mode):
    raw = wide_csv()
    assert 8e6 < len(raw) < 1e7  # 8.9 MB
    message = r"^the header has 1,000,000 columns; the limit is 200 columns \(file '.*wide\.csv'\)\. " + COLUMNS_HINT
    with pytest.raises(SGIInputError, match=message):
        read_table(raw, name="wide.csv", limits=InputLimits())
    path = tmp_path / "wide.csv"
    path.write_bytes(raw)
    with pytest.raises(SGIInputError, match=message):
        read_chunks(path)


def test_a_header_of_quoted_separators_is_counted_by_its_fields():
    # 300 commas inside one quoted name: the first line's separators overcount, the parsed header does not.
    raw = csv_lines('question,context,response,"' + "," * 300 + '"', ",".join(TRIPLE) + ",x")
    assert read_table(raw, name="q.csv", limits=InputLimits()).shape == (1, 4)
    with pytest.raises(SGIInputError, match=r"^the header has 4 columns; the limit is 3 columns"):
        read_table(raw, name="q.csv", limits=InputLimits(max_columns=3))


def test_json_lines_with_a_new_key_per_record_are_refused_at_the_first_key_too_many(tmp_path, reading_mode):
    # question, context, response and k0..k196 make 200 keys; line 198 brings the 201st.
    message = (r"^the records have more than 200 different keys by line 198; the limit is 200 columns "
               r"\(file '.*keys\.jsonl'\)\. " + COLUMNS_HINT)
    with pytest.raises(SGIInputError, match=message):
        read_table(new_key_per_record(), name="keys.jsonl", limits=InputLimits())
    path = tmp_path / "keys.jsonl"
    path.write_bytes(new_key_per_record())
    with pytest.raises(SGIInputError, match=message):
        read_chunks(path)


def test_a_parquet_of_one_long_context_repeated_is_refused_at_its_size_in_the_file(tmp_path):
    path = one_context_many_times(tmp_path / "long.parquet")
    assert path.stat().st_size < 300_000
    total = 20_000 * (len(Q) + len(LONG_CONTEXT))  # the question column, then the first batch of contexts
    with pytest.raises(SGIInputError, match=rf"^the file's text cells hold at least {total:,} characters; the limit is "
                                            r"500,000,000 characters of text in a file to score"):
        read_table(path, limits=InputLimits())
    with pytest.raises(SGIInputError, match=r"^the file's text cells hold at least"):
        read_table(path.read_bytes(), name="long.parquet", limits=InputLimits())  # an upload
    chunk = 10_000 * (len(Q) + len(LONG_CONTEXT))  # score reads 10,000 rows at a time
    with pytest.raises(SGIInputError, match=rf"^the file's text cells hold at least {chunk:,} characters"):
        read_chunks(path)


def test_refusing_the_repeated_context_takes_little_memory(tmp_path):
    path = one_context_many_times(tmp_path / "long.parquet")
    # The peak of the child's own memory (VmHWM starts afresh at exec; ru_maxrss would carry pytest's over).
    probe = ("import re, sys\nfrom sgi_core.io.limits import InputLimits\nfrom sgi_core.io.reading import read_table\n"
             "try:\n    read_table(sys.argv[1], limits=InputLimits())\n"
             "except ValueError as err:\n    print(str(err)[:40])\n"
             "print(int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) // 1024)")
    run = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    refusal, peak_mib = run.stdout.splitlines()
    assert refusal == "the file's text cells hold at least 1,98"
    assert int(peak_mib) < 600  # 3.9 GB when the column was expanded first


def test_dictionary_encoded_text_with_missing_cells_reads_as_a_plain_read_does(tmp_path):
    frame = pd.DataFrame({"question": ["q1", None, "q1", "q2"] * 3, "context": ["c"] * 12,
                          "response": list("abcdefghijkl"), "score": np.arange(12) / 4})
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, row_group_size=5)
    pd.testing.assert_frame_equal(read_table(path, limits=InputLimits()), pd.read_parquet(path))
    # Counted a batch (here the whole column: its row groups joined) at a time: 18 characters of questions, then 12
    # of contexts.
    with pytest.raises(SGIInputError, match=r"^the file's text cells hold at least 30 characters; the limit is 24"):
        read_table(path, limits=InputLimits(max_chars=24))


def test_one_cell_of_fifty_million_characters_is_refused_by_score_before_any_encoding(tmp_path, capsys):
    path = tmp_path / "big-cell.csv"
    path.write_bytes(csv_lines("question,context,response", f"{Q},{'x' * 50_000_000},{R}"))
    assert main(["score", str(path), "-o", str(tmp_path / "out.csv"), "--model", "hashing-16", "--no-cache"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: a cell has 50,000,000 characters; the limit is 100,000 characters per cell (file '{path}', column "
        "'context', row 1). Raise the limit with SGI_MAX_CELL_CHARS (or the Limits setting on the Data page) if this "
        "machine has the memory")
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("case", ["prose", "whitespace before the words"])
def test_cutting_a_long_text_before_tokenising_leaves_its_embedding_unchanged(minilm, minilm_torch, case):
    from sgi_core.embedding.window import CHARS_PER_TOKEN, LongTextWarning, cut_to_window

    words = " ".join(f"{C} Word number {i}." for i in range(2_000))
    text = words if case == "prose" else "Paris " + " " * 40_000 + words
    window = minilm.max_seq_length
    with pytest.warns(LongTextWarning, match=r"^1 text longer than 2,048 characters was cut before tokenising"):
        (cut,) = cut_to_window([text], minilm.tokenizer, window)
    # Cut before the last whitespace within 8 characters per token, or, when that holds too few tokens, 4 times further.
    first_try = window * CHARS_PER_TOKEN
    assert (len(cut) <= first_try if case == "prose" else 4 * first_try < len(cut) <= 64 * first_try)
    assert text.startswith(cut) and text[len(cut)].isspace()

    def tokens(t):
        return minilm.tokenizer(t, truncation=True, max_length=window)["input_ids"]

    assert tokens(cut) == tokens(text)
    # The oracle: sentence-transformers' own encode of the whole text, which truncates after tokenising it all.
    reference = minilm_torch.model.encode([text], convert_to_numpy=True)
    with pytest.warns(LongTextWarning):
        ours = minilm.encode([text])
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_texts_within_the_window_are_not_cut(minilm):
    from sgi_core.embedding.window import cut_to_window

    texts = [C * 40, "x" * 3_000]  # 2,000 characters; one 3,000-character word (read as one unknown token)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cut_to_window(texts, minilm.tokenizer, minilm.max_seq_length) == texts
