"""No degenerate sample (one class, no discordant key, perfect agreement or separation) gives a zero-width interval.

A zero-width interval from such a sample is a confident wrong answer; each interval of the
library is either undefined (NaN, with a warning) or at least as wide as what its labels
can bound, and where the truth is unknowable from such a sample, it holds the null value.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from sgi_core.evaluation.refit import judge_combined
from sgi_core.policy.baseline_gate import rate_check
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.runs.comparison import compare_runs
from sgi_core.runs.matching import match_runs
from sgi_core.runs.rates import paired_rate_difference, unpaired_rate_difference
from sgi_core.stats.kappa import cohens_kappa
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.prediction_powered import MIN_CLASS_COUNT, ppi_mean, ppi_rate_difference
from sgi_core.stats.proportions import paired_difference_ci, proportion_ci
from sgi_core.stats.ranking import roc_analysis

RNG = np.random.default_rng(0)
ONE_CLASS = np.ones(40)
SEVENTY_NINE_AND_ONE = np.r_[np.ones(79), 0.0]
SEPARATED_15 = (np.r_[np.ones(15), np.zeros(15)], np.r_[np.arange(15.0) + 100, np.arange(15.0)])
SEPARATED_2 = (np.r_[1.0, 1.0, 0.0, 0.0], np.array([3.0, 4.0, 1.0, 2.0]))


def _ppi_one_class():
    return ppi_mean(ONE_CLASS, np.full(40, 0.97), RNG.uniform(0.9, 1.0, 300)).ci


def _ppi_79_and_1():
    return ppi_mean(SEVENTY_NINE_AND_ONE, np.r_[np.full(79, 0.9), 0.2], RNG.uniform(0.8, 1.0, 300)).ci


def _ppi_difference_no_discordant_key():
    base, new = np.full(150, np.nan), np.full(150, np.nan)
    base[:40] = new[:40] = 0.0
    return ppi_rate_difference(base, new, RNG.normal(size=150), RNG.normal(size=150)).ci


# (name, interval, the value a sample this degenerate cannot exclude, or None when only width is checked)
CASES = [
    ("PPI++ mean, one class", _ppi_one_class, None),
    ("PPI++ mean, 79 + 1", _ppi_79_and_1, None),
    ("PPI++ rate difference, no discordant key", _ppi_difference_no_discordant_key, 0.0),
    ("Wilson, 0 of 40", lambda: proportion_ci(0, 40), None),
    ("Wilson, 40 of 40", lambda: proportion_ci(40, 40), None),
    ("Newcombe paired, no discordant key", lambda: paired_difference_ci(0, 0, 0, 40), 0.0),
    ("paired rates, all hallucinated", lambda: paired_rate_difference(np.ones(40), np.ones(40)).ci, 0.0),
    ("unpaired rates, one class", lambda: unpaired_rate_difference(np.zeros(30), np.zeros(30)).ci, 0.0),
    ("policy precision, 0 of 10 flagged right", lambda: proportion_ci(0, 10), None),
    ("kappa, perfect agreement 29 + 1", lambda: cohens_kappa(SEVENTY_NINE_AND_ONE[-30:], SEVENTY_NINE_AND_ONE[-30:]
                                                             ).kappa_ci, 0.0),
    ("kappa, perfect agreement 15 + 15", lambda: cohens_kappa(SEPARATED_15[0], SEPARATED_15[0]).kappa_ci, None),
    ("AUROC bootstrap, separated 15 + 15", lambda: roc_analysis(*SEPARATED_15, ci_method="bootstrap").auroc_ci, None),
    ("AUROC DeLong, separated 15 + 15", lambda: roc_analysis(*SEPARATED_15, ci_method="asymptotic").auroc_ci, None),
    ("AUROC bootstrap, separated 2 + 2", lambda: roc_analysis(*SEPARATED_2, ci_method="bootstrap").auroc_ci, 0.5),
    ("AUROC DeLong, separated 2 + 2", lambda: roc_analysis(*SEPARATED_2, ci_method="asymptotic").auroc_ci, 0.5),
    ("length-matched AUROC bootstrap, separated 15 + 15",
     lambda: length_matched_auroc(*SEPARATED_15, np.tile(np.arange(15.0), 2), n_bins=3, n_boot=200).auroc_ci, None),
    ("length-matched AUROC delta method, separated 15 + 15",
     lambda: length_matched_auroc(*SEPARATED_15, np.tile(np.arange(15.0), 2), n_bins=3,
                                  ci_method="asymptotic").auroc_ci, None),
    ("refitted combination's AUROC, separated 15 + 15",
     lambda: judge_combined(SEPARATED_15[0], np.r_[np.full(15, 0.9), np.full(15, 0.1)], SEPARATED_15[1][:, None],
                            n_refit=30).auroc_ci, None),
]


@pytest.mark.parametrize(("name", "interval", "null"), CASES, ids=[case[0] for case in CASES])
def test_no_degenerate_sample_gives_a_zero_width_interval(name, interval, null):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        low, high = interval()
    assert math.isnan(low) or high - low > 0.02, (name, low, high)
    if null is not None:
        assert low <= null <= high, (name, low, high)


def test_undefined_rather_than_zero_width():
    with pytest.warns(UndefinedStatisticWarning, match="nobs = 0"):
        assert all(math.isnan(x) for x in proportion_ci(0, 0))
    with pytest.warns(UndefinedStatisticWarning, match="both classes"):
        assert all(math.isnan(x) for x in roc_analysis(np.ones(30), np.arange(30.0)).auroc_ci)


def test_prediction_powered_falls_back_to_the_labels_and_says_so():
    res = ppi_mean(ONE_CLASS, np.full(40, 0.97), RNG.uniform(0.9, 1.0, 300))
    assert res.ci == res.labels_only_ci == proportion_ci(40, 40) and res.lam == 0.0
    assert res.method.startswith(f"labels only: 0 rows of class 0 labelled (fewer than {MIN_CLASS_COUNT})")


def _bundled_like_runs(halluc_base_keys, halluc_new_keys, labelled):
    """150 keys; the given keys hallucinate; the ``labelled`` keys carry labels in both runs."""
    rng = np.random.default_rng(4)
    frames = []
    for halluc in (halluc_base_keys, halluc_new_keys):
        label = np.ones(150)
        label[list(halluc)] = 0.0
        shown = np.full(150, np.nan)
        shown[labelled] = label[labelled]
        frames.append(pd.DataFrame({"id": np.arange(150), "sgi": rng.normal(1.0, 0.1, 150) + 0.2 * label,
                                    "theta_rq": rng.normal(1.0, 0.1, 150), "label": shown}))
    return match_runs(*frames, key="id", scores=["sgi", "theta_rq"])


def test_a_labelled_sample_without_the_rare_hallucinations_gives_no_confident_pass():
    # The case of the bundled runs: base hallucinates on 3 of 150 keys, new on 12; the 40 labelled keys hold none.
    matched = _bundled_like_runs(range(140, 143), range(138, 150), np.arange(40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        comparison = compare_runs(matched, n_boot=200)
    lab = comparison.labels
    assert lab.ci == lab.labels_only_ci and lab.ci[0] < 0 < lab.ci[1] and lab.ci[1] - lab.ci[0] > 0.15
    assert lab.method.startswith("labels (paired); prediction-powered left out, labels only: 0 keys hallucinated")
    assert lab.verdict == "no clear change"
    with pytest.raises(Exception, match="a margin of 0.02 cannot pass"):
        rate_check(comparison, 0.02)
