"""``score FILE --grounding-model DIR`` and ``report FILE --grounding-model DIR`` for a folder of each adapter kind."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.columns import grounding_columns
from sgi_core.grounding.scoring import grounding_scores
from sgi_core.io.scored import scored_with
from tests.conftest import SAMPLE_CSV

#: One folder of each adapter kind.
KINDS = {"nli": "bert_cen", "consistency": "roberta_two", "hhem": "hhem", "token": "modernbert_token"}


@pytest.fixture
def small_csv(tmp_path):
    frame = pd.read_csv(SAMPLE_CSV).head(12)
    frame.loc[3, "response"] = ""  # not scored, and kept
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_score_adds_the_model_columns_to_every_row(tiny_folders, tiny_models, small_csv, tmp_path, kind):
    out = tmp_path / "scored.parquet"
    folder = tiny_folders[KINDS[kind]]
    assert main(["score", str(small_csv), "-o", str(out), "--model", "hashing", "--grounding-model",
                 f"{kind}={folder}", "--no-self-test", "--batch-size", "4"]) == 0
    scored = pd.read_parquet(out)
    assert len(scored) == 12
    low, mean, chunks, cut = grounding_columns(kind)
    # The command runs the models on ONNX Runtime (auto on the CPU); the torch fixture is the reference.
    direct = grounding_scores(pd.read_csv(small_csv).fillna({"response": ""}), tiny_models[KINDS[kind]])
    np.testing.assert_allclose(scored[low], direct[f"grounding_{KINDS[kind]}_min"], atol=1e-5)
    np.testing.assert_allclose(scored[mean], direct[f"grounding_{KINDS[kind]}_mean"], atol=1e-5)
    assert np.isnan(scored[low][3]) and scored[chunks][3] == 0 and np.isfinite(scored[low].drop(3)).all()
    record = json.loads(scored_with(out)["grounding_models"])
    assert [(m["name"], m["adapter"]["kind"], m["self_test"]["ran"], m["backend"]) for m in record] == [
        (kind, kind, False, "onnx")]


def test_score_runs_the_grounding_models_on_the_backend_given(tiny_folders, small_csv, tmp_path):
    out = tmp_path / "scored.parquet"
    assert main(["score", str(small_csv), "-o", str(out), "--model", "hashing", "--backend", "torch",
                 "--grounding-model", f"m={tiny_folders['bert_cen']}", "--no-self-test"]) == 0
    assert json.loads(scored_with(out)["grounding_models"])[0]["backend"] == "torch"


def test_score_records_a_self_test_that_ran(tiny_folders, small_csv, tmp_path):
    # A random model passes or fails by chance: the record (or the refusal) must say which.
    out = tmp_path / "scored.parquet"
    code = main(["score", str(small_csv), "-o", str(out), "--model", "hashing", "--grounding-model",
                 f"m={tiny_folders['deberta_two']}"])
    if code == 0:
        test = json.loads(scored_with(out)["grounding_models"])[0]["self_test"]
        assert test["ran"] and test["passed"] and test["contradiction_mean"] <= test["entailment_mean"]
    else:
        assert code == 2 and not out.exists()


def test_score_refuses_a_pickle_only_folder(tiny_folders, small_csv, tmp_path, capsys):
    import shutil

    import torch
    from safetensors.torch import load_file

    folder = shutil.copytree(tiny_folders["bert_cen"], tmp_path / "pickled")
    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    out = tmp_path / "scored.csv"
    assert main(["score", str(small_csv), "-o", str(out), "--model", "hashing", "--grounding-model", str(folder),
                 "--no-self-test"]) == 2
    assert "only pickled weights" in capsys.readouterr().err and not out.exists()


def test_report_judges_the_model_beside_sgi(tiny_folders, tiny_models, tmp_path, capsys):
    from sklearn.metrics import roc_auc_score

    out = tmp_path / "report.json"
    frame = pd.read_csv(SAMPLE_CSV).head(60)
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    html = tmp_path / "report.html"
    assert main(["report", str(path), "--models", "hashing", "--json", str(out), "--n-boot", "20", "--html", str(html),
                 "--grounding-model", f"nli={tiny_folders['bert_cen']}", "--no-self-test"]) == 0
    assert "grounding model nli: weakest sentence" in html.read_text()
    text = capsys.readouterr().out
    assert "grounding_nli_min label-free" in " ".join(text.split())
    judged = json.loads(out.read_text())["models"]["hashing"]["detectors"]
    assert {"grounding_nli_min", "grounding_nli_mean"} <= set(judged)
    direct = grounding_scores(frame, tiny_models["bert_cen"])["grounding_bert_cen_min"]
    assert judged["grounding_nli_min"]["auroc"] == pytest.approx(roc_auc_score(frame["label"], direct), abs=1e-12)
    assert judged["grounding_nli_min"]["protocol"] == "label-free"
