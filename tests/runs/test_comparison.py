"""Two runs compared: paired bootstrap, Wilcoxon, McNemar, Holm, DeLong and row matching, each against an oracle."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.runs import comparison
from sgi_core.runs.comparison import compare_runs, holm_adjust, paired_bootstrap_ci
from sgi_core.runs.matching import match_runs
from sgi_core.runs.rates import paired_rate_difference
from sgi_core.stats.key_order import canonical_order
from sgi_core.stats.paired import delong_test


def loop_bootstrap(d, n_boot, seed, confidence):
    """One resample at a time, in a plain loop: the independent computation of the interval (of the sorted values)."""
    d = sorted(d)
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(d), size=len(d))
        means.append(sum(d[i] for i in idx) / len(d))
    return tuple(np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2]))


@pytest.mark.parametrize("batch_values", [2_000_000, 30])
def test_paired_bootstrap_matches_a_plain_loop_with_the_same_draws(monkeypatch, batch_values):
    # 30 values per batch with 10 keys: batches of 3, 3, 3, 1 resamples must draw what the loop draws.
    monkeypatch.setattr(comparison, "_BATCH_VALUES", batch_values)
    d = np.random.default_rng(5).normal(-0.1, 0.3, size=10)
    got = paired_bootstrap_ci(d, n_boot=10, seed=3, confidence=0.9)
    assert got == pytest.approx(loop_bootstrap(d, 10, 3, 0.9), abs=1e-12)
    d = np.random.default_rng(6).normal(0.0, 1.0, size=40)
    assert paired_bootstrap_ci(d, n_boot=500, seed=0) == pytest.approx(loop_bootstrap(d, 500, 0, 0.95), abs=1e-12)


def test_paired_bootstrap_of_two_keys_matches_the_exact_resampling_distribution():
    # Keys d = (0, 1): a resample's mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4,
    # so the 2.5% and 97.5% quantiles are 0 and 1, and the 30% quantile is 0.5.
    assert paired_bootstrap_ci([0.0, 1.0], n_boot=4000, seed=1) == (0.0, 1.0)
    assert paired_bootstrap_ci([0.0, 1.0], n_boot=4000, seed=1, confidence=0.4) == (0.5, 0.5)


def test_paired_bootstrap_shifts_with_the_differences_and_checks_its_options():
    d = np.random.default_rng(2).normal(size=25)
    lo, hi = paired_bootstrap_ci(d, n_boot=300, seed=4)
    assert paired_bootstrap_ci(d + 2.0, n_boot=300, seed=4) == pytest.approx((lo + 2.0, hi + 2.0))
    assert lo < d.mean() < hi
    assert np.isnan(paired_bootstrap_ci(d, n_boot=0)).all()
    with pytest.raises(SGIInputError, match="'n_boot' parameter of paired_bootstrap_ci must be an int >= 0"):
        paired_bootstrap_ci(d, n_boot=-1)
    with pytest.raises(SGIInputError, match="'confidence' parameter .* float in \\(0, 1\\). Got 1.5"):
        paired_bootstrap_ci(d, confidence=1.5)


def test_holm_against_a_hand_computed_case():
    # Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06.
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # Capped at 1; NaN neither adjusted nor counted in m.
    adjusted = holm_adjust([0.5, math.nan, 0.6])
    assert adjusted[[0, 2]].tolist() == [1.0, 1.0] and math.isnan(adjusted[1])
    assert holm_adjust([0.02]).tolist() == [0.02]


def runs_with_duplicates():
    base = pd.DataFrame({
        "id": ["k1", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "only_base"],
        "sgi": [1.0, 1.4, 0.9, 1.3, 1.1, 1.25, 0.95, 1.15, 9.0],
        "judge_answer_consistency": [1.0, 0.5, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.0],
    })
    new = pd.DataFrame({
        "id": ["k2", "k1", "k3", "k3", "k4", "k5", "k6", "k7", "only_new", "only_new"],
        "sgi": [0.7, 1.0, 1.0, 0.8, 1.2, 0.9, 0.6, 0.85, 5.0, 6.0],
        "judge_answer_consistency": [0.5, 1.0, 0.0, 1.0, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0],
    })
    return base, new


def test_rows_are_matched_by_key_duplicates_averaged_and_unmatched_listed():
    base, new = runs_with_duplicates()
    matched = match_runs(base, new, key="id", scores=["sgi", "judge_answer_consistency", "absent"])
    assert matched.scores == ("sgi", "judge_answer_consistency")
    keys = ["k1", "k2", "k3", "k4", "k5", "k6", "k7"]
    assert matched.keys.tolist() == [keys[i] for i in canonical_order(keys)]
    by_key = {key: position for position, key in enumerate(matched.keys)}
    at = [by_key[key] for key in keys]
    assert matched.base["sgi"].to_numpy()[at].tolist() == pytest.approx([1.2, 0.9, 1.3, 1.1, 1.25, 0.95, 1.15])
    assert matched.new["sgi"].to_numpy()[at].tolist() == pytest.approx([1.0, 0.7, 0.9, 1.2, 0.9, 0.6, 0.85])
    m = matched.match
    assert (m.n_rows_base, m.n_rows_new, m.n_keys_base, m.n_keys_new, m.n_matched) == (9, 10, 8, 8, 7)
    assert (m.only_in_base, m.only_in_new, m.averaged_base, m.averaged_new) == (("only_base",), ("only_new",), 1, 2)
    # First row of each key in each input: k2 is row 0 of the new run, k1 row 1.
    assert matched.first_row_base[at].tolist() == [0, 2, 3, 4, 5, 6, 7]
    assert matched.first_row_new[at].tolist() == [1, 0, 2, 4, 5, 6, 7]


def test_numeric_and_text_ids_match_and_empty_keys_are_reported():
    base = pd.DataFrame({"id": [1, 2, None], "sgi": [1.0, 2.0, 3.0]})
    new = pd.DataFrame({"id": ["1", " 2 ", ""], "sgi": [1.5, 1.0, 0.0]})
    with pytest.warns(UserWarning, match="1 base and 1 new rows have an empty 'id'"):
        matched = match_runs(base, new, key="id", scores=["sgi"])
    assert matched.keys.tolist() == ["1", "2"]
    assert (matched.match.keyless_rows_base, matched.match.keyless_rows_new) == ((3,), (3,))


def test_ids_written_7_and_7_0_and_with_spaces_are_one_key_and_leading_zeros_are_kept():
    base = pd.DataFrame({"id": [7, 8.0, "9", "007", "-3"], "sgi": [1.0, 2.0, 3.0, 4.0, 5.0]})
    new = pd.DataFrame({"id": ["7.0", " 8 ", 9.0, "7.5", "-3.00"], "sgi": [1.5, 1.0, 0.0, 2.0, 6.0]})
    matched = match_runs(base, new, key="id", scores=["sgi"])
    assert sorted(matched.keys.tolist()) == ["-3", "7", "8", "9"]
    assert matched.base["sgi"].tolist() == [{"7": 1.0, "8": 2.0, "9": 3.0, "-3": 5.0}[k] for k in matched.keys]
    assert matched.match.only_in_base == ("007",) and matched.match.only_in_new == ("7.5",)


def test_matching_errors_name_the_column():
    base, new = runs_with_duplicates()
    with pytest.raises(SGIInputError, match="the new run has no column 'question'"):
        match_runs(base.assign(question="q"), new, key="question", scores=["sgi"])
    with pytest.raises(SGIInputError, match="the two runs share no value of 'id'"):
        match_runs(base, new.assign(id=["z"] * len(new)), key="id", scores=["sgi"])


def test_wilcoxon_and_holm_follow_scipy_on_the_per_key_means():
    base, new = runs_with_duplicates()
    res = compare_runs(match_runs(base, new, key="id", scores=["sgi", "judge_answer_consistency"]), n_boot=200)
    b = base[base.id != "only_base"].groupby("id", sort=False)[["sgi", "judge_answer_consistency"]].mean()
    n = new[new.id != "only_new"].groupby("id")[["sgi", "judge_answer_consistency"]].mean().loc[b.index]
    expected_p = [stats.wilcoxon(n[c] - b[c]).pvalue for c in b.columns]
    got = {row.score: row for row in res.scores}
    assert [got[c].wilcoxon_p for c in b.columns] == pytest.approx(expected_p, rel=1e-12)
    assert [got[c].holm_p for c in b.columns] == pytest.approx(holm_adjust(expected_p), rel=1e-12)
    sgi = got["sgi"]
    assert (sgi.mean_base, sgi.mean_new) == pytest.approx((b["sgi"].mean(), n["sgi"].mean()))
    assert sgi.difference == pytest.approx((n["sgi"] - b["sgi"]).mean())
    assert sgi.ci == pytest.approx(paired_bootstrap_ci((n["sgi"] - b["sgi"]).to_numpy(), n_boot=200, seed=0))
    assert sgi.verdict == "not validated" and sgi.n_keys == 7


def test_flags_at_a_threshold_follow_an_exact_binomial_mcnemar():
    rng = np.random.default_rng(0)
    keys = [f"q{i}" for i in range(60)]
    base = pd.DataFrame({"q": keys, "sgi": rng.normal(1.1, 0.2, 60)})
    new = pd.DataFrame({"q": keys, "sgi": base["sgi"] - rng.normal(0.1, 0.15, 60)})
    res = compare_runs(match_runs(base, new, key="q", scores=["sgi"]), threshold=("sgi", 1.0), n_boot=100)
    flagged_base, flagged_new = base["sgi"] < 1.0, new["sgi"] < 1.0
    base_only, new_only = int((flagged_base & ~flagged_new).sum()), int((~flagged_base & flagged_new).sum())
    assert (res.flags.flagged_base_only, res.flags.flagged_new_only) == (base_only, new_only)
    assert new_only > base_only > 0
    assert res.flags.mcnemar_p == pytest.approx(stats.binomtest(base_only, base_only + new_only, 0.5).pvalue)
    assert (res.flags.share_base, res.flags.share_new) == pytest.approx((flagged_base.mean(), flagged_new.mean()))
    with pytest.raises(SGIInputError, match="the policy's score column 'p_grounded' is not a score of both runs"):
        compare_runs(match_runs(base, new, key="q", scores=["sgi"]), threshold=("p_grounded", 0.5))


def test_identical_runs_give_no_change_and_an_undefined_wilcoxon():
    base = pd.DataFrame({"q": list("abcd"), "sgi": [1.0, 1.1, 0.9, 1.2]})
    with pytest.warns(UndefinedStatisticWarning, match="every paired difference is zero"):
        res = compare_runs(match_runs(base, base, key="q", scores=["sgi"]), n_boot=50)
    assert res.scores[0].ci == (0.0, 0.0) and math.isnan(res.scores[0].wilcoxon_p)
    assert res.scores[0].verdict == "not validated" and res.scores[0].validation == "no labels"


def labelled_runs(same_labels: bool):
    rng = np.random.default_rng(11)
    k = 80
    labels = (np.arange(k) % 2).astype(float)
    new_labels = labels if same_labels else (rng.random(k) < 0.4).astype(float)
    base = pd.DataFrame({"q": np.arange(k), "label": labels, "sgi": labels * 0.3 + rng.normal(1, 0.25, k)})
    new = pd.DataFrame({"q": np.arange(k), "label": new_labels, "sgi": new_labels * 0.1 + rng.normal(1, 0.25, k)})
    return base, new


def test_same_labels_give_deLongs_paired_test():
    base, new = labelled_runs(same_labels=True)
    res = compare_runs(match_runs(base, new, key="q", scores=["sgi"]), n_boot=100).labels
    oracle = delong_test(base["label"], new["sgi"], base["sgi"])
    (shift,) = res.auroc
    assert res.paired and shift.paired
    assert shift.auroc_base == pytest.approx(roc_auc_score(base["label"], base["sgi"]))
    assert shift.auroc_new == pytest.approx(roc_auc_score(new["label"], new["sgi"]))
    assert (shift.difference, shift.p_value) == pytest.approx((oracle.difference, oracle.p_value))
    assert (res.rate_base, res.rate_new, res.difference) == (0.5, 0.5, 0.0)
    # No discordant key: Newcombe's paired interval still has a width (it is not the bootstrap's [0, 0]).
    assert res.ci == paired_rate_difference(1 - base["label"], 1 - new["label"]).ci and res.ci[0] < 0 < res.ci[1]
    assert (res.method, res.base_only, res.new_only) == ("labels (paired)", 0, 0) and math.isnan(res.mcnemar_p)


def brute_force_auroc_variance(labels, scores):
    """DeLong's variance from the pairwise comparison matrix psi(x_i, y_j) written out."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return np.var(v10, ddof=1) / len(pos) + np.var(v01, ddof=1) / len(neg)


