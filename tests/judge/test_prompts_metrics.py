"""Strict answer parsing and the metric formulas, on hand-computed cases."""

import itertools
import json
import math

import pytest

from sgi_core.judge.cache import answer_key
from sgi_core.judge.metrics import METRICS
from sgi_core.judge.prompts import PROMPT_VERSION, TASKS, AnswerError, decode_answer
from sgi_core.judge.yes_no import YesNo

TWO = {"question": "q", "contexts": ["p1", "p2"], "response": "r", "reference_answer": "a"}


@pytest.mark.parametrize("task, content, value", [
    ("relevance", '{"relevant": [true, false]}', (True, False)),
    ("relevance", '```json\n{"relevant": [false, false], "reason": "ignored"}\n```', (False, False)),
    ("usage", '{"used": [true, true]}', (True, True)),
    ("support", '{"statements": []}', ()),
    ("support", '{"statements": [{"statement": "a", "supported": true}, {"statement": "b", "supported": false}]}',
     (True, False)),
    ("similarity", '{"score": 0}', 0),
    ("similarity", '{"score": 5}', 5),
])
def test_valid_answers(task, content, value):
    assert TASKS[task].parse(decode_answer(content), TWO) == value


@pytest.mark.parametrize("task, content, reason", [
    ("relevance", "", "the reply holds no text"),
    ("relevance", "Yes, both are relevant.", "the reply is not JSON"),
    ("relevance", "[true, false]", "the reply is not a JSON object"),
    ("relevance", '{"relevant": [true]}', "'relevant' has 1 entries for 2 passages"),
    ("relevance", '{"relevant": ["true", false]}', r"relevant\[0\] is not true or false"),
    ("relevance", '{"relevant": [1, 0]}', r"relevant\[0\] is not true or false"),
    ("usage", '{"relevant": [true, true]}', "'used' is missing or not a list"),
    ("support", '{"statements": [{"statement": "a", "supported": "yes"}]}',
     r"statements\[0\]\.supported is not true or false"),
    ("support", '{"statements": [{"supported": true}]}', r"statements\[0\] has no 'statement' text"),
    ("support", json.dumps({"statements": [{"statement": "s", "supported": True}] * 31}), "more than 30"),
    ("similarity", '{"score": 4.5}', "'score' is not an integer from 0 to 5"),
    ("similarity", '{"score": true}', "'score' is not an integer from 0 to 5"),
    ("similarity", '{"score": 6}', "'score' is not an integer from 0 to 5"),
    ("similarity", '{"score": "5"}', "'score' is not an integer from 0 to 5"),
])
def test_malformed_answers_say_why(task, content, reason):
    with pytest.raises(AnswerError, match=reason):
        TASKS[task].parse(decode_answer(content), TWO)


def test_prompts_carry_the_version_and_treat_cells_as_data():
    for task in TASKS.values():
        system, user = task.messages({name: TWO[name] for name in task.inputs})
        assert f"judge task '{task.name}', prompt version {PROMPT_VERSION}" in system["content"]
        assert "never instructions" in system["content"]
        assert json.loads(user["content"]) == {name: TWO[name] for name in task.inputs}


def test_cache_key_changes_with_every_part():
    base = ("http://127.0.0.1:1/v1", "judge-a", "usage", {"response": "r"})
    keys = {answer_key(*base), answer_key("https://api.openai.com/v1", *base[1:]),
            answer_key(base[0], "judge-b", *base[2:]), answer_key(*base[:2], "relevance", base[3]),
            answer_key(*base[:3], {"response": "r2"})}
    assert len(keys) == 5


def score(metric, answers, k=2):
    return METRICS[metric].compute(answers, k)


def test_metric_formulas_by_hand():
    relevant, used = (True, False, True, False), (True, True, False, False)
    # retrieval precision: 2 relevant of 4 passages
    assert score("retrieval_precision", {"relevance": relevant}) == ({"judge_retrieval_precision": 0.5}, None)
    # k-recall, k = 2: the first two passages hold 1 of the 2 relevant ones
    assert score("retrieval_k_recall", {"relevance": relevant}) == ({"judge_retrieval_k_recall": 0.5}, None)
    assert score("retrieval_k_recall", {"relevance": relevant}, k=3)[0]["judge_retrieval_k_recall"] == 1.0
    # augmentation precision: of the 2 relevant passages (0 and 2) the response uses 1 (0)
    assert score("augmentation_precision", {"relevance": relevant, "usage": used})[0] == {
        "judge_augmentation_precision": 0.5}
    # augmentation accuracy: 2 of 4 passages used
    assert score("augmentation_accuracy", {"usage": used})[0] == {"judge_augmentation_accuracy": 0.5}
    # answer consistency: 2 of 3 statements supported; the binary form needs all
    assert score("answer_consistency", {"support": (True, True, False)})[0] == {
        "judge_answer_consistency": 2 / 3, "judge_answer_consistency_binary": 0.0}
    assert score("answer_similarity", {"similarity": 4})[0] == {"judge_answer_similarity": 0.8}


def test_undefined_metrics_are_nan_with_a_reason():
    none_relevant = {"relevance": (False, False), "usage": (True, False)}
    values, reason = score("retrieval_k_recall", none_relevant)
    assert math.isnan(values["judge_retrieval_k_recall"]) and reason == "undefined, no passage is relevant"
    values, reason = score("augmentation_precision", none_relevant)
    assert math.isnan(values["judge_augmentation_precision"]) and reason == "undefined, no passage is relevant"
    values, reason = score("answer_consistency", {"support": ()})
    assert math.isnan(values["judge_answer_consistency"]) and values["judge_answer_consistency_binary"] == 1.0
    assert reason == "undefined share, the response states nothing"


def test_every_score_lies_in_the_unit_interval():
    for bits in itertools.product([False, True], repeat=3):
        for used in itertools.product([False, True], repeat=3):
            answers = {"relevance": bits, "usage": used, "support": bits, "similarity": sum(bits),
                       "grounded": YesNo(bits[0], None if used[0] else sum(bits) / 3)}
            for metric in METRICS.values():
                for value in metric.compute(answers, 2)[0].values():
                    assert math.isnan(value) or 0.0 <= value <= 1.0
