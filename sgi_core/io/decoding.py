"""Bytes to text, and the separator of a delimited text.

Text is decoded from a UTF-32, UTF-16 or UTF-8 byte-order mark, else as UTF-8, else
as Windows-1252 (Excel's "CSV" on Western Windows; the same as Latin-1 for every
printable Latin-1 character), else as Latin-1. A file whose lines are partly UTF-8
and partly not (rows pasted from two sources) is refused with its first line that is
not UTF-8: read in one encoding, the lines of the other would be garbled (``cafÃ©``).
The separator (``,``, tab, ``;`` or ``|``) is the one that splits the header into the most fields; an Excel ``sep=X``
first line is honoured.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterable
from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.io.table_formats import (
    BYTE_ORDER_MARKS,
    FORMATS_HINT,
    TEXT_ENCODINGS,
    no_rows_error,
    not_a_table_error,
)

SEPARATORS = (",", "\t", ";", "|")
_SNIFF_CHARS = 64 * 1024
_DECODE_BLOCK = 1024 * 1024

_SPREADSHEET_HINT = "Save the sheet as CSV (in Excel: File > Save As > CSV UTF-8)"
# Leading bytes of common binary files that get renamed or mistaken for tables.
_SIGNATURES = (
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook is one)", _SPREADSHEET_HINT),
    (b"\xd0\xcf\x11\xe0", "an old-format Office document (such as an Excel .xls workbook)", _SPREADSHEET_HINT),
    (b"%PDF", "a PDF document", FORMATS_HINT),
    (b"\x1f\x8b", "a gzip archive", "Decompress it first"),
)
# Control characters other than tab, newline, vertical tab, form feed and carriage return.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
# Random bytes decoded as Latin-1 are ~23% control characters; text with a few escape codes is far below.
_MAX_CONTROL_SHARE = 0.10
_EXCEL_SEP_LINE = re.compile(r"sep=(.)(\r\n|\n|\r)")
_NAME_PUNCTUATION = frozenset(" _-.()/#%'\"")
# Western text read as Windows-1252 is mostly ASCII; a column name of accented letters alone is rare.
_MAX_NON_ASCII_SHARE = 1 / 3


def _binary_error(raw: bytes, name: str) -> SGIInputError | None:
    for signature, what, hint in _SIGNATURES:
        if raw.startswith(signature):
            return SGIInputError(f"the file is {what}, not a text table", source=name, hint=hint)
    if b"\x00" in raw[:_SNIFF_CHARS]:
        return SGIInputError(
            "the file is binary, not text", source=name,
            hint=f"{FORMATS_HINT}; UTF-16 text needs a byte-order mark (or save it as UTF-8)",
        )
    return None


def bom_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark at the start of ``head`` announces, else ``None``."""
    return next((encoding for bom, encoding in BYTE_ORDER_MARKS if head.startswith(bom)), None)


def _decode_with_bom(raw: bytes, name: str) -> str | None:
    encoding = bom_encoding(raw)
    if encoding is not None:
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError as err:
            raise SGIInputError(
                f"the file starts with a {encoding.upper()} byte-order mark but is not valid "
                f"{encoding.upper()} (byte {err.start})", source=name, hint="Save it again as UTF-8",
            ) from None
    return None


def mixed_encoding_error(lines: Iterable[bytes], name: str) -> SGIInputError | None:
    """The error for a text that is UTF-8 on some lines and another encoding on others, else ``None``.

    Called once UTF-8 has failed. A line counts as UTF-8 when it holds a non-ASCII
    character and decodes as UTF-8; in Windows-1252 text such a line is rare (an
    accented capital followed by a symbol such as ``©``), so one of them beside a
    line that is not UTF-8 is taken as a mix.

    Parameters
    ----------
    lines : iterable of bytes
        The file's lines (a binary file object is one), read until both kinds are seen.
    """
    utf8_line = bad_line = None
    for number, line in enumerate(lines, start=1):
        if line.isascii():
            continue
        if _is_utf8(line):
            utf8_line = utf8_line or number
        else:
            bad_line = bad_line or number
        if utf8_line and bad_line:
            return SGIInputError(
                f"the file mixes encodings: line {utf8_line} is UTF-8 but line {bad_line} is not (it reads as "
                "Windows-1252 or Latin-1), and reading every line in one encoding would garble the others",
                source=name, hint=f"Save the whole file as UTF-8 (in Excel: File > Save As > CSV UTF-8), or correct "
                                  f"line {bad_line} and the lines like it",
            )
    return None


