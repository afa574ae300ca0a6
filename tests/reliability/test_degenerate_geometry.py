"""Degenerate triples: scored, flagged row by row, and warned about for the whole file."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.embedding import HashingEncoder
from sgi_core.geometry import SGI_EPSILON
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.reliability.hostile_files import SHORT, C, Q, R, csv_lines

Q2 = "Who wrote the novel Les Misérables?"
C2 = "Victor Hugo wrote Les Misérables and published it in 1862."
R2 = "Les Misérables was written by Victor Hugo."

TRUTHFULQA_WARNING = ("the context equals the question in every row (the paper's TruthfulQA setup): SGI is ~1 whatever "
                      "the response, so it cannot separate grounded from hallucinated responses; give each row its own "
                      "context")
CONTEXT_IS_QUESTION = "degenerate: context equals question (SGI ~1 whatever the response)"
RESPONSE_IS_CONTEXT = "degenerate: response equals context (SGI unbounded)"
RESPONSE_IS_QUESTION = "degenerate: response equals question"

CASES = {
    "context == question in every row": (
        [(Q, Q, R), (Q2, Q2, R2), (Q2, Q2, "Charles Dickens wrote it in London.")],
        [CONTEXT_IS_QUESTION] * 3, [TRUTHFULQA_WARNING]),
    # the file-level check ignores case and spacing; the row status compares embeddings, which may differ
    "context == question up to case and spacing": (
        [(Q, "  what is THE capital   city of france? ", R), (Q2, C2, R2)],
        ["ok", "ok"],
        ["the context equals the question in row 1: SGI is ~1 there whatever the response"]),
    "response == context": (
        [(Q, C, C), (Q2, C2, R2)], [RESPONSE_IS_CONTEXT, "ok"],
        ["the response equals the context in row 1: theta_rc is 0, so SGI is unbounded (about 1e8 x theta_rq) there"]),
    "response == question": (
        [(Q, C, R), (Q2, C2, Q2)], ["ok", RESPONSE_IS_QUESTION],
        ["the response repeats the question in row 2: theta_rq is 0, so SGI is 0 there"]),
    "very short responses": (
        [(Q, C, "Paris"), (Q2, C2, "."), (Q, C, "a"), (Q2, C2, R2)], ["ok"] * 4, [SHORT.format(rows="rows 1, 2, 3")]),
}


def as_csv(triples):
    return csv_lines("question,context,response", *(",".join(f'"{cell}"' for cell in t) for t in triples))


@pytest.mark.parametrize("name", CASES)
def test_library_flags_rows_and_warns(name):
    triples, status, warnings = CASES[name]
    table = load_triples(as_csv(triples), name="geometry.csv")
    scored = score_table(table, HashingEncoder(256))
    assert table.warnings == warnings
    assert scored["sgi_status"].tolist() == status
    assert scored["response"].tolist() == [t[2] for t in triples]


@pytest.mark.parametrize("name", CASES)
def test_cli_flags_rows_and_warns(tmp_path, capsys, name):
    triples, status, warnings = CASES[name]
    source, out = tmp_path / "geometry.csv", tmp_path / "out.parquet"
    source.write_bytes(as_csv(triples))
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--no-cache"]) == 0
    assert pd.read_parquet(out)["sgi_status"].tolist() == status
    stderr = capsys.readouterr().err
    if TRUTHFULQA_WARNING in warnings:
        # The CLI reads in chunks: each chunk names its rows, the whole file is judged once at the end.
        warnings = ["the context equals the question in rows 1, 2, 3: SGI is ~1 there whatever the response",
                    TRUTHFULQA_WARNING]
    assert [line for line in stderr.splitlines() if line.startswith("warning: ")] == [f"warning: {w}" for w in warnings]


def test_degenerate_values():
    triples = [(Q, Q, R), (Q, C, C), (Q, C, Q)]
    scored = score_table(load_triples(as_csv(triples), name="g.csv"), HashingEncoder(256))
    theta_rq, theta_rc, sgi = (scored[col].to_numpy() for col in ("theta_rq", "theta_rc", "sgi"))
    assert sgi[0] == pytest.approx(1.0, abs=1e-6)  # theta_rq == theta_rc when c == q
    assert theta_rc[1] == 0.0 and sgi[1] == pytest.approx(theta_rq[1] / SGI_EPSILON)
    assert theta_rq[2] == 0.0 and sgi[2] == 0.0


def test_paper_truthfulqa_setup_is_detected(shared_data):
    path = shared_data / "truthfulqa" / "truthfulqa_ctx_question.csv"
    table = load_triples(path)
    assert TRUTHFULQA_WARNING in table.warnings
    scored = score_table(table, HashingEncoder(256))
    assert (scored["sgi_status"] == CONTEXT_IS_QUESTION).all()
    np.testing.assert_array_equal(scored["theta_rq"].to_numpy(), scored["theta_rc"].to_numpy())
    np.testing.assert_allclose(scored["sgi"].to_numpy(), 1.0, atol=1e-5)
