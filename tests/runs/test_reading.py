"""Reading a run for comparison: which columns are scores, and each oriented higher = grounded."""

import pandas as pd
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import validate_triples
from sgi_core.runs.reading import read_run
from sgi_core.scores import BASELINES
from sgi_core.scores.baselines import lexical_groundedness
from sgi_core.scoring import score_table


def hashing_scorer():
    encoder = load_encoder("hashing")
    return lambda table: score_table(table, encoder)


def plain_run():
    return pd.DataFrame({
        "question": ["Where is Paris?", "Who wrote Hamlet?", "What is H2O?"],
        "context": ["Paris is in France.", "Hamlet is a play by Shakespeare.", "H2O is water."],
        "response": ["France", "It was Marlowe, surely", "Water"],
        "label": [1, 0, 1],
        "pair_id": [7, 8, 7],
        "row_id": [10, 11, 12],
        "judge_answer_consistency": [1.0, 0.0, 1.0],
        "toxicity": [0.1, 0.9, 0.2],
        "faithfulness": [0.9, 0.2, 0.8],
    })


def test_a_plain_run_is_scored_and_every_score_oriented():
    run = read_run(plain_run(), source="plain.csv", scorer=hashing_scorer(), hallucinated_high=["toxicity"],
                   key="question")
    assert run.scored_here
    assert run.scores == ("sgi", "theta_rq", "neg_theta_rc", "neg_theta_qc", "neg_response_length",
                          "lexical_groundedness", "judge_answer_consistency", "faithfulness", "neg_toxicity")
    frame = run.frame
    assert frame["neg_theta_rc"].tolist() == pytest.approx((-frame["theta_rc"]).tolist())
    assert frame["neg_toxicity"].tolist() == [-0.1, -0.9, -0.2]
    assert frame["neg_response_length"].tolist() == [-6, -22, -5]
    assert frame["lexical_groundedness"].tolist() == pytest.approx(
        lexical_groundedness(frame["response"], frame["context"]).tolist())
    assert frame["label"].tolist() == [1.0, 0.0, 1.0]


def test_a_scored_file_keeps_its_own_scores():
    table = validate_triples(plain_run()[["question", "context", "response", "label"]])
    scored = score_table(table, load_encoder("hashing")).assign(sgi=[5.0, 6.0, 7.0])
    assert "input_label" in scored.columns
    run = read_run(scored, source="scored.csv", scorer=None)
    assert not run.scored_here and run.frame["sgi"].tolist() == [5.0, 6.0, 7.0]
    assert run.scores == ("sgi", "theta_rq", "neg_theta_rc", "neg_theta_qc", "neg_response_length",
                          "lexical_groundedness")


def test_a_plain_run_without_a_scorer_is_refused():
    with pytest.raises(SGIInputError, match="this run carries no SGI scores.*plain.csv"):
        read_run(plain_run(), source="plain.csv", scorer=None)
    with pytest.raises(SGIInputError, match="column 'harm' named as hallucinated-high is not in the run"):
        read_run(plain_run(), source="plain.csv", scorer=hashing_scorer(), hallucinated_high=["harm"])


def test_a_judge_column_with_text_names_its_rows():
    frame = plain_run().assign(judge_answer_consistency=["1.0", "0.5", "high"])
    with pytest.raises(SGIInputError, match="detector scores must be numbers.*judged.csv.*judge_answer_consistency.*3"):
        read_run(frame, source="judged.csv", scorer=hashing_scorer())


def test_detector_columns_follow_the_registry():
    table = validate_triples(plain_run()[["question", "context", "response", "label"]])
    scored = score_table(table, load_encoder("hashing")).assign(
        claim_min_support=[0.9, 0.2, 0.8], claim_min_sgi=[1.2, 0.9, 1.1], claim_n_sentences=[1, 2, 1],
        specifics_unsupported_share=[0.0, 0.5, 0.25], specifics_n=[0, 2, 4])
    run = read_run(scored, source="detected.csv", scorer=None)
    # Judged registry scores are compared, oriented; the families' counts and per-sentence SGI are not.
    assert run.scores == ("sgi", "theta_rq", "neg_theta_rc", "neg_theta_qc", "claim_min_support",
                          "neg_specifics_unsupported_share", *BASELINES)
    assert run.frame["neg_specifics_unsupported_share"].tolist() == [-0.0, -0.5, -0.25]
