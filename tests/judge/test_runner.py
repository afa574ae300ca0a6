"""Planning, running and resuming the judge against a real loopback server."""

import json
import math
import sqlite3
import threading
from collections import Counter

import pandas as pd
import pytest

import sgi_core.judge.cache as judge_cache
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import validate_triples
from sgi_core.judge import (
    BEYOND_MAX_ROWS,
    PROMPT_VERSION,
    TASKS,
    AnswerCache,
    JudgeClient,
    estimate,
    plan_judging,
    run_judge,
)
from sgi_core.judge.client import estimate_tokens
from sgi_core.render.lines import judge_estimate_line
from tests.judge.fake_server import FakeServer

QUESTION = "Which city holds the head office of the Oberoi Group hotels?"
CONTEXT = "The Oberoi Group is a hotel company founded by Mohan Singh Oberoi. Its head office is in Delhi."
OTHER = "Mumbai is the capital of Maharashtra."
ROWS = [
    # response                                passages (rank order)   expected answer_consistency
    ("Delhi, founded by Mohan Singh Oberoi.", [CONTEXT, OTHER], 1.0),     # every content word in the passages
    ("It was founded in Mumbai by Tata.", [CONTEXT, OTHER], 0.0),         # 'tata' is in no passage
    ("Delhi. The company also runs Paris.", [OTHER, CONTEXT], 0.5),       # 'Delhi.' yes, the Paris sentence no
    ("", [CONTEXT], None),                                                # empty response: not judged
    ("ALWAYS_BAD answer here.", [CONTEXT], None),                         # the judge never answers in JSON
]


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


@pytest.fixture
def frame():
    raw = pd.DataFrame({"question": [QUESTION] * len(ROWS), "context": [CONTEXT] * len(ROWS),
                        "response": [r[0] for r in ROWS], "passages": [json.dumps(r[1]) for r in ROWS],
                        "label": [1, 0, 0, 1, 0]})
    return validate_triples(raw).frame


def judge_for(server, model="judge-a", **options):
    return JudgeClient(server.base_url, model, sleep=lambda s: None, **options)


def run(frame, judge, metrics="answer_consistency", **options):
    cache = options.pop("cache", AnswerCache())
    concurrency = options.pop("concurrency", 2)
    progress = options.pop("progress", None)
    plan = plan_judging(frame, judge, metrics, **options)
    return run_judge(plan, judge, cache=cache, concurrency=concurrency, progress=progress)


def test_answer_consistency_row_by_row(server, frame):
    columns, summary = run(frame, judge_for(server))
    for (_, _, expected), value in zip(ROWS, columns["judge_answer_consistency"]):
        assert (math.isnan(value) and expected is None) or value == expected
    assert columns["judge_answer_consistency_binary"].tolist()[:3] == [1.0, 0.0, 0.0]
    assert columns["judge_status"].tolist() == [
        "ok", "ok", "ok", "not judged: empty response",
        "answer_consistency: malformed answer twice (the reply is not JSON)"]
    assert (columns["judge_prompt_version"] == PROMPT_VERSION).all() and (columns["judge_model"] == "judge-a").all()
    # 4 rows asked; the ALWAYS_BAD row is asked twice (one retry with the reason): 5 requests sent and counted
    assert len(server.chat_requests()) == 5 and summary.n_sent == 5 and summary.n_ok == 3
    retry = server.chat_requests()[-1]["body"]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert "not valid: the reply is not JSON" in retry[3]["content"]


def test_retrieval_metrics_from_the_passages_column(server, frame):
    metrics = "retrieval_precision,retrieval_k_recall,augmentation_precision,augmentation_accuracy"
    columns, _ = run(frame.iloc[:3], judge_for(server), metrics, contexts_column="passages", k=1)
    # the fake judge: CONTEXT shares 'head', 'office', 'oberoi' ... with the question, OTHER shares nothing
    assert columns["judge_retrieval_precision"].tolist() == [0.5, 0.5, 0.5]
    # k = 1: the relevant passage is ranked first in rows 1-2, second in row 3
    assert columns["judge_retrieval_k_recall"].tolist() == [1.0, 1.0, 0.0]
    # usage: row 1 uses CONTEXT only; row 2 uses both ('founded' and 'mumbai'); row 3 uses CONTEXT ('delhi')
    assert columns["judge_augmentation_accuracy"].tolist() == [0.5, 1.0, 0.5]
    assert columns["judge_augmentation_precision"].tolist() == [1.0, 1.0, 1.0]
    # rows 1 and 2 share question and passages: one relevance request serves both
    assert len(server.chat_requests("relevance")) == 2 and len(server.chat_requests("usage")) == 3


