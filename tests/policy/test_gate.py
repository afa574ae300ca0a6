import json
import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.policy.file import Policy, load_policy
from sgi_core.policy.policy_gate import run_gate
from sgi_core.render.lines import gate_check_line
from sgi_core.stats.proportions import proportion_ci
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV


def _scored_file(path, *, n_pairs=150, noise=0.7, seed=0):
    """A labelled file already scored: an sgi column where grounded rows score higher."""
    rng = np.random.default_rng(seed)
    label = np.tile([1, 0], n_pairs)
    frame = pd.DataFrame({
        "question": [f"question {i // 2}" for i in range(2 * n_pairs)],
        "context": [f"context {i // 2}" for i in range(2 * n_pairs)],
        "response": [f"response {i}" for i in range(2 * n_pairs)],
        "label": label,
        "pair_id": np.repeat(np.arange(n_pairs), 2),
        "sgi": 1.0 + 0.3 * label + rng.normal(0.0, 0.3 * noise, 2 * n_pairs),
    })
    frame.to_csv(path, index=False)
    return frame


def _policy(threshold=1.0, precision=0.8, recall=0.7, min_auroc=None):
    return Policy(model="minilm", model_precision="fp32", model_backend="torch", context_strategy="joined",
                  score_column="sgi", calibrator={"method": "minmax", "knots_x": [0.0, 2.0],
                  "knots_y": [0.0, 1.0], "slope": None, "intercept": None}, threshold=threshold,
                  threshold_method="youden", precision=precision, recall=recall, flag_rate=0.5, min_auroc=min_auroc,
                  heldout_auroc=0.8, heldout_auroc_ci=(0.7, 0.9), created="2026-01-01T00:00:00+00:00")


def test_run_gate_numbers_and_the_upper_bound_rule():
    # Flag sgi < 1.0: rows 0-4 flagged; hallucinated rows are 0, 1, 2, 5 -> tp 3, fp 2, fn 1.
    y = [0, 0, 0, 1, 1, 0, 1, 1]
    s = [0.5, 0.6, 0.7, 0.8, 0.9, 1.1, 1.2, 1.3]
    lo, hi = proportion_ci(3, 5)
    passing = run_gate(y, s, _policy(precision=hi, recall=0.75), n_boot=0)
    assert [c.name for c in passing.checks] == ["auroc", "precision", "recall"] and passing.passed
    assert passing.checks[1].value == pytest.approx(3 / 5) and passing.checks[2].value == pytest.approx(3 / 4)
    failing = run_gate(y, s, _policy(precision=hi + 1e-9, recall=0.75), n_boot=0)
    assert not failing.passed and not failing.checks[1].passed and failing.checks[2].passed
    assert gate_check_line(failing.checks[1], failing).startswith(
        f"FAIL precision: 0.600 [{lo:.3f}, {hi:.3f}] flagging sgi < 1")


def test_run_gate_auroc_lower_bound_against_the_minimum():
    y = np.tile([1, 0], 100)
    s = np.random.default_rng(1).normal(y, 1.0)
    lower = roc_analysis(y, s, n_boot=200, seed=0).auroc_ci[0]
    assert run_gate(y, s, _policy(min_auroc=lower - 1e-9, precision=0.0, recall=0.0), n_boot=200).passed
    res = run_gate(y, s, _policy(min_auroc=0.2, precision=0.0, recall=0.0), min_auroc=lower + 1e-9, n_boot=200)
    assert not res.passed and res.checks[0].bound == pytest.approx(lower + 1e-9)
    assert gate_check_line(res.checks[0], res).startswith(f"FAIL auroc: lower 95% bound {lower:.3f} < minimum")
    unchecked = run_gate(y, s, _policy(precision=math.nan, recall=math.nan), n_boot=0)
    assert [c.name for c in unchecked.checks] == ["auroc"] and unchecked.passed


def test_gate_cli_writes_a_policy_then_passes_and_fails(tmp_path, capsys):
    good = tmp_path / "scored.csv"
    _scored_file(good)
    policy_path = tmp_path / "policy.json"
    assert main(["gate", str(good), "--write-policy", str(policy_path), "--group-column", "pair_id",
                 "--min-auroc", "0.7", "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "held-out (150 rows, hallucinated positive): precision" in out
    policy = load_policy(policy_path)
    assert policy.min_auroc == 0.7 and policy.model == "minilm" and policy.score_column == "sgi"

    assert main(["gate", str(good), "--policy", str(policy_path), "--n-boot", "200"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["PASS auroc", "PASS precision", "PASS recall"]

    assert main(["gate", str(good), "--policy", str(policy_path), "--min-auroc", "0.999", "--n-boot", "200"]) == 1
    assert capsys.readouterr().out.startswith("FAIL auroc: lower 95% bound")

    worse = tmp_path / "worse.csv"
    _scored_file(worse, noise=3.0, seed=2)  # the same rule on noisier scores
    assert main(["gate", str(worse), "--policy", str(policy_path), "--n-boot", "200"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_gate_cli_scores_an_unscored_file_with_the_test_encoder(tmp_path, capsys):
    policy_path = tmp_path / "policy.json"
    assert main(["gate", str(SAMPLE_CSV), "--write-policy", str(policy_path), "--model", "hashing-256",
                 "--n-boot", "100"]) == 0
    assert json.loads(policy_path.read_text())["model"] == "hashing-256"
    capsys.readouterr()
    assert main(["gate", str(SAMPLE_CSV), "--policy", str(policy_path), "--min-auroc", "0.0", "--n-boot", "100"]) == 0
    assert main(["gate", str(SAMPLE_CSV), "--policy", str(policy_path), "--min-auroc", "1.0", "--n-boot", "100"]) == 1
    assert "FAIL auroc" in capsys.readouterr().out


def test_gate_cli_input_errors(tmp_path, capsys):
    scored = tmp_path / "scored.csv"
    frame = _scored_file(scored)
    policy_path = tmp_path / "policy.json"
    assert main(["gate", str(scored), "--write-policy", str(policy_path), "--n-boot", "0"]) == 0
    assert main(["gate", str(scored), "--policy", str(policy_path), "--model", "mpnet"]) == 2
    assert "the policy was made with model 'minilm', not 'mpnet'" in capsys.readouterr().err
    unlabelled = tmp_path / "unlabelled.csv"
    frame.drop(columns="label").to_csv(unlabelled, index=False)
    # With a policy an unlabelled file is held to its flag rate (test_gate_rules); with --min-auroc alone it is refused.
    assert main(["gate", str(unlabelled), "--min-auroc", "0.7"]) == 2
    assert "gate needs a labelled file" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text(policy_path.read_text().replace('"threshold"', '"limit"'))
    assert main(["gate", str(scored), "--policy", str(broken)]) == 2
    assert "unknown fields limit; missing fields threshold" in capsys.readouterr().err
    assert main(["gate", str(scored), "--write-policy", str(policy_path), "--score-column", "judge"]) == 2
    assert "score column 'judge' is not in the file" in capsys.readouterr().err
