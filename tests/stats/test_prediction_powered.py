import json
import math

import numpy as np
import ppi_py
import pytest
from ppi_py.ppi import _calc_lam_glm
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.runs.rates import paired_rate_difference
from sgi_core.stats.crossval import fold_ids, normal_scores
from sgi_core.stats.prediction_powered import (
    PPIEstimate,
    cross_fitted_predictions,
    ppi_mean,
    ppi_rate_difference,
)
from sgi_core.stats.proportions import proportion_ci


def _dataset(seed, *, binary=False, slope=0.7, n=60, big_n=300):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n + big_n)
    noise = rng.uniform(size=n + big_n) if binary else rng.normal(size=n + big_n)
    y = (noise < 1 / (1 + np.exp(-2 * x))).astype(float) if binary else x + noise
    f = slope * x + 0.3 + rng.normal(0, 0.3, n + big_n)
    return y[:n], f[:n], f[n:]


def _ppi_py_lam(y, f_lab, f_unlab):
    """ppi_py's own lhat, computed as in ppi_mean_ci (gradients around the lam=1 estimate)."""
    centre = ppi_py.ppi_mean_pointestimate(y, f_lab, f_unlab, lam=1)
    return _calc_lam_glm((y - centre)[:, None], (f_lab - centre)[:, None], (f_unlab - centre)[:, None], np.eye(1),
                         clip=True)


# (a) the numbers of ppi_py 0.2.3, the reference implementation of PPI++.
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("binary, slope", [(False, 0.7), (True, 0.5), (False, -0.8), (False, 3.0)])
def test_ppi_mean_matches_ppi_py(seed, binary, slope):
    y, f_lab, f_unlab = _dataset(seed, binary=binary, slope=slope)
    res = ppi_mean(y, f_lab, f_unlab)
    lam = _ppi_py_lam(y, f_lab, f_unlab)
    assert res.lam == pytest.approx(lam, abs=1e-12)
    if slope < 0:
        assert res.lam == 0.0  # a negatively correlated predictor is clipped to 0
    assert res.estimate == pytest.approx(ppi_py.ppi_mean_pointestimate(y, f_lab, f_unlab)[0], abs=1e-12)
    low, high = ppi_py.ppi_mean_ci(y, f_lab, f_unlab, alpha=0.05)
    assert res.ci == pytest.approx((low[0], high[0]), abs=1e-12)
    untuned = ppi_mean(y, f_lab, f_unlab, power_tuning=False, confidence=0.9)
    low, high = ppi_py.ppi_mean_ci(y, f_lab, f_unlab, alpha=0.1, lam=1)
    assert untuned.lam == 1.0 and untuned.ci == pytest.approx((low[0], high[0]), abs=1e-12)


def test_lam_clipped_to_one_matches_ppi_py():
    y, _, _ = _dataset(4, n=80, big_n=200)
    rng = np.random.default_rng(4)
    f = np.r_[0.2 * y, 0.2 * rng.normal(size=200)]  # cov / var about 5: clipped to 1
    res = ppi_mean(y, f[:80], f[80:])
    assert res.lam == 1.0 == _ppi_py_lam(y, f[:80], f[80:])


def test_labels_only_intervals():
    y, f_lab, f_unlab = _dataset(5)
    res = ppi_mean(y, f_lab, f_unlab)
    low, high = ppi_py.classical_mean_ci(y, alpha=0.05)
    assert res.labels_only_estimate == pytest.approx(y.mean())
    assert res.labels_only_ci == pytest.approx((low, high), abs=1e-12) and res.labels_only_method == "normal (ddof=0)"
    y_bin, f_lab, f_unlab = _dataset(5, binary=True)
    res = ppi_mean(y_bin, f_lab, f_unlab)
    assert res.labels_only_ci == proportion_ci(int(y_bin.sum()), len(y_bin)) and res.labels_only_method == "Wilson"


# (b) coverage. A 0/1 target at n = 40 gives any normal (Wald-type) interval a coverage near 0.93, not 0.95
# (Wald on the labels alone at rate 0.3: 0.9299, summed exactly over Bin(40, 0.3)); PPI++ shares it
# (0.928 over 20,000 replications with the useless predictor).
N_LAB, N_UNLAB, RATE = 40, 400, 0.3


