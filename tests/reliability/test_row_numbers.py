"""A chunk of a larger file is validated with the file's own row numbers."""

import re

import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.io.triples import validate_triples
from tests.reliability.hostile_files import C, Q, R


def chunk(labels, responses=None):
    n = len(labels)
    return pd.DataFrame({"question": [Q] * n, "context": [C] * n, "response": responses or [R] * n, "label": labels},
                        index=range(1000, 1000 + n))


def test_chunk_rows_are_numbered_from_first_row():
    table = validate_triples(chunk(["1", "", "0"], [R, "", R]), first_row=1001)
    assert table.frame["input_row"].tolist() == [1001, 1002, 1003]
    assert table.frame.index.tolist() == [0, 1, 2]
    assert table.unscorable == {2: "empty response"}  # position in this table, as scoring reads it
    assert table.warnings == [
        "the question, context or response is empty in row 1002: those rows are kept with no score",
        "the label is missing in row 1002: those rows count as unlabelled",
    ]


def test_chunk_label_errors_name_file_rows():
    message = ("unknown label values 'maybe' (file 'big.csv', column 'label', row 502). Use 1/0, true/false, yes/no, "
               "grounded/hallucinated, valid/invalid or faithful/unfaithful, "
               "or map the values (--label-map; the Data page's label values)")
    with pytest.raises(SGIInputError, match=f"^{re.escape(message)}$"):
        validate_triples(chunk(["1", "maybe"]), source="big.csv", first_row=501)
