"""``compare BASE NEW`` on runs given as folders or globs of scored Parquet shards: the one file's comparison."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.columns import TEXT_COLUMNS, UNBOUNDED_SGI_STATUS
from sgi_core.io.reading import read_table
from sgi_core.runs.reading import ROW_KEY, read_run, read_sharded_run, run_row_keys

N = 90


def scored(name: str, seed: int) -> pd.DataFrame:
    """A scored run as `score` writes it: repeated questions, a missing label, an unbounded SGI, an imported score,
    a text column and an integer id."""
    rng = np.random.default_rng(seed)
    label = (rng.random(N) > 0.4).astype(float)
    label[[3, 40]] = np.nan
    sgi = 1.0 + 0.3 * np.nan_to_num(label) + rng.normal(0, 0.1, N)
    questions = [f"question {i % 70}?" for i in range(N)]  # 20 questions asked twice
    frame = pd.DataFrame({
        "question": questions, "context": [f"context {i % 70} with words" for i in range(N)],
        "response": [f"{name} answer {i} with words" + " more" * int(rng.integers(0, 5)) for i in range(N)],
        "label": label, "theta_qc": rng.uniform(0.8, 1.2, N), "theta_rq": sgi * 0.8, "theta_rc": 0.8 + 0 * sgi,
        "sgi": sgi, "sgi_status": "ok", "retrieval_score": rng.normal(0.0, 1.0, N).round(3),
        "notes": [f"free text {i}" for i in range(N)], "answer_id": np.arange(N),
    })
    frame.loc[7, "sgi_status"] = UNBOUNDED_SGI_STATUS
    frame.loc[7, "sgi"] = 1e8
    # A column holding numbers in the first rows and text later: not a score of the whole run.
    frame["mixed"] = [str(i) if i < 50 else f"x{i}" for i in range(N)]
    return frame


@pytest.fixture
def runs(tmp_path):
    """Each run as one Parquet file, and as three shards of it in a folder."""
    paths = {}
    for name, seed in (("base", 1), ("new", 2)):
        frame = scored(name, seed)
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
        folder = tmp_path / f"{name}_shards"
        folder.mkdir()
        for i, rows in enumerate(np.array_split(np.arange(N), 3)):
            frame.iloc[rows].to_parquet(folder / f"part-{i}.parquet", index=False)
        paths[name] = frame
    return tmp_path, paths


def compare(folder, out_name, base, new, *args):
    out = folder / f"{out_name}.json"
    code = main(["compare", str(base), str(new), "--n-boot", "200", "--json", str(out), *args])
    return code, json.loads(out.read_text())


def test_shards_compare_as_the_one_file_they_make(runs, capsys):
    folder, _ = runs
    code_file, one = compare(folder, "file", folder / "base.parquet", folder / "new.parquet")
    code_shards, sharded = compare(folder, "shards", folder / "base_shards", folder / "new_shards")
    code_glob, globbed = compare(folder, "glob", folder / "base_shards" / "part-*.parquet", folder / "new.parquet")
    assert code_file == code_shards == code_glob == 0
    assert sharded == one
    assert globbed == one
    scores = [entry["score"] for entry in one["scores"]]
    assert "retrieval_score" in scores and "mixed" not in scores and "answer_id" not in scores
    assert one["match"]["averaged_base"] == 20 and one["match"]["n_matched"] == 70
    assert "matched 70 keys on 'question'" in capsys.readouterr().out


def test_labels_from_a_file_join_shards_as_they_join_the_one_file(runs, tmp_path):
    folder, frames = runs
    labels = pd.concat([frames["base"].iloc[::3], frames["new"].iloc[1::4]])[[*TEXT_COLUMNS, "label"]]
    labels.to_csv(tmp_path / "labels.csv", index=False)
    unlabelled = {}
    for name, frame in frames.items():
        frame.assign(label=np.nan).to_parquet(tmp_path / f"{name}_unlabelled.parquet", index=False)
        shards = tmp_path / f"{name}_unlabelled_shards"
        shards.mkdir()
        for i, rows in enumerate(np.array_split(np.arange(N), 3)):
            frame.assign(label=np.nan).iloc[rows].to_parquet(shards / f"part-{i}.parquet", index=False)
        unlabelled[name] = (tmp_path / f"{name}_unlabelled.parquet", shards)
    args = ("--labels", str(tmp_path / "labels.csv"))
    code_file, one = compare(tmp_path, "file", unlabelled["base"][0], unlabelled["new"][0], *args)
    code_shards, sharded = compare(tmp_path, "shards", unlabelled["base"][1], unlabelled["new"][1], *args)
    assert code_file == code_shards == 0
    assert sharded == one
    assert one["labels"] is not None


def test_a_sharded_run_keeps_numbers_and_keys_not_texts(runs):
    folder, frames = runs
    run = read_sharded_run(folder / "base_shards", key="question", batch_rows=7)
    whole = read_run(read_table(folder / "base.parquet", name="base.parquet"), source="base.parquet", scorer=None,
                     key="question")
    assert not {"context", "response", "notes", "mixed"} & set(run.frame.columns)
    assert run.scores == whole.scores
    pd.testing.assert_frame_equal(run.frame[list(run.scores)], whole.frame[list(whole.scores)])
    assert run_row_keys(run.frame).tolist() == run_row_keys(whole.frame).tolist()
    assert run.frame[ROW_KEY].tolist() == run_row_keys(whole.frame).tolist()
    assert run.frame["question"].tolist() == frames["base"]["question"].tolist()


def test_an_empty_folder_is_refused(runs, tmp_path, capsys):
    folder, _ = runs
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(tmp_path / "empty"), str(folder / "new_shards"), "--key", "question"]) == 2
    err = capsys.readouterr().err
    assert "no input files match folder" in err and "empty" in err


def test_a_shard_without_the_score_column_is_named(runs, capsys):
    folder, frames = runs
    pd.read_parquet(folder / "new_shards" / "part-1.parquet").drop(columns="sgi").to_parquet(
        folder / "new_shards" / "part-1.parquet", index=False)
    assert main(["compare", str(folder / "base_shards"), str(folder / "new_shards"), "--key", "question"]) == 2
    err = capsys.readouterr().err
    assert "part-1.parquet" in err and "column 'sgi'" in err


def test_shards_without_scores_are_refused_with_what_to_do(tmp_path, capsys):
    shards = tmp_path / "plain"
    shards.mkdir()
    scored("base", 1)[[*TEXT_COLUMNS, "label"]].to_parquet(shards / "part-0.parquet", index=False)
    assert main(["compare", str(shards), str(shards), "--key", "question"]) == 2
    assert "carry no SGI scores" in capsys.readouterr().err


def test_a_value_a_scored_file_refuses_is_named_by_its_shard_and_row(tmp_path):
    from sgi_core.errors import SGIInputError

    shards = tmp_path / "bad"
    shards.mkdir()
    frame = scored("base", 1)
    frame.iloc[:30].to_parquet(shards / "part-0.parquet", index=False)
    frame.iloc[30:].assign(label=[1.0] * 10 + [2.0] + [1.0] * (N - 41)).to_parquet(shards / "part-1.parquet",
                                                                                   index=False)
    with pytest.raises(SGIInputError, match=r"part-1\.parquet.*column 'label'.*row 11") as caught:
        read_sharded_run(shards, key="question", batch_rows=10)
    assert caught.value.rows == [11]


def test_a_policy_with_references_is_checked_on_shards_as_on_the_one_file(runs, capsys):
    from sgi_core.policy.making import make_policy
    from sgi_core.policy.references import feature_values
    from sgi_core.policy.rules import save_policy

    folder, frames = runs
    rng = np.random.default_rng(3)
    development = pd.concat([frames["base"]] * 3, ignore_index=True).assign(
        sgi=lambda f: f["sgi"].clip(upper=3.0) + rng.normal(0, 0.05, len(f)))
    labels = development["label"].fillna(1.0).to_numpy()
    scores = development["sgi"].to_numpy()
    policy, _ = make_policy(labels, scores, model="minilm", features=feature_values(development, scores))
    assert policy.references is not None
    save_policy(policy, folder / "policy.json")
    outputs = []
    for name, base, new in (("file", folder / "base.parquet", folder / "new.parquet"),
                            ("shards", folder / "base_shards", folder / "new_shards")):
        code, result = compare(folder, f"{name}_comparison", base, new, "--policy", str(folder / "policy.json"))
        outputs.append((code, result, capsys.readouterr().err.replace(str(base), "BASE").replace(str(new), "NEW")))
    assert outputs[0][:2] == outputs[1][:2], outputs[1][2]
    notes = [[line.split(":", 2)[-1] for line in err.splitlines() if "policy does not validate" in line]
             for _, _, err in outputs]
    assert notes[0] == notes[1]
