"""Blank passages (empty or only whitespace) are left out before embedding, under every context strategy.

A retrieved chunk with no text is common in trace exports. Embedded, it pulls the
``mean`` of the passages towards the embedding of nothing, and ``nearest`` can pick it
for a short answer; so ``[P]``, ``["", P]`` and ``[" ", P]`` must score alike, a row
left with no passage is not scored (empty context), and the run counts what was left out.
"""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.columns import CONTEXT_STRATEGIES, STATUS_OK, not_scored_status
from sgi_core.embedding import load_encoder
from sgi_core.io.passages import context_passages, row_passages
from sgi_core.io.triples import validate_triples
from sgi_core.long_context import context_pieces
from sgi_core.pipelines.local_engine import read_chunks, score_to_file
from sgi_core.scoring import score_table

PASSAGE = "The Danube flows through ten countries, more than any other river in the world."
QUESTION = "How many countries does the Danube flow through?"
#: A short answer (the case where ``nearest`` picked the empty piece) and a full one.
RESPONSES = ("Yes.", "The Danube flows through ten countries.")
#: The same context with blank passages around it: each must score as ``[PASSAGE]``.
BLANK_VARIANTS = ([PASSAGE], ["", PASSAGE], [" ", PASSAGE], [PASSAGE, "\n\t"], ["", "\u3000", PASSAGE, " "])


def _table(contexts, responses) -> pd.DataFrame:
    return pd.DataFrame({"question": QUESTION, "context": [json.dumps(c) for c in contexts], "response": responses})


@pytest.mark.slow
@pytest.mark.parametrize("strategy", CONTEXT_STRATEGIES)
def test_blank_passages_leave_the_sgi_of_the_real_model_unchanged(minilm, strategy):
    contexts = [variant for variant in BLANK_VARIANTS for _ in RESPONSES]
    responses = [response for _ in BLANK_VARIANTS for response in RESPONSES]
    scored = score_table(validate_triples(_table(contexts, responses)), minilm, context_strategy=strategy)
    assert (scored["sgi_status"] == STATUS_OK).all()
    sgi = scored["sgi"].to_numpy().reshape(len(BLANK_VARIANTS), len(RESPONSES))
    # Every variant as the context [PASSAGE] alone, to float32 rounding.
    np.testing.assert_allclose(sgi, np.broadcast_to(sgi[0], sgi.shape), rtol=1e-6, atol=0)
    # The short answer and the full one are told apart: a check that the SGI moves at all.
    assert abs(sgi[0, 0] - sgi[0, 1]) > 0.05
    if strategy != "joined":
        assert (scored["context_pieces"] == 1).all()
    assert scored["context_passages"].map(list).tolist() == [[PASSAGE]] * len(contexts)


def test_a_row_left_with_no_passage_is_kept_not_scored_and_the_blanks_are_counted():
    frame = _table([[PASSAGE], ["", " "], [], ["\n", PASSAGE]], ["It flows through ten."] * 4)
    table = validate_triples(frame, source="blank.jsonl")
    assert table.passages == ((PASSAGE,), (), (), (PASSAGE,))
    assert table.blank_passages == 3
    assert ("3 blank passages (empty or only whitespace) in column 'context' in rows 2, 4 were left out before "
            "embedding; a row left with none is not scored (empty context)") in table.warnings
    for strategy in CONTEXT_STRATEGIES:
        scored = score_table(table, load_encoder("hashing"), context_strategy=strategy)
        assert len(scored) == 4
        assert scored["sgi_status"].tolist() == [STATUS_OK, not_scored_status("empty context"),
                                                 not_scored_status("empty context"), STATUS_OK]
        assert scored["sgi"].iloc[0] == pytest.approx(scored["sgi"].iloc[3], rel=1e-12)


def test_a_file_without_blank_passages_has_no_such_warning():
    found, warnings = context_passages(pd.Series(['["a", "b"]', '[]', "plain"]))
    assert found.n_blank == 0 and warnings == []


def test_the_run_summary_counts_the_blank_passages_of_every_chunk(tmp_path, capsys):
    source = tmp_path / "blank.jsonl"
    _table([["", PASSAGE], [PASSAGE], [" ", "", PASSAGE], [""]], ["It flows through ten."] * 4).to_json(
        source, orient="records", lines=True)
    summary = score_to_file(read_chunks(source, chunk_rows=2), tmp_path / "s.csv", load_encoder("hashing"),
                            context_strategy="mean")
    assert summary.blank_passages == 4 and summary.rows == 4 and summary.scored == 3
    assert main(["score", str(source), "-o", str(tmp_path / "t.csv"), "--model", "hashing",
                 "--context-strategy", "nearest", "--chunk-rows", "3"]) == 0
    err = capsys.readouterr().err
    assert "4 blank passages (empty or only whitespace) left out of the contexts before embedding" in err
    assert "in rows 1, 3 were left out before embedding" in err and "in row 4 were left out" in err


def test_a_scored_file_written_with_blank_passages_reads_without_them():
    # A file scored before blanks were left out still holds them in its passages column.
    frame = pd.DataFrame({"context": [f"\n\n{PASSAGE}", " "], "context_passages": [json.dumps(["", PASSAGE]), '[" "]']})
    assert row_passages(frame) == ((PASSAGE,), ())
    assert row_passages(frame, (("", PASSAGE), (" ",))) == ((PASSAGE,), ())


@pytest.mark.slow
def test_context_pieces_leave_blank_passages_out_for_any_encoder(minilm):
    assert context_pieces(load_encoder("hashing"), [["", PASSAGE, " \n"]]) == [[PASSAGE]]
    assert context_pieces(minilm, [["\t", PASSAGE]]) == [[PASSAGE]]