def test_different_labels_give_an_unpaired_deLong_test_against_a_brute_force_variance():
    base, new = labelled_runs(same_labels=False)
    res = compare_runs(match_runs(base, new, key="q", scores=["sgi"]), n_boot=400, seed=2).labels
    (shift,) = res.auroc
    # Every key is labelled in both runs: the rates are paired; the labels differ, so DeLong's test is not.
    assert res.paired and not shift.paired
    auc_base = roc_auc_score(base["label"], base["sgi"])
    auc_new = roc_auc_score(new["label"], new["sgi"])
    se = math.sqrt(brute_force_auroc_variance(base["label"].to_numpy(), base["sgi"].to_numpy())
                   + brute_force_auroc_variance(new["label"].to_numpy(), new["sgi"].to_numpy()))
    assert (shift.auroc_base, shift.auroc_new) == pytest.approx((auc_base, auc_new))
    assert shift.p_value == pytest.approx(2 * stats.norm.sf(abs(auc_new - auc_base) / se))
    assert shift.ci == pytest.approx((auc_new - auc_base - 1.959964 * se, auc_new - auc_base + 1.959964 * se))
    rate_base, rate_new = 1 - base["label"].mean(), 1 - new["label"].mean()
    assert (res.rate_base, res.rate_new) == pytest.approx((rate_base, rate_new))
    expected = paired_rate_difference(1 - base["label"], 1 - new["label"])
    assert res.ci == pytest.approx(expected.ci) and res.mcnemar_p == pytest.approx(expected.p_value)


