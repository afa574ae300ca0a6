"""One report computes each score's ROC once: the verdict, the detectors' comparison, the curves, the HTML report
read it.

ROC analyses are counted by the ``roc_counts`` fixture (tests/conftest.py), keyed by the
labels and values analysed: the same score analysed twice is a key counted twice.
"""

import numpy as np
import pandas as pd

from tests.conftest import SAMPLE_CSV


def with_judge_column(path) -> None:
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    label = frame["label"].astype(float).to_numpy()
    frame["judge_halluc"] = np.round(1 - label + np.random.default_rng(11).normal(scale=0.7, size=len(frame)), 4)
    frame.to_csv(path, index=False)


def test_one_report_computes_each_roc_once(tmp_path, roc_counts):
    from sgi_core.cli import main

    path = tmp_path / "judged.csv"
    with_judge_column(path)
    assert main(["report", str(path), "--models", "hashing", "--n-boot", "50",
                 "--detector", "judge_halluc:hallucinated",
                 "--html", str(tmp_path / "report.html"), "--json", str(tmp_path / "report.json")]) == 0
    # SGI, its three trivial scores and the judge column, each once (the combination's ROC is of its own values).
    assert len(roc_counts) >= 5
    assert max(roc_counts.values()) == 1, roc_counts
