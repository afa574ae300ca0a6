"""Scoring files of any size in chunks of rows, with memory that does not grow with the file.

:func:`read_chunks` yields a file as validated chunks of ``chunk_rows`` rows, with
``input_row`` and the row numbers in messages counted from the top of the file
(:func:`sgi_core.data.validate_triples` with ``first_row``). A file up to
:data:`WHOLE_READ_BYTES` is read whole by :func:`sgi_core.io.reading.read_table`, so
it gets every check and message of the dashboard's reader. A larger file is
streamed: CSV/TSV through pandas' chunked reader with ``read_table``'s options,
JSON Lines a block of lines at a time (each block read by ``read_table``),
Parquet by record batches. Its cells and messages are those of a whole read.

:func:`score_to_file` scores each chunk with :func:`sgi_core.scoring.score_table`
and appends it to one CSV file (escaped as :func:`sgi_core.io.export.to_csv_bytes`
does) or Parquet file (:func:`sgi_core.io.export.table_writer`). Warnings come per chunk.
With ``claims=True`` each chunk also gets the label-free claim-level columns of
:func:`sgi_core.detectors.claims.claim_scores`, from the same encoder and cache.

The embedding cache carries texts across chunks: a question in row 5 and again
in row 50,005 is encoded once. Without a cache, a text repeated in two chunks is
encoded in each.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.columns import CONTEXT_IS_QUESTION_STATUS
from sgi_core.data import (
    CONTEXT_IS_QUESTION_EVERYWHERE,
    ColumnMapping,
    TripleTable,
    validate_triples,
)
from sgi_core.embedding import EmbeddingCache, Encoder, ProgressCallback
from sgi_core.errors import SGIInputError
from sgi_core.io.decoding import detect_separator, file_encoding
from sgi_core.io.export import check_output_path, table_writer
from sgi_core.io.formats import (
    CSV_READ_OPTIONS,
    check_unique_columns,
    empty_file_error,
    no_rows_error,
    split_header,
    table_format,
)
from sgi_core.io.reading import (
    csv_parse_error,
    max_input_bytes,
    parquet_error,
    parse_jsonl_record,
    read_table,
)
from sgi_core.labels import label_class_warnings
from sgi_core.scoring import score_table

#: Files up to this size are read whole by :func:`~sgi_core.io.reading.read_table`, so they
#: get exactly its checks and messages; parsed, they take about as much memory as
#: scoring one chunk. Larger files (and any above ``SGI_MAX_INPUT_MB``) are streamed.
WHOLE_READ_BYTES = 16 * 1024 * 1024

#: Rows per chunk. Scoring 10,000 HaluEval rows holds a few hundred MB (texts,
#: float32 embeddings, float64 angle work arrays); the model itself is separate.
DEFAULT_CHUNK_ROWS = 10_000

_SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class StreamSummary:
    """What :func:`score_to_file` did.

    Attributes
    ----------
    rows : int
        Rows written (every input row).
    scored : int
        Rows with a finite SGI.
    new_texts : int
        Texts that had to be encoded (the rest came from the cache).
    chunks : int
    """

    rows: int
    scored: int
    new_texts: int
    chunks: int


def _not_decodable(encoding: str, name: str) -> SGIInputError:
    return SGIInputError(f"the file is not valid {encoding.upper()} text past its start", source=name,
                         hint="Save it again as UTF-8")


def _csv_chunks(path: Path, encoding: str, name: str, chunk_rows: int) -> Iterator[pd.DataFrame]:
    try:
        with open(path, encoding=encoding, newline="") as handle:
            head = handle.read(_SNIFF_BYTES)
            separator, body = detect_separator(head)
            handle.seek(0)
            if len(body) != len(head):
                handle.readline()  # Excel's "sep=X" line
            with pd.read_csv(handle, sep=separator, chunksize=chunk_rows, **CSV_READ_OPTIONS) as reader:
                header, rows = split_header(reader.get_chunk(chunk_rows + 1))  # the header and a full chunk
                check_unique_columns(header, name)
                for cells in itertools.chain([rows], reader):
                    if len(cells):
                        yield cells.set_axis(header, axis=1).reset_index(drop=True)
    except pd.errors.EmptyDataError:
        raise empty_file_error(name) from None
    except pd.errors.ParserError as err:
        raise csv_parse_error(err, separator, name) from None
    except UnicodeDecodeError:
        raise _not_decodable(encoding, name) from None


def _jsonl_lines(path: Path, encoding: str, name: str) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based line numbers."""
    with open(path, encoding=encoding) as handle:
        try:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line
        except UnicodeDecodeError:
            raise _not_decodable(encoding, name) from None


