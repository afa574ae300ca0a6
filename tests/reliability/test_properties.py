"""Property-based checks of the reader and the scoring path over generated files.

Whatever the bytes, the library raises nothing but SGIInputError; a well-formed file
comes back with every row, in order, every cell as written.
"""

import csv

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sgi_core.columns import TEXT_COLUMNS
from sgi_core.embedding import HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.io.export import to_csv_bytes
from sgi_core.io.reading import read_table
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ENCODER = HashingEncoder(16)
SUFFIXES = [".csv", ".tsv", ".txt", ".jsonl", ".json", ".parquet"]

# Any character a text file can hold: no surrogates, and of the control characters only tab, CR and LF.
cell_text = st.text(st.characters(exclude_categories=("Cs", "Cc"), include_characters="\t\r\n"), max_size=40)
hostile_text = st.one_of(cell_text, st.sampled_from(["", " ", "\t", "NaN", "None", "=1+1", "-2", '"', '""', ",;|\t",
                                                     "\r\n", "\n\n", "日本語", "🚀", "مرحبا", "007",
                                                     "+3", "-0.5", "-.5e-3", "-٣", "+", "@"]))
label_cell = st.sampled_from(["1", "0", "true", "False", "yes", "no", "grounded", "hallucinated", "valid", "", "NaN"])
EXTRA_NAMES = ["id", "notes", "judge score", "sgi", "label_source", "input_row"]


@st.composite
def triple_frames(draw):
    n_rows = draw(st.integers(1, 6))
    columns = {role: draw(st.lists(hostile_text, min_size=n_rows, max_size=n_rows)) for role in TEXT_COLUMNS}
    if draw(st.booleans()):
        columns["label"] = draw(st.lists(label_cell, min_size=n_rows, max_size=n_rows))
    for name in draw(st.lists(st.sampled_from(EXTRA_NAMES), unique=True, max_size=3)):
        columns[name] = draw(st.lists(hostile_text, min_size=n_rows, max_size=n_rows))
    order = draw(st.permutations(list(columns)))
    return pd.DataFrame({name: columns[name] for name in order}, dtype=object)


def written_csv(frame, sep, encoding, quoting):
    # CRLF line ends make the csv writer quote cells holding a bare "\r", as a careful writer must.
    return frame.to_csv(sep=sep, index=False, quoting=quoting, lineterminator="\r\n").encode(encoding)


def check_scored(table, scored):
    """Every row back, in order, with a status that says why a row has no score."""
    assert len(scored) == table.n_rows
    assert scored["input_row"].tolist() == list(range(1, table.n_rows + 1))
    for position, (status, sgi) in enumerate(zip(scored["sgi_status"], scored["sgi"]), start=1):
        empty = [role for role in TEXT_COLUMNS if not table.frame[role].iloc[position - 1].strip()]
        if empty:
            assert status == f"not scored: empty {empty[0]}" and np.isnan(sgi)
        else:
            assert (status == "ok" or status.startswith("degenerate: ")) and not np.isnan(sgi)


@SETTINGS
@given(frame=triple_frames(), sep=st.sampled_from([",", ";", "\t", "|"]),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-be"]),
       quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
def test_well_formed_csv_keeps_every_row_and_cell(frame, sep, encoding, quoting):
    raw = written_csv(frame, sep, encoding, quoting)
    if encoding == "utf-16-be":
        raw = b"\xfe\xff" + raw
    try:
        table = load_triples(raw, name="generated.csv")
    except SGIInputError as err:
        # the only refusal a well-formed file can get: labels are drawn from the accepted forms
        raise AssertionError(f"refused a well-formed file: {err}") from None
    read = table.frame
    for name in frame.columns:
        kept = f"input_{name}" if name in ("sgi", "input_row") else name
        expected = frame[name].tolist()
        if name in TEXT_COLUMNS:
            assert read[name].tolist() == expected, name
        elif name != "label":
            assert read[kept].tolist() == expected, name
    check_scored(table, score_table(table, ENCODER))


@SETTINGS
@given(frame=triple_frames())
def test_csv_export_reads_back_as_the_escaped_cells(frame):
    frame = frame.drop(columns=[c for c in ("label", "sgi", "input_row") if c in frame.columns])
    back = read_table(to_csv_bytes(frame), name="export.csv")
    assert back.columns.tolist() == frame.columns.tolist()
    for name in frame.columns:
        # Spreadsheets skip leading spaces (and no-break spaces) before deciding that a cell is a formula, and read
        # the fullwidth forms of = + - @ (U+FF1D, U+FF0B, U+FF0D, U+FF20) as those signs.
        formula = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20", "\t", "\r", "\n", "\x0b", "\x0c")
        expected = ["'" + v if v.lstrip(" \u00a0").startswith(formula)
                    and not is_plain_number(v.lstrip(" \u00a0")) else v for v in frame[name]]
        assert back[name].tolist() == expected, name


def is_plain_number(text):
    """ASCII digits, signs, point and exponent that Python reads as a finite number."""
    if not set(text) <= set("0123456789+-.eE"):
        return False
    try:
        return np.isfinite(float(text))
    except ValueError:
        return False


@SETTINGS
@given(content=st.binary(max_size=600), suffix=st.sampled_from(SUFFIXES))
def test_any_bytes_give_a_table_or_sgi_input_error(content, suffix):
    try:
        table = load_triples(content, name=f"fuzz{suffix}")
    except SGIInputError as err:
        event(f"refused: {str(err).split(' (')[0][:40]}")
        return
    event("scored")
    check_scored(table, score_table(table, ENCODER))


VALID = ('question,context,response,label\r\n"What, exactly?","He said ""yes""\nthen left",answer one,1\r\n'
         "q two,c two,r two,0\r\n")
MUTATIONS = ['"', ",", ";", "\t", "\n", "\r", "\x00", "\ufeff", "é", "\\", "'", "=", "\x1a", "\u2028"]


@SETTINGS
@given(edits=st.lists(st.tuples(st.integers(0, len(VALID)), st.sampled_from(MUTATIONS + [""]), st.integers(0, 3)),
                      max_size=6),
       encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]))
def test_mutated_csv_gives_a_table_or_sgi_input_error(edits, encoding):
    text = VALID
    for position, insert, delete in edits:
        text = text[:position] + insert + text[position + delete:]
    try:
        table = load_triples(text.encode(encoding, errors="replace"), name="mutated.csv")
    except SGIInputError as err:
        event(f"refused: {str(err).split(' (')[0][:40]}")
        return
    event("scored")
    check_scored(table, score_table(table, ENCODER))
