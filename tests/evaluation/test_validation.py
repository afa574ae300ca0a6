"""Inputs are checked once, at the public entry; nested public calls skip the checks."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.evaluation import evaluate
from sgi_core.stats import checks
from sgi_core.stats.calibration import expected_calibration_error, halluc_rate_by_quantile, reliability_bins
from sgi_core.stats.ranking import roc_analysis


@pytest.fixture
def check_counts(monkeypatch):
    counts = {"labels": 0, "scores": 0}
    real_labels, real_scores = checks._checked_labels, checks._checked_scores

    def labels(*args):
        counts["labels"] += 1
        return real_labels(*args)

    def scores(*args):
        counts["scores"] += 1
        return real_scores(*args)

    monkeypatch.setattr(checks, "_checked_labels", labels)
    monkeypatch.setattr(checks, "_checked_scores", scores)
    return counts


def scored_frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    label = np.tile([1.0, 0.0], n // 2)
    return pd.DataFrame({
        "label": label, "sgi": 1 + 0.3 * label + rng.normal(0, 0.2, n),
        "theta_qc": rng.uniform(0.5, 1.5, n), "theta_rq": rng.uniform(0.5, 1.5, n),
        "theta_rc": rng.uniform(0.5, 1.5, n),
        "question": ["what is it"] * n, "context": ["it is a thing in the world"] * n,
        "response": ["a thing" if y else "something else entirely" for y in label],
    })


def test_a_report_checks_the_labels_once_and_each_score_column_once(check_counts):
    evaluate(scored_frame(), n_boot=0)
    assert check_counts == {"labels": 1, "scores": 4}  # sgi, theta_qc, theta_rq, theta_rc


def test_a_direct_call_still_checks(check_counts):
    roc_analysis([1, 0, 1, 0], [0.9, 0.1, 0.8, 0.3], n_boot=0)
    assert check_counts == {"labels": 1, "scores": 1}
    with pytest.raises(SGIInputError, match="'y_true' holds values other than 1"):
        roc_analysis([1, 2], [0.5, 0.4], n_boot=0)


def test_checks_resume_after_a_public_call_returns():
    evaluate(scored_frame(), n_boot=0)
    with pytest.raises(SGIInputError, match="infinite"):
        roc_analysis([1, 0], [np.inf, 0.4], n_boot=0)


def test_report_refuses_an_infinite_angle():
    frame = scored_frame()
    frame.loc[3, "theta_rq"] = np.inf
    with pytest.raises(SGIInputError, match="'theta_rq' holds infinite values.*row 4"):
        evaluate(frame, n_boot=0)


@pytest.mark.parametrize("func", [reliability_bins, expected_calibration_error])
def test_reliability_needs_complete_labels_and_probabilities(func):
    with pytest.raises(SGIInputError, match="needs a label on every row.*row 2"):
        func([1, np.nan, 0], [0.2, 0.4, 0.6])
    with pytest.raises(SGIInputError, match=r"needs probabilities in \[0, 1\].*row 3"):
        func([1, 0, 0], [0.2, 0.4, 1.5])
    with pytest.raises(SGIInputError, match="'y_prob' has 2 values but the labels have 3"):
        func([1, 0, 0], [0.2, 0.4])
    with pytest.raises(SGIInputError, match="'n_bins' parameter of .* must be an int >= 1. Got 0 instead"):
        func([1, 0], [0.2, 0.4], n_bins=0)


def test_halluc_rate_by_quantile_checks_its_inputs():
    with pytest.raises(SGIInputError, match="'n_groups' parameter of halluc_rate_by_quantile must be an int >= 1"):
        halluc_rate_by_quantile([1, 0], [0.2, 0.4], n_groups=0)
    with pytest.raises(SGIInputError, match="'y_true' holds values other than 1"):
        halluc_rate_by_quantile([1, 3], [0.2, 0.4])
