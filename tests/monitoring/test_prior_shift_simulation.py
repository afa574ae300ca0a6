"""Simulation on HaluEval: a policy written on one half, runs drawn from the other at other hallucination rates.

Prior shift only: a run answers distinct questions of the other half, the chosen share of them with the
hallucinated answer, so the score behaves within each class as on the policy's data. The corrected rate's
interval must cover the run's true rate at least at its nominal 95% (the raw flag share must not), and the
shift check must raise few false alarms (nominal 5%). Runs of one split share its two halves, so its false
alarms cluster: their tolerance counts splits, not runs. A run of TruthfulQA answers is flagged as shifted.

``SGI_MONITOR_SIMULATION=full`` runs the larger version whose figures docs/MONITORING.md quotes.
"""

import os

import numpy as np
import pandas as pd
import pytest

from sgi_core.monitoring.summary import monitor_run
from sgi_core.policy.making import make_policy
from sgi_core.policy.references import feature_values

FULL = os.environ.get("SGI_MONITOR_SIMULATION") == "full"
SPLITS, RUNS_PER_RATE = (20, 10) if FULL else (4, 5)
RATES = (0.1, 0.3, 0.5, 0.7)
RUN_ROWS = 60


def _policy(half, seed):
    scores = half["sgi"].to_numpy()
    features = {k: v for k, v in feature_values(half, scores).items() if k != "score"}
    policy, _ = make_policy(half["label"].to_numpy(), scores, model="minilm", groups=half["pair_id"].astype(str),
                            seed=seed, features=features)
    return policy


def _halves(frame, seed):
    pairs = np.sort(frame["pair_id"].unique())
    mine = np.random.default_rng(seed).choice(pairs, len(pairs) // 2, replace=False)
    inside = frame["pair_id"].isin(mine).to_numpy()
    return frame[inside].reset_index(drop=True), frame[~inside].reset_index(drop=True)


@pytest.mark.slow
@pytest.mark.statistical
def test_prior_shift_coverage_and_false_alarms(scored_sample):
    covered, raw_covered, alarms, per_split = [], [], [], []
    for split in range(SPLITS):
        policy_half, other = _halves(scored_sample, split)
        policy = _policy(policy_half, split)
        rng = np.random.default_rng(1000 + split)
        grounded = other[other["label"] == 1].set_index("pair_id")
        halluc = other[other["label"] == 0].set_index("pair_id")
        for rate in RATES:
            k = int(round(RUN_ROWS * rate))
            for _ in range(RUNS_PER_RATE):
                questions = rng.choice(grounded.index.to_numpy(), RUN_ROWS, replace=False)
                run = pd.concat([halluc.loc[questions[:k]], grounded.loc[questions[k:]]]).reset_index()
                summary = monitor_run(policy, run, run["sgi"].to_numpy(), n_boot=0)
                c = summary.corrected
                covered.append(c.ci[0] <= k / RUN_ROWS <= c.ci[1])
                raw_covered.append(c.flag_share_ci[0] <= k / RUN_ROWS <= c.flag_share_ci[1])
                alarms.append(summary.shift.detected)
        per_split.append(int(np.sum(alarms[-len(RATES) * RUNS_PER_RATE:])))
    coverage, raw, false_alarms = np.mean(covered), np.mean(raw_covered), np.mean(alarms)
    print(f"runs {len(covered)}: corrected-rate coverage {coverage:.3f}, raw flag share coverage {raw:.3f}, "
          f"shift false alarms {false_alarms:.3f}; per split {per_split}")
    # 95% nominal; the tolerance is two binomial standard errors at the default number of runs.
    assert coverage >= 0.95 - 2 * np.sqrt(0.95 * 0.05 / len(covered))
    assert raw <= 0.6
    assert false_alarms <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / SPLITS)


@pytest.mark.slow
def test_a_truthfulqa_run_is_flagged_as_shifted(scored_sample, scored_truthfulqa):
    detected = []
    for split in range(SPLITS):
        policy = _policy(_halves(scored_sample, split)[0], split)
        summary = monitor_run(policy, scored_truthfulqa, scored_truthfulqa["sgi"].to_numpy(), n_boot=0)
        detected.append(summary.shift.detected)
        if summary.shift.detected:  # under shift nothing says the policy validates its score
            assert summary.status == "shift detected" and not summary.validation.validated
            assert "theta_qc" in summary.shift.shifted_features
    print(f"TruthfulQA runs flagged as shifted: {sum(detected)} of {SPLITS} policies")
    assert np.mean(detected) >= 0.75