def _decode_single_byte(raw: bytes) -> str:
    """Windows-1252, else Latin-1 (which decodes any bytes): the encodings after UTF-8."""
    cp1252, latin1 = TEXT_ENCODINGS[1:]
    try:
        return raw.decode(cp1252)
    except UnicodeDecodeError:
        return raw.decode(latin1)


def decode_text(raw: bytes, source: str) -> str:
    """Decode file bytes: byte-order marks, then UTF-8, then Windows-1252, then Latin-1.

    Raises
    ------
    SGIInputError
        If the bytes are a known binary format, hold NUL bytes without a UTF-16/32
        byte-order mark, decode to text full of control characters, or are UTF-8 on
        some lines and not on others (:func:`mixed_encoding_error`).
    """
    text = _decode_with_bom(raw, source)
    if text is None:
        binary = _binary_error(raw, source)
        if binary is not None:
            raise binary
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            mixed = mixed_encoding_error(io.BytesIO(raw), source)
            if mixed is not None:
                raise mixed from None
            text = _decode_single_byte(raw)
    sample = text[:_SNIFF_CHARS]
    if len(_CONTROL_CHARS.findall(sample)) > _MAX_CONTROL_SHARE * len(sample):
        raise SGIInputError("the file is binary, not text (it is full of control characters)",
                            source=source, hint=FORMATS_HINT)
    return text


def _header_field_count(sample: str, separator: str) -> int:
    try:
        return len(next(csv.reader(io.StringIO(sample, newline=""), delimiter=separator), []))
    except csv.Error:
        return 0


def detect_separator(text: str) -> tuple[str, str]:
    """The separator of a delimited text, and the text without an Excel ``sep=`` line.

    The separator is the one of ``,``, tab, ``;``, ``|`` that splits the header into
    the most fields (quotes respected); ties go to that order.

    Examples
    --------
    >>> detect_separator("question;context;response\\nq;c, more;r\\n")[0]
    ';'
    >>> detect_separator("sep=|\\nquestion|context|response\\n")
    ('|', 'question|context|response\\n')
    """
    excel_line = _EXCEL_SEP_LINE.match(text)
    if excel_line:
        return excel_line.group(1), text[excel_line.end():]
    sample = text[:_SNIFF_CHARS]
    return max(SEPARATORS, key=lambda sep: _header_field_count(sample, sep)), text


def header_only_error(raw: bytes, columns, name: str) -> SGIInputError:
    """Why a text with one line and no rows is refused: no rows, or no header either.

    A few random bytes seldom hold a line break, so they read as a header alone. A
    header holds no control characters; one that is not UTF-8 text (read as
    Windows-1252) is made of letters, digits and the punctuation of names, mostly
    ASCII, as Western text is; random bytes are half beyond ASCII.
    """
    names = "".join(str(column) for column in columns)
    if _CONTROL_CHARS.search(names) or "\x0b" in names or "\x0c" in names:
        return not_a_table_error(name, "it holds control characters")
    if bom_encoding(raw) is None and not _is_utf8(raw):
        name_like = all(ch.isalpha() or ch.isascii() and (ch.isdigit() or ch in _NAME_PUNCTUATION) for ch in names)
        if not name_like or sum(not ch.isascii() for ch in names) > _MAX_NON_ASCII_SHARE * len(names):
            return not_a_table_error(name, "it is not UTF-8 text and does not read as names")
    return no_rows_error(name)


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decodes(path: Path, encoding: str) -> bool:
    """Whether the whole file decodes, read block by block so memory stays flat."""
    decoder = codecs.getincrementaldecoder(encoding)()
    with open(path, "rb") as handle:
        try:
            for block in iter(lambda: handle.read(_DECODE_BLOCK), b""):
                decoder.decode(block)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True


def file_encoding(path: Path, head: bytes, name: str) -> str:
    """The encoding :func:`decode_text` would pick for the whole file, read in blocks.

    Byte-order marks first, then UTF-8, Windows-1252, Latin-1. The first bytes
    (``head``) go through ``decode_text`` too, for its checks against binary files.
    """
    encoding = bom_encoding(head)
    if encoding is not None:
        return encoding
    utf8 = decodes(path, "utf-8")
    # A UTF-8 head may end inside a character; "ignore" drops only that cut tail.
    decode_text(head.decode("utf-8", errors="ignore").encode("utf-8") if utf8 else head, name)
    if utf8:
        return "utf-8"
    with open(path, "rb") as handle:
        mixed = mixed_encoding_error(handle, name)
    if mixed is not None:
        raise mixed
    return "cp1252" if decodes(path, "cp1252") else "latin-1"
