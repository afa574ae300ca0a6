"""`report` with retrieval id lists and an imported detector column."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.cli import main
from sgi_core.embedding import HashingEncoder
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV


@pytest.fixture
def rag_file(tmp_path):
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    rng = np.random.default_rng(5)
    label = frame["label"].astype(float).to_numpy()
    # a judge that is right more often than not; high values mean hallucinated
    frame["judge_halluc"] = np.round(1 - label + rng.normal(scale=0.8, size=len(frame)), 4).astype(str)
    frame["retrieved_ids"] = [json.dumps([f"doc{i}", "other"]) if i % 3 else "other|more" for i in range(len(frame))]
    frame["relevant_ids"] = [f"doc{i}" for i in range(len(frame))]
    path = tmp_path / "rag.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_report_prints_and_writes_retrieval_and_detectors(rag_file, tmp_path, capsys):
    path, frame = rag_file
    out = tmp_path / "report.json"
    code = main(["report", str(path), "--models", "hashing", "--n-boot", "50", "--json", str(out),
                 "--detector", "judge_halluc:hallucinated"])
    assert code == 0
    text = capsys.readouterr().out
    assert "Retrieval over 300 judged queries" in text and "Detectors beside SGI" in text
    report = json.loads(out.read_text())
    n_hit = sum(1 for i in range(len(frame)) if i % 3)
    assert report["retrieval"]["metrics"]["recall_at_k"]["5"] == pytest.approx(n_hit / len(frame))
    assert report["retrieval"]["metrics"]["mrr"] == pytest.approx(n_hit / len(frame))
    label = frame["label"].astype(float).to_numpy()
    judge = -frame["judge_halluc"].astype(float).to_numpy()
    det = report["detectors"]
    # Keyed by registry name, as the report's judgements are: the same judgement under the same name.
    assert list(det["judgements"]) == ["sgi", "neg_judge_halluc"]
    assert det["judgements"]["neg_judge_halluc"] == report["models"]["hashing"]["report"]["judgements"][
        "neg_judge_halluc"]
    assert det["judgements"]["neg_judge_halluc"]["roc"]["auroc"] == pytest.approx(roc_auc_score(label, judge))
    scored = score_table(load_triples(path), HashingEncoder())
    assert det["judgements"]["sgi"]["roc"]["auroc"] == pytest.approx(roc_auc_score(label, scored["sgi"]))


def test_unknown_detector_column(rag_file, capsys):
    path, _ = rag_file
    assert main(["report", str(path), "--models", "hashing", "--n-boot", "0", "--detector", "nope"]) == 2
    assert "detector column 'nope' is not in the file" in capsys.readouterr().err


def test_non_numeric_detector_names_rows(rag_file, capsys, tmp_path):
    path, _ = rag_file
    frame = pd.read_csv(path)
    worded = tmp_path / "worded.csv"
    frame.assign(judge_word=np.resize(["high", "low", "high"], len(frame))).to_csv(worded, index=False)
    assert main(["report", str(worded), "--models", "hashing", "--n-boot", "0", "--detector", "judge_word"]) == 2
    assert "detector scores must be numbers" in capsys.readouterr().err
    # answer_type (right/hallucinated) is the label itself: refused as such before it is read as numbers.
    assert main(["report", str(path), "--models", "hashing", "--n-boot", "0", "--detector", "answer_type"]) == 2
    assert "'answer_type' determines the label" in capsys.readouterr().err
