"""Evidence per passage: each sentence's support names its passage, each specific the passages that hold it."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import percentileofscore

from sgi_core.detectors.claims import claim_scores, passage_pieces, sentence_scores
from sgi_core.detectors.registry import FAMILIES, DetectorInputs
from sgi_core.detectors.specifics import row_specifics, specific_passages, specifics_scores
from sgi_core.detectors.support import FileSupports, file_supports, support_percentiles
from sgi_core.embedding import HashingEncoder, load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples, validate_triples
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.text.sentences import split_pieces
from tests.conftest import SAMPLE_CSV
from tests.detectors.test_claims import VECTORS, TableEncoder

ONE_ROW = pd.DataFrame({"question": ["Who?"], "context": ["A is so.\n\nB is so."], "response": ["X holds. Y holds."]})


def test_the_best_sentence_in_passage_two_is_named():
    # X: cosine 0.6 to A (passage 1), 0.8 to B (passage 2); Y: 1/sqrt 2 to A, 0 to B (as in test_claims).
    out = sentence_scores(ONE_ROW, TableEncoder(VECTORS), passages=(("A is so.", "B is so."),))
    assert out["context_piece"].tolist() == ["B is so.", "A is so."]
    assert out["passage"].tolist() == [2, 1] and out["n_passages"].tolist() == [2, 2]
    np.testing.assert_allclose(out["support"], [0.8, 1 / np.sqrt(2)], rtol=1e-6)


def test_the_passages_column_of_a_scored_file_is_read():
    scored = ONE_ROW.assign(context_passages=[json.dumps(["B is so.", "A is so."])])
    assert sentence_scores(scored, TableEncoder(VECTORS))["passage"].tolist() == [1, 2]
    # Without passages the context is one passage: the same supports, every sentence in passage 1 of 1.
    plain = sentence_scores(ONE_ROW, TableEncoder(VECTORS))
    assert plain["passage"].tolist() == [1, 1] and plain["n_passages"].tolist() == [1, 1]
    np.testing.assert_allclose(plain["support"], [0.8, 1 / np.sqrt(2)], rtol=1e-6)


def test_a_tie_goes_to_the_first_passage():
    out = sentence_scores(ONE_ROW.assign(response="X holds."), TableEncoder(VECTORS),
                          passages=(("A is so.", "B is so.", "B is so."),))
    assert out["passage"].tolist() == [2] and out["n_passages"].tolist() == [3]


@pytest.mark.parametrize("passages", [
    ("Paris is the capital.", "(Passage 2) Lyon is smaller."),     # a citation opening a passage
    ("Paris is the capital. 1.", "Lyon is smaller."),              # a list marker closing one
    ("Paris is the capital.\n...", "--- Lyon is smaller. [2]"),
    ("One two three four five six seven.", "eight nine. Ten."),
])
def test_no_piece_spans_two_passages(passages):
    pieces, numbers = passage_pieces(passages, max_words=4)
    assert sorted(set(numbers)) == [1, 2]
    for piece, number in zip(pieces, numbers):
        assert piece in " ".join(passages[number - 1].split())
    # Each passage gives exactly its own pieces, in order.
    assert pieces == [p for passage in passages for p in split_pieces(passage, max_words=4)]


def test_passages_not_one_per_row_are_refused():
    with pytest.raises(SGIInputError, match="passages for 2 rows and a frame of 1 rows"):
        sentence_scores(ONE_ROW, TableEncoder(VECTORS), passages=(("A is so.",), ("B is so.",)))


def test_a_row_whose_passages_are_empty_is_not_scored():
    frame = pd.concat([ONE_ROW, ONE_ROW], ignore_index=True)
    out = claim_scores(frame, TableEncoder(VECTORS), passages=(("A is so.", "B is so."), ("", " ")))
    assert out["claim_n_sentences"].tolist() == [2, 0] and np.isnan(out["claim_min_support"].iloc[1])


def test_a_plain_file_scores_as_before_on_the_bundled_sample():
    frame = load_triples(SAMPLE_CSV).frame
    encoder = load_encoder("hashing")
    out = sentence_scores(frame, encoder)
    # Pinned from sentence_scores before contexts were split by passage (hashing encoder, 300 rows).
    assert len(out) == 305 and out["support"].sum() == pytest.approx(108.54871542091536, rel=1e-12)
    assert (out["passage"] == 1).all() and (out["n_passages"] == 1).all()
    # Brute force: each sentence's best cosine to the pieces of the whole context.
    for label in frame.index[:25]:
        row = frame.loc[label]
        sentences, pieces = split_pieces(row["response"]), split_pieces(row["context"])
        s_emb, c_emb = encoder.encode(sentences), encoder.encode(pieces)
        cosine = (s_emb / np.linalg.norm(s_emb, axis=1, keepdims=True)) @ (
            c_emb / np.linalg.norm(c_emb, axis=1, keepdims=True)).T
        np.testing.assert_allclose(out.loc[out["row"] == label, "support"], cosine.max(axis=1), atol=1e-6)


def test_specifics_name_the_passages_that_hold_them():
    found = specific_passages("So Ann met Bo Li in 1999 and 2001.",
                              ["Ann came in 1999.", "Bo Li, 2001 and 1999.", "Ann."])
    assert found.values.tolist() == [["1999", "number", (1, 2)], ["2001", "number", (2,)],
                                     ["ann", "name", (1, 3)], ["bo li", "name", (2,)]]
    assert specific_passages("It was Carl in 1800.", "Ann came.")["passages"].tolist() == [(), ()]
    assert specific_passages("Yes.", ["Ann."]).empty


def test_a_name_split_between_two_passages_is_not_found():
    assert row_specifics("It was Marie Curie.", "It was Marie\n\nCurie, they said.") == (1, 0)  # one text
    assert row_specifics("It was Marie Curie.", ["It was Marie", "Curie, they said."]) == (1, 1)
    frame = pd.DataFrame({"context": ["It was Marie\n\nCurie, they said."], "response": ["It was Marie Curie."]})
    assert specifics_scores(frame)["specifics_n_unsupported"].tolist() == [0]
    listed = frame.assign(context_passages=[json.dumps(["It was Marie", "Curie, they said."])])
    assert specifics_scores(listed)["specifics_n_unsupported"].tolist() == [1]
    table = validate_triples(frame.assign(question="Who?", context=json.dumps(["It was Marie", "Curie, they said."])))
    computed = FAMILIES["specifics"].compute(DetectorInputs(table)).columns
    assert computed["specifics_n_unsupported"].tolist() == [1]


def test_plain_specifics_unchanged_on_the_bundled_sample():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        out = specifics_scores(load_triples(SAMPLE_CSV).frame)
    # Pinned from specifics_scores before contexts were searched by passage.
    assert out["specifics_n"].sum() == 472 and out["specifics_n_unsupported"].sum() == 102
    assert out["specifics_unsupported_share"].sum() == pytest.approx(43.983333333333334, rel=1e-12)


def test_the_claims_family_reads_the_tables_passages():
    table = validate_triples(pd.DataFrame({"question": ["Who?"], "response": ["X holds. Y holds."],
                                           "context": [json.dumps(["A is so.", "B is so."])]}))
    computed = FAMILIES["claims"].compute(DetectorInputs(table, encoder=TableEncoder(VECTORS))).columns
    assert computed["claim_min_support"].iloc[0] == pytest.approx(1 / np.sqrt(2), rel=1e-6)


@pytest.mark.parametrize(("support", "reference"), [
    ([0.2, 0.5], [0.1, 0.2, 0.3, 0.4]),                    # 2 of 4 at or below 0.2: 50; all four below 0.5
    ([0.3, 0.0, 0.9], [0.3, 0.3, 0.1, 0.8]),               # ties count as at or below
    ([0.25], [0.5, np.nan, 0.1]),                           # NaN in the reference is left out: 1 of 2
])
def test_percentiles_against_scipy(support, reference):
    finite = [r for r in reference if not np.isnan(r)]
    expected = [percentileofscore(finite, s, kind="weak") for s in support]
    np.testing.assert_allclose(support_percentiles(support, reference), expected)


def test_percentiles_against_scipy_on_random_values():
    rng = np.random.default_rng(3)
    reference = np.round(rng.normal(size=500), 2)  # rounded: many ties
    support = np.concatenate([reference[:50], rng.normal(size=50), [-9.0, 9.0]])
    expected = [percentileofscore(reference, s, kind="weak") for s in support]
    np.testing.assert_allclose(support_percentiles(support, reference), expected)
    assert support_percentiles([0.5], [0.1, 0.2, 0.3, 0.4]).tolist() == [100.0]


def test_percentiles_of_nan_and_against_nothing():
    assert np.isnan(support_percentiles([np.nan], [0.1])).all()
    with pytest.warns(UndefinedStatisticWarning, match="no support to compare with"):
        assert np.isnan(support_percentiles([0.1], [np.nan])).all()


def test_file_supports_are_the_sentence_supports_and_weakest_rows():
    frame = load_triples(SAMPLE_CSV).frame.head(40)
    encoder = HashingEncoder(dim=64)
    found = file_supports(frame, encoder)
    assert found.rows == tuple(range(40)) and not found.sampled
    np.testing.assert_array_equal(found.support, np.sort(sentence_scores(frame, encoder)["support"].to_numpy()))
    np.testing.assert_array_equal(found.weakest, claim_scores(frame, encoder)["claim_min_support"].to_numpy())
    back = FileSupports.from_dict(json.loads(json.dumps(found.to_dict())))
    assert back.rows == found.rows and np.array_equal(back.support, found.support)


def test_a_big_file_is_read_through_a_seeded_sample():
    frame = load_triples(SAMPLE_CSV).frame.head(30)
    encoder = HashingEncoder(dim=64)
    found = file_supports(frame, encoder, max_rows=10, seed=4)
    expected = np.sort(np.random.default_rng(4).choice(30, 10, replace=False))
    assert found.rows == tuple(expected.tolist()) and found.sampled and found.n_file_rows == 30
    rows = frame.iloc[expected]
    np.testing.assert_array_equal(found.weakest, claim_scores(rows, encoder)["claim_min_support"].to_numpy())
    assert file_supports(frame, encoder, max_rows=10, seed=4).rows == found.rows


def test_file_supports_take_passages_by_row():
    frame = pd.concat([ONE_ROW] * 3, ignore_index=True)
    passages = (("A is so.",), ("B is so.",), ("A is so.", "B is so."))
    found = file_supports(frame, TableEncoder(VECTORS), passages=passages, max_rows=2, seed=0)
    chosen = tuple(passages[i] for i in found.rows)
    expected = sentence_scores(frame.iloc[list(found.rows)], TableEncoder(VECTORS), passages=chosen)["support"]
    np.testing.assert_allclose(found.support, np.sort(expected.to_numpy()))


def test_file_supports_errors():
    with pytest.raises(SGIInputError, match="'max_rows' parameter of file_supports must be an int >= 1. Got 0"):
        file_supports(ONE_ROW, HashingEncoder(dim=8), max_rows=0)
