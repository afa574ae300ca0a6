"""Finding a file's format in the converter registry and converting it: ``convert``'s and the upload's one path.

A file is recognised when its first record (JSON, JSON Lines), its columns (Parquet) or
its header (CSV) holds every key of one of a format's signatures
(:attr:`~sgi_core.io.convert.registry.InputFormat.signatures`). :func:`convert_file` converts a
file of a named or recognised format (``python -m sgi_core convert``);
:func:`read_input` is the Data page's reader: a file recognised as a format marked
``upload`` (a trace export, which is not a table of answers) is converted, any other file
is read by :func:`~sgi_core.io.reading.read_table` as before.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from sgi_core.errors import SGIInputError
from sgi_core.io.convert.registry import FORMATS, KIND_NAMES, Conversion, InputFormat, source_bytes

if TYPE_CHECKING:
    import pandas as pd

    from sgi_core.io.limits import InputLimits

def file_kind(raw: bytes, name: str) -> str:
    """``"parquet"`` (by suffix or magic bytes), ``"json"`` (``.json``, ``.jsonl``, ``.ndjson``) or ``"csv"``."""
    from sgi_core.io.table_formats import table_format

    if table_format(name, raw) == "parquet":
        return "parquet"
    return "json" if Path(name).suffix.lower() in (".json", ".jsonl", ".ndjson") else "csv"


def _parquet_columns(source) -> set[str]:
    """A Parquet file's column names, from its footer alone; none for a file pyarrow cannot read."""
    import pyarrow.parquet as pq

    try:
        return set(pq.read_schema(source).names)
    except Exception:  # pyarrow raises several unrelated types; read_table then names what is wrong
        return set()


def file_keys(raw: bytes, name: str, kind: str) -> set[str]:
    """What recognises a file: its Parquet columns, its first JSON record's keys, or its CSV header."""
    from sgi_core.io.convert.traces import first_record_keys
    from sgi_core.io.decoding import decode_text, detect_separator

    try:
        if kind == "parquet":
            return _parquet_columns(io.BytesIO(raw))
        if kind == "json":
            return first_record_keys(raw, name) or set()
        import csv

        separator, body = detect_separator(decode_text(raw, name))
        return set(next(csv.reader(io.StringIO(body), delimiter=separator), []))
    except Exception:  # an unreadable file is recognised as nothing; its reader then says what is wrong
        return set()


def recognised_formats(raw: bytes, name: str, *, upload_only: bool = False) -> list[InputFormat]:
    """The formats whose signature the file's keys hold (only those marked ``upload``, if asked).

    Examples
    --------
    >>> [f.name for f in recognised_formats(b'{"resourceSpans": []}', "spans.json")]
    ['otel']
    >>> recognised_formats(b"question,context,response\\nq,c,r\\n", "t.csv")
    []
    """
    kind = file_kind(raw, name)
    candidates = [f for f in FORMATS.values() if kind in f.kinds and (f.upload or not upload_only)]
    if not candidates:
        return []
    keys = file_keys(raw, name, kind)
    return [f for f in candidates if f.recognises(keys)]


def _one_format(found: list[InputFormat], name: str) -> InputFormat:
    if len(found) == 1:
        return found[0]
    if not found:
        raise SGIInputError("the file is in none of the formats `convert` recognises", source=name,
                            hint=f"Name its format with --from ({', '.join(FORMATS)}); a file with question, "
                                 "context and response columns needs no conversion")
    raise SGIInputError(f"the file matches several formats ({', '.join(f.name for f in found)})", source=name,
                        hint="Name one with --from")


def convert_file(source, fmt: str | None = None, *, name: str | None = None,
                 options: dict | None = None) -> Conversion:
    """Convert a file of a registered format (``fmt``, or the one it is recognised as) to triples.

    Parameters
    ----------
    source : path-like or bytes
    fmt : str, optional
        A :data:`~sgi_core.io.convert.registry.FORMATS` name; default: the one format the file
        is recognised as.
    name : str, optional
        The file's name in messages (default: the path).
    options : dict, optional
        Keyword options; a format takes those it declares (:attr:`InputFormat.options`).

    Raises
    ------
    SGIInputError
        An unknown format, a file recognised as another format, a file of a kind the
        format does not come in, a file recognised as no format or as several, or what
        the format's converter refuses.
    """
    from sgi_core.io.reading import source_name

    name = name or source_name(source)
    if fmt is not None and fmt not in FORMATS:
        raise SGIInputError(f"unknown format '{fmt}'", hint=f"Use one of {', '.join(FORMATS)}")
    raw = source_bytes(source, name)
    found = recognised_formats(raw, name)
    chosen = FORMATS[fmt] if fmt is not None else _one_format(found, name)
    if found and chosen not in found:
        raise SGIInputError(f"the file looks like a {found[0].title}, not a {chosen.title}", source=name,
                            hint=f"Leave out --from, or give --from {found[0].name}")
    kind = file_kind(raw, name)
    if kind not in chosen.kinds:
        kinds = " or ".join(KIND_NAMES[k] for k in chosen.kinds)
        raise SGIInputError(f"a {chosen.title} is read from {kinds}, and this file is {KIND_NAMES[kind]}",
                            source=name, hint=f"Export it as {kinds}, with its suffix (.parquet, .json, .jsonl)")
    given = {key: value for key, value in (options or {}).items() if key in chosen.options}
    return chosen.convert(raw, name, **given)


def read_input(source, *, name: str | None = None, limits: InputLimits | None = None) -> pd.DataFrame:
    """The Data page's reader: a trace export (a format marked ``upload``) as triples, any other file as it is.

    A file no upload format recognises is read by :func:`~sgi_core.io.reading.read_table`
    unchanged (a Parquet path still by its limited, batched read). A converted file is held
    to ``limits`` as a table is, its passages counted as their joined text.

    Raises
    ------
    SGIInputError
        What ``read_table`` or the format's converter refuses, or a broken limit.
    """
    from sgi_core.io.parquet import is_parquet_path
    from sgi_core.io.reading import read_table, source_name

    name = name or source_name(source)
    if is_parquet_path(source):
        if not any(f.upload and f.recognises(_parquet_columns(source)) for f in FORMATS.values()):
            return read_table(source, name=name, limits=limits)
    raw = source_bytes(source, name)
    found = recognised_formats(raw, name, upload_only=True)
    if not found:
        return read_table(raw, name=name, limits=limits)
    frame = _one_format(found, name).convert(raw, name).frame
    if limits is not None:
        from sgi_core.io.limits import check_cells, check_shape
        from sgi_core.io.passages import join_passages

        check_shape(len(frame), frame.columns, name, limits)
        check_cells(frame.assign(context=frame["context"].map(join_passages)), name, limits)
    return frame
