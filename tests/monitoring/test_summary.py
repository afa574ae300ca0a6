"""The verdict of a monitored run: the one headline, no "holds" without the labelled sample, policies that vouch."""

import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.monitoring.sample import plan_sample, sample_order, sample_problem
from sgi_core.monitoring.summary import STATUSES, monitor_run, record_validation
from sgi_core.policy.making import make_policy
from sgi_core.policy.references import MIN_EVENTS_PER_CLASS


def _frame(n, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"question": [f"q{i}" for i in range(n)],
                         "context": ["c" * int(v) for v in rng.integers(50, 90, n)],
                         "response": ["r" * int(v) for v in rng.integers(5, 40, n)]})


def _policy(n_pairs, seed=0, signal=2.5):
    rng = np.random.default_rng(seed)
    y = np.tile([1.0, 0.0], n_pairs)
    return make_policy(y, rng.normal(signal * y, 0.7), model="minilm", seed=seed)[0]


@pytest.mark.parametrize("n_rows, half_width, size, whole, reachable", [
    (5000, 0.05, 385, False, True),    # (1.959964 / 0.1)^2 = 384.1
    (5000, 0.1, 97, False, True),      # 96.04
    (385, 0.05, 385, True, True),      # exactly the whole run, and enough
    (138, 0.05, 138, True, False),     # the whole run cannot reach +/-5 points
    (0, 0.05, 0, False, False),
])
def test_the_sample_is_sized_for_the_rate_half_width_at_the_worst_case(n_rows, half_width, size, whole, reachable):
    plan = plan_sample(n_rows, half_width=half_width)
    assert (plan.size, plan.whole_run, plan.reachable) == (size, whole, reachable)
    if size:
        assert plan.reachable_half_width == pytest.approx(1.959964 / (2 * math.sqrt(size)), rel=1e-6)


def test_plan_refuses_a_half_width_outside_its_range():
    with pytest.raises(SGIInputError,
                       match=r"'half_width' parameter of plan_sample must be a float in \(0, 0.5\). Got 0.5"):
        plan_sample(100, half_width=0.5)
    with pytest.raises(SGIInputError, match="'n_rows' parameter of plan_sample must be an int >= 0. Got -1"):
        plan_sample(-1)


def test_the_sample_is_the_review_queues_and_a_prefix_of_it_is_accepted():
    frame = _frame(40)
    order = sample_order(frame, 3)
    # The same rows whatever the order of the file's rows: the order follows the rows' keys.
    shuffled = frame.sample(frac=1.0, random_state=1)
    assert (shuffled["question"].to_numpy()[sample_order(shuffled, 3)].tolist()
            == frame["question"].to_numpy()[order].tolist())
    plan = plan_sample(40, half_width=0.2, seed=3)  # 25 rows
    labelled = np.zeros(40, dtype=bool)
    labelled[order[:30]] = True
    assert plan.size == 25 and sample_problem(labelled, order, plan) == ""
    labelled[order[:30]], labelled[order[-30:]] = False, True
    assert sample_problem(labelled, order, plan).startswith("the labels are not the seeded random sample (seed 3): ")


def test_without_labels_no_run_holds_and_the_headline_is_the_corrected_rate():
    policy = _policy(150)
    frame = _frame(300, seed=1)
    y = np.random.default_rng(1).binomial(1, 0.7, 300).astype(float)
    scores = np.random.default_rng(2).normal(2.5 * y, 0.7)
    summary = monitor_run(policy, frame, scores, n_boot=0)
    assert summary.status == "unverified" and set(STATUSES) >= {summary.status}
    assert not summary.headline.verified and summary.headline.ci == summary.corrected.ci
    labels = np.full(300, np.nan)
    picked = sample_order(frame, 0)[:summary.plan.size]  # the whole run: 300 < 385
    labels[picked] = y[picked]
    checked = monitor_run(policy, frame, scores, y_true=labels, n_boot=200)
    assert checked.status == "holds" and checked.headline.verified and checked.plan.whole_run
    assert (checked.headline.estimate, checked.headline.ci) == (checked.revalidation.rate, checked.revalidation.rate_ci)


def test_a_policy_of_too_few_held_out_rows_of_a_class_never_validates_nor_holds():
    small = _policy(14)  # a strong score, but 7 held-out rows of each class
    assert small.heldout_auroc_ci[0] > 0.5
    validation = record_validation(small)
    assert not validation.validated
    assert validation.reason == (f"the policy's held-out rows hold 7 hallucinated and 7 grounded, fewer than "
                                 f"{MIN_EVENTS_PER_CLASS} of each class: too few to validate its score")
    frame = _frame(60, seed=3)
    y = np.random.default_rng(3).binomial(1, 0.7, 60).astype(float)
    summary = monitor_run(small, frame, np.random.default_rng(4).normal(2.5 * y, 0.7), y_true=y, n_boot=200)
    assert summary.status == "not validated" and summary.revalidation.validated
    assert not summary.validation.validated
    tests = [t for t in summary.shift.tests if t.feature == "score"]
    assert tests[0].untested.startswith("the policy's references are too small to test against (7 grounded and 7 "
                                        "hallucinated held-out rows")
    assert summary.shift.unchecked and not summary.shift.detected
