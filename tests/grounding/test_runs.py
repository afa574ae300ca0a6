"""compare and gate --baseline score unscored runs with a grounding model and compare its scores like any other."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.grounding.scoring import grounding_scores
from sgi_core.runs.reading import read_run
from tests.conftest import SAMPLE_CSV


@pytest.fixture
def runs(tmp_path):
    base = pd.read_csv(SAMPLE_CSV).head(40)
    new = base.copy()
    new.loc[::4, "response"] = "Nobody knows anything about it."
    paths = tmp_path / "base.csv", tmp_path / "new.csv"
    base.to_csv(paths[0], index=False)
    new.to_csv(paths[1], index=False)
    return base, new, paths


def test_compare_reports_the_grounding_score_of_both_runs(tiny_folders, runs, tmp_path):
    from sgi_core.grounding.runtime import load_grounding_model

    base, new, (base_path, new_path) = runs
    out = tmp_path / "comparison.json"
    assert main(["compare", str(base_path), str(new_path), "--key", "id", "--model", "hashing", "--n-boot", "50",
                 "--grounding-model", f"nli={tiny_folders['bert_cen']}", "--no-self-test", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    (delta,) = [s for s in data["scores"] if s["score"] == "grounding_nli_min"]
    model = load_grounding_model(tiny_folders["bert_cen"], backend="onnx", self_test=False)  # as the command ran it
    direct = [grounding_scores(frame, model)["grounding_bert_cen_min"].mean() for frame in (base, new)]
    assert (delta["mean_base"], delta["mean_new"]) == pytest.approx(direct, abs=1e-9)
    assert delta["n_keys"] == 40 and delta["verdict"] in ("improvement", "regression", "no clear change",
                                                          "not validated")
    assert not [s for s in data["scores"] if s["score"].endswith(("_chunks", "_cut"))]


def test_gate_holds_a_grounding_score_to_the_interval_compare_reports(tiny_folders, runs, tmp_path):
    _, _, (base_path, new_path) = runs
    model = ["--key", "id", "--model", "hashing", "--grounding-model", f"nli={tiny_folders['bert_cen']}",
             "--no-self-test", "--n-boot", "50"]
    out = tmp_path / "comparison.json"
    assert main(["compare", str(base_path), str(new_path), *model, "--json", str(out)]) == 0
    (delta,) = [s for s in json.loads(out.read_text())["scores"] if s["score"] == "grounding_nli_mean"]
    gate = ["gate", str(new_path), "--baseline", str(base_path), *model, "--score", "grounding_nli_mean",
            "--allow-unvalidated"]
    assert main([*gate, "--max-drop", "1.0"]) == 0  # a probability's mean cannot drop by more than 1
    assert main([*gate, "--max-drop", "0"]) == (0 if delta["ci"][0] >= 0 else 1)


def test_a_scored_run_takes_the_scores_but_not_the_counts(tiny_models):
    frame = pd.read_csv(SAMPLE_CSV).head(10)
    scored = frame.assign(sgi=1.0, theta_qc=1.0, theta_rq=1.0, theta_rc=1.0, sgi_status="ok")
    scored = scored.join(grounding_scores(frame, tiny_models["bert_cen"]))
    run = read_run(scored, source="run.csv", scorer=None, key="id")
    assert {"grounding_bert_cen_min", "grounding_bert_cen_mean"} <= set(run.scores)
    assert not {"grounding_bert_cen_chunks", "grounding_bert_cen_cut"} & set(run.scores)
    np.testing.assert_allclose(run.frame["grounding_bert_cen_min"], scored["grounding_bert_cen_min"])
