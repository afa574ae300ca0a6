"""Which column a policy reads: the fresh scores a file's scoring record describes, never the user's old column."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.cli import main
from sgi_core.policy.file import load_policy
from sgi_core.scores.baselines import lexical_groundedness
from tests.conftest import SAMPLE_CSV
from tests.policy.test_gate import _scored_file


@pytest.fixture
def policy_and_run(tmp_path):
    """A policy on sgi, and an unlabelled run whose fresh sgi flags some rows and whose old input_sgi flags none."""
    _scored_file(tmp_path / "train.csv")
    policy_path = tmp_path / "policy.json"
    assert main(["gate", str(tmp_path / "train.csv"), "--write-policy", str(policy_path), "--n-boot", "0"]) == 0
    threshold = load_policy(policy_path).threshold
    run = _scored_file(tmp_path / "unused.csv", seed=4).drop(columns=["label", "pair_id"])
    run["input_sgi"] = 100.0  # the user's old column, kept by `score` under the input_ prefix
    return tmp_path, policy_path, run, float(np.mean(run["sgi"] < threshold))


def _parquet(path, frame, made_by):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sgi_core.io.scored import SCORED_WITH_KEY

    table = pa.Table.from_pandas(frame, preserve_index=False)
    if made_by is not None:
        table = table.replace_schema_metadata({SCORED_WITH_KEY: json.dumps(made_by).encode()})
    pq.write_table(table, path)


def test_a_file_with_both_columns_and_no_scoring_record_is_refused(policy_and_run, capsys):
    folder, policy, run, _ = policy_and_run
    run.to_csv(folder / "run.csv", index=False)
    for command in (["gate", str(folder / "run.csv"), "--policy", str(policy)],
                    ["monitor", str(folder / "run.csv"), "--policy", str(policy), "--db", str(folder / "h.db")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "the file holds both 'sgi' and 'input_sgi' (a column it held before it was scored)" in err
        assert "Drop or rename 'input_sgi'" in err


def test_the_recorded_fresh_column_is_read(policy_and_run, capsys):
    folder, policy, run, fresh_share = policy_and_run
    assert 0.2 < fresh_share < 0.8
    _parquet(folder / "run.parquet", run, {"model": "minilm", "precision": "fp32"})
    assert main(["gate", str(folder / "run.parquet"), "--policy", str(policy), "--n-boot", "0"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"PASS flag rate: {fresh_share:.3f} [")


def test_a_file_with_only_its_own_column_reads_it(policy_and_run, capsys):
    folder, policy, run, fresh_share = policy_and_run
    run.drop(columns="input_sgi").to_csv(folder / "run.csv", index=False)
    assert main(["gate", str(folder / "run.csv"), "--policy", str(policy), "--n-boot", "0"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"PASS flag rate: {fresh_share:.3f} [")


def test_a_policy_on_the_word_overlap_of_a_plain_file_computes_it(tmp_path, capsys):
    policy_path = tmp_path / "policy.json"
    assert main(["gate", str(SAMPLE_CSV), "--write-policy", str(policy_path), "--score-column",
                 "lexical_groundedness", "--n-boot", "100", "--force"]) == 0
    printed = capsys.readouterr().out
    policy = load_policy(policy_path)
    assert policy.score_column == "lexical_groundedness"
    frame = pd.read_csv(SAMPLE_CSV)
    overlap = lexical_groundedness(frame["response"], frame["context"], warn=False)
    scored = ~np.isnan(overlap)
    expected = roc_auc_score(frame["label"].to_numpy()[scored], overlap[scored])
    assert printed.startswith(f"AUROC {expected:.3f} ")
