"""Judging a judged file again keeps the earlier values outside this run; a user's own judge_* columns are kept."""

import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.io.triples import load_triples
from sgi_core.judge import (
    BEYOND_MAX_ROWS,
    NOT_IN_SAMPLE,
    AnswerCache,
    JudgeClient,
    plan_judging,
    renamed_input_columns,
    run_judge,
    with_judge_columns,
)
from tests.conftest import SAMPLE_CSV
from tests.judge.fake_server import FakeServer

JUDGE_COLUMNS = ["judge_answer_consistency", "judge_answer_consistency_binary", "judge_status", "judge_model",
                 "judge_prompt_version"]


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


@pytest.fixture
def sample():
    """The first 8 rows of the bundled sample, as the reader gives them."""
    return load_triples(SAMPLE_CSV).frame.iloc[:8].reset_index(drop=True)


def judged(frame, server, model, **options):
    """``frame`` with the judge columns of one run appended, as the ``judge`` command writes it."""
    judge = JudgeClient(server.base_url, model)
    plan = plan_judging(frame, judge, "answer_consistency", **options)
    columns, _ = run_judge(plan, judge, cache=AnswerCache())
    judge.close()
    return with_judge_columns(frame, columns)


def test_max_rows_on_a_judged_file_keeps_the_rows_beyond_it(server, sample):
    first = judged(sample, server, "judge-a", max_rows=6)
    assert (first["judge_status"].iloc[:6] != BEYOND_MAX_ROWS).all()
    second = judged(first, server, "judge-b", max_rows=2)
    # rows 1-2 are judged again by judge-b; rows 3-6 keep judge-a's values; rows 7-8 stay unjudged
    assert second["judge_model"].tolist() == ["judge-b"] * 2 + ["judge-a"] * 6
    pd.testing.assert_frame_equal(second[JUDGE_COLUMNS].iloc[2:], first[JUDGE_COLUMNS].iloc[2:])
    assert second["judge_answer_consistency"].iloc[2:6].notna().all()
    assert (second["judge_status"].iloc[6:] == BEYOND_MAX_ROWS).all()
    assert list(second.columns) == list(first.columns)


def test_a_second_sample_keeps_the_first(sample):
    """Two samples of the Judge page: rows outside the second keep the first's values."""
    earlier = pd.DataFrame({"judge_x": [0.1, 0.2, np.nan, np.nan], "judge_status": ["ok", "ok", NOT_IN_SAMPLE,
                                                                                     NOT_IN_SAMPLE],
                            "judge_model": ["a"] * 4, "judge_prompt_version": ["v1"] * 4})
    now = pd.DataFrame({"judge_x": [np.nan, 0.9, 0.8, np.nan], "judge_status": [NOT_IN_SAMPLE, "ok", "ok",
                                                                                NOT_IN_SAMPLE],
                        "judge_model": ["b"] * 4, "judge_prompt_version": ["v2"] * 4})
    both = with_judge_columns(pd.DataFrame({"id": [1, 2, 3, 4]}).join(earlier), now)
    assert both["judge_x"].tolist()[:3] == [0.1, 0.9, 0.8] and math.isnan(both["judge_x"].iloc[3])
    assert both["judge_status"].tolist() == ["ok", "ok", "ok", NOT_IN_SAMPLE]
    assert both["judge_model"].tolist() == ["a", "b", "b", "a"]
    assert both["judge_prompt_version"].tolist() == ["v1", "v2", "v2", "v1"]
    assert list(both.columns) == ["id", "judge_x", "judge_status", "judge_model", "judge_prompt_version"]


def test_a_users_own_judge_columns_are_renamed_not_overwritten(server, sample):
    mine = sample.assign(judge_answer_consistency=np.arange(8) / 10, judge_status="my own",
                         input_judge_status="taken")
    out = judged(mine, server, "judge-a")
    assert out["input_judge_answer_consistency"].tolist() == (np.arange(8) / 10).tolist()
    assert out["input_input_judge_status"].tolist() == ["my own"] * 8
    assert out["input_judge_status"].tolist() == ["taken"] * 8
    assert out["judge_answer_consistency"].dropna().between(0, 1).all() and (out["judge_model"] == "judge-a").all()
    assert not out["judge_status"].isin(["my own", "taken"]).any()
    assert renamed_input_columns(mine, out[JUDGE_COLUMNS]) == {
        "judge_answer_consistency": "input_judge_answer_consistency", "judge_status": "input_input_judge_status"}