def _jsonl_columns(path: Path, encoding: str, name: str) -> list[str]:
    """Every key of every record, in order of first appearance (what a whole-file read gives)."""
    columns: dict[str, None] = {}
    for number, line in _jsonl_lines(path, encoding, name):
        columns.update(dict.fromkeys(parse_jsonl_record(line, number, name)))
    return list(columns)


def _jsonl_chunks(path: Path, encoding: str, name: str, chunk_rows: int) -> Iterator[pd.DataFrame]:
    # A block of lines is itself a JSON Lines file, so read_table converts its cells
    # exactly as it would in a whole-file read; a first pass finds the columns that
    # later blocks may add, so that every chunk has the same columns.
    columns = _jsonl_columns(path, encoding, name)
    if not columns:
        raise empty_file_error(name, json_rows=True)
    lines = (line for _, line in _jsonl_lines(path, encoding, name))
    while block := list(itertools.islice(lines, chunk_rows)):
        frame = read_table("".join(block).encode("utf-8"), name=name)
        yield frame.reindex(columns=columns, fill_value="")


def _parquet_chunks(path: Path, name: str, chunk_rows: int) -> Iterator[pd.DataFrame]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as err:  # pyarrow raises several unrelated types for corrupt files
        raise parquet_error(err, name) from None
    check_unique_columns(parquet.schema_arrow.names, name)
    if parquet.metadata.num_rows == 0:
        raise no_rows_error(name)
    for batch in parquet.iter_batches(batch_size=chunk_rows):
        yield batch.to_pandas()


def _frame_chunks(frame: pd.DataFrame, chunk_rows: int) -> Iterator[pd.DataFrame]:
    for start in range(0, len(frame), chunk_rows):
        yield frame.iloc[start : start + chunk_rows].reset_index(drop=True)


def _raw_chunks(path: Path, name: str, chunk_rows: int) -> Iterator[pd.DataFrame]:
    if not path.is_file() or path.stat().st_size <= min(WHOLE_READ_BYTES, max_input_bytes()):
        return _frame_chunks(read_table(path, name=name), chunk_rows)
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if table_format(name, head) == "parquet":
        return _parquet_chunks(path, name, chunk_rows)
    encoding = file_encoding(path, head, name)
    kind = table_format(name, head, head.decode(encoding, errors="ignore").lstrip("\ufeff \t\r\n")[:1])
    if kind == "jsonl":
        return _jsonl_chunks(path, encoding, name, chunk_rows)
    if kind == "json" or path.suffix.lower() == ".json":
        # A JSON array cannot be cut into rows without parsing it whole.
        return _frame_chunks(read_table(path, name=name), chunk_rows)
    return _csv_chunks(path, encoding, name, chunk_rows)


def _validated(raw: Iterator[pd.DataFrame], name: str, mapping, label_positive,
               label_map=None) -> Iterator[TripleTable]:
    first_row = 1
    for frame in raw:
        # Warnings about every row of the file come from score_to_file, which sees them all.
        yield validate_triples(frame, mapping=mapping, label_positive=label_positive, source=name,
                               first_row=first_row, whole_file=False, label_map=label_map)
        first_row += len(frame)
    if first_row == 1:
        raise no_rows_error(name)


def read_chunks(
    path: str | os.PathLike,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    mapping: ColumnMapping | dict | None = None,
    label_positive: str | None = None,
    label_map: dict | None = None,
) -> Iterator[TripleTable]:
    """Read and validate a file of triples ``chunk_rows`` rows at a time.

    The first chunk is read and validated before this returns, so a missing
    column or an unreadable file fails at once; later chunks are read as the
    iterator is consumed.

    Parameters
    ----------
    path : path-like
        CSV, TSV, JSON Lines, JSON array or Parquet file (a JSON array is read whole).
    chunk_rows : int
        Rows per chunk.
    mapping, label_positive, label_map
        As in :func:`sgi_core.data.validate_triples`.

    Returns
    -------
    iterator of TripleTable
        Chunks in file order; ``frame["input_row"]`` counts from the top of the file.

    Raises
    ------
    SGIInputError
        Everything :func:`~sgi_core.io.reading.read_table` and
        :func:`~sgi_core.data.validate_triples` refuse, with file row numbers.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.csv").write_text("question,context,response\\nq1,c1,r1\\nq2,c2,r2\\nq3,c3,r3\\n")
    >>> [chunk.frame["input_row"].tolist() for chunk in read_chunks(folder / "t.csv", chunk_rows=2)]
    [[1, 2], [3]]
    """
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise SGIInputError(f"The 'chunk_rows' parameter of read_chunks must be an int >= 1. Got {chunk_rows!r} instead.")
    name = str(path)
    tables = _validated(_raw_chunks(Path(path), name, chunk_rows), name, mapping, label_positive, label_map)
    first = next(tables)
    return itertools.chain([first], tables)


