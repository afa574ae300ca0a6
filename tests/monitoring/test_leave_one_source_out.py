"""Leave one source out: a policy written on one data set, held to runs of another whose labels are known.

Policies on SGI and on response length (shorter = grounded) are written on the bundled HaluEval sample and
on a TruthfulQA draw; each is held to runs drawn (rows with replacement) from the other source at several
hallucination rates, and the HaluEval policy also to HaluEval answers of 20 characters or more (the paper's
loader), as a new answering system of the same kind of questions would write them. No run may get "holds"
(or exit 0) from the unlabelled corrected rate; with the labels of the seeded random sample the run asks
for, the headline rate must cover the run's true rate at its nominal 95%. The corrected rate's coverage
("if only the rate changed") is printed beside it.

``SGI_MONITOR_SIMULATION=full`` runs the larger version whose figures docs/MONITORING.md quotes.
"""

import os
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from sgi_core.monitoring.sample import sample_order
from sgi_core.monitoring.summary import monitor_run
from sgi_core.policy.making import make_policy
from sgi_core.policy.references import feature_values
from sgi_core.render.monitor import EXIT_CODES
from sgi_core.scores.baselines import neg_response_length

FULL = os.environ.get("SGI_MONITOR_SIMULATION") == "full"
RUNS_PER_RATE = 40 if FULL else 8
RATES = (0.1, 0.3, 0.5)
RUN_ROWS = 400
#: The rate's half-width asked for: 97 labelled rows of each 400-row run.
HALF_WIDTH = 0.1


def _with_scores(frame):
    return frame.assign(neg_response_length=neg_response_length(frame))


def _policy(frame, column):
    scores = frame[column].to_numpy(dtype=float)
    features = {k: v for k, v in feature_values(frame, scores).items() if k != "score"}
    groups = frame["pair_id"].astype(str) if "pair_id" in frame.columns else None
    return make_policy(frame["label"].to_numpy(), scores, model="minilm", score_column=column, groups=groups,
                       features=features)[0]


def _run(frame, rate, rng):
    grounded, halluc = frame[frame["label"] == 1], frame[frame["label"] == 0]
    k = rng.binomial(RUN_ROWS, rate)
    rows = np.r_[rng.choice(len(halluc), k), rng.choice(len(grounded), RUN_ROWS - k)]
    picked = pd.concat([halluc.iloc[rows[:k]], grounded.iloc[rows[k:]]])
    run = picked.sample(frac=1.0, random_state=int(rng.integers(1 << 31))).reset_index(drop=True)
    # A row drawn twice is a second answer: its own key, as two runs' answers to one question are.
    return run.assign(question=run["question"] + [f" #{i}" for i in range(len(run))]), k / RUN_ROWS


@pytest.mark.slow
@pytest.mark.statistical
def test_no_unlabelled_rate_holds_and_the_labelled_headline_covers(scored_sample, scored_truthfulqa, scored_paperlike):
    sources = {"HaluEval": _with_scores(scored_sample), "TruthfulQA": _with_scores(scored_truthfulqa),
               "HaluEval 20+ characters": _with_scores(scored_paperlike)}
    rng = np.random.default_rng(2026)
    unlabelled_codes, covered, corrected_covered, widths, lines, unseen_misses = [], [], [], [], [], []
    for policy_source, run_source in (("HaluEval", "TruthfulQA"), ("TruthfulQA", "HaluEval"),
                                      ("HaluEval", "HaluEval 20+ characters")):
        for column in ("sgi", "neg_response_length"):
            policy = _policy(sources[policy_source], column)
            cell_covered, cell_corrected, statuses = [], [], []
            for rate in RATES:
                for _ in range(RUNS_PER_RATE):
                    run, truth = _run(sources[run_source], rate, rng)
                    scores = run[column].to_numpy(dtype=float)
                    blind = monitor_run(policy, run, scores, rate_half_width=HALF_WIDTH, n_boot=0)
                    unlabelled_codes.append(EXIT_CODES[blind.status])
                    statuses.append(blind.status)
                    c = blind.corrected
                    cell_corrected.append(not c.withheld and c.ci[0] <= truth <= c.ci[1])
                    if not blind.shift.detected and not cell_corrected[-1]:
                        unseen_misses.append(blind.status)
                    labels = np.full(RUN_ROWS, np.nan)
                    sample = sample_order(run, blind.plan.seed)[:blind.plan.size]
                    labels[sample] = run["label"].to_numpy(dtype=float)[sample]
                    checked = monitor_run(policy, run, scores, y_true=labels, rate_half_width=HALF_WIDTH, n_boot=200)
                    assert checked.headline.verified and checked.revalidation.n_labelled == blind.plan.size == 97
                    h = checked.headline
                    cell_covered.append(h.ci[0] <= truth <= h.ci[1])
                    widths.append((h.ci[1] - h.ci[0]) / 2)
            covered += cell_covered
            corrected_covered += cell_corrected
            lines.append(f"{policy_source} -> {run_source}, {column}: held-out AUROC {policy.heldout_auroc:.2f}; "
                         f"unlabelled statuses {dict(Counter(statuses))}; headline "
                         f"coverage {np.mean(cell_covered):.3f}, corrected-rate coverage {np.mean(cell_corrected):.3f}")
    print("\n".join(lines))
    print(f"runs {len(covered)}: headline coverage {np.mean(covered):.3f} (mean half-width {np.mean(widths):.3f}), "
          f"corrected-rate coverage {np.mean(corrected_covered):.3f}; unlabelled exit codes "
          f"{dict(Counter(unlabelled_codes))}; corrected rates excluding the truth with no shift flagged: "
          f"{len(unseen_misses)}, their statuses {dict(Counter(unseen_misses))}")
    assert 0 not in unlabelled_codes and 1 not in unlabelled_codes  # no flag-share limit was set
    assert np.mean(covered) >= 0.95 - 2 * np.sqrt(0.95 * 0.05 / len(covered))
