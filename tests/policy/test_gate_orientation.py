"""``gate --write-policy --score-column`` orients a registered score as its registry entry says."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.cli import main
from sgi_core.policy.file import load_policy
from tests.policy.test_gate import _scored_file


@pytest.fixture
def hallucinated_high(tmp_path):
    """A scored file whose θ(r,c) column (registered: high = hallucinated) separates the labels."""
    frame = _scored_file(tmp_path / "unused.csv")
    rng = np.random.default_rng(3)
    frame["theta_rc"] = 1.2 - 0.3 * frame["label"] + rng.normal(0.0, 0.2, len(frame))
    path = tmp_path / "scored.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize("named", ["theta_rc", "neg_theta_rc"])
def test_a_hallucinated_high_score_is_oriented_not_refused(hallucinated_high, tmp_path, capsys, named):
    path, frame = hallucinated_high
    policy_path = tmp_path / "policy.json"
    assert main(["gate", str(path), "--write-policy", str(policy_path), "--score-column", named,
                 "--n-boot", "200"]) == 0
    printed = capsys.readouterr().out
    expected = roc_auc_score(frame["label"], -frame["theta_rc"])
    assert expected > 0.8
    assert printed.startswith(f"AUROC {expected:.3f} ")
    policy = load_policy(policy_path)
    # Stored under its oriented name: the name `compare` gives the oriented column of a run.
    assert policy.score_column == "neg_theta_rc"
    assert policy.threshold < 0  # a threshold on -θ(r,c)
    # Held to the policy, the same file reads the same orientation and passes.
    assert main(["gate", str(path), "--policy", str(policy_path), "--n-boot", "200"]) == 0


def test_an_unregistered_column_is_taken_as_it_is(hallucinated_high, tmp_path, capsys):
    path, frame = hallucinated_high
    frame.rename(columns={"theta_rc": "my_risk"}).to_csv(path, index=False)
    assert main(["gate", str(path), "--write-policy", str(tmp_path / "p.json"), "--score-column", "my_risk",
                 "--n-boot", "200"]) == 2
    assert "inverted" in capsys.readouterr().err