def test_missing_input_columns_fail_before_anything_is_sent(server, frame):
    judge = judge_for(server)
    with pytest.raises(SGIInputError, match="retrieval_precision, retrieval_k_recall need a contexts column.*"
                                            "--contexts-column"):
        plan_judging(frame, judge, "retrieval_precision,retrieval_k_recall")
    with pytest.raises(SGIInputError, match="answer_similarity needs a reference column"):
        plan_judging(frame, judge, "answer_similarity")
    with pytest.raises(SGIInputError, match="the reference column 'gold' is not in the file"):
        plan_judging(frame, judge, "answer_similarity", reference_column="gold")
    with pytest.raises(SGIInputError, match="unknown judge metric faithfulness. Choose from answer_similarity"):
        plan_judging(frame, judge, "answer_consistency,faithfulness")
    assert server.requests == []


def test_faults_end_in_a_retry_or_a_recorded_status(frame):
    with FakeServer(slow_seconds=1.0) as server:
        # one request at a time, in row order: row 1 meets 429, 500 and a dropped connection, then is
        # answered; row 2 meets a reply past the timeout, then an answer that is not JSON, asked again
        # with the reason and answered; row 3's reply body is not JSON: recorded, not retried
        server.inject("429", "500", "drop", "ok", "slow", "bad_answer", "ok", "malformed")
        columns, _ = run(frame.iloc[:3], judge_for(server, timeout=0.3), concurrency=1)
        recorded = ("answer_consistency: request failed, 127.0.0.1 answered with something other than a JSON object "
                    "(invalid JSON: Expecting value at character 14)")
        assert columns["judge_status"].tolist() == ["ok", "ok", recorded]
        assert columns["judge_answer_consistency"].tolist()[:2] == [1.0, 0.0]
        assert len(server.chat_requests()) == 4 + 3 + 1
        # the two answers are cached; a new run asks for row 3 only
        rerun, _ = run(frame.iloc[:3], judge_for(server))
        assert rerun["judge_status"].tolist() == ["ok"] * 3 and len(server.chat_requests()) == 8 + 1


def test_a_refused_key_stops_the_run_with_one_line(server, frame):
    server.inject("401")
    with pytest.raises(SGIInputError, match=r"rejected the key \(HTTP 401\); stopped with 0 of 4 answers"):
        run(frame, judge_for(server), concurrency=1)
    assert len(server.chat_requests()) == 1


def test_an_interrupted_run_resumes_without_asking_twice(server, frame):
    big = pd.concat([frame.iloc[:3].assign(question=f"{QUESTION} ({i})") for i in range(8)], ignore_index=True)
    seen = []

    def interrupt(done, total, tokens):
        seen.append(done)
        if done >= 5:
            raise KeyboardInterrupt

    judge = judge_for(server)
    with pytest.raises(KeyboardInterrupt):
        run(big, judge, "answer_consistency,augmentation_accuracy", progress=interrupt, concurrency=3)
    first = len(server.chat_requests())
    assert first < 2 * len(big)
    columns, summary = run(big, judge, "answer_consistency,augmentation_accuracy")
    asked = Counter(json.dumps(r["body"]["messages"]) for r in server.chat_requests())
    # Ctrl-C abandons the requests in flight (at most 3, the concurrency): only those are asked again.
    assert len(asked) == 2 * len(big) and sum(n - 1 for n in asked.values()) <= 3
    assert summary.n_cached + summary.n_sent == 2 * len(big) and summary.n_cached <= first
    assert (columns["judge_status"] == "ok").all()
    _, again = run(big, judge, "answer_consistency,augmentation_accuracy")
    assert again.n_sent == 0 and len(server.chat_requests()) == 2 * len(big)


def test_max_rows_then_the_full_run(server, frame):
    judge = judge_for(server)
    part, _ = run(frame.iloc[:3], judge, max_rows=2)
    assert part["judge_status"].tolist() == ["ok", "ok", BEYOND_MAX_ROWS]
    assert math.isnan(part["judge_answer_consistency"].iloc[2])
    full, summary = run(frame.iloc[:3], judge)
    assert summary.n_cached == 2 and summary.n_sent == 1 and len(server.chat_requests()) == 3
    assert full["judge_answer_consistency"].tolist() == [1.0, 0.0, 0.5]


