import dataclasses
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.thresholds import (
    ThresholdChoice,
    ThresholdMetrics,
    choose_threshold,
    count_threshold_candidates,
    threshold_metrics,
    threshold_metrics_grid,
)

# Hallucinated rows score 0.2, 0.4, 0.9; grounded rows 0.5, 1.1, 1.3.
Y = [0, 0, 1, 0, 1, 1]
S = [0.2, 0.4, 0.5, 0.9, 1.1, 1.3]


def test_hand_computed_toy_table():
    # Flag score < 1.0: rows 0.2 (h), 0.4 (h), 0.5 (g), 0.9 (h) -> TP 3, FP 1; left: 1.1, 1.3 (g) -> TN 2, FN 0.
    m = threshold_metrics(Y, S, 1.0)
    assert (m.tp, m.fp, m.tn, m.fn) == (3, 1, 2, 0)
    assert (m.precision, m.recall, m.f1) == (0.75, 1.0, pytest.approx(6 / 7))
    assert (m.flag_rate, m.accuracy, m.n_flagged, m.n_scored) == (pytest.approx(4 / 6), pytest.approx(5 / 6), 4, 6)


def test_flagging_is_strictly_below_the_threshold():
    m = threshold_metrics(Y, S, 0.5)  # 0.5 itself is not flagged
    assert (m.tp, m.fp) == (2, 0)


def test_unlabelled_rows_count_only_in_flag_rate():
    m = threshold_metrics(Y + [np.nan, np.nan], S + [0.1, 2.0], 1.0)
    assert (m.tp, m.fp, m.tn, m.fn) == (3, 1, 2, 0)
    assert (m.n_flagged, m.n_scored, m.flag_rate) == (5, 8, 5 / 8)


def test_oracle_sklearn_confusion_matrix():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = np.round(rng.normal(size=200) + y, 1)
    for t in (-1.0, 0.0, 0.35, 1.2):
        m = threshold_metrics(y, s, t)
        # Hallucinated (y == 0) is the positive class; flagged = predicted positive.
        tn, fp, fn, tp = confusion_matrix(y == 0, s < t, labels=[False, True]).ravel()
        assert (m.tp, m.fp, m.tn, m.fn) == (tp, fp, tn, fn)


def test_grid_equals_brute_force_at_every_candidate():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 60).astype(float)
    y[:5] = np.nan
    s = np.round(rng.normal(size=60) + np.nan_to_num(y), 1)
    s[7] = np.nan
    grid = threshold_metrics_grid(y, s)
    scored = s[~np.isnan(s)]
    assert len(grid) == len(np.unique(scored)) + 1
    for _, row in grid.iterrows():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedStatisticWarning)  # precision at the lowest threshold
            m = threshold_metrics(y, s, row["threshold"])
        for field in ("tp", "fp", "tn", "fn", "n_flagged"):
            assert row[field] == getattr(m, field)
        for field in ("precision", "recall", "f1", "flag_rate", "accuracy"):
            assert row[field] == pytest.approx(getattr(m, field), nan_ok=True)
    assert grid["flag_rate"].iloc[0] == 0.0 and grid["flag_rate"].iloc[-1] == 1.0
    assert np.all(np.diff(grid["recall"]) >= 0) and np.all(np.diff(grid["threshold"]) > 0)


@pytest.mark.parametrize("max_rows", [2, 7, 500, 5_000])
def test_thinned_grid_is_rows_of_the_full_grid(max_rows):
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 2_000).astype(float)
    s = rng.normal(size=2_000) + y
    s[:10] = np.nan
    full = threshold_metrics_grid(y, s)
    thinned = threshold_metrics_grid(y, s, max_rows=max_rows)
    assert count_threshold_candidates(s) == len(full) == 1_991
    if max_rows >= len(full):
        pd.testing.assert_frame_equal(thinned, full)
        return
    positions = np.unique(np.linspace(0, len(full) - 1, max_rows).round().astype(int))
    assert len(thinned) == max_rows and positions[0] == 0 and positions[-1] == len(full) - 1
    pd.testing.assert_frame_equal(thinned.reset_index(drop=True), full.iloc[positions].reset_index(drop=True))


def test_thinned_grid_refuses_fewer_than_two_rows():
    with pytest.raises(SGIInputError, match="max_rows"):
        threshold_metrics_grid(Y, S, max_rows=1)
    assert count_threshold_candidates([np.nan]) == 0


def test_choose_youden_hand_computed():
    # J at 0.5: 2/3 - 0 ; at 1.1: 1 - 1/3. Equal J: the lower threshold (fewer flags) wins.
    c = choose_threshold(Y, S, method="youden")
    assert (c.method, c.threshold, c.metrics.tp, c.metrics.fp) == ("youden", 0.5, 2, 0)