def score_to_file(
    chunks: Iterator[TripleTable],
    output: str | os.PathLike,
    encoder: Encoder,
    *,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
    warn: Callable[[str], None] | None = None,
    claims: bool = False,
    scored_by: dict | None = None,
) -> StreamSummary:
    """Score chunks of triples and write them, in order, to one CSV or Parquet file.

    The output path is checked before the first chunk is scored (a folder, a missing
    folder or an unsupported extension fails at once). The table is written to a
    temporary file of a unique name beside the target and moved onto it when
    complete (:func:`sgi_core.io.export.atomic_output`), so a run that fails midway
    leaves no truncated table and two runs writing one target leave one whole file.

    Parameters
    ----------
    chunks : iterator of TripleTable
        Usually from :func:`read_chunks`.
    output : path-like
        ``.csv`` (formula cells escaped) or ``.parquet`` (exact values).
    encoder : Encoder
    cache : EmbeddingCache, optional
    batch_size : int
        Texts per encoder batch, at least 1.
    progress : callable, optional
        ``progress(done, total)`` over the texts of the current chunk that need encoding.
    warn : callable, optional
        Called with each validation warning as its chunk is read.
    claims : bool, default False
        Also add :data:`~sgi_core.detectors.claims.CLAIM_COLUMNS` per row
        (``claim_min_support = min_s max_j cos(s, c_j)`` over the response sentences
        ``s`` and context pieces ``c_j``, its mean, the sentence SGI's min and mean, the
        sentence count; high = grounded). A row not scored keeps its ``sgi_status`` and
        gets NaN claim scores and 0 sentences.
    scored_by : dict, optional
        ``{"model": ..., "precision": ...}`` recorded in a Parquet output's metadata
        (:func:`sgi_core.io.export.scored_with`).

    Returns
    -------
    StreamSummary

    Raises
    ------
    SGIInputError
        An unsupported output extension, an output that is a folder or cannot be
        written, a batch size below 1, bad input rows, or (with ``claims``) an input
        column already named like a claim column.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise SGIInputError(f"The 'batch_size' parameter of score_to_file must be an int >= 1. "
                            f"Got {batch_size!r} instead.")
    check_output_path(output)
    if claims:  # imported only here: the claims module pulls in the statistics stack
        from sgi_core.detectors.claims import CLAIM_COLUMNS, claim_scores
    pass_new_texts = [0]

    def count(done: int, total: int) -> None:
        pass_new_texts[0] = total  # the last call of an encoding pass carries its number of texts to encode
        if progress is not None:
            progress(done, total)

    def encoded(step, *args, **kwargs):
        pass_new_texts[0] = 0
        result = step(*args, cache=cache, batch_size=batch_size, progress=count, **kwargs)
        return result, pass_new_texts[0]

    rows = scored = new_texts = n_chunks = n_grounded = n_halluc = n_context_is_question = 0
    label_column = None
    with table_writer(output, scored_by=scored_by) as write:
        for table in chunks:
            label_column = table.mapping.label
            for text in table.warnings:
                if warn is not None:
                    warn(text)
            clash = [column for column in CLAIM_COLUMNS if column in table.frame.columns] if claims else []
            if clash:
                raise SGIInputError(f"the file already has columns named {', '.join(clash)}, which the claim "
                                    "scores would overwrite", source=table.source, column=clash[0],
                                    hint="Rename or drop those columns, or score without claims")
            frame, n_new = encoded(score_table, table, encoder)
            if claims:
                claim_frame, n_claim_new = encoded(claim_scores, frame, encoder)
                frame = frame.join(claim_frame)
                n_new += n_claim_new
            write(frame)
            rows += len(frame)
            scored += int(np.isfinite(frame["sgi"].to_numpy(dtype=float)).sum())
            labels = frame["label"].to_numpy(dtype=float)
            n_grounded += int((labels == 1.0).sum())
            n_halluc += int((labels == 0.0).sum())
            n_context_is_question += int(frame["sgi_status"].str.startswith(CONTEXT_IS_QUESTION_STATUS).sum())
            new_texts += n_new
            n_chunks += 1
    file_warnings = label_class_warnings(n_grounded, n_halluc, label_column)
    if scored and n_context_is_question == scored:
        file_warnings.append(CONTEXT_IS_QUESTION_EVERYWHERE)
    for text in file_warnings:
        if warn is not None:
            warn(text)
    return StreamSummary(rows=rows, scored=scored, new_texts=new_texts, chunks=n_chunks)
