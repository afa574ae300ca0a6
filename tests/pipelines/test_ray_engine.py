"""Scoring shards on a local Ray: every row, its order key, and the single-process numbers."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.pipelines import ray_engine
from sgi_core.pipelines.ray_engine import find_shards, score_with_ray
from sgi_core.pipelines.ray_rows import ORDER_KEY
from tests.conftest import SAMPLE_CSV

ray = pytest.importorskip("ray")

COMPARED = ["theta_qc", "theta_rq", "theta_rc", "sgi"]
CSV_ROWS = (100, 100, 99)  # the 299 sample rows cut into three CSV shards
EMPTY_TEXT_ROWS = (2, 5, 6)  # 1-based rows of the Parquet shard with an empty or missing text


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Three CSV shards of the sample and a Parquet shard whose rows 2, 5 and 6 lack a text."""
    folder = tmp_path_factory.mktemp("shards")
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    start = 0
    for i, n in enumerate(CSV_ROWS):
        sample.iloc[start : start + n].to_csv(folder / f"part-{i}.csv", index=False)
        start += n
    extra = sample.iloc[:8].copy().reset_index(drop=True)
    extra.loc[1, "question"] = ""
    extra.loc[4, "response"] = "   "
    extra.loc[5, "context"] = None
    extra.to_parquet(folder / "part-3.parquet", index=False)
    return folder


def single_process(path, out_dir, model="hashing-256"):
    """The reference: ``score`` without Ray on one shard."""
    out = out_dir / f"{path.stem}.single.parquet"
    assert main(["score", str(path), "-o", str(out), "--model", model, "--no-cache"]) == 0
    return pd.read_parquet(out)


def assert_same_scores(ray_rows: pd.DataFrame, reference: pd.DataFrame):
    assert ray_rows["input_row"].tolist() == reference["input_row"].tolist()
    assert ray_rows["sgi_status"].tolist() == reference["sgi_status"].tolist()
    for column in COMPARED:
        np.testing.assert_allclose(ray_rows[column].to_numpy(float), reference[column].to_numpy(float),
                                   rtol=0, atol=1e-6, equal_nan=True)


@pytest.fixture(scope="module")
def ray_output(local_ray, shards, tmp_path_factory):
    """One Ray run over the folder, sorted by the order key.

    Blocks of 16 KB cut each CSV shard (about 50 KB) into several blocks, and batches of 64
    rows straddle blocks and shards.
    """
    out = tmp_path_factory.mktemp("ray") / "scored"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ray_engine, "_BLOCK_BYTES", 16 * 1024)
        summary = score_with_ray(shards, out, model="hashing-256", use_cache=False, batch_rows=64)
    return summary, pd.read_parquet(out).sort_values(list(ORDER_KEY)).reset_index(drop=True)


def test_find_shards_folder_file_and_glob(shards):
    names = ["part-0.csv", "part-1.csv", "part-2.csv", "part-3.parquet"]
    assert [p.name for p in find_shards(shards)] == names
    assert [p.name for p in find_shards(shards / "part-1.csv")] == ["part-1.csv"]
    assert [p.name for p in find_shards(f"{shards}/part-*.csv")] == names[:3]


def test_glob_matching_nothing_is_refused(shards, tmp_path):
    with pytest.raises(SGIInputError, match=r"no input files match pattern '.*nothing-\*\.csv'"):
        score_with_ray(f"{shards}/nothing-*.csv", tmp_path / "out", model="hashing-256")


def test_other_formats_and_full_output_folders_are_refused(shards, tmp_path):
    (tmp_path / "data.jsonl").write_text('{"question": "q"}\n')
    with pytest.raises(SGIInputError, match=r"only \.csv and \.parquet shards.*data\.jsonl"):
        find_shards(tmp_path / "data.jsonl")
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "old.parquet").write_bytes(b"")
    with pytest.raises(SGIInputError, match="the output exists and is not an empty folder"):
        score_with_ray(shards, taken, model="hashing-256")


def test_bad_rows_in_an_actor_come_back_as_input_errors(local_ray, shards, tmp_path):
    frame = pd.read_csv(shards / "part-0.csv", dtype=str, keep_default_na=False).iloc[:5]
    frame.loc[3, "label"] = "maybe"
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(SGIInputError, match=r"unknown label values 'maybe'.*bad\.csv.*row 4"):
        score_with_ray(tmp_path / "bad.csv", tmp_path / "out", model="hashing-256", use_cache=False)
    assert not (tmp_path / "out").exists()


def test_missing_columns_and_models_fail_before_ray_runs(shards, tmp_path):
    pd.DataFrame({"question": ["q"], "context": ["c"]}).to_parquet(tmp_path / "two.parquet")
    with pytest.raises(SGIInputError, match=r"no column for response.*two\.parquet"):
        score_with_ray(tmp_path / "two.parquet", tmp_path / "out", model="hashing-256")
    with pytest.raises(SGIInputError, match="neither a registered model"):
        score_with_ray(shards, tmp_path / "out", model="no-such-model")


def test_every_row_is_written_once_with_its_order_key(ray_output):
    summary, out = ray_output
    counts = (*CSV_ROWS, 8)
    assert (summary.rows, summary.shards, summary.actors) == (sum(counts), 4, 2)
    assert summary.scored == sum(counts) - len(EMPTY_TEXT_ROWS)
    for shard, n in enumerate(counts):
        assert out.loc[out["input_shard"] == shard, "input_row"].tolist() == list(range(1, n + 1))
    assert out.groupby("input_shard")["input_file"].nunique().eq(1).all()


