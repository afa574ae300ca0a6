"""List-formatted responses: markers, numbering and citations stay with their sentence instead of being scored alone."""

import pandas as pd
import pytest

from sgi_core.detectors.claims import claim_scores, sentence_scores
from sgi_core.embedding import HashingEncoder
from sgi_core.text.sentences import split_sentences

NUMBERED = """Here is what the passages say:
1. The Eiffel Tower is in Paris. (Passage 1)
2. It was completed in 1889. (Passage 2)
3. It is 330 metres tall. [3]"""


@pytest.mark.parametrize(
    "text, expected",
    [
        (NUMBERED, ["Here is what the passages say:", "1. The Eiffel Tower is in Paris. (Passage 1)",
                    "2. It was completed in 1889. (Passage 2)", "3. It is 330 metres tall. [3]"]),
        # Markers on lines of their own, as some models write them.
        ("1.\nParis is the capital.\n2.\nLyon is smaller.", ["1. Paris is the capital.", "2. Lyon is smaller."]),
        ("- Paris is the capital.\n- Lyon is smaller.\n\u2022\nMarseille is a port.",
         ["- Paris is the capital.", "- Lyon is smaller.", "\u2022 Marseille is a port."]),
        ("* Paris.\n* Lyon.", ["* Paris.", "* Lyon."]),
        ("Steps:\n(a) Boil water.\n(b) Add tea.\niv. Wait.",
         ["Steps:", "(a) Boil water.", "(b) Add tea.", "iv. Wait."]),
        ("1) Paris is big. 2) Lyon is not.", ["1) Paris is big.", "2) Lyon is not."]),
        # Citations after the full stop belong to the sentence they cite.
        ("Paris is the capital. (Passage 1) Lyon is smaller. [2][3]",
         ["Paris is the capital. (Passage 1)", "Lyon is smaller. [2][3]"]),
        ("Paris is the capital.\n[Source 1, 3]\nLyon is smaller.\n(Documents 2-4).",
         ["Paris is the capital. [Source 1, 3]", "Lyon is smaller. (Documents 2-4)."]),
        ("(Passage 1)\nParis is the capital.", ["(Passage 1) Paris is the capital."]),
        # Bare punctuation and numbers go with the sentence before; a text without words stays whole.
        ("Paris is the capital.\n...\n---", ["Paris is the capital. ... ---"]),
        ("1.", ["1."]),
        ("42.", ["42."]),
        # Words that look like markers but are sentences, and numbers inside sentences, are untouched.
        ("It was 1999. 2000 came.", ["It was 1999.", "2000 came."]),
        ("See item 1. The end.", ["See item 1.", "The end."]),
        ("Paris is the capital (Passage 1). Lyon is not.", ["Paris is the capital (Passage 1).", "Lyon is not."]),
    ],
)
def test_pieces_without_words_join_a_neighbour(text, expected):
    assert split_sentences(text) == expected


def test_no_sentence_is_only_a_marker_or_a_citation():
    responses = [NUMBERED, "1.\n2.\nParis.", "- a b.\n-\n- c d.", "(Passage 1)\n(Passage 2)\nText here. [1]"]
    for response in responses:
        for sentence in split_sentences(response):
            assert any(ch.isalpha() for ch in sentence.replace("Passage", "")), (response, sentence)


def test_a_numbered_list_counts_its_real_sentences():
    frame = pd.DataFrame({"question": ["Tell me about the Eiffel Tower."],
                          "context": ["The Eiffel Tower is in Paris. It was completed in 1889. It is 330 metres tall."],
                          "response": [NUMBERED]})
    per_sentence = sentence_scores(frame, HashingEncoder(dim=64))
    assert len(per_sentence) == 4  # the lead-in and three items, not seven pieces
    assert claim_scores(frame, HashingEncoder(dim=64))["claim_n_sentences"].tolist() == [4]
    assert not per_sentence["sentence"].isin(["1.", "2.", "3.", "(Passage 1)", "(Passage 2)", "[3]"]).any()
