"""Judge page with the Yes/No metric: P(yes) columns from a server that returns log-probabilities, a warning without."""

import io

import pandas as pd
import pytest

from tests.dashboard.conftest import assert_clean
from tests.dashboard.test_judge_page import judge_app, judge_cache, point_at  # noqa: F401 (fixtures)
from tests.judge.fake_server import FakeServer


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


@pytest.mark.parametrize("logprobs", [True, False])
def test_the_yes_no_metric_writes_p_yes_or_warns_of_bare_answers(judge_app, server, logprobs):  # noqa: F811
    server.logprobs = logprobs
    judge_app.multiselect(key="judge.metrics").set_value(["groundedness"])
    at = point_at(judge_app, server, size=12)
    at.button(key="judge.run").click().run()
    assert_clean(at)
    assert {r["body"]["logprobs"] for r in server.chat_requests("grounded")} == {True}
    judged = pd.read_parquet(io.BytesIO(at.session_state["data.raw"])).iloc[:12]
    sources = judged["judge_groundedness_source"]
    if logprobs:
        assert (sources == "logprobs").all() and judged["judge_groundedness"].nunique() > 2
        assert not at.warning
    else:
        assert (sources == "answer").all() and set(judged["judge_groundedness"]) <= {0.0, 1.0}
        assert at.warning[0].value.startswith("The endpoint gave no token log-probabilities for 12 rows: their Yes/No "
                                              "score is the bare answer, 0 or 1, not P(yes)")
