"""gate: the AUROC with its interval before a policy is written, --min-auroc alone, what is kept together,
and a policy tied to the model and precision that made its scores."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.io.scored import scored_with
from sgi_core.policy.file import load_policy
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV


def _scored_file(path, *, signal=0.3, n_pairs=150, seed=0, extra=None):
    rng = np.random.default_rng(seed)
    label = np.tile([1, 0], n_pairs)
    frame = pd.DataFrame({
        "question": [f"question {i // 2}" for i in range(2 * n_pairs)],
        "context": [f"context {i // 2}" for i in range(2 * n_pairs)],
        "response": [f"response {i}" for i in range(2 * n_pairs)],
        "label": label,
        "sgi": 1.0 + signal * label + rng.normal(0.0, 0.2, 2 * n_pairs),
        **(extra or {}),
    })
    frame.to_csv(path, index=False)
    return frame


def test_writing_a_policy_for_a_coin_flip_is_refused_unless_forced(tmp_path, capsys):
    path = tmp_path / "chance.csv"
    frame = _scored_file(path, signal=0.0, seed=4)
    roc = roc_analysis(frame["label"], frame["sgi"], n_boot=200)
    assert roc.auroc_ci[0] < 0.5 < roc.auroc_ci[1]
    out = tmp_path / "p.json"
    assert main(["gate", str(path), "--write-policy", str(out), "--n-boot", "200"]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith(f"AUROC {roc.auroc:.3f} [{roc.auroc_ci[0]:.3f}, {roc.auroc_ci[1]:.3f}] "
                                   "(150 grounded / 150 hallucinated rows, percentile bootstrap interval): near chance")
    assert "is near chance (its 95% interval holds 0.5)" in captured.err and "--force" in captured.err
    assert not out.exists()
    assert main(["gate", str(path), "--write-policy", str(out), "--n-boot", "200", "--force"]) == 0
    assert out.exists()


def test_a_separating_score_prints_its_auroc_and_what_is_kept_together(tmp_path, capsys):
    path = tmp_path / "good.csv"
    frame = _scored_file(path, extra={"pair_id": np.repeat(np.arange(150), 2)})
    out = tmp_path / "p.json"
    assert main(["gate", str(path), "--write-policy", str(out), "--n-boot", "200"]) == 0
    lines = capsys.readouterr().out.splitlines()
    roc = roc_analysis(frame["label"], frame["sgi"], n_boot=200)
    assert lines[0].startswith(f"AUROC {roc.auroc:.3f} [{roc.auroc_ci[0]:.3f}, {roc.auroc_ci[1]:.3f}]")
    assert lines[0].endswith(": separates")
    assert lines[1] == "kept together: rows with the same pair_id (whole groups on one side of the split)"


def test_keep_together_defaults_to_the_question_never_a_generator_column(tmp_path, capsys):
    path = tmp_path / "systems.csv"
    _scored_file(path, extra={"system": np.where(np.arange(300) % 3 == 0, "gpt", "llama")})
    out = tmp_path / "p.json"
    assert main(["gate", str(path), "--write-policy", str(out), "--n-boot", "200"]) == 0
    assert "kept together: rows with the same question (whole groups on one side of the split)" in \
        capsys.readouterr().out
    assert main(["gate", str(path), "--write-policy", str(out), "--n-boot", "200", "--group-column", "none"]) == 0
    assert "kept together: nothing (rows are split one by one)" in capsys.readouterr().out


def test_min_auroc_alone_needs_no_policy_and_a_policy_without_one_says_so(tmp_path, capsys):
    path = tmp_path / "good.csv"
    frame = _scored_file(path)
    lower = roc_analysis(frame["label"], frame["sgi"], n_boot=200).auroc_ci[0]
    assert main(["gate", str(path), "--min-auroc", f"{lower - 0.01:.4f}", "--n-boot", "200"]) == 0
    assert capsys.readouterr().out.startswith("PASS auroc: lower 95% bound")
    assert main(["gate", str(path), "--min-auroc", f"{lower + 0.01:.4f}", "--n-boot", "200"]) == 1
    assert main(["gate", str(path)]) == 2
    assert "gate needs --policy FILE, --write-policy OUT or --min-auroc X" in capsys.readouterr().err
    policy = tmp_path / "p.json"
    assert main(["gate", str(path), "--write-policy", str(policy), "--n-boot", "200"]) == 0
    capsys.readouterr()
    assert main(["gate", str(path), "--policy", str(policy), "--n-boot", "200"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("UNCHECKED auroc: AUROC")


@pytest.mark.parametrize("value", ["-1", "1.5", "nan", "x"])
def test_min_auroc_outside_0_1_is_refused(tmp_path, value, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["gate", str(tmp_path / "f.csv"), "--min-auroc", value])
    assert stop.value.code == 2 and "must be a number in [0, 1]" in capsys.readouterr().err


def test_the_label_is_no_score(tmp_path, capsys):
    path = tmp_path / "good.csv"
    _scored_file(path)
    assert main(["gate", str(path), "--min-auroc", "0.5", "--score-column", "label"]) == 2
    assert "'label' is the label or a row number, not a score" in capsys.readouterr().err


def test_a_policy_is_tied_to_the_model_and_precision_that_made_its_scores(tmp_path, capsys):
    scored = tmp_path / "scored.parquet"
    assert main(["score", str(SAMPLE_CSV), "-o", str(scored), "--model", "hashing-64"]) == 0
    assert scored_with(scored) == {"model": "hashing-64", "precision": "fp32", "backend": "torch",
                                   "context_strategy": "joined"}
    policy_path = tmp_path / "p.json"
    assert main(["gate", str(scored), "--write-policy", str(policy_path), "--n-boot", "200"]) == 0
    policy = load_policy(policy_path)
    assert (policy.model, policy.model_precision, policy.model_backend, policy.context_strategy) == (
        "hashing-64", "fp32", "torch", "joined")
    capsys.readouterr()
    assert main(["gate", str(scored), "--policy", str(policy_path), "--n-boot", "200"]) == 0

    data = json.loads(policy_path.read_text())
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**data, "model": "hashing-32"}))
    assert main(["gate", str(scored), "--policy", str(other), "--n-boot", "200"]) == 2
    assert "the file's sgi column was made by model 'hashing-64', the policy by 'hashing-32'" in \
        capsys.readouterr().err
    other.write_text(json.dumps({**data, "model_precision": "fp16"}))
    assert main(["gate", str(scored), "--policy", str(other), "--n-boot", "200"]) == 2
    assert "the scores were made at precision fp32, the policy's at fp16" in capsys.readouterr().err
    other.write_text(json.dumps({**data, "model_backend": "onnx-int8"}))
    assert main(["gate", str(scored), "--policy", str(other), "--n-boot", "200"]) == 2
    assert "the scores were made with backend torch, the policy's with onnx-int8" in capsys.readouterr().err
    other.write_text(json.dumps({**data, "context_strategy": "nearest"}))
    assert main(["gate", str(scored), "--policy", str(other), "--n-boot", "200"]) == 2
    assert ("the contexts were embedded with strategy joined, the policy's with nearest: each embeds a different "
            "context, so SGI moves" in capsys.readouterr().err)


@pytest.mark.parametrize("model", ["openai:text-embedding-3-small", "hashing-100000000000", "/tmp/some-folder"])
def test_a_policy_naming_an_unregistered_model_is_refused_unless_trusted(tmp_path, capsys, model):
    path = tmp_path / "good.csv"
    _scored_file(path)
    policy_path = tmp_path / "p.json"
    assert main(["gate", str(path), "--write-policy", str(policy_path), "--n-boot", "200"]) == 0
    policy_path.write_text(json.dumps({**json.loads(policy_path.read_text()), "model": model}))
    capsys.readouterr()
    assert main(["gate", str(path), "--policy", str(policy_path), "--n-boot", "200"]) == 2
    assert f"the policy names model '{model}', which is not a registered model" in capsys.readouterr().err
    # Trusted, the file's own sgi column is used: nothing is loaded.
    assert main(["gate", str(path), "--policy", str(policy_path), "--n-boot", "200", "--trust-policy-model"]) == 0


def test_gate_reads_a_label_map(tmp_path, capsys):
    path = tmp_path / "faithdial.csv"
    frame = _scored_file(path)
    frame.assign(label=np.where(frame["label"] == 1, "Entailment", "Hallucination")).to_csv(path, index=False)
    assert main(["gate", str(path), "--min-auroc", "0.5", "--n-boot", "200"]) == 2
    assert "unknown label values 'Entailment'" in capsys.readouterr().err
    assert main(["gate", str(path), "--min-auroc", "0.5", "--n-boot", "200",
                 "--label-map", "Entailment=grounded,Hallucination=hallucinated"]) == 0


def test_an_unlabelled_new_run_gets_its_flags_and_fails_only_above_a_maximum(tmp_path, capsys):
    path = tmp_path / "labelled.csv"
    _scored_file(path, signal=0.4)
    policy = tmp_path / "policy.json"
    assert main(["gate", str(path), "--write-policy", str(policy), "--n-boot", "200"]) == 0
    written = json.loads(policy.read_text())
    assert written["heldout_auroc_ci"][0] > 0.5
    capsys.readouterr()
    frame = pd.read_csv(path)
    same, worse = tmp_path / "same.csv", tmp_path / "worse.csv"
    frame.drop(columns=["label"]).to_csv(same, index=False)
    frame.drop(columns=["label"]).assign(sgi=frame["sgi"] - 1.0).to_csv(worse, index=False)
    assert main(["gate", str(same), "--policy", str(policy)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("PASS flag rate: ") and "no --max-flag-rate, so this check cannot fail" in out.out
    assert "the policy validates its score" in out.err and "flagged for review: rows " in out.err
    assert main(["gate", str(worse), "--policy", str(policy)]) == 0
    assert capsys.readouterr().out.startswith("PASS flag rate: 1.000")
    assert main(["gate", str(worse), "--policy", str(policy), "--max-flag-rate", "0.5"]) == 1
    assert capsys.readouterr().out.startswith("FAIL flag rate: 1.000")
    assert main(["gate", str(same), "--policy", str(policy), "--min-auroc", "0.6"]) == 2
    assert "--min-auroc needs labels" in capsys.readouterr().err
    assert main(["gate", str(path), "--policy", str(policy), "--max-flag-rate", "0.5"]) == 2
    assert "--max-flag-rate holds a file without labels" in capsys.readouterr().err
    # A policy whose held-out record does not validate the score still applies, and says its flags mean nothing here.
    written.update(heldout_auroc=0.55, heldout_auroc_ci=[0.45, 0.65])
    policy.write_text(json.dumps(written))
    assert main(["gate", str(same), "--policy", str(policy)]) == 0
    assert "does not validate 'sgi' (AUROC 0.55 [0.45, 0.65] holds 0.5" in capsys.readouterr().err


def test_an_unlabelled_run_too_small_to_check_gets_no_validation_from_gate(tmp_path, capsys):
    path = tmp_path / "labelled.csv"
    _scored_file(path, signal=0.4)
    policy = tmp_path / "policy.json"
    assert main(["gate", str(path), "--write-policy", str(policy), "--n-boot", "200"]) == 0
    tiny = tmp_path / "tiny.csv"
    pd.read_csv(path).drop(columns=["label"]).head(3).to_csv(tiny, index=False)
    capsys.readouterr()
    assert main(["gate", str(tiny), "--policy", str(policy)]) == 0
    err = capsys.readouterr().err
    assert "the policy validates its score" not in err
    assert "does not validate 'sgi' (whether the run resembles what the policy was validated on is not known" in err
