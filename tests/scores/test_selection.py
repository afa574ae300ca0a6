"""The chooser: which scores a file is judged on, each once, read from the registry when it is called."""

import pytest

from sgi_core.scores import registry
from sgi_core.scores.registry import ScoreSpec
from sgi_core.scores.selection import carried_names, declared_spec, is_score_column, judged_scores, trivial_names


def names(specs) -> list[str]:
    return [spec.oriented_name for spec in specs]


@pytest.mark.parametrize(("columns", "expected"), [
    (["response", "context", "theta_rq"], ("neg_response_length", "lexical_groundedness", "theta_rq")),
    (["response", "context"], ("neg_response_length", "lexical_groundedness")),
    (["response", "theta_rq"], ("theta_rq",)),
    ([], ()),
])
def test_trivial_scores_are_those_the_columns_allow(columns, expected):
    assert trivial_names(columns) == expected


@pytest.mark.parametrize(("text", "name", "higher_is"), [
    ("judge", "judge", "grounded"),
    ("judge:grounded", "judge", "grounded"),
    ("risk:hallucinated", "neg_risk", "hallucinated"),
    ("a:b:hallucinated", "neg_a:b", "hallucinated"),
    ("ratio:x", "ratio:x", "grounded"),
])
def test_a_declared_column_reads_its_direction(text, name, higher_is):
    spec = declared_spec(text)
    assert (spec.oriented_name, spec.higher_is) == (name, higher_is)


def test_a_file_is_judged_on_each_score_once_in_the_faces_order():
    columns = ["question", "context", "response", "label", "pair_id", "theta_qc", "theta_rq", "theta_rc", "sgi",
               "judge_faithfulness", "grounding_nli_min", "grounding_nli_chunks", "claim_min_support"]
    specs = judged_scores(columns, computed=["combined", "lsgi"], declared=["judge_faithfulness:hallucinated"],
                          others=["my_score"])
    assert names(specs) == ["sgi", "neg_response_length", "lexical_groundedness", "theta_rq",
                            # declared before the carried columns: its direction wins over the judge prefix's
                            "neg_judge_faithfulness",
                            "neg_theta_rc", "neg_theta_qc", "claim_min_support", "grounding_nli_min",
                            "lsgi", "my_score", "combined"]
    assert not {"label", "pair_id", "grounding_nli_chunks", "question"} & set(names(specs))


def test_the_chooser_can_leave_out_the_score_and_the_trivial_ones():
    assert names(judged_scores(["sgi", "theta_rq", "response", "context"], score=None, trivial=False,
                               computed=["specifics_unsupported_share"])) == [
        "sgi", "theta_rq", "neg_specifics_unsupported_share"]


def test_a_score_planted_in_the_registry_is_chosen_at_once(monkeypatch):
    planted = ScoreSpec("planted_risk", "planted risk, negated", "hallucinated", "a planted score", ("texts",),
                        "detector")
    monkeypatch.setitem(registry.SCORES, planted.name, planted)
    assert "planted_risk" in carried_names() and is_score_column("planted_risk")
    assert "neg_planted_risk" in names(judged_scores(["sgi", "planted_risk"]))
    assert not is_score_column("unregistered")
