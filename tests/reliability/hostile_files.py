"""Messy and hostile input files, built in memory, each with the exact outcome it must get.

One table drives the library tests and the CLI tests. A :class:`Refused` file must
raise :class:`~sgi_core.errors.SGIInputError` with exactly ``message`` (``{source}``
stands for the file name the reader was given). A :class:`Scored` file must come
back with every row, in order, with the listed cells, statuses and warnings.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# Texts long enough (20+ characters) and different enough that only the case under
# test triggers a warning.
Q = "What is the capital city of France?"
C = "Paris is the capital and largest city of France."
R = "The capital of France is Paris."
TRIPLE = (Q, C, R)
HEADER = "question,context,response"
SHORT = ("the response is shorter than 20 characters in {rows}: it is scored, but the paper dropped such responses "
         "and did not validate SGI on them")


@dataclass(frozen=True)
class Refused:
    id: str
    filename: str
    content: bytes
    message: str


@dataclass(frozen=True)
class Scored:
    id: str
    filename: str
    content: bytes
    cells: dict  # column -> expected values, in row order
    status: list
    warnings: list = field(default_factory=list)


def csv_lines(*lines: str, sep: str = ",", encoding: str = "utf-8") -> bytes:
    return ("\n".join(sep.join(cells) if isinstance(cells, tuple) else cells for cells in lines) + "\n").encode(encoding)


def _random_bytes(n: int, *, low: int = 0) -> bytes:
    return np.random.default_rng(20251213).integers(low, 256, size=n, dtype=np.uint8).tobytes()


def _xlsx_like() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("xl/worksheets/sheet1.xml", "<worksheet/>")
    return buffer.getvalue()


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


LONG_CONTEXT = ("Paris is the capital of France. " * 3125).strip()  # 99,999 characters
LONG_RESPONSE = "x" * 100_000
UNICODE = {
    "cjk": ("日本の首都はどこですか？", "東京は日本の首都であり、最大の都市です。", "日本の首都は東京です。"),
    "emoji": ("Which rocket 🚀 flew first?", "The 🚀 Vostok 1 flew in 1961 👨‍🚀 with Gagarin.", "Vostok 1 🚀 flew first 🔥"),
    "rtl": ("ما هي عاصمة مصر؟", "القاهرة هي عاصمة مصر وأكبر مدنها.", "עיר הבירה של מצרים היא קהיר."),
}
FORMULAS = ("=cmd|' /C calc'!A0", "+SUM(1+1)*cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)")

REFUSED = [
    Refused("empty file", "empty.csv", b"", "the file is empty (file '{source}'). Give a file with a header row and data rows"),
    Refused("blank lines only", "blank.csv", b"\n  \n\t\n", "the file is empty (file '{source}'). Give a file with a header row and data rows"),
    Refused("header only", "header.csv", csv_lines(HEADER),
            "the file has column names but no data rows (file '{source}'). Add at least one row with a question, a context and a response"),
    Refused("random bytes", "random.csv", _random_bytes(4096),
            "the file is binary, not text (file '{source}'). Use a CSV, TSV, JSON Lines or Parquet file; "
            "UTF-16 text needs a byte-order mark (or save it as UTF-8)"),
    Refused("random bytes without NUL", "random.tsv", _random_bytes(4096, low=1),
            "the file is binary, not text (it is full of control characters) (file '{source}'). Use a CSV, TSV, JSON Lines or Parquet file"),
    Refused("xlsx renamed .csv", "workbook.csv", _xlsx_like(),
            "the file is a ZIP archive (an Excel .xlsx workbook is one), not a text table (file '{source}'). "
            "Save the sheet as CSV (in Excel: File > Save As > CSV UTF-8)"),
    Refused("pdf renamed .csv", "report.csv", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n",
            "the file is a PDF document, not a text table (file '{source}'). Use a CSV, TSV, JSON Lines or Parquet file"),
    Refused("gzipped csv renamed .csv", "triples.csv", gzip.compress(csv_lines(HEADER, ",".join(TRIPLE))),
            "the file is a gzip archive, not a text table (file '{source}'). Decompress it first"),
    Refused("UTF-16 without byte-order mark", "utf16.csv", csv_lines(HEADER, ",".join(TRIPLE), encoding="utf-16-le"),
            "the file is binary, not text (file '{source}'). Use a CSV, TSV, JSON Lines or Parquet file; "
            "UTF-16 text needs a byte-order mark (or save it as UTF-8)"),
    Refused("UTF-16 byte-order mark on odd bytes", "odd.csv", b"\xff\xfe" + "question".encode("utf-16-le") + b"\x00",
            "the file starts with a UTF-16 byte-order mark but is not valid UTF-16 (byte 18) (file '{source}'). Save it again as UTF-8"),
    Refused("UTF-8 with a few Windows-1252 rows", "mixed.csv",
            csv_lines(HEADER, ",".join(TRIPLE)) + csv_lines(f"{Q},Le café est ouvert à Paris.,{R}")
            + csv_lines(",".join(TRIPLE), f"{Q},La crème brûlée de Paris.,{R}", encoding="cp1252"),
            "the file mixes encodings: line 3 is UTF-8 but line 5 is not (it reads as Windows-1252 or Latin-1), and "
            "reading every line in one encoding would garble the others (file '{source}'). Save the whole file as UTF-8 "
            "(in Excel: File > Save As > CSV UTF-8), or correct line 5 and the lines like it"),
    Refused("duplicate column names", "dup.csv", csv_lines("question,context,response,question", ",".join(TRIPLE) + ",again"),
            "duplicate column names: question (file '{source}'). Rename the columns so that each name appears once"),
    Refused("SGI beside sgi", "case.csv", csv_lines(HEADER + ",SGI,sgi", ",".join(TRIPLE) + ",0.5,0.7"),
            "columns whose names differ only in case: SGI, sgi (file '{source}'). Rename or drop one of them: the "
            "library reads or writes the column 'sgi' whatever its case"),
    Refused("duplicate blank column names", "blank-names.csv", csv_lines(HEADER + ",,", ",".join(TRIPLE) + ",a,b"),
            "duplicate column names: (blank) (file '{source}'). Rename the columns so that each name appears once"),
    Refused("missing required columns", "missing.csv", csv_lines("question,context,notes", f"{Q},{C},n"),
            "no column for response (file '{source}'). Columns present: question, context, notes. Name them question, "
            "context, response (and label), or map them explicitly"),
    Refused("no known column at all", "unknown.csv", csv_lines("foo;bar", "1;2"),
            "no column for question, context, response (file '{source}'). Columns present: foo, bar. Name them question, "
            "context, response (and label), or map them explicitly"),
    Refused("row wider than the header", "wide.csv", csv_lines(HEADER, ",".join(TRIPLE), ",".join(TRIPLE) + ",extra"),
            "a row has 4 fields but the header has 3 (file '{source}', row 2). Put cells that contain the separator ',' "
            "in double quotes, or name every column in the header"),
    Refused("unnamed first column (an index)", "index.csv", csv_lines(HEADER, "0," + ",".join(TRIPLE)),
            "a row has 4 fields but the header has 3 (file '{source}', row 1). Put cells that contain the separator ',' "
            "in double quotes, or name every column in the header"),
    Refused("unclosed quote", "quote.csv", csv_lines(HEADER, ",".join(TRIPLE), f'"{Q},{C},{R}', ",".join(TRIPLE)),
            "a double quote opens a cell that is never closed (file '{source}', row 2). Close the quote; inside a quoted "
            'cell write a double quote as ""'),
    Refused("unknown labels", "labels.csv",
            csv_lines(HEADER + ",label", ",".join(TRIPLE) + ",1", ",".join(TRIPLE) + ",maybe", ",".join(TRIPLE) + ",0",
                      ",".join(TRIPLE) + ",2"),
            "unknown label values 'maybe', '2' (file '{source}', column 'label', rows 2, 4). Use 1/0, true/false, yes/no, "
            "grounded/hallucinated, valid/invalid or faithful/unfaithful, "
            "or map the values (--label-map; the Data page's label values)"),
    Refused("invalid JSON line", "bad.jsonl", b'{"question": "q", "context": "c", "response": "r"}\n{oops\n',
            "invalid JSON: Expecting property name enclosed in double quotes at character 2 (file '{source}', row 2). Each line "
            "must be one JSON object"),
    Refused("JSON nested too deeply", "deep.jsonl", b'{"question": "q"}\n{"context": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
            "JSON nested too deeply to read (file '{source}', row 2). Each line must be one JSON object"),
    Refused("JSON array nested too deeply", "deep.json", b"[" * 100_000 + b"]" * 100_000,
            "JSON nested too deeply to read (file '{source}'). Give one JSON array of objects, or one object per "
            "line (JSON Lines)"),
    Refused("JSON array of non-objects", "list.json", b'[{"question": "q"}, [1, 2], "x"]',
            "every element of a JSON array must be an object (file '{source}', rows 2, 3)"),
    Refused("corrupt Parquet", "broken.parquet", b"PAR1" + b"\x00" * 64,
            "cannot read as Parquet: Parquet magic bytes not found in footer. Either the file is corrupted or this is not "
            "a parquet file. (file '{source}'). Write the file again, or export it as CSV"),
]


def _rows(*triples, extra: dict | None = None) -> dict:
    cells = {role: [t[i] for t in triples] for i, role in enumerate(("question", "context", "response"))}
    return {**cells, **(extra or {})}


SCORED = [
    Scored("Latin-1 text", "latin1.csv", csv_lines(HEADER, ("Qué es la crème brûlée?", "La crème brûlée est un dessert français.",
                                                              "Un dessert à la crème façon brûlée."), encoding="latin-1"),
           _rows(("Qué es la crème brûlée?", "La crème brûlée est un dessert français.", "Un dessert à la crème façon brûlée.")),
           ["ok"]),
    Scored("Windows-1252 smart quotes", "cp1252.csv",
           csv_lines(HEADER, ("What does “grounded” mean?", "It costs €5 – a “fair” price.", "It means “supported” by the text…"),
                     encoding="cp1252"),
           _rows(("What does “grounded” mean?", "It costs €5 – a “fair” price.", "It means “supported” by the text…")), ["ok"]),
    Scored("UTF-16 LE with BOM", "utf16le.csv", csv_lines(HEADER, ",".join(TRIPLE), ",".join(UNICODE["cjk"]), encoding="utf-16"),
           _rows(TRIPLE, UNICODE["cjk"]), ["ok", "ok"], [SHORT.format(rows="row 2")]),
    Scored("UTF-16 BE with BOM", "utf16be.csv", b"\xfe\xff" + csv_lines(HEADER, ",".join(TRIPLE), encoding="utf-16-be"),
           _rows(TRIPLE), ["ok"]),
    Scored("UTF-8 with BOM", "bom.csv", csv_lines(HEADER, ",".join(TRIPLE), encoding="utf-8-sig"), _rows(TRIPLE), ["ok"]),
    Scored("semicolon-separated with commas in cells", "semi.csv",
           csv_lines("question;context;response", "Paris, or Lyon?;Paris, the capital, is large.;Paris, of course, it is."),
           _rows(("Paris, or Lyon?", "Paris, the capital, is large.", "Paris, of course, it is.")), ["ok"]),
    Scored("tab-separated with commas and semicolons in cells", "tabs.tsv",
           csv_lines("question\tcontext\tresponse", "Paris; or Lyon?\tParis, the capital; large.\tParis; of course, it is."),
           _rows(("Paris; or Lyon?", "Paris, the capital; large.", "Paris; of course, it is.")), ["ok"]),
    Scored("pipe-separated after an Excel sep= line", "excel.csv", csv_lines("sep=|", "question|context|response", "|".join(TRIPLE)),
           _rows(TRIPLE), ["ok"]),
    Scored("quoted newlines, quotes and separators inside cells", "multiline.csv",
           csv_lines(HEADER, f'"{Q}\nSecond line of the question.","He said ""Paris"", then\r\nleft.","{R}, twice\n\nover"'),
           _rows((f"{Q}\nSecond line of the question.", 'He said "Paris", then\r\nleft.', f"{R}, twice\n\nover")), ["ok"]),
    Scored("extra columns, one named like a score column", "extra.csv",
           csv_lines("id,question,context,response,judge score,sgi,notes", f"007,{Q},{C},{R},-0.50,old score,NA"),
           _rows(TRIPLE, extra={"id": ["007"], "judge score": ["-0.50"], "input_sgi": ["old score"], "notes": ["NA"],
                                "input_row": [1]}),
           ["ok"], ["input columns sgi were renamed to input_sgi"]),
    Scored("cells of 100,000 characters", "long.csv", csv_lines(HEADER, f'"{Q}","{LONG_CONTEXT}",{LONG_RESPONSE}'),
           _rows((Q, LONG_CONTEXT, LONG_RESPONSE)), ["ok"]),
    Scored("NaN, empty, whitespace-only and short-row text", "missing.csv",
           csv_lines(HEADER, f"{Q},{C},NaN", f"{Q},{C},", f"{Q},{C},   ", f"{Q},\t ,{R}", f",{C},{R}", f"{Q},{C}"),
           _rows((Q, C, "NaN"), (Q, C, ""), (Q, C, "   "), (Q, "\t ", R), ("", C, R), (Q, C, "")),
           ["ok", "not scored: empty response", "not scored: empty response", "not scored: empty context",
            "not scored: empty question", "not scored: empty response"],
           ["the question, context or response is empty in rows 2, 3, 4, 5, 6: those rows are kept with no score",
            "the response reads like a missing value ('NaN', 'None', ...) in row 1: it is scored as that text; "
            "leave the cell empty to mark it missing",
            SHORT.format(rows="row 1")]),
    Scored("numbers where text is expected", "numbers.csv", csv_lines(HEADER, "42,3.14159,-7", "1e5,0,+12.50"),
           _rows(("42", "3.14159", "-7"), ("1e5", "0", "+12.50")), ["ok", "ok"],
           ["every question in column 'question' is a number: check that the right column is used as the question",
            "every context in column 'context' is a number: check that the right column is used as the context",
            "every response in column 'response' is a number: check that the right column is used as the response",
            SHORT.format(rows="rows 1, 2")]),
    Scored("unicode: CJK, emoji, right-to-left", "unicode.csv",
           csv_lines(HEADER, *(",".join(UNICODE[k]) for k in ("cjk", "emoji", "rtl"))),
           _rows(UNICODE["cjk"], UNICODE["emoji"], UNICODE["rtl"]), ["ok", "ok", "ok"],
           [SHORT.format(rows="row 1")]),
    Scored("cells starting with =, +, -, @", "formulas.csv",
           csv_lines("question,context,response,note", '"{}","{}","{}","{}"'.format(*(f.replace('"', '""') for f in FORMULAS))),
           _rows(FORMULAS[:3], extra={"note": [FORMULAS[3]]}), ["ok"]),
    Scored("JSON Lines with null, numbers and nested values", "rows.jsonl",
           b'{"question": "%s", "context": ["%s", "Lyon is not."], "response": "%s", "score": 0.25}\n'
           b'{"question": "%s", "context": "%s", "response": null, "score": 3}\n' % (Q.encode(), C.encode(), R.encode(),
                                                                                   Q.encode(), C.encode()),
           # A list of passages is joined by a blank line, never embedded as JSON text.
           _rows((Q, f"{C}\n\nLyon is not.", R), (Q, C, ""), extra={"score": ["0.25", "3"]}),
           ["ok", "not scored: empty response"],
           ["the question, context or response is empty in row 2: those rows are kept with no score"]),
    Scored("JSON array of objects", "rows.json", json.dumps([dict(zip(("question", "context", "response"), TRIPLE))]).encode(),
           _rows(TRIPLE), ["ok"]),
    Scored("Parquet with typed columns and missing values", "typed.parquet",
           _parquet(pd.DataFrame({"question": [Q, None], "context": [C, C], "response": [R, R], "id": [7, 8],
                                  "is_valid": [True, False]})),
           _rows((Q, C, R), ("", C, R), extra={"id": [7, 8], "is_valid": [True, False], "label": [1.0, 0.0]}),
           ["ok", "not scored: empty question"],
           ["the question, context or response is empty in row 2: those rows are kept with no score"]),
]
