"""``--context-strategy``: a context embedded joined, as the mean of its passages or as the passage nearest the
response; held against a numpy oracle, kept in scored files, recorded and checked like the model."""

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from sgi_core.cli import main
from sgi_core.embedding import load_encoder
from sgi_core.io.passages import row_passages
from sgi_core.io.scored import scored_with
from sgi_core.io.triples import load_triples, validate_triples
from sgi_core.long_context import truncation_report
from sgi_core.pipelines.local_engine import read_chunks, score_to_file
from sgi_core.render.truncation import truncation_text
from sgi_core.scoring import score_table
from tests.io.test_context_lists import ROWS, write_csv_cells, write_parquet, write_ragas_jsonl

LONG = " ".join(f"Sentence {i} tells about the river Danube and its bridges." for i in range(60))


def _unit(x):
    x = np.asarray(x, dtype=np.float64)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _angle(a, b):
    return np.arccos(np.clip(np.sum(_unit(a) * _unit(b), axis=-1), -1.0, 1.0))


def _oracle_sgi(encoder, strategy):
    """SGI of each ROWS row by numpy alone: theta(r, q) / (theta(r, c) + 1e-8) with c built from the passages."""
    out = []
    for question, passages, response, _ in ROWS:
        if not passages:
            out.append(np.nan)
            continue
        q, r = encoder.encode([question, response])
        units = _unit(encoder.encode(list(passages)))
        c = units.mean(axis=0) if strategy == "mean" else units[int(np.argmax(units @ _unit(r)))]
        out.append(_angle(r, q) / (_angle(r, c) + 1e-8))
    return np.array(out)


@pytest.mark.parametrize("strategy", ["mean", "nearest"])
def test_piece_strategies_match_a_numpy_oracle(tmp_path, strategy):
    encoder = load_encoder("hashing")
    scored = score_table(load_triples(write_ragas_jsonl(tmp_path / "r.jsonl")), encoder, context_strategy=strategy)
    np.testing.assert_allclose(scored["sgi"].to_numpy(), _oracle_sgi(encoder, strategy), rtol=1e-9, equal_nan=True)
    assert scored["context_pieces"].tolist() == [len(r[1]) for r in ROWS]
    assert scored["sgi_status"].iloc[-1] == "not scored: empty context"


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["mean", "nearest"])
def test_piece_strategies_match_a_numpy_oracle_with_the_real_model(tmp_path, minilm, strategy):
    scored = score_table(load_triples(write_parquet(tmp_path / "l.parquet")), minilm, context_strategy=strategy)
    np.testing.assert_allclose(scored["sgi"].to_numpy(), _oracle_sgi(minilm, strategy), rtol=1e-5, equal_nan=True)


def test_one_passage_scores_alike_under_every_strategy_and_joined_is_the_default(tmp_path):
    encoder = load_encoder("hashing")
    table = load_triples(write_csv_cells(tmp_path / "c.csv"))
    single = [i for i, r in enumerate(ROWS) if len(r[1]) == 1]
    default, joined = score_table(table, encoder), score_table(table, encoder, context_strategy="joined")
    pd.testing.assert_frame_equal(default, joined)
    for strategy in ("mean", "nearest"):
        sgi = score_table(table, encoder, context_strategy=strategy)["sgi"].to_numpy()
        np.testing.assert_allclose(sgi[single], default["sgi"].to_numpy()[single], rtol=1e-9)
        assert not np.allclose(sgi[0], default["sgi"].iloc[0])


def test_a_scored_file_keeps_the_passages_and_rescores_alike(tmp_path):
    assert main(["score", str(write_csv_cells(tmp_path / "c.csv")), "-o", str(tmp_path / "s.csv"),
                 "--model", "hashing", "--context-strategy", "mean"]) == 0
    written = pd.read_csv(tmp_path / "s.csv")
    assert [json.loads(cell) for cell in written["context_passages"]] == [r[1] for r in ROWS]
    again = load_triples(tmp_path / "s.csv")
    assert again.passages is None and row_passages(again.frame) == tuple(tuple(r[1]) or () for r in ROWS)
    rescored = score_table(again, load_encoder("hashing"), context_strategy="mean")
    np.testing.assert_allclose(rescored["sgi"].to_numpy(), written["sgi"].to_numpy(), rtol=1e-9, equal_nan=True)


def test_a_plain_file_gets_no_passages_column(tmp_path):
    frame = score_table(load_triples("sample_data/halueval_qa_sample.csv"), load_encoder("hashing"))
    assert "context_passages" not in frame.columns and "context_pieces" not in frame.columns


def test_the_strategy_is_recorded_in_a_scored_parquet(tmp_path):
    out = tmp_path / "s.parquet"
    assert main(["score", str(write_parquet(tmp_path / "l.parquet")), "-o", str(out), "--model", "hashing",
                 "--context-strategy", "nearest"]) == 0
    assert scored_with(out)["context_strategy"] == "nearest"
    assert pq.read_table(out).column("context_passages").to_pylist() == [r[1] for r in ROWS]


