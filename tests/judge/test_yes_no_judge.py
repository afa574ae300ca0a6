"""A judge that answers Yes or No, read as P(yes) from the token log-probabilities, against a loopback server.

The fake server's Yes/No judge gives P(yes) = the share of the response's content words
found in the passages (:func:`~tests.judge.fake_server.grounded_share`), spread over
"Yes"/" yes" and "No"/"NO" with 10% on an unrelated token; normalised over the two
answers, the score must be that share exactly. Where the server gives no
log-probabilities the score is the bare answer, and the run says so.
"""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.cli import main
from sgi_core.judge import JudgeClient, JudgeProbabilityWarning, plan_judging, run_judge
from sgi_core.judge.cache import AnswerCache
from sgi_core.judge.metrics import METRICS
from sgi_core.judge.prompts import TASKS
from sgi_core.judge.yes_no import (
    FROM_ANSWER,
    FROM_LOGPROBS,
    YesNo,
    YesNoError,
    first_answer_alternatives,
    p_yes,
    parse_yes_no,
    read_answer,
)
from tests.judge.fake_server import FakeServer, grounded_share

LOG = math.log

ROWS = pd.DataFrame({
    "question": ["Who wrote Hamlet?", "Where is Paris?", "When did the war end?", "What is the capital of Peru?",
                 "Who painted it?"],
    "context": ["William Shakespeare wrote Hamlet around 1600.", "Paris is the capital of France.",
                "The war ended in 1945 after six years.", "Lima is the capital and largest city of Peru.",
                "The portrait was painted by Leonardo."],
    # Shares of content words found in the context: 1, 2/3, 1/2, 1/3, 0.
    "response": ["Shakespeare wrote Hamlet.", "Paris, capital of Germany.", "ended 1945, treaties signed",
                 "Lima, certainly, probably not", "Michelangelo did ceilings"],
})
SHARES = [1.0, 2 / 3, 0.5, 1 / 3, 0.0]


@pytest.fixture
def server():
    with FakeServer(retry_after="0") as running:
        yield running


def _judge(server, frame=ROWS, *, cache=None, concurrency=1):
    judge = JudgeClient(server.base_url, "guardian")
    try:
        plan = plan_judging(frame, judge, "groundedness")
        return run_judge(plan, judge, cache=cache, concurrency=concurrency)
    finally:
        judge.close()


@pytest.mark.parametrize(("alternatives", "expected"), [
    # Hand-computed: yes 0.6 + 0.1 (" yes"), no 0.1; "The" is left out: 0.7 / 0.8.
    ([("Yes", LOG(0.6)), (" yes", LOG(0.1)), ("No", LOG(0.1)), ("The", LOG(0.2))], 0.875),
    ([("YES", LOG(0.25)), ("no ", LOG(0.25)), ("\tNo", LOG(0.25))], 1 / 3),
    ([("Yes", LOG(0.9)), ("Maybe", LOG(0.1))], 1.0),
    ([("No", LOG(0.5)), ("Nope", LOG(0.5))], 0.0),
    ([("Maybe", -0.1), ("yess", -3.0)], None),
    ([], None),
])
def test_p_yes_is_normalised_over_yes_and_no_whatever_their_case_and_spaces(alternatives, expected):
    got = p_yes(alternatives)
    assert got is None if expected is None else got == pytest.approx(expected, abs=1e-12)


def test_p_yes_matches_a_direct_sum_of_probabilities_and_stays_finite_far_out():
    rng = np.random.default_rng(0)
    tokens = ["Yes", " yes", "YES", "No", " no", "The", "I"]
    for _ in range(50):
        logprobs = np.log(rng.dirichlet(np.ones(len(tokens))))
        yes, no = np.exp(logprobs[:3]).sum(), np.exp(logprobs[3:5]).sum()
        assert p_yes(list(zip(tokens, logprobs))) == pytest.approx(yes / (yes + no), rel=1e-12)
    # exp(-800) underflows to 0 in float64: the log-sum-exp form still gives the ratio.
    assert p_yes([("Yes", -800.0), ("No", -800.0 - math.log(3))]) == pytest.approx(0.75, abs=1e-12)


