import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.evaluation import StrataResult, length_strata, theta_qc_strata
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.effect_size import cohens_d

# Nine rows, theta_qc 0.1..0.9; labels alternate so each stratum holds both classes.
THETA = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
LABELS = [1, 0, 1, 0, 1, 0, 1, 0, 0]
SCORES = [1.2, 1.0, 1.4, 0.9, 1.6, 1.1, 1.8, 0.7, 1.0]


def test_theta_qc_hand_computed_toy_table():
    with pytest.warns(UndefinedStatisticWarning, match="low, medium, high"):
        res = theta_qc_strata(THETA, LABELS, SCORES)
    # Quantile edges over the nine rows: 0.1, 0.3667, 0.6333, 0.9 -> 3 rows a stratum.
    assert [s.label for s in res.strata] == ["low", "medium", "high"]
    assert [s.n for s in res.strata] == [3, 3, 3]
    assert [round(s.lo, 4) for s in res.strata] == [0.1, 0.3667, 0.6333]
    assert [round(s.hi, 4) for s in res.strata] == [0.3667, 0.6333, 0.9]
    low = res.strata[0]  # rows 0.1 (1, 1.2), 0.2 (0, 1.0), 0.3 (1, 1.4)
    assert (low.n_valid, low.n_halluc, low.mean_valid, low.mean_halluc) == (2, 1, pytest.approx(1.3), 1.0)
    assert low.auroc == 1.0
    assert math.isnan(low.cohens_d)  # one hallucinated row: no SD
    high = res.strata[2]  # rows 0.7 (1, 1.8), 0.8 (0, 0.7), 0.9 (0, 1.0)
    assert (high.n_valid, high.n_halluc, high.mean_halluc) == (1, 2, pytest.approx(0.85))


def test_theta_qc_edges_pool_both_labels_and_oracle_per_stratum():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300).astype(float)
    theta = rng.uniform(0.4, 1.6, 300) + 0.2 * y  # labels differ in theta_qc: pooling matters
    s = rng.normal(size=300) + y * theta
    res = theta_qc_strata(theta, y, s)
    edges = np.quantile(theta, [0, 1 / 3, 2 / 3, 1])
    assert [st.lo for st in res.strata] == pytest.approx(edges[:3].tolist())
    assert [st.hi for st in res.strata] == pytest.approx(edges[1:].tolist())
    for k, st in enumerate(res.strata):
        above = theta >= edges[k] if k == 0 else theta > edges[k]
        member = above & (theta <= edges[k + 1])
        assert st.n == member.sum()
        assert st.auroc == pytest.approx(roc_auc_score(y[member], s[member]))
        assert st.cohens_d == pytest.approx(cohens_d(s[member & (y == 1)], s[member & (y == 0)]))


def test_theta_qc_strata_invariant_to_row_order():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 90).astype(float)
    theta, s = rng.uniform(size=90), rng.normal(size=90)
    order = rng.permutation(90)
    pd.testing.assert_frame_equal(
        theta_qc_strata(theta[order], y[order], s[order]).to_frame(), theta_qc_strata(theta, y, s).to_frame()
    )


def test_length_strata_split_on_ranks_gives_equal_thirds_despite_ties():
    lengths = [12, 12, 12, 12, 12, 12, 40, 50, 60]  # quantile edges would put six tied rows in one stratum
    y = [1, 0, 1, 0, 1, 0, 1, 0, 1]
    s = [1.0, 0.5, 1.1, 0.4, 1.2, 0.6, 1.3, 0.7, 1.4]
    with pytest.warns(UndefinedStatisticWarning, match="response strata low, medium, high"):
        res = length_strata(lengths, y, s, name="response")
    assert res.name == "response"
    assert [st.n for st in res.strata] == [3, 3, 3]
    assert [(st.lo, st.hi) for st in res.strata] == [(12, 12), (12, 12), (40, 60)]
    # Ties keep input order: rows 0-2 low, 3-5 medium.
    assert res.strata[0].n_valid == 2 and res.strata[1].n_valid == 1
    assert res.strata[2].auroc == 1.0


def test_length_strata_sizes_differ_by_at_most_one():
    rng = np.random.default_rng(2)
    lengths = rng.integers(5, 15, 100)
    y = rng.integers(0, 2, 100)
    res = length_strata(lengths, y, rng.normal(size=100), n_strata=3)
    sizes = [st.n for st in res.strata]
    assert sum(sizes) == 100 and max(sizes) - min(sizes) <= 1


def test_rows_without_score_are_left_out_and_unlabelled_rows_count_in_n():
    with pytest.warns(UndefinedStatisticWarning, match="q1, q2"):
        res = length_strata([1, 2, 3, 4, 5, 6, 7], [1, 0, np.nan, 1, 0, 1, 0], [1.0, 0.0, 5.0, 2.0, 1.0, np.nan, 0.5],
                            n_strata=2)
    assert sum(st.n for st in res.strata) == 6
    assert sum(st.n_valid + st.n_halluc for st in res.strata) == 5


def test_constant_theta_qc_gives_one_stratum_with_warning():
    # Context = question on every row (the paper's TruthfulQA setup): theta_qc is 0 everywhere.
    with pytest.warns(UndefinedStatisticWarning, match="one stratum instead of 3"):
        res = theta_qc_strata([0.0] * 6, [1, 0, 1, 0, 1, 0], [1.0, 0.9, 1.1, 1.0, 1.0, 0.8])
    assert len(res.strata) == 1 and res.strata[0].n == 6


def test_tied_quantile_edges_merge_strata_with_warning():
    with pytest.warns(UndefinedStatisticWarning) as record:
        res = theta_qc_strata([0, 0, 0, 0, 1, 2], [1, 0, 1, 0, 0, 0], [1.0, 0.0, 1.5, 0.5, 2.0, 1.0])
    messages = [str(w.message) for w in record]
    assert "theta_qc has tied quantile edges: 2 strata instead of 3" in messages
    assert "theta_qc strata q2: d or AUROC undefined (a class has too few rows or no spread)" in messages
    assert [st.n for st in res.strata] == [4, 2]


def test_too_few_rows_warn():
    with pytest.warns(UndefinedStatisticWarning, match="cannot fill 3 strata"):
        assert length_strata([1, 2], [1, 0], [1.0, 0.0]).strata == ()
    with pytest.warns(UndefinedStatisticWarning, match="no row has both"):
        assert theta_qc_strata([np.nan], [1], [1.0]).strata == ()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: theta_qc_strata([1.0], [1], [1.0], n_strata=0), "'n_strata' parameter of theta_qc_strata"),
        (lambda: length_strata([1, 2], [1], [1.0]), "has 2 values but the labels have 1"),
        (lambda: length_strata([1, 2], [1, 7], [1.0, 2.0]), "values other than 1"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(SGIInputError, match=match):
        call()


def test_json_round_trip_and_frame():
    with pytest.warns(UndefinedStatisticWarning):
        res = theta_qc_strata(THETA, LABELS, SCORES)
    data = json.loads(json.dumps(res.to_dict()))
    assert StrataResult.from_dict(data).to_dict() == res.to_dict()
    frame = res.to_frame()
    assert list(frame["label"]) == ["low", "medium", "high"] and list(frame["n"]) == [3, 3, 3]