@pytest.mark.statistical
def test_coverage_with_a_useless_predictor():
    # 2,000 replications (0.5 s): at 400 the Monte Carlo error (0.013) is about the margin from 0.928 to 0.91.
    rng = np.random.default_rng(0)
    covered, widths, lams = [], [], []
    for _ in range(2000):
        y = rng.binomial(1, RATE, N_LAB + N_UNLAB).astype(float)
        noise = rng.uniform(size=N_LAB + N_UNLAB)
        res = ppi_mean(y[:N_LAB], noise[:N_LAB], noise[N_LAB:])
        covered.append(res.ci[0] <= RATE <= res.ci[1])
        widths.append(res.ci[1] - res.ci[0])
        lams.append(res.lam)
    assert 0.91 <= np.mean(covered) <= 0.98
    assert np.median(lams) < 0.05
    # Nothing to gain: the width is the labels' normal interval's, 2 * 1.96 * sqrt(0.21 / 40) = 0.284.
    assert np.median(widths) == pytest.approx(0.284, abs=0.02)


@pytest.mark.statistical
def test_coverage_and_width_with_a_strong_cross_fitted_predictor():
    # AUROC about 0.90 (normal scores 1.8 sd apart), mapped to probabilities by the cross-fitted logistic model.
    rng = np.random.default_rng(0)
    covered, widths, label_widths = [], [], []
    for _ in range(400):
        y = rng.binomial(1, RATE, N_LAB + N_UNLAB).astype(float)
        score = 1.8 * y + rng.normal(size=N_LAB + N_UNLAB)
        pred_lab, pred_unlab, _ = cross_fitted_predictions(score[:N_LAB], y[:N_LAB], score[N_LAB:])
        res = ppi_mean(y[:N_LAB], pred_lab, pred_unlab)
        covered.append(res.ci[0] <= RATE <= res.ci[1])
        widths.append(res.ci[1] - res.ci[0])
        label_widths.append(res.labels_only_ci[1] - res.labels_only_ci[0])
    assert 0.91 <= np.mean(covered) <= 0.98
    assert np.median(widths) < 0.9 * np.median(label_widths)


# (c) degenerate input and errors.
def test_constant_predictor_gives_lam_zero_and_the_labels_interval():
    y, _, _ = _dataset(6)
    res = ppi_mean(y, np.full(len(y), 0.4), np.full(50, 0.4))
    assert res.lam == 0.0  # ppi_py gives NaN here (0 / 0)
    assert res.estimate == pytest.approx(y.mean())
    assert res.ci == pytest.approx(ppi_py.classical_mean_ci(y, alpha=0.05), abs=1e-12)
    no_unlabelled = ppi_mean(y, y + 0.1, [])
    assert no_unlabelled.lam == 0.0 and no_unlabelled.ci == pytest.approx(res.ci)


def test_too_few_labels_is_nan_with_warning():
    with pytest.warns(UndefinedStatisticWarning, match="at least 2 labelled rows"):
        res = ppi_mean([1.0], [0.5], [0.2, 0.3])
    assert math.isnan(res.estimate) and math.isnan(res.ci[0]) and res.n_unlabelled == 2


def test_ppi_mean_errors():
    with pytest.raises(SGIInputError, match=r"'y_labelled' holds NaN \(column 'y_labelled', row 2\)"):
        ppi_mean([1, np.nan, 0], [0.1, 0.2, 0.3], [0.5])
    with pytest.raises(SGIInputError, match="'pred_labelled' has 2 values but the labels have 3"):
        ppi_mean([1, 0, 0], [0.1, 0.2], [0.5])
    with pytest.raises(SGIInputError, match="'pred_unlabelled' holds infinite values"):
        ppi_mean([1, 0, 0], [0.1, 0.2, 0.3], [np.inf])
    with pytest.raises(SGIInputError, match="The 'confidence' parameter of ppi_mean must be a float in"):
        ppi_mean([1, 0, 0], [0.1, 0.2, 0.3], [0.5], confidence=0)


@pytest.mark.parametrize("with_groups", [False, True])
def test_cross_fitting_predicts_each_labelled_row_out_of_fold(with_groups):
    # Brute-force oracle: refit by hand on the package's folds; each labelled row must come from the model of
    # the folds it is not in, each unlabelled row from the mean of all fold models.
    rng = np.random.default_rng(7)
    y = rng.binomial(1, 0.4, 50).astype(float)
    score = np.column_stack([y + rng.normal(size=50), rng.normal(size=50)])
    score[3, 0] = np.nan
    unlabelled = rng.normal(size=(30, 2))
    groups = np.repeat(np.arange(25), 2) if with_groups else None
    pred_lab, pred_unlab, loss = cross_fitted_predictions(score, y, unlabelled, n_folds=4, seed=3, groups=groups)
    folds = fold_ids(y, n_splits=4, seed=3, groups=groups)
    expected_lab, expected_unlab = np.empty(50), np.zeros(30)
    for fold in range(4):
        train = folds != fold
        mapping = normal_scores(int(train.sum()), 3).fit(score[train])
        model = LogisticRegression().fit(mapping.transform(score[train]), y[train])
        expected_lab[~train] = model.predict_proba(mapping.transform(score[~train]))[:, 1]
        expected_unlab += model.predict_proba(mapping.transform(unlabelled))[:, 1] / 4
    np.testing.assert_allclose(pred_lab, expected_lab, rtol=1e-12)
    np.testing.assert_allclose(pred_unlab, expected_unlab, rtol=1e-12)
    assert loss == pytest.approx(log_loss(y, expected_lab))
    if with_groups:
        assert (folds[0::2] == folds[1::2]).all()