def test_the_first_answer_token_skips_leading_whitespace_and_ignores_broken_entries():
    logprobs = {"content": [
        {"token": " ", "logprob": -0.01, "top_logprobs": [{"token": " ", "logprob": -0.01}]},
        {"token": "No", "logprob": -0.4, "top_logprobs": [
            {"token": "Yes", "logprob": -1.2}, {"token": "No", "logprob": -0.4}, {"token": "yes", "logprob": "x"},
            {"token": "YES", "logprob": float("nan")}, {"token": 7, "logprob": -1.0}, "junk"]},
        {"token": ".", "logprob": -0.1, "top_logprobs": []},
    ]}
    assert first_answer_alternatives(logprobs) == [("Yes", -1.2), ("No", -0.4)]
    assert first_answer_alternatives(None) is None and first_answer_alternatives({"content": None}) is None
    assert first_answer_alternatives({"content": [{"token": "\n", "logprob": 0.0}]}) is None
    # The chosen token without its alternatives (top_logprobs not honoured) is no probability.
    assert first_answer_alternatives({"content": [{"token": "Yes", "logprob": -0.1}]}) is None
    assert first_answer_alternatives({"content": [{"token": "Yes", "logprob": -0.1, "top_logprobs": []}]}) is None


@pytest.mark.parametrize(("content", "verdict"), [("Yes", True), (" yes.", True), ("YES!", True), ("No", False),
                                                  ("\nno, it is not", False), ("**No**", False)])
def test_the_answer_is_the_first_word(content, verdict):
    assert read_answer(content) is verdict


@pytest.mark.parametrize("content", ["Maybe", "", "Yesterday", None, "I think yes"])
def test_an_answer_neither_yes_nor_no_is_refused(content):
    with pytest.raises(YesNoError, match=r"^the reply is neither Yes nor No"):
        read_answer(content)


@pytest.mark.parametrize(("answer", "reason"), [({"answer": "Yes", "p_yes": 0.5}, "'answer' is not"),
                                                ({"answer": "no", "p_yes": 1.5}, "'p_yes' is not null"),
                                                ({"answer": "no", "p_yes": True}, "'p_yes' is not null"),
                                                ({"answer": "yes", "p_yes": "0.4"}, "'p_yes' is not null")])
def test_a_cached_verdict_is_read_back_strictly(answer, reason):
    with pytest.raises(YesNoError, match=reason):
        parse_yes_no(answer)
    assert parse_yes_no(YesNo(False, 0.25).to_answer()) == YesNo(False, 0.25)


def test_the_score_is_p_yes_from_the_logprobs_and_ranks_continuously(server):
    with warnings.catch_warnings():
        warnings.simplefilter("error", JudgeProbabilityWarning)
        columns, summary = _judge(server)
    np.testing.assert_allclose(columns["judge_groundedness"], SHARES, rtol=0, atol=1e-12)
    assert [grounded_share({"response": r, "contexts": [c]}) for r, c in zip(ROWS["response"], ROWS["context"])] \
        == pytest.approx(SHARES)
    assert (columns["judge_groundedness_source"] == FROM_LOGPROBS).all() and summary.n_from_answer == 0
    assert (columns["judge_status"] == "ok").all() and columns["judge_groundedness"].nunique() == 5
    sent = server.chat_requests("grounded")
    assert len(sent) == 5
    for request in sent:
        body = request["body"]
        assert body["logprobs"] is True and body["top_logprobs"] == 5 and body["max_tokens"] <= 8
        assert "response_format" not in body  # one word, not JSON mode


def test_without_logprobs_the_score_is_the_answer_and_the_run_says_so(server):
    server.logprobs = False
    with pytest.warns(JudgeProbabilityWarning, match=r"^the endpoint gave no token log-probabilities for 5 of 5 judged "
                                                     r"rows: their judge_groundedness is the bare answer, 1 \(Yes\) or "
                                                     r"0 \(No\), not P\(yes\)"):
        columns, summary = _judge(server)
    assert columns["judge_groundedness"].tolist() == [float(share >= 0.5) for share in SHARES]
    assert (columns["judge_groundedness_source"] == FROM_ANSWER).all() and summary.n_from_answer == 5


