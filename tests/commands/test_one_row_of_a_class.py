"""A class with a single labelled row: NaN intervals with a note, never a crash; the gate refuses it."""

import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.evaluation import evaluate
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.bootstrap import two_sample_ci
from sgi_core.stats.ranking import roc_analysis


def _one_grounded_row(n_halluc=9):
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "question": [f"q{i}" for i in range(n_halluc + 1)],
        "context": [f"the context number {i}" for i in range(n_halluc + 1)],
        "response": [f"the response {i} about things" for i in range(n_halluc + 1)],
        "label": [1] + [0] * n_halluc,
        "sgi": np.r_[1.5, rng.normal(1.0, 0.1, n_halluc)],
    })


def test_bootstrap_interval_of_a_one_row_class_is_nan_with_a_warning():
    with pytest.warns(UndefinedStatisticWarning, match="at least 2 rows of each class; got 1 grounded and 3"):
        lo, hi = two_sample_ci(np.array([1.0]), np.array([0.1, 0.2, 0.3]), lambda x, y, axis=-1: x.mean(axis) -
                               y.mean(axis), n_boot=50, seed=0, confidence=0.95)
    assert math.isnan(lo) and math.isnan(hi)


def test_roc_and_report_of_a_one_row_class_give_nan_intervals_and_a_note():
    frame = _one_grounded_row()
    with pytest.warns(UndefinedStatisticWarning):
        roc = roc_analysis(frame["label"], frame["sgi"], n_boot=100)
    assert roc.auroc == 1.0 and all(math.isnan(x) for x in roc.auroc_ci)
    with pytest.warns(UndefinedStatisticWarning):
        report = evaluate(frame, n_boot=100)
    assert report.roc.auroc == 1.0 and math.isnan(report.roc.auroc_ci[0])
    assert any("a bootstrap interval needs at least 2 rows of each class" in note for note in report.notes)


def test_report_cli_on_a_one_row_class_exits_0(tmp_path, capsys):
    path = tmp_path / "one.csv"
    _one_grounded_row().to_csv(path, index=False)
    assert main(["report", str(path), "--n-boot", "50"]) == 0


def test_gate_refuses_a_one_row_class_with_exit_2(tmp_path, capsys):
    path = tmp_path / "one.csv"
    _one_grounded_row().to_csv(path, index=False)
    assert main(["gate", str(path), "--write-policy", str(tmp_path / "p.json"), "--n-boot", "50"]) == 2
    err = capsys.readouterr().err
    assert "at least 2 scored rows of each label class; the file has 1 grounded and 9 hallucinated" in err