def test_cross_fitting_with_one_class_is_constant_with_warning():
    with pytest.warns(UndefinedStatisticWarning, match="fewer than 2 labelled rows"):
        pred_lab, pred_unlab, _ = cross_fitted_predictions([0.1, 0.5, 0.9, 0.3], [0, 0, 0, 1], [0.2, 0.8])
    assert (pred_lab == 0.25).all() and (pred_unlab == 0.25).all()


def test_cross_fitting_errors():
    with pytest.raises(SGIInputError, match="'y_labelled' of cross_fitted_predictions must hold 0 or 1"):
        cross_fitted_predictions([0.1, 0.2, 0.3], [0, 2, 1], [0.5])
    with pytest.raises(SGIInputError, match="'score_unlabelled' has 1 features but the labelled scores have 2"):
        cross_fitted_predictions(np.zeros((3, 2)), [0, 1, 1], [0.5])
    with pytest.raises(SGIInputError, match="must be 1-D"):
        cross_fitted_predictions(np.zeros((3, 2, 2)), [0, 1, 1], [0.5])
    with pytest.raises(SGIInputError, match="'groups' has 2 values but the labels have 3"):
        cross_fitted_predictions([0.1, 0.2, 0.3], [0, 1, 1], [0.5], groups=[1, 2])
    with pytest.raises(SGIInputError, match="The 'n_folds' parameter of cross_fitted_predictions must be an int >= 2"):
        cross_fitted_predictions([0.1, 0.2, 0.3], [0, 1, 1], [0.5], n_folds=1)


def _two_runs(seed, n_keys=300, n_labelled=60):
    rng = np.random.default_rng(seed)
    base = rng.binomial(1, 0.3, n_keys).astype(float)
    new = np.where(rng.uniform(size=n_keys) < 0.8, base, rng.binomial(1, 0.2, n_keys)).astype(float)
    score_base, score_new = 1.8 * base + rng.normal(size=n_keys), 1.8 * new + rng.normal(size=n_keys)
    base[n_labelled:] = new[n_labelled:] = np.nan
    return base, new, score_base, score_new


def test_ppi_rate_difference():
    base, new, score_base, score_new = _two_runs(9)
    base[0] = np.nan  # labelled in one run only: unlabelled here
    res = ppi_rate_difference(base, new, score_base, score_new)
    labels = paired_rate_difference(base, new)
    assert (res.n_labelled, res.n_unlabelled) == (59, 241)
    assert res.labels_only_estimate == pytest.approx(labels.difference)
    assert res.labels_only_ci == labels.ci and res.labels_only_method.startswith("Newcombe paired")
    assert res.ci[0] < res.estimate < res.ci[1] and 0.0 <= res.lam <= 1.0
    assert PPIEstimate.from_dict(json.loads(json.dumps(res.to_dict()))) == res
    # Scores that never vary: the fold models' class shares differ by about 1/n and would give a spurious lam.
    with pytest.warns(UndefinedStatisticWarning, match="never vary"):
        flat = ppi_rate_difference(base, new, np.zeros(300), np.zeros(300))
    assert flat.lam == 0.0 and flat.estimate == pytest.approx(labels.difference)


def test_ppi_rate_difference_undefined_and_errors():
    with pytest.warns(UndefinedStatisticWarning, match="at least 2 keys labelled in both runs"):
        res = ppi_rate_difference([1, np.nan, 0], [np.nan, 1, 0], [0.1, 0.2, 0.3], [0.3, 0.2, 0.1])
    assert math.isnan(res.estimate) and (res.n_labelled, res.n_unlabelled) == (1, 2)
    with pytest.raises(SGIInputError, match="'halluc_new' has 2 values but 'halluc_base' has 3"):
        ppi_rate_difference([1, 0, 1], [1, 0], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    with pytest.raises(SGIInputError, match="'score_new' has 2 rows but the labels have 3"):
        ppi_rate_difference([1, 0, 1], [1, 0, 0], [0.1, 0.2, 0.3], [0.1, 0.2])
