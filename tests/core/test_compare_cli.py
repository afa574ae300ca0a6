"""``compare BASE NEW`` and ``gate NEW --baseline BASE``: the printed table, the JSON, the exit codes."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.evaluation.policy import make_policy
from sgi_core.evaluation.policy_file import save_policy
from sgi_core.evaluation.run_comparison import RunComparison, paired_bootstrap_ci
from tests.conftest import SAMPLE_CSV

SAMPLE = pd.read_csv(SAMPLE_CSV)


def scored_run(sgi, *, questions=None, label=1.0) -> pd.DataFrame:
    """A scored file (as `score` writes it) whose SGI is given; the angles follow from it."""
    n = len(sgi)
    questions = questions if questions is not None else [f"question {i}?" for i in range(n)]
    return pd.DataFrame({
        "question": questions, "context": [f"context {i}" for i in range(n)],
        "response": [f"a response of some length {i}" for i in range(n)], "label": label,
        "theta_qc": 1.0, "theta_rq": np.asarray(sgi) * 0.8, "theta_rc": 0.8, "sgi": sgi, "sgi_status": "ok",
    })


@pytest.fixture
def runs(tmp_path):
    rng = np.random.default_rng(0)
    base_sgi = rng.normal(1.2, 0.1, 40)
    paths = {}
    for name, shift in (("base", 0.0), ("slight", -0.01), ("worse", -0.3)):
        path = tmp_path / f"{name}.csv"
        scored_run(base_sgi + shift + rng.normal(0, 0.02, 40)).to_csv(path, index=False)
        paths[name] = path
    return paths


def test_compare_prints_each_score_and_writes_the_comparison_as_json(runs, tmp_path, capsys):
    out = tmp_path / "comparison.json"
    assert main(["compare", str(runs["base"]), str(runs["worse"]), "--json", str(out), "--n-boot", "400"]) == 0
    printed = capsys.readouterr().out
    assert "matched 40 keys on 'question'" in printed
    sgi_line = next(line for line in printed.splitlines() if line.startswith("sgi "))
    assert sgi_line.endswith("regression")
    result = RunComparison.from_dict(json.loads(out.read_text()))
    assert [d.score for d in result.scores] == ["sgi", "theta_rq", "neg_theta_rc", "neg_theta_qc",
                                                "neg_response_length", "lexical_groundedness"]
    base, new = pd.read_csv(runs["base"]), pd.read_csv(runs["worse"])
    sgi = result.scores[0]
    assert sgi.difference == pytest.approx((new["sgi"] - base["sgi"]).mean())
    assert sgi.ci == pytest.approx(paired_bootstrap_ci((new["sgi"] - base["sgi"]).to_numpy(), n_boot=400, seed=0))
    assert f"{sgi.ci[0]:.4f}" in sgi_line


def test_compare_counts_unmatched_and_averaged_keys_and_uses_a_policy(runs, tmp_path, capsys):
    base = pd.read_csv(runs["base"])
    new = pd.concat([pd.read_csv(runs["worse"]).iloc[:30], pd.read_csv(runs["worse"]).iloc[:5]], ignore_index=True)
    new_path = tmp_path / "new.csv"
    new.to_csv(new_path, index=False)
    rng = np.random.default_rng(1)
    labels = (np.arange(200) % 2).astype(float)
    policy, _ = make_policy(labels, 1.0 + 0.2 * labels + rng.normal(0, 0.1, 200), model="minilm")
    policy_path = tmp_path / "policy.json"
    save_policy(policy, policy_path)
    assert main(["compare", str(runs["base"]), str(new_path), "--policy", str(policy_path), "--n-boot", "50"]) == 0
    printed = capsys.readouterr().out
    assert "matched 30 keys" in printed
    assert "only in base (10 keys, left out): 'question 30?'" in printed
    assert "5 new keys have several rows: their scores and labels are averaged per key" in printed
    flagged_base = int((base["sgi"].iloc[:30] < policy.threshold).sum())
    assert f"flagged sgi < {policy.threshold:.4g} (policy): base {flagged_base / 30:.1%}" in printed


def test_compare_scores_a_plain_file_and_matches_on_an_id_column(tmp_path, capsys):
    grounded = SAMPLE[SAMPLE["answer_type"] == "right"].head(12)
    hallucinated = SAMPLE[SAMPLE["answer_type"] != "right"].head(12)
    paths = [tmp_path / "grounded.csv", tmp_path / "hallucinated.csv"]
    grounded.to_csv(paths[0], index=False)
    hallucinated.to_csv(paths[1], index=False)
    assert main(["compare", *map(str, paths), "--key", "pair_id", "--model", "hashing", "--n-boot", "100"]) == 0
    captured = capsys.readouterr()
    assert "matched 12 keys on 'pair_id'" in captured.out
    assert "scored here with hashing" in captured.err
    # pair_id is the key; id and label are never compared as scores.
    assert "\npair_id " not in captured.out and "\nid " not in captured.out and "\nlabel " not in captured.out


def test_compare_refuses_bad_input_with_exit_2(runs, tmp_path, capsys):
    assert main(["compare", str(runs["base"]), str(runs["worse"]), "--key", "ticket"]) == 2
    assert "the base run has no column 'ticket'" in capsys.readouterr().err
    other = scored_run([1.0, 1.1], questions=["elsewhere?", "nowhere?"])
    other_path = tmp_path / "other.csv"
    other.to_csv(other_path, index=False)
    assert main(["compare", str(runs["base"]), str(other_path)]) == 2
    assert "the two runs share no value of 'question'" in capsys.readouterr().err


def test_gate_baseline_fails_a_drop_beyond_the_allowed_one(runs, capsys):
    code = main(["gate", str(runs["worse"]), "--baseline", str(runs["base"]), "--score", "sgi",
                 "--max-drop", "0.1", "--n-boot", "300"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert len(lines) == 1 and lines[0].startswith("FAIL sgi: lower 95% bound -0.3")


def test_gate_baseline_passes_a_small_drop_and_checks_each_score(runs, capsys):
    code = main(["gate", str(runs["slight"]), "--baseline", str(runs["base"]), "--score", "sgi", "--score",
                 "theta_rq", "--max-drop", "0.1", "--n-boot", "300"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert [line.split(":")[0] for line in lines] == ["PASS sgi", "PASS theta_rq"]


def test_gate_baseline_bounds_the_drop_by_the_interval_not_the_mean(runs, capsys):
    # A drop of about 0.01 with an interval reaching below -0.005: allowed 0.005, it fails; allowed 0.05, it passes.
    args = ["gate", str(runs["slight"]), "--baseline", str(runs["base"]), "--n-boot", "300"]
    assert main([*args, "--max-drop", "0.005"]) == 1
    assert main([*args, "--max-drop", "0.05"]) == 0


@pytest.mark.parametrize("extra, message", [
    (["--score", "faithfulness", "--max-drop", "0.1"], "score 'faithfulness' is not in both runs"),
    (["--max-drop", "-1"], "--max-drop must be a finite number >= 0; got -1.0"),
    ([], "gate --baseline needs --max-drop X"),
])
def test_gate_baseline_bad_input_exits_2(runs, capsys, extra, message):
    assert main(["gate", str(runs["worse"]), "--baseline", str(runs["base"]), *extra]) == 2
    assert message in capsys.readouterr().err


def test_gate_baseline_with_a_missing_file_exits_2(runs, tmp_path, capsys):
    assert main(["gate", str(runs["worse"]), "--baseline", str(tmp_path / "missing.csv"), "--max-drop", "0.1"]) == 2
    assert "missing.csv" in capsys.readouterr().err
