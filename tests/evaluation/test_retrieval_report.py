import json
import warnings

import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.evaluation.retrieval_report import RetrievalReport, retrieval_report
from sgi_core.render.report import retrieval_text


def scored_frame():
    # rows 0-3: relevant doc ranked first (hit); rows 4-7: not retrieved (miss)
    return pd.DataFrame({
        "retrieved_ids": ["d1|x", '["d2"]', "d3", "y|d4"] + ["z", "z", "z", ""],
        "relevant_ids": ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"],
        "label": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
        "sgi": [1.5, 0.8, 1.4, 0.9, 1.2, 1.1, 0.7, 0.95],
    })


def test_hand_computed_report():
    rep = retrieval_report(scored_frame(), k=5, ks=(1, 5))
    assert rep.metrics.recall_at_k == {1: 3 / 8, 5: 4 / 8}
    assert rep.metrics.mrr == pytest.approx((1 + 1 + 1 + 0.5) / 8)
    diag = rep.diagnosis_frame().set_index("diagnosis")["n"].to_dict()
    # misses: rows 4-7; hits: rows 1 and 3 have SGI < 1 (generation), row 0 and 2 ranked first (ok)
    assert diag == {"no relevant ids": 0, "retrieval miss": 4, "ranking": 0, "generation": 2, "ok": 2}
    hit, miss = rep.sgi_by_hit.strata[1], rep.sgi_by_hit.strata[0]
    assert (miss.label, hit.label) == ("miss", "hit")
    assert hit.auroc == pytest.approx(roc_auc_score([1, 0, 1, 0], [1.5, 0.8, 1.4, 0.9]))
    assert miss.auroc == pytest.approx(roc_auc_score([1, 0, 1, 0], [1.2, 1.1, 0.7, 0.95]))
    assert "Recall@1 0.375" in retrieval_text(rep)


def test_no_id_columns_gives_none():
    assert retrieval_report(pd.DataFrame({"label": [1.0], "sgi": [1.0]})) is None


def test_round_trip():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = retrieval_report(scored_frame())
    again = RetrievalReport.from_dict(json.loads(json.dumps(rep.to_dict())))
    assert again.to_dict() == rep.to_dict()
    assert again.metrics.mrr == rep.metrics.mrr
