"""Judge page: the estimate comes first, a run against a real loopback server fills the Detectors page."""

import io

import numpy as np
import pandas as pd
import pytest

from dashboard.services import judging
from dashboard.views import texts
from sgi_core.errors import SGIInputError
from sgi_core.evaluation.detectors import compare_detectors
from sgi_core.io.triples import load_triples
from sgi_core.judge import (
    PROMPT_VERSION,
    AnswerCache,
    JudgeClient,
    estimate,
    plan_judging,
    run_judge,
)
from sgi_core.projection import sample_rows
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, goto, metric
from tests.judge.fake_server import FakeServer

TABLE = load_triples(SAMPLE_CSV)
ESTIMATE_LABELS = ("Rows to judge", "Requests", "Already in the cache", "Input tokens")
JUDGE_OUTPUT = ["judge_answer_consistency", "judge_answer_consistency_binary", "judge_status", "judge_model",
                "judge_prompt_version"]
SECRET = "sk-test-0123456789-never-shown"


@pytest.fixture
def judge_cache(tmp_path, monkeypatch):
    """The judge answer cache folder of this test."""
    folder = tmp_path / "judge-cache"
    monkeypatch.setenv("SGI_JUDGE_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def judge_app(app, judge_cache, monkeypatch):
    """The app on the Judge page, with its own judge answer cache and no key in the environment."""
    monkeypatch.delenv(judging.JUDGE_KEY_ENV, raising=False)
    monkeypatch.delenv(judging.JUDGE_ENDPOINT_ENV, raising=False)
    return goto(app, "judge")


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def shown_estimate(at) -> list[int]:
    return [int(metric(at, label).replace(",", "")) for label in ESTIMATE_LABELS]


def library_plan(rows, endpoint, model, **options):
    """What sgi_core plans for those rows of the bundled sample (answer_consistency unless told)."""
    metrics = options.pop("metrics", ["answer_consistency"])
    judge = JudgeClient(endpoint, model)
    try:
        return plan_judging(TABLE.frame.iloc[rows], judge, metrics, **options)
    finally:
        judge.close()


def library_estimate(plan, judge_cache) -> list[int]:
    guess = estimate(plan, cache=AnswerCache(judge_cache))
    return [guess.n_judged_rows, guess.n_requests, guess.n_cached, guess.input_tokens]


def point_at(at, server, *, size: int, how: str = judging.SAMPLE_FIRST):
    at.text_input(key="judge.endpoint").set_value(server.base_url)
    at.text_input(key="judge.model").set_value("judge-a")
    at.radio(key="judge.sample").set_value(how)
    at.number_input(key="judge.size").set_value(size).run()
    assert_clean(at)
    return at


def test_page_renders_with_the_estimate_before_any_request(judge_app, judge_cache):
    at = judge_app
    assert_clean(at)
    assert at.title[0].value == "Judge"
    listed = next(m.value for m in at.markdown if "**answer_consistency**" in m.value)
    assert all(f"**{name}**" in listed for name in judging.judge_metric_needs())
    assert any(c.value == "No key is sent, as local servers expect; type one above for a hosted endpoint."
               for c in at.caption)
    assert [t.label for t in at.text_input] == ["Endpoint (OpenAI-compatible base URL)", "Judge model",
                                                "API key (this session only)"]
    # With no endpoint named by the operator the page starts on a local server, never a paid hosted API.
    assert at.text_input(key="judge.endpoint").value == judging.LOCAL_ENDPOINT == "http://127.0.0.1:8000/v1"
    # The defaults (the first 20 rows, answer_consistency) are estimated; nothing is sent.
    plan = library_plan(np.arange(20), judging.LOCAL_ENDPOINT, "gpt-4o-mini")
    assert shown_estimate(at) == library_estimate(plan, judge_cache)
    # One support request per row, since the first 20 (context, response) pairs of the sample are distinct.
    assert shown_estimate(at)[:3] == [20, 20, 0]
    assert [b.label for b in at.button] == ["Test connection", "Run the judge"]


def test_run_on_a_random_sample_hands_the_columns_to_the_detectors_page(judge_app, server, judge_cache,
                                                                          sample_scores):
    at = point_at(judge_app, server, size=80, how=judging.SAMPLE_RANDOM)
    rows = sample_rows(TABLE.n_rows, 80)
    plan = library_plan(rows, server.base_url, "judge-a")
    before = shown_estimate(at)
    assert before == library_estimate(plan, judge_cache)
    assert before[2] == 0 and not server.chat_requests()

    at.button(key="judge.run").click().run()
    assert_clean(at)
    n_requests = before[1]
    assert len(server.chat_requests()) == n_requests
    # A direct library run on the same rows (no cache, so it asks the server again) is the oracle.
    judge = JudgeClient(server.base_url, "judge-a")
    direct, summary = run_judge(plan, judge)
    judge.close()
    assert summary.n_sent == n_requests
    assert at.success[0].value == (f"{summary.n_ok} of 80 sampled rows judged ok · {n_requests} requests sent, "
                                   f"0 answers from the cache, {summary.tokens:,} tokens.")
    # The judged file is now the current one: every row kept in file order, the judge's columns where sampled.
    assert at.session_state["data.name"] == "halueval_qa_sample.judged.parquet"
    judged = pd.read_parquet(io.BytesIO(at.session_state["data.raw"]))
    original = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    assert list(judged.columns) == [*original.columns, *JUDGE_OUTPUT]
    pd.testing.assert_frame_equal(judged[original.columns], original, check_dtype=False)
    pd.testing.assert_frame_equal(judged.iloc[rows][JUDGE_OUTPUT].reset_index(drop=True), direct[JUDGE_OUTPUT],
                                  check_dtype=False)
    outside = judged.drop(index=rows)
    assert outside[JUDGE_OUTPUT[:2]].isna().all().all()
    assert (outside["judge_status"] == judging.NOT_SAMPLED).all()
    assert (judged["judge_model"] == "judge-a").all() and (judged["judge_prompt_version"] == PROMPT_VERSION).all()
    # A second look would send nothing: every answer is in the cache.
    assert shown_estimate(at)[1:] == [n_requests, n_requests, 0]

    goto(at, "detectors")
    options = at.multiselect(key="detectors.columns").options
    assert {"judge_answer_consistency", "judge_answer_consistency_binary"} <= set(options)
    assert not {"judge_status", "judge_model", "judge_prompt_version"} & set(options)
    at.multiselect(key="detectors.columns").set_value(["judge_answer_consistency"]).run()
    assert_clean(at)
    shown = next(df.value for df in at.dataframe if "Spearman with SGI" in df.value.columns).set_index("score")
    sgi = sample_scores["sgi"].to_numpy()
    labels = TABLE.frame["label"].to_numpy()
    values = judged["judge_answer_consistency"].to_numpy()
    on_sample = compare_detectors({"SGI": sgi[rows], "judge": values[rows]}, labels[rows], n_boot=0)
    judge_auroc = on_sample.judgements["judge"].auroc
    assert shown.loc["judge: answer consistency", "AUROC"] == pytest.approx(judge_auroc, abs=1e-12)
    assert shown.loc["SGI", "AUROC"] == pytest.approx(roc_analysis(labels, sgi, n_boot=0).auroc, abs=1e-12)
    assert any(f"over the {on_sample.n} labelled rows every score covers" in c.value for c in at.caption)


def test_the_environment_key_goes_to_the_operators_endpoint_and_is_never_shown(judge_app, server, monkeypatch):
    monkeypatch.setenv(judging.JUDGE_KEY_ENV, SECRET)
    monkeypatch.setenv(judging.JUDGE_ENDPOINT_ENV, server.base_url + "/")  # the same endpoint, written otherwise
    at = point_at(judge_app, server, size=3)
    assert any(c.value == f"The key in `{judging.JUDGE_KEY_ENV}` is sent: this is the endpoint the operator named "
                          f"in `{judging.JUDGE_ENDPOINT_ENV}`." for c in at.caption)
    at.button(key="judge.run").click().run()
    assert_clean(at)
    sent = server.chat_requests()
    assert len(sent) == 3 and {r["headers"]["authorization"] for r in sent} == {f"Bearer {SECRET}"}
    shown = [e.value for kind in ("title", "markdown", "caption", "success", "info", "text_input", "metric")
             for e in getattr(at, kind)]
    assert shown and not [text for text in shown if SECRET in str(text)]
    assert SECRET.encode() not in at.session_state["data.raw"]
    assert not [key for key, value in at.session_state.to_dict().items() if SECRET in str(value)]


def test_a_refused_endpoint_is_an_error_before_anything_is_sent(judge_app, server):
    at = judge_app
    at.text_input(key="judge.endpoint").set_value("http://judge.example.com/v1").run()
    with pytest.raises(SGIInputError, match="plain http is allowed only on this machine") as refused:
        JudgeClient("http://judge.example.com/v1", "gpt-4o-mini")
    assert [e.value for e in at.error] == [texts.plain(refused.value)]
    assert not at.metric and [b.key for b in at.button] == ["judge.test_connection"]


def test_an_endpoint_that_rejects_the_key_stops_the_run_and_keeps_the_file(judge_app, server):
    at = point_at(judge_app, server, size=10)
    at.number_input(key="judge.concurrency").set_value(1).run()
    server.inject("401")
    at.button(key="judge.run").click().run()
    assert not at.exception
    (shown,) = [e.value for e in at.error]
    assert shown.startswith(texts.plain("127.0.0.1 rejected the key (HTTP 401); stopped with 0 of 10 answers in "
                                        "the cache, a new run resumes from there"))
    assert len(server.chat_requests()) == 1 and not at.success
    assert at.session_state["data.name"] == "halueval_qa_sample.csv"


def test_a_metric_needing_a_column_waits_for_it(judge_app, judge_cache):
    at = judge_app
    assert at.selectbox(key="judge.reference_column").options == [judging.NONE_COLUMN, "id", "pair_id",
                                                                    "answer_type"]
    at.multiselect(key="judge.metrics").set_value(["answer_similarity"]).run()
    assert [i.value for i in at.info] == ["answer_similarity needs the reference answer column: choose it above."]
    assert not at.metric
    at.selectbox(key="judge.reference_column").set_value("answer_type").run()
    assert_clean(at)
    plan = library_plan(np.arange(20), "https://api.openai.com/v1", "gpt-4o-mini", metrics=["answer_similarity"],
                        reference_column="answer_type")
    assert shown_estimate(at) == library_estimate(plan, judge_cache)


def test_judge_sample_reports_progress_up_to_every_sampled_row(server, judge_cache):
    rows, plan = judging.judge_plan(TABLE, server.base_url, "judge-a", ["answer_consistency"], contexts_column=None,
                                    reference_column=None, k=3, how=judging.SAMPLE_RANDOM, size=12)
    seen = []
    columns, summary = judging.judge_sample(plan, rows, TABLE.n_rows, server.base_url, "judge-a", concurrency=2,
                                            progress=lambda *step: seen.append(step))
    assert seen[0] == (0, 12, 0) and seen[-1] == (12, 12, summary.tokens)
    assert [done for done, _, _ in seen] == sorted(done for done, _, _ in seen)
    assert len(columns) == TABLE.n_rows
    assert (columns["judge_status"].drop(index=rows) == judging.NOT_SAMPLED).all()


def test_judged_file_names_keep_one_suffix():
    raw = SAMPLE_CSV.read_bytes()
    columns = pd.DataFrame({"judge_status": [judging.NOT_SAMPLED] * TABLE.n_rows})
    name, judged = judging.judged_file("halueval_qa_sample.csv", "digest", raw, columns)
    assert name == "halueval_qa_sample.judged.parquet"
    again, _ = judging.judged_file(name, "digest-2", judged, columns)
    assert again == name
    assert list(pd.read_parquet(io.BytesIO(judged)).columns)[-1] == "judge_status"
