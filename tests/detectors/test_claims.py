import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.detectors.claims import CLAIM_COLUMNS, claim_scores, sentence_scores
from sgi_core.embedding import EmbeddingCache, HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.text.sentences import split_pieces, split_sentences


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", []),
        ("  \n\t ", []),
        ("Arthur's Magazine", ["Arthur's Magazine"]),
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("in the 19th century.First for Women is a magazine.",
         ["in the 19th century.", "First for Women is a magazine."]),
        ("Dr. Smith met Mrs. Jones. They talked.", ["Dr. Smith met Mrs. Jones.", "They talked."]),
        ("J. K. Rowling wrote it. The U.S. Army read it.", ["J. K. Rowling wrote it.", "The U.S. Army read it."]),
        ("It costs 3.5 dollars. It was 1999. 2000 came.", ["It costs 3.5 dollars.", "It was 1999.", "2000 came."]),
        ("Use e.g. salt. Fine.", ["Use e.g. salt.", "Fine."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("(He left.) She stayed.", ["(He left.)", "She stayed."]),
        ("Wait... Then it ended.", ["Wait...", "Then it ended."]),
        ("a lower. case follows", ["a lower. case follows"]),
        ("first line\n\n- second   line", ["first line", "- second line"]),
        ("It is in St. Louis.St.Paul too.", ["It is in St. Louis.", "St.Paul too."]),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_split_pieces_cuts_long_sentences_into_near_equal_windows():
    words = [f"w{i}" for i in range(150)]
    pieces = split_pieces(" ".join(words) + ". Short one.", max_words=64)
    # ceil(150 / 64) = 3 windows of 50 words, in order, nothing lost or repeated.
    assert [len(p.split()) for p in pieces] == [50, 50, 50, 2]
    assert " ".join(pieces[:3]).split() == words[:-1] + ["w149."]
    assert split_pieces("exactly four words here", max_words=4) == ["exactly four words here"]


def test_split_pieces_rejects_a_bad_window():
    with pytest.raises(SGIInputError, match="'max_words' parameter of split_pieces must be an int >= 1"):
        split_pieces("text", max_words=0)


class TableEncoder:
    """Hand-chosen vectors for a handful of texts, so that every score is computed by hand."""

    model_id = "table"

    def __init__(self, table):
        self.table = table
        self.calls = []

    def encode(self, texts, *, batch_size=64, progress=None):
        self.calls.append(list(texts))
        return np.array([self.table[t] for t in texts], dtype=np.float32)


S = 1 / math.sqrt(2)
VECTORS = {
    "Who?": [1.0, 0, 0],
    "A is so.": [0, 1.0, 0],
    "B is so.": [0, 0, 1.0],
    "X holds.": [0, 0.6, 0.8],
    "Y holds.": [S, S, 0],
}


def test_sentence_and_row_scores_on_hand_made_vectors():
    frame = pd.DataFrame({"question": ["Who?"], "context": ["A is so. B is so."], "response": ["X holds. Y holds."]},
                         index=["r1"])
    per_sentence = sentence_scores(frame, TableEncoder(VECTORS))
    # X: cosines 0.6 (A) and 0.8 (B): support 0.8 at B; SGI = theta(X, q) / theta(X, B) = (pi/2) / acos(0.8).
    # Y: cosines 1/sqrt 2 (A) and 0 (B): support 1/sqrt 2 at A; SGI = (pi/4) / (pi/4) = 1.
    assert per_sentence["row"].tolist() == ["r1", "r1"]
    assert per_sentence["context_piece"].tolist() == ["B is so.", "A is so."]
    np.testing.assert_allclose(per_sentence["support"], [0.8, S], rtol=1e-6)
    sgi_x = (math.pi / 2) / math.acos(0.8)
    np.testing.assert_allclose(per_sentence["sgi"], [sgi_x, 1.0], rtol=1e-6)

    row = claim_scores(frame, TableEncoder(VECTORS)).loc["r1"]
    assert row["claim_min_support"] == pytest.approx(S, rel=1e-6)
    assert row["claim_mean_support"] == pytest.approx((0.8 + S) / 2, rel=1e-6)
    assert row["claim_min_sgi"] == pytest.approx(1.0, rel=1e-6)
    assert row["claim_mean_sgi"] == pytest.approx((sgi_x + 1.0) / 2, rel=1e-6)
    assert row["claim_n_sentences"] == 2


def test_rows_with_an_empty_text_are_nan_and_keep_their_place():
    frame = pd.DataFrame({
        "question": ["Who?", "", "Who?", "Who?"],
        "context": ["A is so.", "A is so.", None, "B is so."],
        "response": ["X holds.", "X holds.", "X holds.", "   "],
    }, index=[10, 11, 12, 13])
    out = claim_scores(frame, TableEncoder(VECTORS))
    assert list(out.columns) == list(CLAIM_COLUMNS)
    assert out.index.tolist() == [10, 11, 12, 13]
    assert out["claim_n_sentences"].tolist() == [1, 0, 0, 0]
    assert out["claim_min_support"].iloc[0] == pytest.approx(0.6, rel=1e-6)
    assert out.loc[[11, 12, 13], ["claim_min_support", "claim_mean_sgi"]].isna().all().all()


def test_no_scorable_row_gives_all_nan_and_encodes_nothing():
    encoder = TableEncoder(VECTORS)
    frame = pd.DataFrame({"question": [""], "context": ["A is so."], "response": ["X holds."]})
    out = claim_scores(frame, encoder)
    assert out["claim_n_sentences"].tolist() == [0] and out["claim_min_support"].isna().all()
    assert encoder.calls == []


def test_each_distinct_piece_is_embedded_once_and_the_cache_is_used(tmp_path):
    encoder = HashingEncoder(dim=32)
    frame = pd.DataFrame({
        "question": ["Who won?", "Who won?"],
        "context": ["Ann won the race. Bob was second.", "Ann won the race. Bob was second."],
        "response": ["Ann won the race.", "Bob won. Carl cheered."],
    })
    cache = EmbeddingCache(encoder.model_id, tmp_path)
    first = claim_scores(frame, encoder, cache=cache)
    distinct = {"Who won?", "Ann won the race.", "Bob was second.", "Bob won.", "Carl cheered."}
    assert len(cache) == len(distinct)
    # The response sentence that is also a context sentence is fully supported.
    assert first["claim_min_support"].iloc[0] == pytest.approx(1.0, abs=1e-6)
    again = claim_scores(frame, encoder, cache=EmbeddingCache(encoder.model_id, tmp_path))
    pd.testing.assert_frame_equal(first, again)


def test_claim_scores_errors():
    with pytest.raises(SGIInputError, match="missing context, response"):
        claim_scores(pd.DataFrame({"question": ["q"]}), HashingEncoder(dim=8))
    frame = pd.DataFrame({"question": ["q"], "context": ["c"], "response": ["r"]})
    with pytest.raises(SGIInputError, match="'batch_size' parameter of sentence_scores must be an int >= 1"):
        claim_scores(frame, HashingEncoder(dim=8), batch_size=0)


@pytest.mark.slow
def test_claim_scores_with_minilm_on_halueval(minilm, shared_data):
    frame = pd.read_csv(shared_data / "halueval" / "halueval_qa.csv", dtype=str, keep_default_na=False, nrows=50)
    out = claim_scores(frame, minilm)
    assert out.index.equals(frame.index)
    assert (out["claim_n_sentences"] >= 1).all()
    assert out[list(CLAIM_COLUMNS)].notna().all().all()
    assert (out["claim_min_support"] <= out["claim_mean_support"] + 1e-12).all()
    assert out["claim_mean_support"].between(-1, 1).all()
    # Oracle for single-sentence responses: the best cosine of the whole response to each
    # context sentence, with the model called directly.
    single = frame.index[out["claim_n_sentences"] == 1][:10]
    for i in single:
        pieces = split_pieces(frame.at[i, "context"])
        emb = minilm.encode([" ".join(frame.at[i, "response"].split()), *pieces])
        emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
        assert out.at[i, "claim_min_support"] == pytest.approx(float((emb[1:] @ emb[0]).max()), abs=1e-5)
