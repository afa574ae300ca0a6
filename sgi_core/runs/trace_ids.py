"""The default key matching two runs' rows (``compare``): the trace id both runs carry, else the question.

A converted trace export carries each answer's ``trace_id`` (:mod:`sgi_core.io.convert.traces`).
When both runs carry one of :data:`ID_KEYS` and share at least one of its values, rows
are matched on it; otherwise on the question text. Sharing is asked for because a trace
id names one execution: a system run twice over the same questions writes new trace ids,
and those runs are matched by their questions.

A file's own ``id`` column is not tried: it often names the answer rather than the
question (a HaluEval file's ``id`` differs between the right and the hallucinated answer
to one question), and files carrying one were matched on the question before; ``--key id``
names it.
"""

from __future__ import annotations

from pathlib import Path

#: Id columns tried, in this order, as the default key.
ID_KEYS = ("trace_id",)
#: The key when no id is shared.
QUESTION_KEY = "question"


def _id_values(path) -> dict[str, set[str]]:
    """The non-empty values (stripped text, as rows are matched) of each :data:`ID_KEYS` column of a run file."""
    from sgi_core.io.parquet import is_parquet_path
    from sgi_core.io.reading import cell_to_text, read_table, source_name
    from sgi_core.io.shards import is_sharded, stream_shards

    frame = None
    if is_sharded(path):  # only the id columns every shard holds, a batch at a time
        values: dict[str, set[str]] = {}
        for batch in stream_shards(path, [], optional=ID_KEYS):
            for key in batch.columns:
                values.setdefault(key, set()).update(t for t in (cell_to_text(v).strip() for v in batch[key]) if t)
        return values
    if is_parquet_path(path):
        import pyarrow.parquet as pq

        try:  # only the id columns; a file pyarrow cannot read is read whole below, which names what is wrong
            present = [key for key in ID_KEYS if key in pq.read_schema(path).names]
            if not present:
                return {}
            frame = pq.read_table(path, columns=present).to_pandas()
        except Exception:
            frame = None
    if frame is None:
        frame = read_table(path, name=source_name(path))
    return {key: {text for text in (cell_to_text(v).strip() for v in frame[key].tolist()) if text}
            for key in ID_KEYS if key in frame.columns}


def default_run_key(base: str | Path, new: str | Path) -> tuple[str, str | None]:
    """The column to match two run files' rows on, and a note when an id both carry was passed over.

    Returns
    -------
    key : str
        The first of :data:`ID_KEYS` that both runs carry with at least one value in
        common, else :data:`QUESTION_KEY`.
    note : str or None
        Why an id column both runs carry is not the key (they share no value of it).

    Raises
    ------
    SGIInputError
        A run file that cannot be read (as reading the run would).
    """
    base_ids, new_ids = _id_values(base), _id_values(new)
    passed_over = []
    for key in ID_KEYS:
        if key in base_ids and key in new_ids:
            if base_ids[key] & new_ids[key]:
                return key, None
            passed_over.append(key)
    if not passed_over:
        return QUESTION_KEY, None
    named = " or ".join(f"'{key}'" for key in passed_over)
    return QUESTION_KEY, (f"both runs carry {named} but share none of its values (a rerun writes new trace ids), so "
                          f"rows are matched on the question; pass --key to choose another column")