def test_one_reply_without_logprobs_is_marked_on_its_row_only(server):
    server.inject("ok", "no_logprobs", "lead_newline")  # concurrency 1: requests arrive in row order
    with pytest.warns(JudgeProbabilityWarning, match=r"for 1 of 5 judged rows"):
        columns, summary = _judge(server)
    assert columns["judge_groundedness_source"].tolist() == [FROM_LOGPROBS, FROM_ANSWER, *[FROM_LOGPROBS] * 3]
    expected = [SHARES[0], 1.0, *SHARES[2:]]  # row 2's answer was Yes (2/3 >= 0.5); row 3 read past the newline
    np.testing.assert_allclose(columns["judge_groundedness"], expected, rtol=0, atol=1e-12)
    assert summary.n_from_answer == 1


def test_a_reply_neither_yes_nor_no_is_asked_again_then_marked(server):
    frame = pd.concat([ROWS.iloc[:1], ROWS.iloc[:1].assign(response="ALWAYS_BAD Shakespeare")], ignore_index=True)
    server.inject("bad_answer")
    columns, _ = _judge(server, frame)
    assert columns["judge_groundedness"].iloc[0] == 1.0
    assert columns["judge_status"].iloc[1] == ("groundedness: malformed answer twice (the reply is neither Yes nor No "
                                               "('It depends.'))")
    assert pd.isna(columns["judge_groundedness_source"].iloc[1]) and np.isnan(columns["judge_groundedness"].iloc[1])
    again = [r["body"]["messages"][-1]["content"] for r in server.chat_requests("grounded")
             if len(r["body"]["messages"]) > 2]
    assert again and all(text.endswith("Reply again with only Yes or No.") for text in again)


def test_a_cached_verdict_keeps_its_probability_and_its_source(server, tmp_path):
    cache = AnswerCache(tmp_path / "judge")
    try:
        first, _ = _judge(server, cache=cache)
        n_sent = len(server.requests)
        second, summary = _judge(server, cache=cache)
    finally:
        cache.close()
    assert len(server.requests) == n_sent and summary.n_cached == 5
    pd.testing.assert_frame_equal(first, second)


def test_the_metric_is_declared_once_and_its_task_asks_for_one_word():
    metric = METRICS["groundedness"]
    assert metric.columns == ("judge_groundedness",) and metric.source_column == "judge_groundedness_source"
    assert TASKS["grounded"].answer_form == "yes_no" and "Answer with one word" in TASKS["grounded"].instructions
    assert all(m.source_column is None for m in METRICS.values() if m.name != "groundedness")


@pytest.fixture
def halueval_200(shared_data, tmp_path):
    path = tmp_path / "halueval_200.csv"
    pd.read_csv(shared_data / "halueval" / "halueval_qa.csv", nrows=200).to_csv(path, index=False)
    return path


def test_report_ranks_the_yes_no_judge_as_a_detector(server, halueval_200, tmp_path, capsys):
    judged = tmp_path / "judged.csv"
    args = ["judge", str(halueval_200), "-o", str(judged), "--endpoint", server.base_url, "--judge-model", "guardian",
            "--metrics", "groundedness", "--api-key-env", ""]
    assert main(args) == 0
    frame = pd.read_csv(judged)
    assert (frame["judge_groundedness_source"] == FROM_LOGPROBS).all()
    assert frame["judge_groundedness"].nunique() > 2  # a probability, not two ties
    report = tmp_path / "report.json"
    assert main(["report", str(judged), "--models", "hashing", "--n-boot", "50", "--no-cache",
                 "--detector", "judge_groundedness", "--json", str(report)]) == 0
    detectors = json.loads(report.read_text())["detectors"]
    expected = roc_auc_score(frame["label"], frame["judge_groundedness"])
    assert detectors["judgements"]["judge_groundedness"]["roc"]["auroc"] == pytest.approx(expected)
    capsys.readouterr()

    server.logprobs = False
    binary = tmp_path / "binary.csv"
    assert main([*args[:3], str(binary), *args[4:], "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert "warning: the endpoint gave no token log-probabilities for 200 of 200 judged rows" in err
    frame = pd.read_csv(binary)
    assert set(frame["judge_groundedness"]) <= {0.0, 1.0} and (frame["judge_groundedness_source"] == "answer").all()
