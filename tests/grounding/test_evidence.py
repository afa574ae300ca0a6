"""One row's evidence for the Review page: best chunk and probability per sentence, a token classifier's spans."""

import numpy as np
import pytest

from sgi_core.grounding.evidence import hallucinated_spans, row_evidence
from tests.grounding.oracle import direct_support


@pytest.mark.parametrize("text, tokens, expected", [
    ("is 69 million people", [(0, 2, 0.1), (3, 5, 0.9), (6, 13, 0.7), (14, 20, 0.2)], ((3, 13, 0.9),)),
    ("is 69 million people", [(0, 2, 0.6), (3, 5, 0.1), (6, 13, 0.7)], ((0, 2, 0.6), (6, 13, 0.7))),
    ("is 69 million people", [(0, 2, 0.49)], ()),
    ("is 69, million", [(3, 5, 0.5), (5, 6, 0.8)], ((3, 6, 0.8),)),  # "69," : a token glued to the next
    ("is 69, million", [(3, 5, 0.5), (7, 14, 0.8)], ((3, 5, 0.5), (7, 14, 0.8))),  # the comma between is not marked
])
def test_hallucinated_spans(text, tokens, expected):
    assert hallucinated_spans(text, tokens) == expected


def test_evidence_names_the_best_passage_and_its_probability(tiny_folders, tiny_models):
    passages = ("Paris is the capital of France.", "Water boils at one hundred degrees.")
    found = row_evidence(tiny_models["bert_cen"], "\n\n".join(passages), "Water boils. Paris is big.", passages)
    assert found["sentence"].tolist() == ["Water boils.", "Paris is big."]
    for sentence, support, passage, premise in zip(found["sentence"], found["support"], found["passage"],
                                                    found["premise"]):
        each = [direct_support(tiny_folders["bert_cen"], p, sentence, label="entailment") for p in passages]
        assert support == pytest.approx(max(each), abs=1e-5)
        assert premise == passages[int(np.argmax(each))] and passage == int(np.argmax(each)) + 1
    assert found["spans"].tolist() == [(), ()]


def test_token_classifier_spans_are_its_marked_tokens(tiny_models):
    model = tiny_models["modernbert_token"]
    context, response = "The capital of France is Paris.", "The capital is Paris. It has 69 million people."
    found = row_evidence(model, context, response)
    (spans,) = found["spans"]
    tokens = model.token_probabilities(context, response)
    marked = [(s, e) for s, e, p in tokens if p >= 0.5]
    assert all(any(s <= ms and me <= e for s, e, _ in spans) for ms, me in marked)
    assert all(p >= 0.5 for _, _, p in spans)
    assert found["support"][0] == pytest.approx(1 - max(p for _, _, p in tokens), abs=1e-5)


def test_an_empty_response_has_no_evidence(tiny_models):
    assert row_evidence(tiny_models["bert_cen"], "Some context.", "  ").empty
