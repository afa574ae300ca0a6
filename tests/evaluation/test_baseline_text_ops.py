"""The baselines' text operations against their plain per-row definitions, on real rows and edge cases."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from sgi_core.scores.baselines import lexical_groundedness, response_length
from tests.conftest import REPO

HALUEVAL = REPO.parent / "shared" / "data" / "halueval" / "halueval_qa.csv"


def overlap_by_definition(responses, contexts) -> np.ndarray:
    """Share of a response's non-stopword lower-cased \\w+ tokens, repeats counted, found among the context's."""
    def content(text):
        return [t for t in re.findall(r"\b\w+\b", str(text).lower()) if t not in ENGLISH_STOP_WORDS]

    out = []
    for response, context in zip(responses, contexts):
        tokens, vocabulary = content(response), set(content(context))
        out.append(sum(t in vocabulary for t in tokens) / len(tokens) if tokens else np.nan)
    return np.array(out)


EDGE = [  # (response, context)
    ("", "Paris is the capital"),                     # empty response: NaN
    ("the of and it", "the of and it"),               # no content word: NaN
    ("Paris!!! (Paris)", "...paris,"),                # punctuation splits tokens: 1.0
    ("PARIS Rome", "paris"),                          # case folded: 1/2
    ("Zürich İstanbul naïve", "zürich i̇stanbul"),   # Python lower-cases İ to i + a combining dot: 2/3
    ("x_y 42 4.2", "x_y 4"),                          # underscore is a word character; 4.2 is two tokens: 2/4
    ("Louvre museum", ""),                            # empty context: 0.0
    ("They were there", "They were not there"),       # "not" and every response word are stopwords: NaN
]


@pytest.mark.skipif(not HALUEVAL.exists(), reason="needs the shared HaluEval data")
def test_lexical_groundedness_matches_its_definition_on_real_rows():
    frame = pd.read_csv(HALUEVAL)
    expected = overlap_by_definition(frame["response"].tolist(), frame["context"].tolist())
    np.testing.assert_array_equal(lexical_groundedness(frame["response"], frame["context"]), expected)


@pytest.mark.parametrize("as_input",
                         [list, lambda xs: pd.Series(xs, dtype=object), lambda xs: pd.Series(xs, dtype="str")],
                         ids=["list", "object", "arrow"])
def test_lexical_groundedness_matches_its_definition_on_edge_cases(as_input):
    responses, contexts = [r for r, _ in EDGE], [c for _, c in EDGE]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = lexical_groundedness(as_input(responses), as_input(contexts))
    expected = overlap_by_definition(responses, contexts)
    np.testing.assert_array_equal(got, expected)
    assert expected[[2, 3, 4, 5, 6]].tolist() == [1.0, 0.5, 2 / 3, 0.5, 0.0]
    assert np.isnan(expected[[0, 1, 7]]).all()


@pytest.mark.parametrize("texts", [
    ["Paris", "", "Ünïcode", None, float("nan")],
    pd.Series(["Paris", "", "Ünïcode", None], dtype="str"),
    pd.Series(["Paris", None, 12, 3.5], dtype=object),
], ids=["list", "arrow", "mixed-object"])
def test_response_length_matches_its_definition(texts):
    expected = [0 if value is None or (isinstance(value, float) and np.isnan(value)) else len(str(value))
                for value in list(texts)]
    assert response_length(texts).tolist() == expected


def test_lexical_groundedness_is_the_same_a_block_at_a_time(monkeypatch):
    from sgi_core.scores import baselines

    responses, contexts = [r for r, _ in EDGE] * 3, [c for _, c in EDGE] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = lexical_groundedness(pd.Series(responses, dtype="str"), pd.Series(contexts, dtype="str"))
        monkeypatch.setattr(baselines, "LEXICAL_BLOCK_ROWS", 4)  # blocks that split the rows unevenly
        blocked = lexical_groundedness(pd.Series(responses, dtype="str"), pd.Series(contexts, dtype="str"))
        from_generators = lexical_groundedness(iter(responses), (c for c in contexts))
    np.testing.assert_array_equal(blocked, whole)
    np.testing.assert_array_equal(from_generators, whole)
    np.testing.assert_array_equal(whole, overlap_by_definition(responses, contexts))


#: Word characters of many scripts, a combining mark, numerals, "_", and separators.
_ALPHABET = "aébZßİıσΣςЖж東京一½²٣_ \u0301.,-'!"


@pytest.mark.filterwarnings("ignore")
@given(st.lists(st.tuples(st.text(_ALPHABET, max_size=12), st.text(_ALPHABET, max_size=40)), min_size=1, max_size=8))
def test_lexical_groundedness_matches_its_definition_on_any_unicode(pairs):
    responses, contexts = [r for r, _ in pairs], [c for _, c in pairs]
    np.testing.assert_array_equal(lexical_groundedness(responses, contexts), overlap_by_definition(responses, contexts))
