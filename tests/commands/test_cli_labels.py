"""``--labels FILE`` on report and gate: labels from another table or the app's annotations, joined by row key."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.io.triples import load_triples
from sgi_core.review.annotations import AnnotationStore, row_keys
from tests.conftest import SAMPLE_CSV


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The sample's texts without labels, its labels in a shuffled Parquet table, and as an annotations file."""
    folder = tmp_path_factory.mktemp("labels")
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    texts = folder / "texts.csv"
    sample.drop(columns=["label"]).to_csv(texts, index=False)
    table = folder / "labels.parquet"
    sample.sample(frac=1.0, random_state=2).to_parquet(table)
    store = AnnotationStore(folder / "annotations.jsonl")
    frame = load_triples(SAMPLE_CSV).frame
    for key, value in zip(row_keys(frame)[::-1], frame["label"].to_numpy()[::-1]):
        store.add(key, "grounded" if value == 1.0 else "hallucinated", annotator="a")
    return {"texts": texts, "table": table, "annotations": store.path, "folder": folder}


def report_auroc(folder, name: str, *args: str) -> float:
    out = folder / f"{name}.json"
    assert main(["report", *args, "--models", "hashing", "--n-boot", "0", "--json", str(out)]) == 0
    return json.loads(out.read_text())["models"]["hashing"]["auroc"]


def test_report_with_labels_from_a_shuffled_table_or_the_annotations_equals_the_file_label_column(files, capsys):
    folder = files["folder"]
    with_column = report_auroc(folder, "column", str(SAMPLE_CSV))
    from_table = report_auroc(folder, "table", str(files["texts"]), "--labels", str(files["table"]))
    assert "labels from labels.parquet: 300 of 300 matched rows of the file" in capsys.readouterr().err
    from_annotations = report_auroc(folder, "annotations", str(files["texts"]), "--labels", str(files["annotations"]))
    assert from_table == from_annotations == with_column
    assert 0.5 < with_column < 1.0


def test_unmatched_and_conflicting_labels_are_counted(files, tmp_path, capsys):
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(40)
    flipped = sample.head(1).assign(label=lambda f: f["label"].map({"1": "0", "0": "1"}))
    stranger = pd.DataFrame({"question": ["q"], "context": ["c"], "response": ["r"], "label": ["1"]})
    labels = tmp_path / "labels.csv"
    pd.concat([sample, flipped, stranger]).to_csv(labels, index=False)
    report_auroc(tmp_path, "partial", str(SAMPLE_CSV), "--labels", str(labels))
    err = capsys.readouterr().err
    assert "labels from labels.csv: 39 of 40 matched rows of the file; 1 matched none, 1 conflicting left out" in err
    assert "261 rows of the file have no label" in err


def test_labels_from_other_data_stop_the_command(tmp_path, capsys):
    labels = tmp_path / "other.csv"
    pd.DataFrame({"question": ["q"], "context": ["c"], "response": ["r"], "label": [1]}).to_csv(labels, index=False)
    assert main(["report", str(SAMPLE_CSV), "--models", "hashing", "--n-boot", "0", "--labels", str(labels)]) == 2
    assert "none of the 1 labelled rows is in this table: the labels come from other data" in capsys.readouterr().err


def test_gate_policy_from_labels_equals_the_one_from_the_label_column(files, tmp_path):
    from_column, from_labels = tmp_path / "column.json", tmp_path / "labels.json"
    common = ["--model", "hashing", "--n-boot", "0"]
    assert main(["gate", str(SAMPLE_CSV), "--write-policy", str(from_column), *common]) == 0
    assert main(["gate", str(files["texts"]), "--labels", str(files["annotations"]), "--write-policy",
                 str(from_labels), *common]) == 0
    column, labelled = json.loads(from_column.read_text()), json.loads(from_labels.read_text())
    assert {k: v for k, v in labelled.items() if k != "created"} == {k: v for k, v in column.items() if k != "created"}
    assert main(["gate", str(files["texts"]), "--labels", str(files["table"]), "--policy", str(from_column),
                 *common]) == main(["gate", str(SAMPLE_CSV), "--policy", str(from_column), *common])


def test_a_missing_or_oversized_labels_file_is_refused(tmp_path, monkeypatch, capsys):
    args = ["report", str(SAMPLE_CSV), "--models", "hashing", "--n-boot", "0", "--labels"]
    assert main([*args, str(tmp_path / "absent.csv")]) == 2
    assert "no labels file at this path" in capsys.readouterr().err
    big = tmp_path / "big.csv"
    big.write_bytes(b"question,context,response,label\n" + b"q,c,r,1\n" * 200_000)
    monkeypatch.setenv("SGI_MAX_INPUT_MB", "1")
    assert main([*args, str(big)]) == 2
    assert "the labels file is larger than 1 MB" in capsys.readouterr().err


def test_compare_with_labels_from_a_table_equals_compare_on_the_labelled_files(files, tmp_path, capsys):
    common = ["--model", "hashing", "--n-boot", "50"]
    with_column, with_labels = tmp_path / "column.json", tmp_path / "labels.json"
    assert main(["compare", str(SAMPLE_CSV), str(SAMPLE_CSV), "--json", str(with_column), *common]) == 0
    assert main(["compare", str(files["texts"]), str(files["texts"]), "--labels", str(files["table"]),
                 "--json", str(with_labels), *common]) == 0
    assert capsys.readouterr().err.count("labels from labels.parquet: 300 of 300 matched rows of") == 2
    column, labelled = json.loads(with_column.read_text()), json.loads(with_labels.read_text())
    assert labelled == column
    # texts.csv has no label column: the 150 questions holding both classes were seen through the joined labels.
    assert labelled["match"]["mixed_label_keys"] == 150
