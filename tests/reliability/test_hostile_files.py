"""Every hostile file through the library: refused with its exact message, or scored row for row."""

import re

import pytest

from sgi_core.embedding import HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.reliability.hostile_files import REFUSED, SCORED


@pytest.mark.parametrize("case", REFUSED, ids=lambda case: case.id)
def test_refused_with_exact_message(case):
    message = case.message.format(source=case.filename)
    with pytest.raises(SGIInputError, match=f"^{re.escape(message)}$"):
        load_triples(case.content, name=case.filename)


@pytest.mark.parametrize("case", SCORED, ids=lambda case: case.id)
def test_scored_row_for_row(case):
    table = load_triples(case.content, name=case.filename)
    scored = score_table(table, HashingEncoder(64))
    assert table.warnings == case.warnings
    assert scored["input_row"].tolist() == list(range(1, len(case.status) + 1))
    assert scored["sgi_status"].tolist() == case.status
    assert scored["sgi"].notna().tolist() == [status == "ok" for status in case.status]
    for column, values in case.cells.items():
        assert scored[column].tolist() == values, column
