import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.geometry import pairwise_angle
from sgi_core.io.triples import validate_triples
from sgi_core.long_context import (
    TruncationResult,
    context_embeddings,
    context_pieces,
    split_into_windows,
    truncation_report,
)
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.scoring import score_table

LONG = " ".join(f"Sentence {i} tells about the river Danube and its bridges." for i in range(60))


def test_encoder_without_tokenizer_reports_unknown():
    with pytest.warns(UndefinedStatisticWarning, match="has no tokenizer"):
        res = truncation_report(load_encoder("hashing"), ["a", "b"])
    assert res.max_seq_length is None and res.n_texts == 2 and math.isnan(res.share_truncated)
    assert TruncationResult.from_dict(res.to_dict()).to_dict() == res.to_dict()


def test_an_encoder_without_a_tokenizer_takes_each_passage_whole():
    assert context_pieces(load_encoder("hashing"), [("a", "b"), (LONG,)]) == [["a", "b"], [LONG]]
    with pytest.raises(SGIInputError, match="1 contexts have no passage to embed"):
        context_embeddings(load_encoder("hashing"), [("a",), ()], strategy="mean")
    with pytest.raises(SGIInputError, match="must be one of 'mean', 'nearest'"):
        context_embeddings(load_encoder("hashing"), [("a",)], strategy="joined")


@pytest.mark.slow
def test_truncation_counts_match_the_tokenizer(minilm):
    counts = minilm.token_counts(["short text", LONG])
    res = truncation_report(minilm, ["short text", LONG, LONG])
    assert counts[1] > minilm.max_seq_length >= counts[0]
    assert (res.max_seq_length, res.n_texts, res.n_truncated) == (256, 3, 2)
    assert res.max_tokens == counts[1] and res.share_truncated == pytest.approx(2 / 3)


@pytest.mark.slow
def test_windows_are_verbatim_pieces_that_fit(minilm):
    pieces = split_into_windows(LONG, minilm.tokenizer, 254)
    assert len(pieces) == math.ceil((minilm.token_counts([LONG])[0] - 2) / 254)
    assert all(piece in LONG for piece in pieces)
    assert all(n - 2 <= 254 for n in minilm.token_counts(pieces))
    assert split_into_windows("short text", minilm.tokenizer, 254) == ["short text"]
    with pytest.raises(SGIInputError, match="at least 1 token"):
        split_into_windows("x", minilm.tokenizer, 0)


@pytest.mark.slow
def test_mean_and_nearest_strategies_against_brute_force(minilm):
    contexts = [("The Danube flows through Vienna.",), (LONG,)]
    r_emb = minilm.encode(["Bridges over the Danube", "Sentence 59 is about bridges."])
    mean_emb, n_pieces = context_embeddings(minilm, contexts, strategy="mean")
    assert n_pieces.tolist()[0] == 1 and n_pieces[1] > 1
    # A context that fits keeps its plain direction.
    assert pairwise_angle(mean_emb[0], minilm.encode([contexts[0][0]]))[0] < 1e-3
    pieces = split_into_windows(LONG, minilm.tokenizer, 254)
    piece_emb = minilm.encode(pieces)
    piece_emb /= np.linalg.norm(piece_emb, axis=1, keepdims=True)
    assert pairwise_angle(mean_emb[1], piece_emb.mean(axis=0))[0] < 1e-3
    nearest_emb, _ = context_embeddings(minilm, contexts, strategy="nearest", r_emb=r_emb)
    best = int(np.argmin(pairwise_angle(piece_emb, r_emb[1])))
    assert pairwise_angle(nearest_emb[1], piece_emb[best])[0] < 1e-3
    with pytest.raises(SGIInputError, match="needs one response embedding per context"):
        context_embeddings(minilm, contexts, strategy="nearest")


@pytest.mark.slow
def test_piece_strategies_change_only_long_contexts(minilm):
    frame = pd.DataFrame({
        "question": ["Which river flows through Vienna?", "What crosses the Danube?"],
        "context": ["The Danube flows through Vienna.", LONG],
        "response": ["The Danube", "Many bridges cross it."],
        "label": [1, 0],
    })
    table = validate_triples(frame)
    plain = score_table(table, minilm)
    assert "context_pieces" not in plain.columns
    for strategy in ("mean", "nearest"):
        pieced = score_table(table, minilm, context_strategy=strategy)
        assert pieced["context_pieces"].tolist()[0] == 1 and pieced["context_pieces"].iloc[1] > 1
        assert pieced["sgi"].iloc[0] == pytest.approx(plain["sgi"].iloc[0], rel=1e-5)
        assert pieced["sgi"].iloc[1] != pytest.approx(plain["sgi"].iloc[1], rel=1e-3)
        assert pieced["theta_rq"].tolist() == plain["theta_rq"].tolist()
        assert list(pieced["input_row"]) == [1, 2]
