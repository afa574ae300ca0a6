"""Review queues: reproducible, skipping labelled rows, each strategy's order against a brute-force one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.review.queues import STRATA, review_queue, row_profile


def test_random_queue_is_reproducible_and_skips_labelled_rows_without_reordering_the_rest():
    first = review_queue(50, strategy="random", seed=7)
    assert sorted(first.rows.tolist()) == list(range(50))
    assert review_queue(50, strategy="random", seed=7).rows.tolist() == first.rows.tolist()
    assert review_queue(50, strategy="random", seed=8).rows.tolist() != first.rows.tolist()
    skip = np.zeros(50, dtype=bool)
    skip[first.rows[:5]] = True
    later = review_queue(50, strategy="random", seed=7, skip=skip)
    assert later.rows.tolist() == first.rows[5:].tolist() and later.n_skipped == 5


def test_stratified_queue_spans_every_decile_in_its_first_ten_rows():
    score = np.random.default_rng(0).normal(size=200)
    score[3] = np.nan
    queue = review_queue(200, strategy="stratified", score=score, seed=1)
    deciles = pd.qcut(pd.Series(score).rank(method="first"), STRATA, labels=False)
    for turn in range(0, 190, 10):
        assert sorted(deciles[queue.rows[turn:turn + 10]].tolist()) == list(range(10))
    assert queue.rows[-1] == 3  # the NaN score last


def test_uncertain_queue_by_threshold_and_disagreement_by_rank_gap():
    score = np.array([0.2, 0.9, 0.55, 0.45, 0.7])
    assert review_queue(5, strategy="uncertain", score=score, threshold=0.5).rows.tolist()[:2] in ([2, 3], [3, 2])
    assert review_queue(5, strategy="uncertain", score=score, threshold=0.7).rows.tolist()[0] == 4
    other = np.array([0.9, 0.1, 0.5, 0.4, 0.8])  # ranks: [5,1,3,2,4] vs [1,5,3,2,4] over 5
    queue = review_queue(5, strategy="disagreement", score=score, second_score=other)
    assert sorted(queue.rows[:2].tolist()) == [0, 1] and sorted(queue.rows[2:].tolist()) == [2, 3, 4]


def test_worst_errors_need_labels_and_come_in_order():
    score = np.array([0.1, 0.9, 0.5, 0.8, 0.3, 0.2])
    labels = np.array([1.0, 0.0, 1.0, 0.0, np.nan, 1.0])
    alarms = review_queue(6, strategy="false_alarms", score=score, labels=labels)
    assert alarms.rows.tolist() == [0, 5, 2] and alarms.n_left_out == 3
    missed = review_queue(6, strategy="missed_hallucinations", score=score, labels=labels)
    assert missed.rows.tolist() == [1, 3]
    with pytest.raises(SGIInputError, match="this queue needs the labels"):
        review_queue(6, strategy="false_alarms", score=score)


def test_bad_queue_requests_are_refused():
    with pytest.raises(SGIInputError, match="unknown review queue 'worst'"):
        review_queue(3, strategy="worst")
    with pytest.raises(SGIInputError, match="calibrated probability or a policy threshold"):
        review_queue(3, strategy="uncertain", score=[1, 2, 3])
    with pytest.raises(SGIInputError, match="the score has 2 values for 3 rows"):
        review_queue(3, strategy="stratified", score=[1, 2])


def test_row_profile_percentiles_match_scipy_weak_kind():
    from scipy.stats import percentileofscore

    values = np.array([3.0, 1.0, np.nan, 2.0, 2.0])
    profile = row_profile({"x": values}, 3)
    assert profile.values == {"x": 2.0}
    assert profile.percentiles["x"] == percentileofscore([3.0, 1.0, 2.0, 2.0], 2.0, kind="weak") == 75.0
    assert np.isnan(row_profile({"x": values}, 2).percentiles["x"])