def test_model_and_prompt_version_are_part_of_the_key(server, frame, monkeypatch):
    run(frame.iloc[:2], judge_for(server))
    run(frame.iloc[:2], judge_for(server, model="judge-b"))
    assert len(server.chat_requests()) == 4
    monkeypatch.setattr(judge_cache, "PROMPT_VERSION", "sgi-judge-next")
    run(frame.iloc[:2], judge_for(server))
    assert len(server.chat_requests()) == 6


def test_estimate_counts_requests_and_tokens_and_sends_nothing(server, frame):
    judge = judge_for(server)
    plan = plan_judging(frame, judge, "answer_consistency,retrieval_precision", contexts_column="passages")
    cache = AnswerCache()
    guess = estimate(plan, cache=cache)
    # rows 1, 2, 3 and 5 are judged (row 4 is empty): 4 support requests; rows 1 and 2 share their question
    # and passages, so 3 relevance requests
    expected_tokens = sum(estimate_tokens(TASKS[task].messages(inputs)) for task, inputs in plan.requests.values())
    assert (guess.n_rows, guess.n_judged_rows, guess.n_requests, guess.n_cached) == (5, 4, 4 + 3, 0)
    assert guess.input_tokens == expected_tokens and server.requests == []
    run_judge(plan, judge, cache=cache)
    assert estimate(plan, cache=cache).n_cached == 7 - 1  # the malformed answer of row 5 is not cached
    assert "4 of 5 rows to judge: 7 requests, 0 already in the cache, 7 to send" in judge_estimate_line(guess)


def test_concurrency_is_bounded(server, frame):
    server.delay = 0.15
    big = pd.concat([frame.iloc[:1].assign(response=f"Delhi {i}.") for i in range(12)], ignore_index=True)
    run(big, judge_for(server), concurrency=4)
    assert server.max_in_flight == 4


def test_cache_connections_are_per_thread(tmp_path):
    cache = AnswerCache(tmp_path)
    errors = []

    def write(n):
        try:
            for i in range(20):
                cache.put(f"{n}-{i}", "usage", {"used": [True]})
                assert cache.get_many([f"{n}-{i}"]) == {f"{n}-{i}": {"used": [True]}}
        except Exception as err:  # noqa: BLE001 - any error fails the test below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(cache) == 120


def test_damaged_cache_file_is_a_clear_error(tmp_path):
    (tmp_path / "answers.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(SGIInputError, match="the judge cache file is damaged.*Delete it"):
        AnswerCache(tmp_path)


def test_a_damaged_answer_row_is_asked_again(tmp_path):
    cache = AnswerCache(tmp_path)
    cache.put("good", "usage", {"used": [True]})
    cache.put("bad", "usage", {"used": [True]})
    with sqlite3.connect(cache.path) as conn:
        conn.execute("UPDATE answers SET answer = '{\"used\": [tr' WHERE key = 'bad'")
    assert cache.get_many(["good", "bad"]) == {"good": {"used": [True]}}


def sent_contexts(server) -> list:
    """The passages of every support request, sorted (requests arrive in any order)."""
    return sorted(json.loads(r["body"]["messages"][1]["content"])["contexts"] for r in server.chat_requests("support"))


def test_a_context_of_passages_is_sent_as_the_list(server):
    rows = pd.DataFrame({"question": [QUESTION] * 2, "response": ["Delhi, founded by Oberoi.", "Mumbai."],
                         "context": [json.dumps([CONTEXT, OTHER]), "Plain text, one passage."]})
    table = validate_triples(rows)
    assert table.passages == ((CONTEXT, OTHER), ("Plain text, one passage.",))
    run(table.frame, judge_for(server), passages=table.passages)
    assert sent_contexts(server) == sorted([[CONTEXT, OTHER], ["Plain text, one passage."]])


def test_a_scored_files_passages_column_is_sent_as_the_list(server, frame):
    scored = frame.iloc[:2].assign(context=f"{CONTEXT}\n\n{OTHER}",
                                   context_passages=[json.dumps([CONTEXT, OTHER]), None])
    run(scored, judge_for(server))
    # The second row's cell holds no list: its context text is its one passage, as in a plain file.
    assert sent_contexts(server) == sorted([[CONTEXT, OTHER], [f"{CONTEXT}\n\n{OTHER}"]])


def test_a_plain_context_is_sent_as_one_passage_and_an_empty_one_is_not_judged(server, frame):
    plain = frame.iloc[:2].assign(context=[CONTEXT, ""])
    columns, _ = run(plain, judge_for(server))
    assert sent_contexts(server) == [[CONTEXT]]
    assert columns["judge_status"].tolist() == ["ok", "not judged: empty contexts"]