def test_one_class_per_run_leaves_the_auroc_undefined_and_rates_defined():
    base = pd.DataFrame({"q": list("abcd"), "label": 1.0, "sgi": [1.2, 1.3, 1.1, 1.4]})
    new = pd.DataFrame({"q": list("abcd"), "label": 0.0, "sgi": [0.9, 1.0, 0.8, 1.1]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = compare_runs(match_runs(base, new, key="q", scores=["sgi"]), n_boot=100).labels
    messages = [str(w.message) for w in caught if issubclass(w.category, UndefinedStatisticWarning)]
    assert messages == ["DeLong's test is undefined for sgi: each run needs 2 keys of each class and AUROCs that vary "
                        "(base 4 grounded / 0 hallucinated; new 0 grounded / 4 hallucinated labelled keys)"]
    assert (res.rate_base, res.rate_new, res.difference, res.verdict) == (0.0, 1.0, 1.0, "regression")
    assert math.isnan(res.auroc[0].auroc_base) and math.isnan(res.auroc[0].p_value)


def test_keys_with_both_labels_get_no_label():
    base = pd.DataFrame({"q": ["a", "a", "b", "c"], "label": [1.0, 0.0, 1.0, 0.0], "sgi": [1.0, 1.0, 1.2, 0.8]})
    new = pd.DataFrame({"q": ["a", "b", "c"], "label": [1.0, 1.0, 0.0], "sgi": [1.0, 1.1, 0.7]})
    matched = match_runs(base, new, key="q", scores=["sgi"])
    assert matched.match.mixed_label_keys == 1
    assert math.isnan(matched.base["label"].to_numpy()[matched.keys.tolist().index("a")])
    assert compare_runs(matched, n_boot=10).labels.n_keys == 2


def test_result_survives_a_json_round_trip():
    base, new = labelled_runs(same_labels=True)
    res = compare_runs(match_runs(base, new, key="q", scores=["sgi"]), threshold=("sgi", 1.1), n_boot=50)
    assert type(res).from_dict(res.to_dict()).to_dict() == res.to_dict()


def test_largest_changes_orders_keys_by_absolute_change_and_points_at_their_rows():
    from sgi_core.runs.matching import largest_changes

    base, new = runs_with_duplicates()
    changes = largest_changes(match_runs(base, new, key="id", scores=["sgi"]), "sgi", n=3)
    # Per-key changes: k1 -0.2, k2 -0.2, k3 -0.4, k4 +0.1, k5 -0.35, k6 -0.35, k7 -0.3.
    assert changes.keys == ("k3", "k5", "k6")
    assert changes.change == pytest.approx((-0.4, -0.35, -0.35))
    assert (changes.row_base, changes.row_new) == ((3, 5, 6), (2, 5, 6))
    with pytest.raises(SGIInputError, match="'lexical_groundedness' is not a score of both runs"):
        largest_changes(match_runs(base, new, key="id", scores=["sgi"]), "lexical_groundedness")
