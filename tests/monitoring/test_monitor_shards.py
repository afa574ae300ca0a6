"""``monitor`` on a folder or glob of Parquet shards: the verdict of the same rows read as one file."""

import json

import numpy as np
import pytest

from sgi_core.cli import main
from tests.monitoring.test_monitor_cli import _rows, policy  # noqa: F401  (the fixture)

SHARDS = (150, 0, 250)  # rows of each shard; the middle one is empty
#: What differs between two monitor runs of the same rows: the history's record and the file read.
RUN_FIELDS = ("record_id", "db", "file", "file_sha256")


def _json(capsys, *args):
    code = main(["monitor", *map(str, args), "--json"])
    return code, {k: v for k, v in json.loads(capsys.readouterr().out).items() if k not in RUN_FIELDS}


@pytest.mark.parametrize("labelled", [False, True])
def test_a_sharded_run_gives_the_single_files_verdict(tmp_path, policy, capsys, labelled):
    run = _rows(sum(SHARDS), 0.2, 1, labelled=labelled)
    single, folder = tmp_path / "run.parquet", tmp_path / "shards"
    run.to_parquet(single, index=False)
    folder.mkdir()
    for i, (start, n) in enumerate(zip(np.cumsum((0, *SHARDS[:-1])), SHARDS)):
        run.iloc[start : start + n].to_parquet(folder / f"part-{i}.parquet", index=False)
    expected = _json(capsys, single, "--policy", policy, "--db", tmp_path / "one.sqlite")
    assert _json(capsys, folder, "--policy", policy, "--db", tmp_path / "two.sqlite") == expected
    assert _json(capsys, f"{folder}/part-*.parquet", "--policy", policy, "--db", tmp_path / "three.sqlite") == expected


def test_a_sharded_run_without_the_policys_score_names_the_shard(tmp_path, policy, capsys):
    folder = tmp_path / "shards"
    folder.mkdir()
    _rows(50, 0.2, 1).drop(columns="sgi").to_parquet(folder / "part-0.parquet", index=False)
    assert main(["monitor", str(folder), "--policy", str(policy), "--db", str(tmp_path / "h.sqlite")]) == 2
    assert "the shard has no column sgi" in capsys.readouterr().err
