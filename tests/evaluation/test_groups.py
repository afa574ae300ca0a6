import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.groups import GroupAnalysis, group_analysis, group_confound
from sgi_core.stats.effect_size import cohens_d


def _two_groups():
    """Group A: 8 grounded, 2 hallucinated; group B: 2 grounded, 8 hallucinated."""
    y = np.array([1] * 8 + [0] * 2 + [1] * 2 + [0] * 8, dtype=float)
    groups = np.array(["A"] * 10 + ["B"] * 10, dtype=object)
    return y, groups


def test_per_group_statistics_match_sklearn_and_cohens_d():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300).astype(float)
    score = rng.normal(y, 1.0)
    groups = rng.choice(["gpt", "llama", "mistral"], 300)
    res = group_analysis(y, score, groups, column="generator", n_boot=100)
    assert [g.group for g in res.groups] == ["gpt", "llama", "mistral"]
    for g in res.groups:
        rows = groups == g.group
        assert g.auroc == pytest.approx(roc_auc_score(y[rows], score[rows]), abs=1e-12)
        assert g.cohens_d == pytest.approx(cohens_d(score[rows & (y == 1)], score[rows & (y == 0)]), abs=1e-12)
        assert (g.n_valid, g.n_halluc) == (int((y[rows] == 1).sum()), int((y[rows] == 0).sum()))
        assert g.auroc_ci[0] <= g.auroc <= g.auroc_ci[1]


def test_group_rate_auroc_hand_computed():
    y, groups = _two_groups()
    # Scores 0.8 (group A) and 0.2 (group B). Of the 10 x 10 grounded/hallucinated pairs,
    # 8*8 = 64 are won, 8*2 + 2*8 = 32 tie (count 1/2), 2*2 = 4 lost: AUROC = 80/100.
    res = group_confound(y, groups, column="author", min_group_rows=5)
    assert res.auroc == pytest.approx(0.8)
    assert res.level == "ok" and res.pure_groups == ()
    assert res.message == "group column 'author' alone predicts the label with AUROC 0.800"
    strict = group_confound(y, groups, column="author", min_group_rows=5, purity=0.8)
    assert strict.level == "warning" and strict.pure_groups == ("A", "B")


def test_same_mix_in_every_group_is_chance_and_small_groups_do_not_warn():
    y = np.array([1, 0] * 20, dtype=float)
    res = group_confound(y, np.repeat(["a", "b", "c", "d"], 10))
    assert res.auroc == 0.5 and res.level == "ok"
    # One question per group: all-one-class groups of one row each stay below min_group_rows.
    tiny = group_confound([1, 0, 1, 0], ["q1", "q2", "q3", "q4"])
    assert tiny.auroc == 1.0 and tiny.level == "ok"


def test_authorship_confound_is_flagged_in_the_analysis():
    y = np.array([1] * 40 + [0] * 40, dtype=float)
    score = np.r_[np.linspace(0, 1, 40), np.linspace(0, 1, 40)]
    res = group_analysis(y, score, ["human"] * 40 + ["model"] * 40, column="author", n_boot=0)
    assert res.confound.level == "warning"
    assert res.confound.message.startswith("group column 'author' alone predicts the label with AUROC 1.000")
    assert all(math.isnan(g.auroc) for g in res.groups)  # each group holds one class only


def test_missing_group_values_and_nan_rows():
    y = [1, 0, 1, 0, float("nan"), 1]
    score = [0.9, 0.2, 0.8, 0.1, 0.5, float("nan")]
    res = group_analysis(y, score, ["a", "a", None, float("nan"), "a", "a"], n_boot=0)
    assert [g.group for g in res.groups] == ["(missing)", "a"]
    assert res.n_excluded == 2
    assert res.groups[0].auroc == 1.0


def test_round_trips_json():
    y, groups = _two_groups()
    score = np.linspace(0, 1, 20)
    res = group_analysis(y, score, groups, n_boot=20)
    back = GroupAnalysis.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.groups[0].group == "A" and back.confound.auroc == res.confound.auroc
    assert back.groups[1].auroc == pytest.approx(res.groups[1].auroc)


def test_errors():
    with pytest.raises(SGIInputError, match="group column 'domain' has 3 values but the labels have 2"):
        group_analysis([1, 0], [0.5, 0.1], ["a", "b", "c"], column="domain")
    with pytest.raises(SGIInputError, match="The 'purity' parameter of group_confound must be a float in"):
        group_confound([1, 0], ["a", "b"], purity=0.4)
    with pytest.raises(SGIInputError, match="The 'min_group_rows' parameter of group_confound must be an int >= 1"):
        group_confound([1, 0], ["a", "b"], min_group_rows=0)
    with pytest.raises(SGIInputError, match="The 'n_boot' parameter of group_analysis must be an int >= 0"):
        group_analysis([1, 0], [0.5, 0.1], ["a", "b"], n_boot=-1)


def test_group_names_from_a_series_of_text_numbers_and_missing_values():
    from sgi_core.evaluation.groups import _group_names

    values = pd.Series(["b", None, "a", "b", float("nan"), "a"], dtype="str")
    assert _group_names(values, 6, "g").tolist() == ["b", "(missing)", "a", "b", "(missing)", "a"]
    mixed = [1, "1", 2.5, None]
    assert _group_names(mixed, 4, "g").tolist() == ["1", "1", "2.5", "(missing)"]
    with pytest.raises(SGIInputError, match="group column 'g' has 4 values but the labels have 3"):
        _group_names(mixed, 3, "g")
