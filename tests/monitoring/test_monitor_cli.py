"""``monitor``: exit codes, the JSON object, the history it appends to, and what it says under shift."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.monitoring.store import policy_runs


def _rows(n, rate, seed, *, shift=0.0, labelled=True):
    """A scored file: grounded rows score higher and answer shorter; ``shift`` moves theta(q,c)."""
    rng = np.random.default_rng(seed)
    label = (rng.random(n) >= rate).astype(int)
    frame = pd.DataFrame({
        "question": [f"question {i}" for i in range(n)],
        "context": ["c" * int(v) for v in rng.integers(200, 600, n)],
        "response": ["r" * int(v) for v in np.where(label == 1, rng.integers(5, 60, n), rng.integers(30, 150, n))],
        "label": label, "pair_id": np.arange(n),
        "theta_qc": rng.normal(0.85 + shift, 0.15, n),
        "sgi": 1.0 + 0.35 * label + rng.normal(0.0, 0.2, n),
    })
    return frame if labelled else frame.drop(columns="label")


@pytest.fixture
def policy(tmp_path):
    source = tmp_path / "policy_data.csv"
    _rows(600, 0.5, 0).to_csv(source, index=False)
    path = tmp_path / "policy.json"
    assert main(["gate", str(source), "--write-policy", str(path), "--n-boot", "200"]) == 0
    return path


def _monitor(capsys, *args):
    code = main(["monitor", *map(str, args)])
    return code, capsys.readouterr()


def test_a_run_under_prior_shift_holds_and_is_recorded(tmp_path, policy, capsys):
    run, db = tmp_path / "run.csv", tmp_path / "history.sqlite"
    _rows(400, 0.2, 1, labelled=False).to_csv(run, index=False)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--json")
    assert code == 0
    result = json.loads(out.out)
    assert result["status"] == "holds" and not result["shift"]["detected"] and len(result["shift"]["tests"]) == 4
    low, high = result["corrected_rate"]["ci"]
    share = result["flag_share"]
    assert low <= 0.2 <= high and share["estimate"] == share["n_flagged"] / share["n_scored"] and share["n_scored"] == 400
    (record,) = policy_runs(db)
    assert record.id == result["record_id"] and record.summary == result["summary"]


def test_limits_exit_1_and_shift_exits_3_and_is_still_recorded(tmp_path, policy, capsys):
    run, moved, db = tmp_path / "run.csv", tmp_path / "moved.csv", tmp_path / "history.sqlite"
    _rows(400, 0.5, 2, labelled=False).to_csv(run, index=False)
    _rows(400, 0.5, 3, shift=0.3, labelled=False).to_csv(moved, index=False)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--max-rate", "0.2")
    assert code == 1 and "over the limit max-rate (0.2)" in out.out
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--max-flag-rate", "0.1")
    assert code == 1 and "over the limit max-flag-rate (0.1)" in out.out
    code, out = _monitor(capsys, moved, "--policy", policy, "--db", db)
    assert code == 3 and out.out.startswith("SHIFT DETECTED")
    assert "not a mixture of what the policy was validated on (theta(q,c)" in out.out
    assert "validates its score" not in out.out and "label a random sample of" in out.out
    assert [r.status for r in policy_runs(db)] == ["over limit", "over limit", "shift detected"]


def test_labels_on_a_sample_re_validate_the_policy(tmp_path, policy, capsys):
    frame = _rows(400, 0.3, 4)
    run, labels, db = tmp_path / "run.csv", tmp_path / "labels.csv", tmp_path / "history.sqlite"
    frame.drop(columns="label").to_csv(run, index=False)
    frame.sample(80, random_state=0)[["question", "context", "response", "label"]].to_csv(labels, index=False)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--labels", labels, "--json")
    revalidation = json.loads(out.out)["revalidation"]
    assert code == 0 and revalidation["n_labelled"] == 80 and revalidation["validated"]
    assert revalidation["rate_ci"][0] <= 0.3 <= revalidation["rate_ci"][1]
    assert policy_runs(db)[0].labels_used == 80


def test_an_older_policy_says_it_cannot_correct_and_a_rate_limit_cannot_pass(tmp_path, policy, capsys):
    data = json.loads(policy.read_text())
    for name in ("heldout_counts", "references"):
        data.pop(name)
    data["version"] = 5
    old, run = tmp_path / "old.json", tmp_path / "run.csv"
    old.write_text(json.dumps(data))
    _rows(200, 0.3, 5, labelled=False).to_csv(run, index=False)
    code, out = _monitor(capsys, run, "--policy", old, "--db", tmp_path / "h.sqlite", "--max-rate", "0.5")
    assert code == 1 and "records no held-out counts (written before version 6)" in out.out
    assert "cannot check --max-rate" in out.out and "shift not checked" in out.out


def test_usage_errors_exit_2(tmp_path, policy, capsys):
    run = tmp_path / "run.csv"
    _rows(50, 0.3, 6, labelled=False).to_csv(run, index=False)
    with pytest.raises(SystemExit) as caught:
        main(["monitor", str(run), "--policy", str(policy), "--max-rate", "1.5"])
    assert caught.value.code == 2
    code, out = _monitor(capsys, run, "--policy", tmp_path / "missing.json", "--db", tmp_path / "h.sqlite")
    assert code == 2 and "cannot read the policy" in out.err


def test_compare_does_not_let_a_policy_validate_runs_it_was_not_validated_on(policy, capsys):
    from types import SimpleNamespace

    from sgi_core.commands.compare import _validating
    from sgi_core.policy.file import load_policy

    held = load_policy(policy)
    same = SimpleNamespace(frame=_rows(300, 0.3, 7, labelled=False), source="same.csv")
    moved = SimpleNamespace(frame=_rows(300, 0.3, 8, shift=0.3, labelled=False), source="moved.csv")
    assert _validating(held, SimpleNamespace(base=same, new=same)) is held
    assert _validating(held, SimpleNamespace(base=same, new=moved)) is None
    assert "moved.csv: the run's distribution is not a mixture" in capsys.readouterr().err
