import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.retrieval import (
    RetrievalResult,
    diagnose,
    find_retrieval_columns,
    parse_id_list,
    retrieval_metrics,
    retrieval_metrics_from_frame,
)

# Hand-computed table. Ranks of the first relevant id: q1 -> 1, q2 -> 4, q3 -> none (0),
# q4 -> 2 (the repeated "a" keeps rank 1, which is not relevant), q5 -> 12 (beyond K=10),
# q6 -> empty retrieved list (0).
RETRIEVED = [
    ["d1", "d2", "d3"],
    ["x", "y", "z", "d9", "d8"],
    ["p", "q"],
    ["a", "b", "a"],
    [f"n{i}" for i in range(11)] + ["hit"],
    [],
]
RELEVANT = [["d1"], ["d9", "d8"], ["r"], ["b"], ["hit"], ["s"]]


def test_hand_computed_table():
    result = retrieval_metrics(RETRIEVED, RELEVANT, ks=(1, 3, 5, 10))
    assert result.first_relevant_rank == [1, 4, 0, 2, 12, 0]
    assert result.recall_at_k == {1: 1 / 6, 3: 2 / 6, 5: 3 / 6, 10: 3 / 6}
    assert result.mrr == pytest.approx((1 + 1 / 4 + 0 + 1 / 2 + 1 / 12 + 0) / 6)
    np.testing.assert_array_equal(result.hits(3), [1, 0, 0, 1, 0, 0])


def test_k_larger_than_every_list_uses_whole_list():
    result = retrieval_metrics([["a", "b"]], [["b"]], ks=(100,))
    assert result.recall_at_k == {100: 1.0}


def test_queries_without_relevant_ids_are_left_out_with_a_warning():
    with pytest.warns(UserWarning, match="1 queries have no relevant ids"):
        result = retrieval_metrics([["a"], ["b"]], [["a"], []], ks=(1,))
    assert result.n_without_relevant == 1
    assert result.recall_at_k == {1: 1.0} and result.mrr == 1.0
    assert np.isnan(result.hits(1)[1]) and np.isnan(result.reciprocal_ranks()[1])


def test_no_judged_query_gives_nan():
    with pytest.warns(UserWarning):
        result = retrieval_metrics([["a"]], [[]], ks=(3,))
    assert np.isnan(result.mrr) and np.isnan(result.recall_at_k[3])


def test_brute_force_oracle_on_random_lists():
    rng = np.random.default_rng(0)
    retrieved = [list(rng.choice(list("abcdefghij"), size=rng.integers(0, 8))) for _ in range(300)]
    relevant = [list(rng.choice(list("abcdefghij"), size=rng.integers(1, 3), replace=False)) for _ in range(300)]
    result = retrieval_metrics(retrieved, relevant, ks=(3, 5))
    for k in (3, 5):
        oracle = np.mean([any(d in rel for d in ret[:k]) for ret, rel in zip(retrieved, relevant)])
        assert result.recall_at_k[k] == pytest.approx(oracle)
    rr = [next((1 / (i + 1) for i, d in enumerate(ret) if d in rel), 0.0) for ret, rel in zip(retrieved, relevant)]
    assert result.mrr == pytest.approx(np.mean(rr))


def test_parse_id_list_forms_and_errors():
    assert parse_id_list('["d1", 2, " d3 "]') == ["d1", "2", "d3"]
    assert parse_id_list("d1|d2 | d3") == ["d1", "d2", "d3"]
    assert parse_id_list(np.nan) == [] and parse_id_list("  ") == []
    with pytest.raises(SGIInputError, match=r"invalid JSON: .*column 'retrieved_ids', row 7"):
        parse_id_list("[oops", column="retrieved_ids", row=7)


def test_from_frame_and_column_detection():
    frame = pd.DataFrame({"Retrieved_IDs": ['["a","b"]', "c|d"], "relevant_ids": ["b", "x"]})
    assert find_retrieval_columns(frame.columns) == ("Retrieved_IDs", "relevant_ids")
    result = retrieval_metrics_from_frame(frame, ks=(1, 3))
    assert result.recall_at_k == {1: 0.0, 3: 0.5}
    assert retrieval_metrics_from_frame(pd.DataFrame({"question": ["q"]})) is None


def test_round_trip_through_json():
    result = retrieval_metrics(RETRIEVED, RELEVANT)
    again = RetrievalResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result


def test_diagnosis_table():
    with pytest.warns(UserWarning, match="no relevant ids"):
        result = retrieval_metrics([["a"], ["x", "a"], ["x"], ["a"], ["a"]], [["a"], ["a"], ["a"], ["a"], []])
    table = diagnose(result, grounded=[True, True, True, False, True], k=5).set_index("diagnosis")
    assert table["n"].to_dict() == {"no relevant ids": 1, "retrieval miss": 1, "ranking": 1, "generation": 1, "ok": 1}
    assert table["share"].sum() == pytest.approx(1.0)
    with pytest.raises(SGIInputError, match="5 queries but 2"):
        diagnose(result, grounded=[True, False])


def test_bad_k():
    with pytest.raises(SGIInputError, match="K must be an int >= 1. Got 0 instead"):
        retrieval_metrics([["a"]], [["a"]], ks=(0,))
