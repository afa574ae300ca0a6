"""Detectors and Retrieval pages: the numbers shown equal sgi_core's results computed directly."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.detectors.folds import question_groups
from sgi_core.evaluation.detectors import compare_detectors
from sgi_core.evaluation.retrieval_report import retrieval_report
from sgi_core.scores.baselines import response_length
from sgi_core.scores.registry import column_spec
from sgi_core.stats.paired import delong_test
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, figures, goto, metric, upload

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)


@pytest.fixture
def rag_sample():
    frame = SAMPLE.copy()
    label = frame["label"].astype(float).to_numpy()
    rng = np.random.default_rng(11)
    frame["judge_halluc"] = [str(float(v)) for v in np.round(1 - label + rng.normal(scale=0.7, size=len(frame)), 4)]
    frame["retrieved_ids"] = [json.dumps(["x", f"d{i}"]) if i % 3 else "x|y" for i in range(len(frame))]
    frame["relevant_ids"] = [f"d{i}" for i in range(len(frame))]
    return frame


def test_detector_table_and_roc_match_sgi_core(app, rag_sample, sample_scores):
    upload(app, "rag.csv", rag_sample.to_csv(index=False).encode())
    goto(app, "detectors")
    app.multiselect(key="detectors.columns").set_value(["judge_halluc"]).run()
    app.radio(key="detectors.higher_is.judge_halluc").set_value("hallucinated").run()
    assert_clean(app)
    judge = column_spec("judge_halluc", higher_is="hallucinated").oriented(rag_sample["judge_halluc"])
    expected = compare_detectors({"sgi": sample_scores["sgi"].to_numpy(), "neg_judge_halluc": judge},
                                 sample_scores["label"].to_numpy(), groups=question_groups(sample_scores),
                                 lengths=response_length(sample_scores["response"]))
    table = next(df.value for df in app.dataframe if "Spearman with SGI" in df.value.columns)
    assert table["score"].tolist() == ["SGI", "judge_halluc (file column), negated",
                                     "combined (logistic, out of fold)"]
    np.testing.assert_allclose(table["AUROC"].to_numpy(dtype=float),
                               [roc.auroc for roc in expected.rocs.values()])
    assert table["Spearman with SGI"].iloc[1] == pytest.approx(expected.spearman_with_first["neg_judge_halluc"])
    assert any(expected.verdict == block.value for block in [*app.success, *app.info])
    names = [trace["name"] for trace in figures(app)[0]["data"]]
    judge_auroc = expected.judgements["neg_judge_halluc"].auroc
    assert f"judge_halluc (file column), negated (AUROC {judge_auroc:.3f})" in names
    app.selectbox(key="detectors.compare_b").set_value("judge_halluc (file column), negated").run()
    assert_clean(app)
    delong = delong_test(sample_scores["label"].to_numpy(), sample_scores["sgi"].to_numpy(), judge)
    assert metric(app, "AUROC B") == f"{judge_auroc:.3f}"
    assert metric(app, "AUROC A − B") == f"{delong.difference:+.3f}"
    assert metric(app, "p (two-sided)") == f"{delong.p_value:.3g}"


def test_detectors_page_without_numeric_columns_explains(app):
    upload(app, "plain.csv", SAMPLE.drop(columns=["pair_id"]).to_csv(index=False).encode())
    goto(app, "detectors")
    assert_clean(app)
    assert any("no numeric column" in block.value for block in app.info)


def test_retrieval_page_matches_sgi_core(app, rag_sample, sample_scores):
    upload(app, "rag.csv", rag_sample.to_csv(index=False).encode())
    goto(app, "retrieval")
    assert_clean(app)
    frame = sample_scores.assign(retrieved_ids=rag_sample["retrieved_ids"], relevant_ids=rag_sample["relevant_ids"])
    expected = retrieval_report(frame, grounded_threshold=1.0)
    for k, value in expected.metrics.recall_at_k.items():
        assert metric(app, f"Recall@{k}") == f"{value:.3f}"
    assert metric(app, "MRR") == f"{expected.metrics.mrr:.3f}"
    diagnosis = next(df.value for df in app.dataframe if "diagnosis" in df.value.columns)
    assert diagnosis["n"].tolist() == [row["n"] for row in expected.diagnosis]
    app.number_input(key="retrieval.grounded_threshold").set_value(0.5).run()
    lower = retrieval_report(frame, grounded_threshold=0.5)
    diagnosis = next(df.value for df in app.dataframe if "diagnosis" in df.value.columns)
    assert diagnosis["n"].tolist() == [row["n"] for row in lower.diagnosis]
