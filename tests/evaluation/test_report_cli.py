import json

import pytest

from sgi_core.cli import main
from sgi_core.embedding import load_encoder
from sgi_core.evaluation import evaluate
from sgi_core.io.triples import load_triples
from sgi_core.pipelines.model_comparison import ModelComparison, compare_models
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV


def test_report_prints_tables_and_writes_contract_json(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["report", str(SAMPLE_CSV), "--models", "hashing,hashing-64", "--json", str(out),
                 "--n-boot", "100"]) == 0
    text = capsys.readouterr().out
    for heading in ("Table 1.", "Table 2 (hashing)", "Table 3 (hashing-64)", "Table 5.", "Baselines beside SGI",
                    "Does SGI add signal beyond response length?", "Cross-model agreement"):
        assert heading in text
    data = json.loads(out.read_text())
    block = data["models"]["hashing"]
    for key in ("n", "n_valid", "n_halluc", "sgi_mean_valid", "sgi_mean_halluc", "cohens_d", "cohens_d_ci",
                "auroc", "auroc_ci"):
        assert key in block
    assert (block["n"], block["n_valid"], block["n_halluc"]) == (300, 150, 150)
    assert {"neg_response_length", "lexical_groundedness", "theta_rq_hashing"} <= set(data["baselines"])
    assert data["agreement"]["names"] == ["hashing", "hashing-64"]


def test_report_numbers_equal_a_direct_evaluation(tmp_path):
    out = tmp_path / "report.json"
    assert main(["report", str(SAMPLE_CSV), "--models", "hashing", "--json", str(out), "--n-boot", "100"]) == 0
    block = json.loads(out.read_text())["models"]["hashing"]
    with pytest.warns(UndefinedStatisticWarning, match="lexical groundedness is NaN"):
        direct = evaluate(score_table(load_triples(SAMPLE_CSV), load_encoder("hashing")), n_boot=100)
    assert block["cohens_d"] == direct.effect_size.cohens_d
    assert block["auroc"] == direct.roc.auroc
    assert block["auroc_ci"] == list(direct.roc.auroc_ci)


def test_report_bad_model_is_a_clean_error(capsys):
    assert main(["report", str(SAMPLE_CSV), "--models", "no-such-model", "--n-boot", "10"]) == 2
    assert "no-such-model" in capsys.readouterr().err


def test_comparison_round_trips(recwarn):
    comparison, scored = compare_models(load_triples(SAMPLE_CSV), ["hashing"], n_boot=20, use_cache=False)
    assert comparison.agreement is None and list(scored) == ["hashing"]
    back = ModelComparison.from_dict(json.loads(json.dumps(comparison.to_dict())))
    assert back.to_dict() == comparison.to_dict()