def test_chunks_write_the_passages_column_as_the_first_chunk_did(tmp_path):
    first_lists = pd.DataFrame({"question": ["q1?", "q2?", "q3?"],
                                "contexts": ['["a one", "a two"]', "plain context", "another plain"],
                                "answer": ["x", "y", "z"]})
    path = tmp_path / "f.csv"
    first_lists.to_csv(path, index=False)
    warned = []
    score_to_file(read_chunks(path, chunk_rows=1), tmp_path / "o.csv", load_encoder("hashing"), warn=warned.append)
    assert [json.loads(c) for c in pd.read_csv(tmp_path / "o.csv")["context_passages"]] == [
        ["a one", "a two"], ["plain context"], ["another plain"]]
    assert not [w for w in warned if "are lists" in w]

    first_lists.iloc[::-1].to_csv(path, index=False)
    score_to_file(read_chunks(path, chunk_rows=1), tmp_path / "o2.csv", load_encoder("hashing"), warn=warned.append)
    out = pd.read_csv(tmp_path / "o2.csv")
    assert "context_passages" not in out.columns and out["context"].iloc[2] == "a one\n\na two"
    assert ("the contexts of row 3 are lists, those of the rows before are not: their passages are kept joined by a "
            "blank line in 'context' only. To keep them apart, score with --chunk-rows at least the file's row "
            "count") in warned


def _scored_run(tmp_path, name, strategy):
    labelled = pd.DataFrame({"id": range(40), "question": [f"question {i}" for i in range(40)],
                             "context": [f"context number {i}" for i in range(40)],
                             "response": [f"response {i}" for i in range(40)], "label": [1, 0] * 20})
    source = tmp_path / f"{name}.csv"
    labelled.to_csv(source, index=False)
    out = tmp_path / f"{name}.parquet"
    assert main(["score", str(source), "-o", str(out), "--model", "hashing", "--context-strategy", strategy]) == 0
    return out


def test_runs_scored_with_different_strategies_are_not_compared(tmp_path, capsys):
    base, new = _scored_run(tmp_path, "base", "joined"), _scored_run(tmp_path, "new", "mean")
    capsys.readouterr()
    assert main(["compare", str(base), str(new), "--key", "id", "--n-boot", "50"]) == 2
    assert "the two runs were scored with a different context_strategy: joined" in capsys.readouterr().err


def test_the_policy_records_the_strategy_and_the_gate_refuses_another(tmp_path, capsys):
    scored = _scored_run(tmp_path, "run", "mean")
    policy = tmp_path / "p.json"
    assert main(["gate", str(scored), "--write-policy", str(policy), "--n-boot", "50", "--force"]) == 0
    assert json.loads(policy.read_text())["context_strategy"] == "mean"
    other = _scored_run(tmp_path, "other", "joined")
    capsys.readouterr()
    assert main(["gate", str(other), "--policy", str(policy), "--n-boot", "50"]) == 2
    assert "Pass --context-strategy mean" in capsys.readouterr().err


@pytest.mark.slow
def test_truncation_is_counted_per_passage(minilm):
    frame = pd.DataFrame({"question": ["Which river?", "What crosses it?"],
                          "context": [json.dumps(["The Danube flows through Vienna.", LONG]), "Short context."],
                          "response": ["The Danube", "Bridges"]})
    table = validate_triples(frame)
    joined = truncation_report(minilm, table.frame["context"], passages=table.passages)
    assert (joined.n_truncated, joined.n_texts, joined.n_passages, joined.n_passages_truncated) == (1, 2, 3, 1)
    cut, sentence = truncation_text(joined, "minilm")
    assert cut and sentence.startswith("1 of 2 contexts (50%) are longer than the 256 tokens minilm reads")
    assert "the passages after the cut are not read. 1 of 3 passages is longer than that on its own." in sentence
    mean = truncation_report(minilm, table.frame["context"], passages=table.passages, context_strategy="mean")
    cut, sentence = truncation_text(mean, "minilm")
    assert not cut and "with the context strategy 'mean' each passage is embedded in windows that fit" in sentence
    assert sentence.endswith("1 of 3 passages is longer than that on its own and is embedded in windows.")


def test_compare_leaves_an_unbounded_sgi_out_and_counts_no_piece_column_as_a_score(tmp_path, capsys):
    # Under "nearest" a response that copies a passage embeds as its context: SGI ~1e8, status degenerate.
    rows = {"id": range(30), "question": [f"what is fact {i}?" for i in range(30)],
            "context": [json.dumps([f"Fact {i} is about the river.", f"Other text {i}."]) for i in range(30)],
            "response": [f"an answer about {i}" for i in range(30)], "label": [1, 0] * 15}
    pd.DataFrame(rows).to_csv(tmp_path / "base.csv", index=False)
    new = pd.DataFrame(rows)
    new.loc[0, "response"] = "Fact 0 is about the river."
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["compare", str(tmp_path / "base.csv"), str(tmp_path / "new.csv"), "--key", "id", "--model", "hashing",
                 "--context-strategy", "nearest", "--n-boot", "50", "--json", str(tmp_path / "c.json")]) == 0
    scores = {row["score"]: row for row in json.loads((tmp_path / "c.json").read_text())["scores"]}
    assert "context_pieces" not in scores
    assert scores["sgi"]["n_keys"] == 29 and abs(scores["sgi"]["mean_new"]) < 10
