"""``compare BASE NEW`` and ``gate NEW --baseline BASE``: the printed table, the JSON, the exit codes."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.policy.making import make_policy
from sgi_core.policy.rules import save_policy
from sgi_core.runs.comparison import RunComparison, paired_bootstrap_ci
from sgi_core.scores import BASELINES
from tests.conftest import SAMPLE_CSV

SAMPLE = pd.read_csv(SAMPLE_CSV)


N_KEYS = 60


def scored_run(sgi, *, questions=None, label=1.0, responses=None) -> pd.DataFrame:
    """A scored file (as `score` writes it) whose SGI is given; the angles follow from it."""
    n = len(sgi)
    questions = questions if questions is not None else [f"question {i}?" for i in range(n)]
    responses = responses if responses is not None else [f"a response of some length {i}" for i in range(n)]
    return pd.DataFrame({
        "question": questions, "context": [f"context {i}" for i in range(n)], "response": responses, "label": label,
        "theta_qc": 1.0, "theta_rq": np.asarray(sgi) * 0.8, "theta_rc": 0.8, "sgi": sgi, "sgi_status": "ok",
    })


@pytest.fixture
def runs(tmp_path):
    """Labelled runs of 60 questions where SGI tracks the labels (validated), shifted by 0, -0.01 and -0.3."""
    rng = np.random.default_rng(0)
    label = (rng.random(N_KEYS) > 0.35).astype(float)
    base_sgi = 1.0 + 0.4 * label + rng.normal(0, 0.1, N_KEYS)
    paths = {}
    for name, shift in (("base", 0.0), ("slight", -0.01), ("worse", -0.3)):
        path = tmp_path / f"{name}.csv"
        scored_run(base_sgi + shift + rng.normal(0, 0.02, N_KEYS), label=label).to_csv(path, index=False)
        paths[name] = path
    # The same SGI with every answer labelled grounded: SGI cannot be validated on one class.
    path = tmp_path / "worse_one_class.csv"
    scored_run(base_sgi - 0.3, label=1.0).to_csv(path, index=False)
    paths["worse_one_class"] = path
    path = tmp_path / "base_one_class.csv"
    scored_run(base_sgi, label=1.0).to_csv(path, index=False)
    paths["base_one_class"] = path
    return paths


def test_compare_prints_each_score_and_writes_the_comparison_as_json(runs, tmp_path, capsys):
    out = tmp_path / "comparison.json"
    assert main(["compare", str(runs["base"]), str(runs["worse"]), "--json", str(out), "--n-boot", "400"]) == 0
    printed = capsys.readouterr().out
    assert "matched 60 keys on 'question'" in printed
    # The labels lead: the same labels in both runs, no change in the hallucination rate.
    assert printed.index("hallucination rate (labels)") < printed.index("\nsgi ")
    sgi_line = next(line for line in printed.splitlines() if line.startswith("sgi "))
    assert sgi_line.endswith("regression")
    result = RunComparison.from_dict(json.loads(out.read_text()))
    assert [d.score for d in result.scores] == ["sgi", "theta_rq", "neg_theta_rc", "neg_theta_qc", *BASELINES]
    base, new = pd.read_csv(runs["base"]), pd.read_csv(runs["worse"])
    sgi = result.scores[0]
    assert sgi.validated and sgi.validation.startswith("AUROC above 0.5 on the labels")
    assert sgi.difference == pytest.approx((new["sgi"] - base["sgi"]).mean())
    assert sgi.ci == pytest.approx(paired_bootstrap_ci((new["sgi"] - base["sgi"]).to_numpy(), n_boot=400, seed=0))
    assert f"{sgi.ci[0]:.4f}" in sgi_line
    # theta_qc is constant: no AUROC interval, so it earns no word whatever it does.
    qc = next(d for d in result.scores if d.score == "neg_theta_qc")
    assert (qc.verdict, qc.validated) == ("not validated", False)
    labels = json.loads(out.read_text())["labels"]
    assert {"rate_base", "rate_new", "difference", "ci", "verdict", "paired", "method", "labels_only_ci"} <= set(labels)
    assert labels["method"] == "labels (paired)" and labels["difference"] == 0.0


def test_a_score_not_validated_on_these_labels_keeps_its_numbers_and_earns_no_word(runs, tmp_path, capsys):
    out = tmp_path / "comparison.json"
    assert main(["compare", str(runs["base_one_class"]), str(runs["worse_one_class"]), "--json", str(out),
                 "--n-boot", "200"]) == 0
    printed = capsys.readouterr().out
    sgi = RunComparison.from_dict(json.loads(out.read_text())).scores[0]
    assert sgi.ci[1] < 0 and sgi.verdict == "not validated" and not sgi.validated
    assert sgi.validation == ("no AUROC interval in base (60 grounded / 0 hallucinated labelled rows); no AUROC "
                              "interval in new (60 grounded / 0 hallucinated labelled rows)")
    assert "scores moved (sgi" in printed and "say nothing about grounding here" in printed.replace("says", "say")


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
    assert "only in base (30 keys, left out): 'question 30?'" in printed
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


def gate(runs, new, base, *extra):
    return main(["gate", str(runs[new]), "--baseline", str(runs[base]), "--n-boot", "300", *extra])


def test_gate_baseline_fails_a_drop_of_a_validated_score_beyond_the_allowed_one(runs, capsys):
    assert gate(runs, "worse", "base", "--score", "sgi", "--max-drop", "0.1") == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "PASS keys: every one of the 60 base keys is in the new run and scored on as many rows"
    assert len(lines) == 2 and lines[1].startswith("FAIL sgi: lower 95% bound -0.3")


def test_gate_baseline_passes_a_small_drop_and_checks_each_score(runs, capsys):
    assert gate(runs, "slight", "base", "--score", "sgi", "--score", "theta_rq", "--max-drop", "0.1") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["PASS keys", "PASS sgi", "PASS theta_rq"]


def test_gate_baseline_bounds_the_drop_by_the_interval_not_the_mean(runs, capsys):
    # A drop of about 0.01 with an interval reaching below -0.005: allowed 0.005, it fails; allowed 0.05, it passes.
    assert gate(runs, "slight", "base", "--score", "sgi", "--max-drop", "0.005") == 1
    assert gate(runs, "slight", "base", "--score", "sgi", "--max-drop", "0.05") == 0


def test_gate_baseline_refuses_an_unvalidated_score_unless_allowed(runs, capsys):
    assert gate(runs, "worse_one_class", "base_one_class", "--score", "sgi", "--max-drop", "0.1") == 2
    err = capsys.readouterr().err
    assert "not validated on these labels, so a drop says nothing about grounding (sgi: no AUROC interval" in err
    assert gate(runs, "worse_one_class", "base_one_class", "--score", "sgi", "--max-drop", "0.1",
                "--allow-unvalidated") == 1
    assert "NOT VALIDATED on these labels" in capsys.readouterr().out


def labelled_pair(tmp_path, rate_base, rate_new, n=150, seed=3):
    """Two runs of n questions whose SGI says nothing, labelled with the given hallucination rates."""
    rng = np.random.default_rng(seed)
    paths = {}
    for name, rate in (("base", rate_base), ("new", rate_new)):
        label = (rng.random(n) >= rate).astype(float)
        path = tmp_path / f"{name}_{rate}.csv"
        scored_run(rng.normal(1.0, 0.1, n), label=label, responses=[f"{name} answer {i}" for i in range(n)]
                   ).to_csv(path, index=False)
        paths[name] = path
    return paths


def test_gate_on_the_labels_fails_a_rise_in_the_hallucination_rate_and_passes_a_fall(tmp_path, capsys):
    # 150 keys labelled in both runs: the interval's half-width is about 0.12, so the margin is 0.15.
    rise = labelled_pair(tmp_path, 0.2, 0.45)
    assert gate(rise, "new", "base", "--max-rate-increase", "0.15") == 1
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith("FAIL hallucination rate: upper 95% bound of the increase +0.")
    fall = labelled_pair(tmp_path, 0.45, 0.2)
    assert gate(fall, "new", "base", "--max-rate-increase", "0.15") == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("PASS hallucination rate")


def test_gate_on_the_labels_needs_labels_and_applies_min_auroc(runs, tmp_path, capsys):
    unlabelled = tmp_path / "unlabelled.csv"
    pd.read_csv(runs["base"]).assign(label=np.nan).to_csv(unlabelled, index=False)
    assert main(["gate", str(unlabelled), "--baseline", str(unlabelled), "--max-rate-increase", "0.05"]) == 2
    assert "the hallucination-rate check needs labels of both runs" in capsys.readouterr().err
    assert main(["gate", str(unlabelled), "--baseline", str(unlabelled), "--min-auroc", "0.6"]) == 2
    assert "--min-auroc needs labels of both runs" in capsys.readouterr().err
    # Applied, never ignored: SGI's AUROC here is about 0.99, so a floor of 0.7 passes and 0.999 fails.
    assert gate(runs, "slight", "base", "--min-auroc", "0.7") == 0
    assert gate(runs, "slight", "base", "--min-auroc", "0.999") == 1
    printed = capsys.readouterr().out
    assert "FAIL sgi AUROC in base: lower 95% bound" in printed


def test_gate_fails_when_base_keys_are_missing_unless_allowed(runs, tmp_path, capsys):
    kept = tmp_path / "kept.csv"
    pd.read_csv(runs["slight"]).iloc[:45].to_csv(kept, index=False)
    runs = {**runs, "kept": kept}
    assert gate(runs, "kept", "base", "--score", "sgi", "--max-drop", "0.1") == 1
    assert capsys.readouterr().out.startswith("FAIL keys: 15 of 60 base keys are missing from the new run: "
                                              "'question 45?'")
    assert gate(runs, "kept", "base", "--score", "sgi", "--max-drop", "0.1", "--allow-missing-keys") == 0


def test_gate_refuses_fewer_than_30_matched_keys(runs, tmp_path, capsys):
    few = tmp_path / "few.csv"
    pd.read_csv(runs["slight"]).iloc[:20].to_csv(few, index=False)
    assert gate({**runs, "few": few}, "few", "base", "--score", "sgi", "--max-drop", "0.1") == 2
    assert "the runs share only 20 keys; the gate needs at least 30" in capsys.readouterr().err


def test_gate_refuses_runs_scored_with_another_model_precision_or_backend(runs, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sgi_core.io.scored import SCORED_WITH_KEY

    paths = {}
    for name, made_by in (("a", {"model": "minilm", "precision": "fp32", "backend": "onnx"}),
                          ("b", {"model": "minilm", "precision": "fp32", "backend": "onnx-int8"}),
                          ("c", {"model": "minilm", "precision": "fp32", "backend": "onnx"})):
        table = pa.Table.from_pandas(pd.read_csv(runs["base"]), preserve_index=False)
        table = table.replace_schema_metadata({SCORED_WITH_KEY: json.dumps(made_by).encode()})
        paths[name] = tmp_path / f"{name}.parquet"
        pq.write_table(table, paths[name])
    assert gate(paths, "b", "a", "--score", "sgi", "--max-drop", "0.1") == 2
    err = capsys.readouterr().err
    assert "the two runs were scored with a different backend: onnx (" in err and "a.parquet) and onnx-int8 (" in err
    assert gate(paths, "c", "a", "--score", "sgi", "--max-drop", "0.1") == 0


@pytest.mark.parametrize("extra, message", [
    (["--score", "faithfulness", "--max-drop", "0.1"], "score 'faithfulness' is not in both runs"),
    (["--score", "sgi", "--max-drop", "-1"], "--max-drop must be a finite number >= 0; got -1.0"),
    (["--max-drop", "0.1"], "--max-drop needs the score to hold: --score NAME"),
    ([], "gate --baseline needs --max-rate-increase X (labels), --max-drop X"),
])
def test_gate_baseline_bad_input_exits_2(runs, capsys, extra, message):
    assert main(["gate", str(runs["worse"]), "--baseline", str(runs["base"]), *extra]) == 2
    assert message in capsys.readouterr().err


def test_gate_baseline_with_a_missing_file_exits_2(runs, tmp_path, capsys):
    assert main(["gate", str(runs["worse"]), "--baseline", str(tmp_path / "missing.csv"), "--score", "sgi",
                 "--max-drop", "0.1"]) == 2
    assert "missing.csv" in capsys.readouterr().err
