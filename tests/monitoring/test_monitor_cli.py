"""``monitor``: exit codes, the JSON object, the history it appends to, and what it says under shift."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.monitoring.sample import sample_order
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


def _sample_labels(frame, path, n, seed=0):
    """The first ``n`` rows of the seeded random order the monitor asks to label, written as a labels file."""
    picked = frame.iloc[sample_order(frame, seed)[:n]]
    picked[["question", "context", "response", "label"]].to_csv(path, index=False)


def test_an_unlabelled_run_is_unverified_asks_for_its_sample_and_is_recorded(tmp_path, policy, capsys):
    run, db = tmp_path / "run.csv", tmp_path / "history.sqlite"
    _rows(400, 0.2, 1, labelled=False).to_csv(run, index=False)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--json")
    assert code == 4
    result = json.loads(out.out)
    assert result["status"] == "unverified" and result["exit_code"] == 4
    assert not result["shift"]["detected"] and len(result["shift"]["tests"]) == 4
    headline, corrected = result["headline_rate"], result["corrected_rate"]
    assert not headline["verified"] and "if only the rate changed" in headline["method"]
    assert headline["ci"] == corrected["ci"] and corrected["role"] == "if only the rate changed"
    low, high = corrected["ci"]
    share = result["flag_share"]
    assert low <= 0.2 <= high and share["estimate"] == share["n_flagged"] / share["n_scored"]
    assert share["n_scored"] == 400
    assert result["sample"]["size"] == 385 and not result["sample"]["whole_run"]
    assert "label 385 of its 400 rows" in result["what_to_do"]
    (record,) = policy_runs(db)
    assert record.id == result["record_id"] and record.summary == result["summary"] and record.status == "unverified"
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db)
    assert code == 4 and out.out.startswith("UNVERIFIED: label 385 of its 400 rows (the seeded random sample")
    assert "hallucination rate unverified: no labelled sample of this run" in out.out
    assert "if only the rate changed: corrected rate" in out.out and "HOLDS" not in out.out


def test_the_seeded_sample_re_validates_and_its_rate_is_the_one_headline(tmp_path, policy, capsys):
    frame = _rows(400, 0.3, 4)
    run, labels, db = tmp_path / "run.csv", tmp_path / "labels.csv", tmp_path / "history.sqlite"
    frame.drop(columns="label").to_csv(run, index=False)
    _sample_labels(frame, labels, 97)  # +/-10 points: (1.96 / 0.2)^2 = 96.04 -> 97 rows
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--labels", labels, "--rate-half-width", "0.1",
                         "--json")
    result = json.loads(out.out)
    revalidation, headline = result["revalidation"], result["headline_rate"]
    assert code == 0 and result["status"] == "holds" and revalidation["n_labelled"] == 97 and revalidation["validated"]
    assert headline["verified"] and (headline["estimate"], headline["ci"]) == (revalidation["rate"],
                                                                               revalidation["rate_ci"])
    assert headline["ci"][0] <= 0.3 <= headline["ci"][1] and headline["ci"] != result["corrected_rate"]["ci"]
    assert policy_runs(db)[0].labels_used == 97
    assert policy_runs(db)[0].summary["headline"] == headline
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--labels", labels, "--rate-half-width", "0.1")
    lines = out.out.splitlines()
    assert code == 0 and lines[0].startswith("HOLDS") and lines[2].startswith("if only the rate changed")
    assert lines[1].startswith(f"hallucination rate {headline['estimate']:.1%} [{headline['ci'][0]:.1%}, "
                               f"{headline['ci'][1]:.1%}] (re-validated on 97 rows of the seeded random sample")
    # The verified rate decides --max-rate: a limit under its whole interval is exceeded.
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--labels", labels, "--rate-half-width", "0.1",
                         "--max-rate", f"{headline['ci'][0] - 0.01:.3f}")
    assert code == 1 and "over the limit max-rate" in out.out


def test_labels_that_are_not_the_seeded_sample_or_too_few_give_no_re_validation(tmp_path, policy, capsys):
    frame = _rows(400, 0.3, 4)
    run, labels, db = tmp_path / "run.csv", tmp_path / "labels.csv", tmp_path / "history.sqlite"
    frame.drop(columns="label").to_csv(run, index=False)
    frame.sample(97, random_state=0)[["question", "context", "response", "label"]].to_csv(labels, index=False)
    args = ("--policy", policy, "--db", db, "--labels", labels, "--rate-half-width", "0.1", "--json")
    code, out = _monitor(capsys, run, *args)
    result = json.loads(out.out)
    assert code == 4 and result["revalidation"] is None and not result["headline_rate"]["verified"]
    assert result["labels_refused"].startswith("the labels are not the seeded random sample (seed 0):")
    _sample_labels(frame, labels, 60)
    code, out = _monitor(capsys, run, *args)
    result = json.loads(out.out)
    assert code == 4 and result["revalidation"] is None
    assert result["labels_refused"] == "60 rows of the sample are labelled, fewer than the 97 it needs"
    code, out = _monitor(capsys, run, *args[:-1])
    assert "hallucination rate unverified: the labels given do not count: 60 rows of the sample" in out.out


def test_limits_shift_and_a_rate_limit_without_labels(tmp_path, policy, capsys):
    run, moved, db = tmp_path / "run.csv", tmp_path / "moved.csv", tmp_path / "history.sqlite"
    _rows(400, 0.5, 2, labelled=False).to_csv(run, index=False)
    _rows(400, 0.5, 3, shift=0.3, labelled=False).to_csv(moved, index=False)
    # Without labels a rate limit is not checked: the corrected rate is over 0.2 only if only the rate changed.
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--max-rate", "0.2")
    assert code == 4 and "cannot check --max-rate (0.2): it is checked on a verified rate only" in out.out
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--max-flag-rate", "0.1")
    assert code == 1 and "over the limit max-flag-rate (0.1)" in out.out
    code, out = _monitor(capsys, moved, "--policy", policy, "--db", db)
    assert code == 3 and out.out.startswith("SHIFT DETECTED")
    assert "not a mixture of what the policy was validated on (theta(q,c)" in out.out
    assert "validates its score" not in out.out and "label 385 of its 400 rows" in out.out
    assert [r.status for r in policy_runs(db)] == ["unverified", "over limit", "shift detected"]


def test_an_older_policy_says_it_cannot_correct_and_a_rate_limit_cannot_pass(tmp_path, policy, capsys):
    data = json.loads(policy.read_text())
    for name in ("heldout_counts", "references", "answering_systems"):
        data.pop(name)
    data["version"] = 5
    old, run = tmp_path / "old.json", tmp_path / "run.csv"
    old.write_text(json.dumps(data))
    _rows(200, 0.3, 5, labelled=False).to_csv(run, index=False)
    code, out = _monitor(capsys, run, "--policy", old, "--db", tmp_path / "h.sqlite", "--max-rate", "0.5")
    assert code == 4 and "records no held-out counts (written before version 6)" in out.out
    assert "cannot check --max-rate" in out.out and "shift not checked" in out.out


def test_a_run_too_small_to_test_says_so_and_never_holds(tmp_path, policy, capsys):
    frame = _rows(4, 0.5, 9)
    run, labels, db = tmp_path / "run.csv", tmp_path / "labels.csv", tmp_path / "h.sqlite"
    frame.drop(columns="label").to_csv(run, index=False)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db)
    assert code == 4 and "shift not checked: 4 rows of the run, at least 5 needed" in out.out
    assert "validates its score" not in out.out and "every feature" not in out.out and "HOLDS" not in out.out
    assert "label all 4 rows of this run (the whole run: no sample of 4 rows reaches +/-5.0%; all of them give " \
           "about +/-49.0%" in out.out
    _sample_labels(frame, labels, 4)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", db, "--labels", labels)
    assert code == 3 and out.out.startswith("NOT VALIDATED")


def test_a_forced_policy_never_holds(tmp_path, capsys):
    noise = _rows(600, 0.5, 10).assign(sgi=lambda f: np.random.default_rng(10).normal(1.0, 0.2, len(f)))
    source, forced = tmp_path / "noise.csv", tmp_path / "forced.json"
    noise.to_csv(source, index=False)
    assert main(["gate", str(source), "--write-policy", str(forced), "--n-boot", "200", "--force"]) == 0
    frame = _rows(400, 0.3, 11)
    run, labels = tmp_path / "run.csv", tmp_path / "labels.csv"
    frame.drop(columns="label").to_csv(run, index=False)
    _sample_labels(frame, labels, 97)
    capsys.readouterr()
    code, out = _monitor(capsys, run, "--policy", forced, "--db", tmp_path / "h.sqlite", "--labels", labels,
                         "--rate-half-width", "0.1")
    assert code == 3 and out.out.startswith("NOT VALIDATED") and "HOLDS" not in out.out
    assert "the policy's record validates" not in out.out and "its own record does not validate it" in out.out


def test_usage_errors_exit_2(tmp_path, policy, capsys):
    run = tmp_path / "run.csv"
    _rows(50, 0.3, 6, labelled=False).to_csv(run, index=False)
    for option, value in (("--max-rate", "1.5"), ("--rate-half-width", "0.5"), ("--rate-half-width", "x")):
        with pytest.raises(SystemExit) as caught:
            main(["monitor", str(run), "--policy", str(policy), option, value])
        assert caught.value.code == 2
    assert "--rate-half-width: must be a number in (0, 0.5), such as 0.05; got 'x'" in capsys.readouterr().err
    code, out = _monitor(capsys, run, "--policy", tmp_path / "missing.json", "--db", tmp_path / "h.sqlite")
    assert code == 2 and "cannot read the policy" in out.err
    code, out = _monitor(capsys, run, "--policy", policy, "--db", tmp_path)
    assert code == 2 and "the run history is a folder, not a file" in out.err and "Traceback" not in out.err


def test_compare_does_not_let_a_policy_validate_runs_it_was_not_validated_on(policy, capsys):
    from types import SimpleNamespace

    from sgi_core.commands.compare import _validating
    from sgi_core.policy.file import load_policy

    held = load_policy(policy)
    same = SimpleNamespace(frame=_rows(300, 0.3, 7, labelled=False), source="same.csv")
    moved = SimpleNamespace(frame=_rows(300, 0.3, 8, shift=0.3, labelled=False), source="moved.csv")
    files = ("same.csv", "moved.csv")
    assert _validating(held, SimpleNamespace(base=same, new=same), files) is held
    assert _validating(held, SimpleNamespace(base=same, new=moved), files) is None
    assert "moved.csv: the run's distribution is not a mixture" in capsys.readouterr().err


def test_help_states_the_exit_codes_and_the_default_sample(capsys):
    from sgi_core.monitoring.sample import RATE_HALF_WIDTH, plan_sample
    from sgi_core.render.monitor import EXIT_CODES

    with pytest.raises(SystemExit):
        main(["monitor", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default {RATE_HALF_WIDTH:g}: at most {plan_sample(10 ** 9).size} rows" in text
    assert "0 the policy holds" in text and "4 unverified" in text and "2 usage error" in text
    assert sorted(set(EXIT_CODES.values())) == [0, 1, 3, 4]


def test_a_policy_on_a_score_the_tool_computes_is_monitored_on_a_plain_file(tmp_path, capsys):
    from sgi_core.policy.file import policy_to_json
    from sgi_core.policy.making import make_policy
    from sgi_core.policy.references import feature_values
    from sgi_core.scores.baselines import neg_response_length

    source = _rows(600, 0.5, 12)
    scores = neg_response_length(source)
    features = {k: v for k, v in feature_values(source, scores).items() if k != "score"}
    made, _ = make_policy(source["label"].to_numpy(), scores, model="minilm", score_column="neg_response_length",
                          features=features)
    policy, run = tmp_path / "length_policy.json", tmp_path / "run.csv"
    policy.write_text(policy_to_json(made))
    frame = _rows(300, 0.3, 13, labelled=False)
    frame.to_csv(run, index=False)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", tmp_path / "h.sqlite", "--json")
    result = json.loads(out.out)
    assert code == 4 and result["flag_share"]["n_flagged"] == int((neg_response_length(frame) < made.threshold).sum())


def test_a_run_answered_by_another_system_than_the_policys_says_so(tmp_path, capsys):
    from sgi_core.policy.file import load_policy

    source, policy = tmp_path / "policy_data.csv", tmp_path / "policy.json"
    _rows(600, 0.5, 14).assign(model=lambda f: np.where(np.arange(len(f)) % 2, "model-a", "model-b")).to_csv(
        source, index=False)
    assert main(["gate", str(source), "--write-policy", str(policy), "--n-boot", "200"]) == 0
    assert load_policy(policy).answering_systems == ("model-a", "model-b")
    same, other = tmp_path / "same.csv", tmp_path / "other.csv"
    _rows(300, 0.3, 15, labelled=False).assign(model="model-a").to_csv(same, index=False)
    _rows(300, 0.3, 15, labelled=False).assign(model="model-c").to_csv(other, index=False)
    capsys.readouterr()
    code, out = _monitor(capsys, same, "--policy", policy, "--db", tmp_path / "h.sqlite", "--json")
    assert code == 4 and json.loads(out.out)["answering_note"] == ""
    code, out = _monitor(capsys, other, "--policy", policy, "--db", tmp_path / "h.sqlite")
    assert code == 4 and ("note: the run's answers come from model-c, the policy's rows' from model-a, model-b: a "
                          "score's sensitivity and specificity do not carry over") in out.out
