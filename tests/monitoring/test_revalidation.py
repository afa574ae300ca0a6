"""Re-validation on a labelled random sample: the library's own functions, and no confident answer from one class."""

import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.monitoring.revalidation import MIN_PER_CLASS, revalidate
from sgi_core.stats.proportions import proportion_ci
from sgi_core.stats.ranking import roc_analysis
from sgi_core.stats.thresholds import threshold_metrics


def _run(seed=0, n=500, labelled=100, rate=0.3, signal=1.0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) >= rate).astype(float)
    score = rng.normal(signal * y, 0.7)
    sample = np.full(n, np.nan)
    picked = rng.choice(n, labelled, replace=False)
    sample[picked] = y[picked]
    return sample, score, y


def test_the_numbers_are_the_libraries_on_the_labelled_rows():
    sample, score, _ = _run()
    res = revalidate(sample, score, 0.5, n_boot=200, seed=3)
    lab = ~np.isnan(sample)
    roc = roc_analysis(sample[lab], score[lab], n_boot=200, seed=3)
    m = threshold_metrics(sample[lab], score[lab], 0.5)
    assert (res.auroc, res.auroc_ci) == (roc.auroc, tuple(roc.auroc_ci)) and res.validated
    assert (res.precision, res.recall) == (m.precision, m.recall)
    assert res.precision_ci == proportion_ci(m.tp, m.tp + m.fp) and res.recall_ci == proportion_ci(m.tp, m.tp + m.fn)
    assert res.n_labelled == 100 and res.n_grounded + res.n_hallucinated == 100 and "PPI++" in res.rate_method


def test_the_ppi_rate_covers_the_run_rate_in_most_draws():
    hits = []
    for seed in range(40):
        sample, score, y = _run(seed=seed)
        res = revalidate(sample, score, 0.5, n_boot=0, seed=seed)
        hits.append(res.rate_ci[0] <= 1.0 - y.mean() <= res.rate_ci[1])
    assert np.mean(hits) >= 0.85


def test_a_sample_of_one_class_gives_the_labels_own_interval_never_zero_width():
    sample, score, _ = _run()
    lab = np.flatnonzero(~np.isnan(sample))
    sample[lab] = 1.0  # every labelled row grounded
    res = revalidate(sample, score, 0.5, n_boot=0)
    assert res.rate == 0.0 and res.rate_ci == proportion_ci(0, 100) and res.rate_ci[1] > 0.02
    assert f"fewer than {MIN_PER_CLASS}" in res.rate_method and not res.validated
    assert "no AUROC interval" in res.reason


def test_a_score_at_chance_on_the_run_is_not_validated():
    sample, score, _ = _run(signal=0.0)
    res = revalidate(sample, score, 0.5, n_boot=200)
    assert not res.validated and "holds 0.5" in res.reason
    with pytest.raises(SGIInputError, match="revalidate needs one label per score; got 500 labels and 3 scores"):
        revalidate(sample, score[:3], 0.5)
