"""What a judge run reports and keeps: every request counted, token counts checked, paid answers kept, private
caches."""

import json
import os
import sqlite3
import stat

import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding.cache import EmbeddingCache
from sgi_core.io.triples import validate_triples
from sgi_core.judge import TASKS, AnswerCache, JudgeCacheWarning, JudgeClient, plan_judging, run_judge
from sgi_core.judge.client import MAX_TOKENS_PER_REQUEST, estimate_tokens
from tests.judge.fake_server import FakeServer, judge_answer
from tests.judge.test_reply_limits import Server, head

INPUTS = {"question": "Where is the head office?", "contexts": ["The head office is in Delhi."],
          "response": "Delhi."}


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


@pytest.fixture
def frame():
    responses = ["Delhi is the head office.", "Mumbai runs it.", "Paris, founded early."]
    return validate_triples(pd.DataFrame({"question": ["Where is the head office?"] * 3,
                                          "context": ["The head office is in Delhi."] * 3,
                                          "response": responses})).frame


def run(frame, judge, cache, **options):
    plan = plan_judging(frame, judge, "answer_consistency")
    return run_judge(plan, judge, cache=cache, concurrency=1, **options)


@pytest.mark.parametrize("reported", [-5, 10**41, MAX_TOKENS_PER_REQUEST + 1, 2.5, "12"])
def test_an_implausible_token_count_is_replaced_by_the_estimate(reported):
    def reply(handler, body):
        content = json.dumps(judge_answer("support", INPUTS))
        data = json.dumps({"choices": [{"message": {"content": content}}], "usage": {"total_tokens": reported}})
        head(handler, Content_Length=str(len(data)))
        handler.wfile.write(data.encode())

    server = Server(reply)
    try:
        judge = JudgeClient(server.base_url, "m")
        judge.ask(TASKS["support"], INPUTS)
        assert judge.tokens == estimate_tokens(TASKS["support"].messages(INPUTS))
    finally:
        server.shutdown()
        server.server_close()


def test_every_request_sent_is_counted_failed_ones_too(server, frame, tmp_path):
    judge = JudgeClient(server.base_url, "m", sleep=lambda s: None)
    server.inject("500", "500", "500", "500")  # the first row's request fails all 4 attempts
    columns, summary = run(frame, judge, AnswerCache(tmp_path))
    assert columns["judge_status"].iloc[0].startswith("answer_consistency: request failed, 127.0.0.1 failed 4 times")
    assert len(server.chat_requests()) == 6 and summary.n_sent == 6
    assert summary.n_to_judge == 3 and summary.n_ok == 2


def test_a_locked_cache_keeps_the_paid_answers_and_saves_them_once_free(server, frame, tmp_path):
    cache = AnswerCache(tmp_path, timeout=0.2)
    holder = sqlite3.connect(cache.path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another program writing: every put of the run times out

    def release(done, total, tokens):
        if done == total and holder.in_transaction:
            holder.execute("COMMIT")

    columns, summary = run(frame, JudgeClient(server.base_url, "m"), cache, progress=release)
    assert summary.n_ok == 3 and (columns["judge_status"] == "ok").all()
    assert len(cache) == 3  # saved after the run, once the lock was gone
    _, again = run(frame, JudgeClient(server.base_url, "m"), cache)
    assert again.n_sent == 0 and again.n_cached == 3


def test_a_cache_locked_to_the_end_warns_and_the_run_keeps_its_answers(server, frame, tmp_path):
    cache = AnswerCache(tmp_path, timeout=0.2)
    holder = sqlite3.connect(cache.path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with pytest.warns(JudgeCacheWarning, match="3 judge answers could not be written to the cache"):
        columns, summary = run(frame, JudgeClient(server.base_url, "m"), cache)
    assert summary.n_ok == 3 and columns["judge_answer_consistency"].notna().all()
    holder.execute("ROLLBACK")
    assert len(cache) == 0


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_judge_and_embedding_caches_are_private(tmp_path):
    old = os.umask(0o022)  # a shared machine's usual umask, under which SQLite files are 0644
    try:
        judge_cache = AnswerCache(tmp_path / "judge")
        judge_cache.put("k", "usage", {"used": [True]})
        assert mode(tmp_path / "judge") == 0o700
        assert [mode(p) for p in sorted((tmp_path / "judge").iterdir())] == [0o600] * 3  # file, -shm, -wal
        vectors = EmbeddingCache("hashing", tmp_path / "emb")
        vectors.put_many([b"k"], np.ones((1, 4), dtype=np.float32))
        assert mode(tmp_path / "emb") == 0o700 and {mode(p) for p in (tmp_path / "emb").iterdir()} == {0o600}
        # a cache file made readable by an older version is closed to others when opened
        shared = tmp_path / "old"
        shared.mkdir()
        (shared / "answers.sqlite").touch(mode=0o644)
        AnswerCache(shared)
        assert mode(shared / "answers.sqlite") == 0o600
    finally:
        os.umask(old)