def test_choose_target_recall_and_precision():
    c = choose_threshold(Y, S, method="target_recall", target=1.0)
    assert c.threshold == 1.1 and c.metrics.recall == 1.0  # the lowest threshold flagging all 3 hallucinated
    c = choose_threshold(Y, S, method="target_recall", target=0.5)
    assert c.threshold == 0.5 and c.metrics.tp == 2  # recall 1/3 below 0.5, 2/3 from 0.5
    c = choose_threshold(Y, S, method="target_precision", target=0.75)
    assert c.threshold == 1.1 and c.metrics.precision == 0.75  # highest recall among precision >= 0.75


def test_choose_cost_matches_brute_force():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 80)
    s = np.round(rng.normal(size=80) + y, 2)
    for ratio in (0.2, 1.0, 5.0):
        c = choose_threshold(y, s, method="cost", cost_ratio=ratio)
        candidates = sorted(set(s)) + [np.nextafter(s.max(), np.inf)]
        costs = [ratio * ((y == 0) & (s >= t)).sum() + ((y == 1) & (s < t)).sum() for t in candidates]
        assert c.threshold == candidates[int(np.argmin(costs))]
        assert c.target == ratio


def choice_from_the_grid(y, s, method, target=None, cost_ratio=None):
    """The threshold choice read off the full metrics grid, the definition ``choose_threshold`` follows."""
    grid = threshold_metrics_grid(y, s)
    n_valid, n_halluc = grid["fp"].iloc[0] + grid["tn"].iloc[0], grid["tp"].iloc[0] + grid["fn"].iloc[0]
    objective = {
        "youden": lambda: grid["tp"] * n_valid - grid["fp"] * n_halluc,
        "cost": lambda: -(cost_ratio * grid["fn"] + grid["fp"]),
        "target_recall": lambda: np.where(grid["recall"] >= target, -grid["threshold"], -np.inf),
        "target_precision": lambda: np.where(grid["precision"] >= target, grid["recall"], -np.inf),
    }[method]()
    return grid.iloc[int(np.argmax(np.asarray(objective, dtype=np.float64)))]


@pytest.mark.parametrize("method, target, cost_ratio", [
    ("youden", None, None), ("cost", None, 0.3), ("cost", None, 4.0), ("target_recall", 0.8, None),
    ("target_precision", 0.7, None)])
def test_choice_equals_the_best_row_of_the_full_grid(method, target, cost_ratio):
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 3_000).astype(float)
    s = np.round(rng.normal(size=3_000) + y, 2)  # many ties
    y[:40], s[40:60] = np.nan, np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        expected = choice_from_the_grid(y, s, method, target, cost_ratio)
    choice = choose_threshold(y, s, method=method, target=target, cost_ratio=cost_ratio)
    assert dataclasses.asdict(choice.metrics) == pytest.approx(expected.to_dict(), rel=0, abs=0)


def test_unreachable_target_warns():
    # The lowest score is grounded, so every non-empty flag set has precision <= 0.5.
    with pytest.warns(UndefinedStatisticWarning, match="no threshold reaches precision 0.9"):
        c = choose_threshold([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], method="target_precision", target=0.9)
    assert math.isnan(c.threshold) and c.metrics is None


def test_one_class_warns():
    with pytest.warns(UndefinedStatisticWarning, match="needs both classes"):
        c = choose_threshold([1, 1, 1], [0.1, 0.2, 0.3])
    assert math.isnan(c.threshold)


def test_undefined_precision_warns():
    with pytest.warns(UndefinedStatisticWarning, match="precision undefined"):
        m = threshold_metrics(Y, S, 0.0)
    assert math.isnan(m.precision) and m.recall == 0.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: choose_threshold(Y, S, method="f1"), "'method' parameter of choose_threshold"),
        (lambda: choose_threshold(Y, S, method="target_recall"), "needs 'target' in \\(0, 1\\]"),
        (lambda: choose_threshold(Y, S, method="target_precision", target=1.5), "needs 'target'"),
        (lambda: choose_threshold(Y, S, method="cost", cost_ratio=0), "needs 'cost_ratio' > 0"),
        (lambda: threshold_metrics(Y, S, float("nan")), "must be a finite number"),
        (lambda: threshold_metrics(Y, S[:3], 1.0), "has 3 values but the labels have 6"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(SGIInputError, match=match):
        call()


def test_json_round_trip():
    c = choose_threshold(Y, S, method="youden")
    assert ThresholdChoice.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    m = threshold_metrics(Y, S, 1.0)
    assert ThresholdMetrics.from_dict(json.loads(json.dumps(m.to_dict()))) == m


def test_grid_counts_invariant_to_monotone_transform():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.normal(size=300) + y, 2)
    counts = ["tp", "fp", "tn", "fn", "n_flagged"]
    base = threshold_metrics_grid(y, s)
    moved = threshold_metrics_grid(y, np.exp(2 * s) + 1)
    assert base[counts].equals(moved[counts])
    assert np.allclose(np.exp(2 * base["threshold"].iloc[:-1]) + 1, moved["threshold"].iloc[:-1])