def test_csv_shards_equal_the_single_process_score(ray_output, shards, tmp_path):
    _, out = ray_output
    for shard, path in enumerate(find_shards(shards)[:3]):
        reference = single_process(path, tmp_path)
        rows = out[out["input_shard"] == shard].reset_index(drop=True)
        assert_same_scores(rows, reference)
        assert rows["question"].tolist() == reference["question"].tolist()


def test_empty_texts_are_kept_unscored_as_in_the_single_process_score(ray_output, shards, tmp_path):
    _, out = ray_output
    reference = single_process(shards / "part-3.parquet", tmp_path)
    rows = out[out["input_shard"] == 3].reset_index(drop=True)
    assert_same_scores(rows, reference)
    unscored = rows.loc[rows["sgi_status"].str.startswith("not scored: "), "input_row"].tolist()
    assert unscored == list(EMPTY_TEXT_ROWS)
    assert rows.loc[rows["input_row"].isin(EMPTY_TEXT_ROWS), "sgi"].isna().all()


def test_cli_engine_ray_prints_a_summary(local_ray, shards, tmp_path, capsys):
    out = tmp_path / "cli-scored"
    code = main(["score", str(shards / "part-3.parquet"), "-o", str(out), "--engine", "ray",
                 "--model", "hashing-256", "--no-cache"])
    assert code == 0
    assert "wrote 8 rows (5 scored) from 1 shard with 2 encoder actors in " in capsys.readouterr().err
    assert len(pd.read_parquet(out)) == 8


@pytest.mark.slow
def test_minilm_parity_on_halueval(local_ray, shared_data, tmp_path):
    """500 HaluEval rows in two shards: the real model on Ray equals the single-process path."""
    rows = pd.read_csv(shared_data / "halueval" / "halueval_qa.csv", dtype=str, keep_default_na=False, nrows=500)
    folder = tmp_path / "halueval"
    folder.mkdir()
    rows.iloc[:250].to_csv(folder / "a.csv", index=False)
    rows.iloc[250:].to_parquet(folder / "b.parquet", index=False)
    summary = score_with_ray(folder, tmp_path / "scored", model="minilm", device="cpu", use_cache=False)
    out = pd.read_parquet(tmp_path / "scored").sort_values(list(ORDER_KEY)).reset_index(drop=True)
    assert (summary.rows, summary.scored) == (500, 500)
    for shard, path in enumerate(find_shards(folder)):
        assert_same_scores(out[out["input_shard"] == shard].reset_index(drop=True),
                           single_process(path, tmp_path, model="minilm"))


def test_input_columns_named_like_the_order_key_or_path_keep_their_values(local_ray, shards, tmp_path):
    frame = pd.read_csv(shards / "part-0.csv", dtype=str, keep_default_na=False).iloc[:4]
    mine = {"input_row": ["r1", "r2", "r3", "r4"], "input_shard": ["s1", "s2", "s3", "s4"],
            "input_file": ["f1", "f2", "f3", "f4"], "path": ["p1", "p2", "p3", "p4"]}
    frame.assign(**mine).to_csv(tmp_path / "clash.csv", index=False)
    score_with_ray(tmp_path / "clash.csv", tmp_path / "out", model="hashing-256", use_cache=False)
    out = pd.read_parquet(tmp_path / "out").sort_values("input_row").reset_index(drop=True)
    assert out["input_row"].tolist() == [1, 2, 3, 4] and out["input_shard"].tolist() == [0] * 4
    assert out["input_file"].tolist() == [str((tmp_path / "clash.csv").resolve())] * 4
    kept = {column: out[name].tolist() for column, name in
            [("input_row", "input_input_row"), ("input_shard", "input_input_shard"),
             ("input_file", "input_input_file"), ("path", "path")]}
    assert kept == mine


def test_the_temporary_folder_is_new_and_what_was_at_the_old_name_is_left_alone(local_ray, shards, tmp_path):
    frame = pd.read_csv(shards / "part-0.csv", dtype=str, keep_default_na=False).iloc[:3]
    frame.to_csv(tmp_path / "in.csv", index=False)
    kept = tmp_path / ".out.partial"  # the fixed name a run once emptied
    kept.mkdir()
    (kept / "mine.txt").write_text("keep me")
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / ".linked.partial").symlink_to(victim)  # a link planted at the fixed name of a second output
    for name in ("out", "linked"):
        score_with_ray(tmp_path / "in.csv", tmp_path / name, model="hashing-256", use_cache=False)
        assert len(pd.read_parquet(tmp_path / name)) == 3
    assert (kept / "mine.txt").read_text() == "keep me" and list(victim.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")) == [".linked.partial",
                                                                                          ".out.partial"]


def test_a_latin1_csv_shard_is_a_one_line_input_error(local_ray, tmp_path):
    rows = "question,context,response\nQué es la crème brûlée?,La crème brûlée est un dessert.,Un dessert à la crème.\n"
    (tmp_path / "latin1.csv").write_bytes(rows.encode("latin-1"))
    with pytest.raises(SGIInputError, match=r"^the CSV shard is not UTF-8 text, which is all Ray.s CSV reader reads "
                                            r"\(file .*latin1\.csv.\)\. "
                                            r"Save the shards as UTF-8 or convert them to Parquet"):
        score_with_ray(tmp_path / "latin1.csv", tmp_path / "out", model="hashing-256", use_cache=False)
    assert not (tmp_path / "out").exists() and [p.name for p in tmp_path.iterdir()] == ["latin1.csv"]


def test_an_output_in_a_missing_folder_is_refused_before_ray_runs(shards, tmp_path):
    with pytest.raises(SGIInputError, match=r"^the folder '.*missing' for the output does not exist"):
        score_with_ray(shards, tmp_path / "missing" / "out", model="hashing-256")
