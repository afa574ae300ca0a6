"""The long-context rule: overlapping windows of whole sentences, passages as boundaries, best chunk per sentence."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.grounding.chunking import context_chunks, sentence_windows
from sgi_core.grounding.scoring import grounding_scores, grounding_sentences
from sgi_core.text.sentences import split_sentences
from tests.grounding.oracle import direct_support


def words(texts):
    return np.array([len(t.split()) for t in texts])


@pytest.mark.parametrize("counts, budget, expected", [
    ([4, 4, 4, 4], 10, [(0, 2), (1, 3), (2, 4)]),   # 4+1 + 4+1 = 10 fits; a third would not
    ([4, 4, 4, 4], 9, [(0, 1), (1, 2), (2, 3), (3, 4)]),
    ([1, 1, 1], 100, [(0, 3)]),
    ([3, 20, 3], 10, [(0, 1), (1, 2), (2, 3)]),     # the long sentence alone
    ([], 10, []),
])
def test_sentence_windows(counts, budget, expected):
    assert sentence_windows(counts, budget) == expected


def test_passages_are_chunk_boundaries():
    chunked = context_chunks(["Alpha beta.", "Gamma delta."], 100, words)
    assert chunked.chunks == ("Alpha beta.", "Gamma delta.") and chunked.passages == (1, 2) and not chunked.cut


def test_a_sentence_over_the_budget_marks_the_context_cut():
    chunked = context_chunks(["Short one. Long " + " ".join(["word"] * 30) + "."], 10, words)
    assert chunked.cut and len(chunked.chunks) == 2


LONG_CONTEXT = " ".join(f"Sentence number {n} tells that the river flows north through valley {n}." for n in range(12))


def test_long_context_is_chunked_within_the_budget_and_overlapping(tiny_models):
    model = tiny_models["bert_cen"]
    response = "The river flows north."
    budget = model.max_length - model.overhead - int(model.count_tokens([response])[0])
    chunked = context_chunks([LONG_CONTEXT], budget, model.count_tokens)
    sentences = split_sentences(LONG_CONTEXT)
    assert len(chunked.chunks) > 2 and not chunked.cut
    assert all(n <= budget for n in model.count_tokens(list(chunked.chunks)))
    pieces = [split_sentences(chunk) for chunk in chunked.chunks]
    assert [s for piece in pieces for s in piece[(1 if piece is not pieces[0] else 0):]] == sentences
    assert all(a[-1] == b[0] for a, b in zip(pieces, pieces[1:]))


def test_a_sentence_support_is_its_best_chunk(tiny_folders, tiny_models):
    model = tiny_models["bert_cen"]
    frame = pd.DataFrame({"context": [LONG_CONTEXT], "response": ["The river flows north. It flows in valley 3."]})
    scores = grounding_scores(frame, model)
    sentences, _ = grounding_sentences(frame, model)
    budget = model.max_length - model.overhead - int(model.count_tokens(["It flows in valley 3."])[0])
    chunks = context_chunks([LONG_CONTEXT], budget, model.count_tokens).chunks
    best = [max(direct_support(tiny_folders["bert_cen"], c, s, label="entailment") for c in chunks)
            for s in ("The river flows north.", "It flows in valley 3.")]
    np.testing.assert_allclose(sentences["support"], best, atol=1e-5)
    assert scores["grounding_bert_cen_min"][0] == pytest.approx(min(best), abs=1e-5)
    assert scores["grounding_bert_cen_chunks"][0] == len(chunks) and scores["grounding_bert_cen_cut"][0] == 0
    assert sentences["chunk"].between(0, len(chunks) - 1).all()


def test_list_context_passages_bound_the_chunks(tiny_models):
    frame = pd.DataFrame({"context": ["Paris is the capital.\n\nWater boils at one hundred degrees."],
                          "response": ["Water boils."]})
    sentences, rows = grounding_sentences(frame, tiny_models["bert_cen"],
                                          passages=(("Paris is the capital.", "Water boils at one hundred degrees."),))
    assert rows["chunks"].tolist() == [2]
    assert sentences["premise"][0] in ("Paris is the capital.", "Water boils at one hundred degrees.")
    assert sentences["passage"][0] == 1 + (sentences["premise"][0] != "Paris is the capital.")
