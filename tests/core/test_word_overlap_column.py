"""Scoring writes the word-overlap baseline beside the scores, and every analysis of a scored file reads it."""

import warnings

import numpy as np
import pandas as pd
import pytest

from sgi_core.columns import WORD_OVERLAP_COLUMN
from sgi_core.embedding import HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.io.limits import InputLimits
from sgi_core.io.reading import read_table
from sgi_core.io.scored import scored_table
from sgi_core.io.triples import load_triples, validate_triples
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.scores import baselines, oriented_scores
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV

# Non-ASCII rows: a final sigma, a dotted capital I, accents, CJK and a combining mark between word characters.
UNICODE_ROWS = pd.DataFrame({
    "question": ["q1", "q2", "q3", "q4", "q5"],
    "context": ["ΟΔΥΣΣΕΥΣ sailed home", "İstanbul straddles the Bosphorus", "Le café de Flore, à Paris",
                "東京は日本の首都です", "cafe\u0301 society"],
    "response": ["Οδυσσευς sailed", "istanbul", "Café à Paris", "東京は日本の首都です", "cafe\u0301"],
})


def scored_sample():
    table = load_triples(SAMPLE_CSV)
    return table, score_table(table, HashingEncoder(64))


def test_scoring_writes_the_shares_of_lexical_groundedness_on_real_and_non_ascii_rows():
    table, scored = scored_sample()
    expected = baselines.lexical_groundedness(table.frame["response"], table.frame["context"])
    np.testing.assert_array_equal(scored[WORD_OVERLAP_COLUMN].to_numpy(), expected)
    assert scored.columns[-1] == WORD_OVERLAP_COLUMN and scored.columns[-2] == "sgi_status"
    unicode_scored = score_table(validate_triples(UNICODE_ROWS), HashingEncoder(64))
    shares = unicode_scored[WORD_OVERLAP_COLUMN].to_numpy()
    # By hand, from Python's str.lower and \w+: the capital sigma ending a word lowers to "ς", so both
    # spell "οδυσσευς"; "İ" lowers to "i" and a combining dot, so the context has no "istanbul"; CJK
    # characters are word characters; the combining accent is not one, so "cafe" is a word of the context.
    np.testing.assert_array_equal(shares, [1.0, 0.0, 1.0, 1.0, 1.0])


def test_a_scored_file_is_read_with_its_shares_and_not_recomputed(tmp_path, monkeypatch):
    _, scored = scored_sample()
    path = tmp_path / "scored.csv"
    scored.to_csv(path, index=False)
    _, scores = scored_table(read_table(path, limits=InputLimits()), source="scored.csv")

    def not_called(*args, **kwargs):
        raise AssertionError("the word overlap was computed again")

    monkeypatch.setattr(baselines, "lexical_groundedness", not_called)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        read_back = oriented_scores(scores, ["lexical_groundedness"])["lexical_groundedness"].to_numpy()
    np.testing.assert_array_equal(read_back, scored[WORD_OVERLAP_COLUMN].to_numpy())


def test_a_scored_file_without_the_column_gets_the_same_shares_computed():
    table, scored = scored_sample()
    _, scores = scored_table(scored.drop(columns=WORD_OVERLAP_COLUMN), source="old.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        computed = oriented_scores(scores, ["lexical_groundedness"])["lexical_groundedness"].to_numpy()
    np.testing.assert_array_equal(computed, scored[WORD_OVERLAP_COLUMN].to_numpy())


def test_reading_the_shares_warns_as_computing_them_does():
    frame = pd.DataFrame({"response": ["the", "Paris"], "context": ["x", "Paris"]})
    with pytest.warns(UndefinedStatisticWarning, match="1 responses have no content word") as computed:
        oriented_scores(frame, ["lexical_groundedness"])
    stored = frame.assign(**{WORD_OVERLAP_COLUMN: [np.nan, 1.0]})
    with pytest.warns(UndefinedStatisticWarning, match="1 responses have no content word") as read:
        oriented_scores(stored, ["lexical_groundedness"])
    assert [str(w.message) for w in computed] == [str(w.message) for w in read]


@pytest.mark.parametrize("bad", ["many", "1.5", "-0.1"])
def test_a_share_score_could_not_have_written_is_refused_with_its_row(bad):
    _, scored = scored_sample()
    frame = scored.astype({WORD_OVERLAP_COLUMN: object})
    frame.loc[2, WORD_OVERLAP_COLUMN] = bad
    with pytest.raises(SGIInputError, match="lexical_groundedness must be a share from 0 to 1") as err:
        scored_table(frame, source="edited.csv")
    assert err.value.rows == [3] and err.value.column == WORD_OVERLAP_COLUMN and err.value.source == "edited.csv"


def test_an_input_column_of_that_name_is_kept_aside_and_never_read_as_the_baseline():
    frame = UNICODE_ROWS.assign(lexical_groundedness=[0.0] * 5)
    table = validate_triples(frame)
    scored = score_table(table, HashingEncoder(64))
    assert scored["input_lexical_groundedness"].tolist() == [0.0] * 5
    np.testing.assert_array_equal(scored[WORD_OVERLAP_COLUMN].to_numpy(), [1.0, 0.0, 1.0, 1.0, 1.0])
