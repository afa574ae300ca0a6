"""A sharded scored run reduced batch by batch to what monitor reads: the same numbers as the whole file."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.pipelines.sharded_runs import run_digest
from sgi_core.policy.references import feature_values
from sgi_core.review.annotations import row_keys
from tests.conftest import SAMPLE_CSV

SHARD_ROWS = (30, 25)


@pytest.fixture
def scored_shards(tmp_path):
    sample = pd.read_csv(SAMPLE_CSV).head(sum(SHARD_ROWS))
    sample["model"] = ["gen-a", "gen-b"] * (len(sample) // 2) + ["gen-a"] * (len(sample) % 2)
    folder = tmp_path / "scored"
    folder.mkdir()
    start = 0
    for i, n in enumerate(SHARD_ROWS):
        part = tmp_path / f"part-{i}.csv"
        sample.iloc[start : start + n].to_csv(part, index=False)
        assert main(["score", str(part), "-o", str(folder / f"part-{i}.parquet"), "--model", "hashing",
                     "--no-cache"]) == 0
        start += n
    return folder


def test_the_digest_equals_the_whole_runs_numbers(scored_shards):
    digest = run_digest(scored_shards, "sgi", batch_rows=7)
    whole = pd.concat([pd.read_parquet(p) for p in sorted(scored_shards.glob("*.parquet"))], ignore_index=True)
    scores = whole["sgi"].to_numpy(float)
    assert digest.rows == sum(SHARD_ROWS)
    np.testing.assert_array_equal(digest.scores, scores)
    np.testing.assert_array_equal(digest.labels, whole["label"].to_numpy(float))
    expected = feature_values(whole, scores)
    assert sorted(digest.features) == sorted(expected)
    for name, values in expected.items():
        np.testing.assert_array_equal(digest.features[name], values)
    assert digest.keys.tolist() == row_keys(whole).tolist()
    assert digest.systems == ("gen-a", "gen-b")
    assert digest.made_by["model"] == "hashing"


def test_a_score_column_the_shards_lack_is_named_with_its_shard(scored_shards):
    with pytest.raises(SGIInputError, match="the shard has no column grounding_nli_min"):
        run_digest(scored_shards, "grounding_nli_min")


def test_a_label_other_than_one_or_zero_is_refused(tmp_path):
    folder = tmp_path / "odd"
    folder.mkdir()
    pd.DataFrame({"question": ["q"], "context": ["c"], "response": ["r"], "sgi": [1.0],
                  "label": [2.0]}).to_parquet(folder / "part-0.parquet")
    with pytest.raises(SGIInputError, match="a scored shard holds a label other than 1, 0 or missing"):
        run_digest(folder, "sgi")
