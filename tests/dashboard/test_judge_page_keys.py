"""Judge page: the environment's key reaches only the operator's endpoint; a typed endpoint gets only a typed key."""

import io

import numpy as np
import pandas as pd
import pytest

from dashboard.services import judging
from dashboard.views import texts
from sgi_core.projection import sample_rows
from tests.dashboard.conftest import assert_clean, goto
from tests.dashboard.test_judge_page import SECRET, judge_app, judge_cache, point_at, server  # noqa: F401 - fixtures
from tests.judge.fake_server import FakeServer

TYPED = "sk-typed-in-the-page-4321"


@pytest.fixture
def other():
    """A second loopback listener: an endpoint someone reaching the app types in."""
    with FakeServer() as running:
        yield running


def run(at):
    at.button(key="judge.run").click().run()
    assert_clean(at)
    return at


def test_a_typed_endpoint_never_gets_the_environment_key(app, judge_cache, server, other, monkeypatch):
    monkeypatch.setenv(judging.JUDGE_KEY_ENV, SECRET)
    monkeypatch.setenv(judging.JUDGE_ENDPOINT_ENV, server.base_url)
    at = goto(app, "judge")
    assert at.text_input(key="judge.endpoint").value == server.base_url  # the operator's endpoint is the default
    at = run(point_at(at, other, size=3))
    assert any(c.value.startswith(f"`{judging.JUDGE_KEY_ENV}` is set but is not sent here") for c in at.caption)
    assert len(other.chat_requests()) == 3
    assert all("authorization" not in r["headers"] for r in other.requests)
    at.button(key="judge.test_connection").click().run()
    connected = f"Connected: {texts.plain('127.0.0.1')} answered as model {texts.plain('judge-a')}."
    assert connected in [m.value for m in at.success]
    assert len(other.requests) == 4 and all("authorization" not in r["headers"] for r in other.requests)
    assert server.requests == []


def test_a_key_typed_in_the_page_goes_only_to_the_typed_endpoint(judge_app, other, monkeypatch):
    monkeypatch.setenv(judging.JUDGE_KEY_ENV, SECRET)
    at = judge_app
    key_box = at.text_input(key=judging.SESSION_KEY)
    assert key_box.proto.type == key_box.proto.PASSWORD  # shown as dots in the browser
    key_box.set_value(TYPED)
    at = run(point_at(at, other, size=3))
    assert "The key typed above is sent to this endpoint, for this session only." in [c.value for c in at.caption]
    assert {r["headers"]["authorization"] for r in other.requests} == {f"Bearer {TYPED}"}
    shown = [e.value for kind in ("markdown", "caption", "success", "info", "error", "metric")
             for e in getattr(at, kind)]
    assert not [text for text in shown if TYPED in str(text) or SECRET in str(text)]
    assert TYPED.encode() not in at.session_state["data.raw"]
    holding = [key for key, value in at.session_state.to_dict().items() if TYPED in str(value)]
    assert holding == [judging.SESSION_KEY]  # only the widget's own value, in this session's memory


def test_test_connection_reports_a_refused_key(judge_app, other):
    at = point_at(judge_app, other, size=3)
    other.inject("401")
    at.button(key="judge.test_connection").click().run()
    assert [e.value for e in at.error] == [texts.plain("127.0.0.1 rejected the key (HTTP 401). Check the key, the "
                                                       "endpoint URL and the model name")]
    assert len(other.requests) == 1  # one attempt, no retries


def test_judging_again_keeps_the_first_sample(judge_app, server):
    at = run(point_at(judge_app, server, size=5))
    at = run(point_at(at, server, size=5, how=judging.SAMPLE_RANDOM))
    judged = pd.read_parquet(io.BytesIO(at.session_state["data.raw"]))
    both = sorted({*range(5), *sample_rows(len(judged), 5).tolist()})
    assert np.flatnonzero((judged["judge_status"] != judging.NOT_SAMPLED).to_numpy()).tolist() == both
    assert judged.loc[both, "judge_model"].eq("judge-a").all()


def test_the_judge_runs_on_a_file_opened_under_a_raised_limit(judge_app, server, monkeypatch):
    # The Data page's limits were set when the app opened; the operator's environment limit is lower.
    monkeypatch.setenv("SGI_MAX_CELL_CHARS", "50")
    at = run(point_at(goto(judge_app, "judge"), server, size=3))
    assert at.session_state["data.name"] == "halueval_qa_sample.judged.parquet"
