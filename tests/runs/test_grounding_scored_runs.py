"""compare and gate --baseline add a grounding model's scores to runs that are already scored, as to unscored ones."""

import json

import pytest

from sgi_core.cli import main
from sgi_core.grounding.scoring import grounding_scores
from tests.grounding.conftest import tiny_folders  # noqa: F401  (the session's tiny model folders)
from tests.grounding.test_runs import runs  # noqa: F401


@pytest.fixture
def scored_runs(runs, tmp_path):  # noqa: F811
    base, new, _ = runs
    paths = tmp_path / "base_scored.csv", tmp_path / "new_scored.csv"
    for frame, path in zip((base, new), paths):
        frame.assign(theta_qc=1.0, theta_rq=1.0, theta_rc=1.0, sgi=1.0, sgi_status="ok").to_csv(path, index=False)
    return base, new, paths


def test_compare_scores_the_grounding_model_on_scored_files(tiny_folders, scored_runs, tmp_path):  # noqa: F811
    from sgi_core.grounding.runtime import load_grounding_model

    base, new, (base_path, new_path) = scored_runs
    out = tmp_path / "comparison.json"
    assert main(["compare", str(base_path), str(new_path), "--key", "id", "--n-boot", "50", "--grounding-model",
                 f"nli={tiny_folders['bert_cen']}", "--no-self-test", "--json", str(out)]) == 0
    scores = {s["score"]: s for s in json.loads(out.read_text())["scores"]}
    model = load_grounding_model(tiny_folders["bert_cen"], backend="onnx", self_test=False)  # as the command ran it
    direct = [grounding_scores(frame, model)["grounding_bert_cen_min"].mean() for frame in (base, new)]
    assert (scores["grounding_nli_min"]["mean_base"], scores["grounding_nli_min"]["mean_new"]) == pytest.approx(
        direct, abs=1e-9)


def test_gate_baseline_holds_the_grounding_score_of_scored_files(tiny_folders, scored_runs):  # noqa: F811
    _, _, (base_path, new_path) = scored_runs
    assert main(["gate", str(new_path), "--baseline", str(base_path), "--key", "id", "--grounding-model",
                 f"nli={tiny_folders['bert_cen']}", "--no-self-test", "--n-boot", "50", "--score",
                 "grounding_nli_mean", "--allow-unvalidated", "--max-drop", "1.0"]) == 0
