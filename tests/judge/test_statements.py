"""The judge's statements of a row, found again in the answer cache under the key the judging run used."""

from __future__ import annotations

import pandas as pd

from sgi_core.judge.cache import AnswerCache
from sgi_core.judge.client import JudgeClient
from sgi_core.judge.runner import plan_judging
from sgi_core.judge.statements import cached_statements

ENDPOINT = "http://127.0.0.1:9/v1"
ROW = {"question": "Who wrote Hamlet?", "context": "Hamlet is a play by Shakespeare.",
       "response": "Shakespeare wrote it in 1066."}
ANSWER = {"statements": [{"statement": "Shakespeare wrote Hamlet.", "supported": True},
                         {"statement": "It was written in 1066.", "supported": False}]}


def cache_with_the_run_answer(tmp_path) -> AnswerCache:
    plan = plan_judging(pd.DataFrame([ROW]), JudgeClient(ENDPOINT, "m"), ["answer_consistency"])
    cache = AnswerCache(tmp_path)
    cache.put(plan.rows[0]["support"], "support", ANSWER)
    return cache


def test_statements_are_read_back_with_their_verdicts(tmp_path):
    cache = cache_with_the_run_answer(tmp_path)
    found = cached_statements(ROW["question"], ROW["context"], ROW["response"], endpoint=ENDPOINT, model="m",
                              cache=cache)
    assert found == (("Shakespeare wrote Hamlet.", True), ("It was written in 1066.", False))


def test_another_model_or_text_or_a_malformed_answer_finds_nothing(tmp_path):
    cache = cache_with_the_run_answer(tmp_path)
    assert cached_statements(ROW["question"], ROW["context"], ROW["response"], endpoint=ENDPOINT, model="other",
                             cache=cache) is None
    assert cached_statements(ROW["question"], ROW["context"], "Marlowe.", endpoint=ENDPOINT, model="m",
                             cache=cache) is None
    plan = plan_judging(pd.DataFrame([ROW]), JudgeClient(ENDPOINT, "n"), ["answer_consistency"])
    cache.put(plan.rows[0]["support"], "support", {"statements": [{"statement": "x", "supported": "yes"}]})
    assert cached_statements(ROW["question"], ROW["context"], ROW["response"], endpoint=ENDPOINT, model="n",
                             cache=cache) is None
