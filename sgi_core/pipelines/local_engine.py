"""The local engine of ``score``: read, validate, score and write a file of any size in this process.

:func:`read_chunks` yields a file as validated chunks of ``chunk_rows`` rows
(:func:`sgi_core.io.chunks.raw_chunks` reads them, :func:`sgi_core.io.triples.validate_triples`
checks each), with ``input_row`` and the row numbers in messages counted from the top
of the file.

:func:`score_to_file` scores each chunk with :func:`sgi_core.scoring.score_table`
and appends it to one CSV file (escaped as :func:`sgi_core.io.export.to_csv_bytes`
does) or Parquet file (:func:`sgi_core.io.export.table_writer`). Warnings come per chunk.
With ``families`` each chunk also gets the columns of those per-row detector families
(:mod:`sgi_core.detectors.registry`), from the same encoder and cache. It returns the
:class:`~sgi_core.scoring.ScoreSummary` that the Ray engine (:mod:`sgi_core.pipelines.ray_engine`)
returns too.

The embedding cache carries texts across chunks: a question in row 5 and again
in row 50,005 is encoded once. Without a cache, a text repeated in two chunks is
encoded in each.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from sgi_core.columns import (
    ANGLE_COLUMNS,
    CONTEXT_IS_QUESTION_STATUS,
    DEFAULT_CONTEXT_STRATEGY,
    INPUT_ROW,
    PASSAGES_COLUMN,
    STATUS_COLUMN,
)
from sgi_core.embedding import EmbeddingCache, Encoder, ProgressCallback
from sgi_core.errors import SGIInputError, format_rows
from sgi_core.io.chunks import raw_chunks
from sgi_core.io.export import check_output_path, table_writer
from sgi_core.io.labels import label_class_warnings
from sgi_core.io.passages import row_passages
from sgi_core.io.table_formats import DEFAULT_CHUNK_ROWS, no_rows_error
from sgi_core.io.triples import (
    CONTEXT_IS_QUESTION_EVERYWHERE,
    ColumnMapping,
    TripleTable,
    validate_triples,
)
from sgi_core.scoring import ScoreSummary, score_table


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
        As in :func:`sgi_core.io.triples.validate_triples`.

    Returns
    -------
    iterator of TripleTable
        Chunks in file order; ``frame["input_row"]`` counts from the top of the file.

    Raises
    ------
    SGIInputError
        Everything :func:`~sgi_core.io.reading.read_table` and
        :func:`~sgi_core.io.triples.validate_triples` refuse, with file row numbers.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.csv").write_text("question,context,response\\nq1,c1,r1\\nq2,c2,r2\\nq3,c3,r3\\n")
    >>> [chunk.frame["input_row"].tolist() for chunk in read_chunks(folder / "t.csv", chunk_rows=2)]
    [[1, 2], [3]]
    """
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise SGIInputError("The 'chunk_rows' parameter of read_chunks must be an int >= 1. "
                            f"Got {chunk_rows!r} instead.")
    name = str(path)
    tables = _validated(raw_chunks(Path(path), name, chunk_rows), name, mapping, label_positive, label_map)
    first = next(tables)
    return itertools.chain([first], tables)


def _same_passage_column(frame: pd.DataFrame, passages_written: bool, warn) -> pd.DataFrame:
    """A scored chunk with the passages column exactly when the file's first chunk had it."""
    if passages_written and PASSAGES_COLUMN not in frame.columns:
        frame = frame.copy()
        # Where score_table puts it: after the input's columns, before the scores.
        frame.insert(frame.columns.get_loc(ANGLE_COLUMNS[0]), PASSAGES_COLUMN,
                     pd.Series([list(row) for row in row_passages(frame)], index=frame.index, dtype=object))
        return frame
    if not passages_written and PASSAGES_COLUMN in frame.columns:
        if warn is not None:
            warn(f"the contexts of {format_rows(frame[INPUT_ROW].tolist())} are lists, those of the rows before "
                 "are not: their passages are kept joined by a blank line in 'context' only. To keep them apart, "
                 "score with --chunk-rows at least the file's row count")
        return frame.drop(columns=PASSAGES_COLUMN)
    return frame


def score_chunk(table: TripleTable, encoder: Encoder, *, families: tuple[str, ...] = (),
                resources: Mapping[str, tuple] | None = None, cache: EmbeddingCache | None = None,
                batch_size: int = 64, progress: ProgressCallback | None = None,
                context_strategy: str = DEFAULT_CONTEXT_STRATEGY) -> tuple[pd.DataFrame, int]:
    """One chunk scored as both engines score it: :func:`~sgi_core.scoring.score_table`, then each family's columns.

    Returns the scored rows and the number of texts encoded (the rest came from the cache).
    The parameters are :func:`score_to_file`'s.

    Raises
    ------
    SGIInputError
        A family that is not fitted per row, or an input column already named like one of its columns.
    """
    if families:  # imported only here: the detector families pull in the statistics stack
        from sgi_core.detectors.registry import DetectorInputs, per_row_family
    chosen = [per_row_family(name) for name in families]
    clash = [column for family in chosen for column in family.columns if column in table.frame.columns]
    if clash:
        raise SGIInputError(f"the file already has columns named {', '.join(clash)}, which the detector "
                            "scores would overwrite", source=table.source, column=clash[0],
                            hint="Rename or drop those columns, or score without those detectors")
    pass_new_texts = [0]

    def count(done: int, total: int) -> None:
        pass_new_texts[0] = total  # the last call of an encoding pass carries its number of texts to encode
        if progress is not None:
            progress(done, total)

    def encoded(step, *args, **kwargs):
        pass_new_texts[0] = 0
        result = step(*args, cache=cache, batch_size=batch_size, progress=count, **kwargs)
        return result, pass_new_texts[0]

    frame, n_new = encoded(score_table, table, encoder, context_strategy=context_strategy)
    for family in chosen:
        columns, n_family_new = encoded(
            lambda family=family, **options: family.compute(DetectorInputs(table, encoder, resources=resources or {},
                                                                           **options)).columns)
        frame, n_new = frame.join(columns), n_new + n_family_new
    return frame, n_new


def scored_record(model: str, encoder: Encoder, *, precision: str, context_strategy: str,
                  resources: Mapping[str, tuple] | None = None) -> dict:
    """What a scored Parquet file records of its scoring (:func:`sgi_core.io.scored.scored_with`).

    The model's name, precision, backend that ran (:func:`~sgi_core.embedding.backend_used`) and
    context strategy, and each resource given by name under its field
    (:attr:`~sgi_core.detectors.resources.ResourceOption.record`).
    """
    from sgi_core.detectors.resources import RESOURCE_OPTIONS
    from sgi_core.embedding import backend_used

    record = {"model": model, "precision": precision, "backend": backend_used(encoder),
              "context_strategy": context_strategy}
    record.update({option.field: option.record(resources[option.field]) for option in RESOURCE_OPTIONS.values()
                   if option.provenance and resources and option.field in resources})
    return record


def score_to_file(
    chunks: Iterator[TripleTable],
    output: str | os.PathLike,
    encoder: Encoder,
    *,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
    warn: Callable[[str], None] | None = None,
    families: tuple[str, ...] = (),
    scored_by: dict | None = None,
    context_strategy: str = DEFAULT_CONTEXT_STRATEGY,
    resources: Mapping[str, tuple] | None = None,
) -> ScoreSummary:
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
    families : tuple of str, default ()
        Per-row detector families (:func:`~sgi_core.detectors.registry.per_row_families`,
        e.g. ``("claims",)``) whose ``columns`` are added to every row; a row not scored
        keeps its ``sgi_status`` and gets NaN scores and 0 counts.
    resources : mapping of str -> tuple, optional
        The loaded resources the families read, by field
        (:attr:`~sgi_core.detectors.registry.DetectorInputs.resources`).
    scored_by : dict, optional
        ``{"model": ..., "precision": ..., "backend": ..., "context_strategy": ...}`` recorded
        in a Parquet output's metadata (:func:`sgi_core.io.scored.scored_with`).
    context_strategy : {"joined", "mean", "nearest"}, default "joined"
        How each context becomes one embedding (:func:`~sgi_core.scoring.score_table`).
        When the first chunk's contexts are lists, every chunk writes
        :data:`~sgi_core.columns.PASSAGES_COLUMN` (a later chunk of plain contexts gives
        each its one passage); when only a later chunk's are, its passages stay joined in
        ``context`` and a warning names its rows.

    Returns
    -------
    ScoreSummary

    Raises
    ------
    SGIInputError
        An unsupported output extension, an output that is a folder or cannot be
        written, a batch size below 1, bad input rows, a family that is not fitted
        per row, or an input column already named like a column of ``families``.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise SGIInputError(f"The 'batch_size' parameter of score_to_file must be an int >= 1. "
                            f"Got {batch_size!r} instead.")
    start = time.perf_counter()
    check_output_path(output)
    rows = scored = new_texts = n_chunks = n_grounded = n_halluc = n_context_is_question = n_blank = 0
    label_column = passages_written = None
    with table_writer(output, scored_by=scored_by) as write:
        for table in chunks:
            label_column = table.mapping.label
            for text in table.warnings:
                if warn is not None:
                    warn(text)
            frame, n_new = score_chunk(table, encoder, families=families, resources=resources, cache=cache,
                                       batch_size=batch_size, progress=progress, context_strategy=context_strategy)
            if passages_written is None:
                passages_written = PASSAGES_COLUMN in frame.columns
            frame = _same_passage_column(frame, passages_written, warn)
            write(frame)
            rows += len(frame)
            scored += int(np.isfinite(frame["sgi"].to_numpy(dtype=float)).sum())
            labels = frame["label"].to_numpy(dtype=float)
            n_grounded += int((labels == 1.0).sum())
            n_halluc += int((labels == 0.0).sum())
            n_context_is_question += int(frame[STATUS_COLUMN].str.startswith(CONTEXT_IS_QUESTION_STATUS).sum())
            new_texts += n_new
            n_blank += table.blank_passages
            n_chunks += 1
    file_warnings = label_class_warnings(n_grounded, n_halluc, label_column)
    if scored and n_context_is_question == scored:
        file_warnings.append(CONTEXT_IS_QUESTION_EVERYWHERE)
    for text in file_warnings:
        if warn is not None:
            warn(text)
    return ScoreSummary(engine="local", rows=rows, scored=scored, seconds=time.perf_counter() - start,
                        new_texts=new_texts, chunks=n_chunks, blank_passages=n_blank)
