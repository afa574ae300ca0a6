"""The load-time self-test refuses a model that scores plain contradictions above plain entailments."""

import json
import shutil

import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.grounding.runtime import load_grounding_model
from sgi_core.grounding.selftest import SELF_TEST_PAIRS, run_self_test
from tests.grounding.oracle import direct_support


def _stated(premises, hypotheses):
    """A toy checker: 0.9 when the hypothesis's words all occur in the premise, else 0.1."""
    return np.array([0.9 if set(h.lower().strip(".").split()) <= set(p.lower().strip(".").split()) else 0.1
                     for p, h in zip(premises, hypotheses)])


def test_a_working_checker_passes_and_its_means_are_recorded():
    result = run_self_test(_stated, source="toy")
    entailed = _stated(*zip(*[(p, e) for p, e, _ in SELF_TEST_PAIRS]))
    assert result.passed and result.ran
    assert result.entailment_mean == pytest.approx(entailed.mean())
    assert result.contradiction_mean == pytest.approx(0.1)
    assert result.to_dict()["passed"] is True


def test_an_inverted_checker_is_refused():
    with pytest.raises(SGIInputError, match="labels look inverted: check id2label.*supported_label.*--no-self-test"):
        run_self_test(lambda p, h: 1.0 - _stated(p, h), source="toy")


def test_a_model_is_read_by_its_label_names_so_swapping_them_swaps_the_self_test_means(tiny_folders, tmp_path):
    means = {}
    for order in ("as built", "swapped"):
        folder = shutil.copytree(tiny_folders["roberta_two"], tmp_path / order.replace(" ", "_"))
        if order == "swapped":
            config = json.loads((folder / "config.json").read_text())
            config["id2label"] = {"0": "supported", "1": "unsupported"}
            (folder / "config.json").write_text(json.dumps(config))
        entail = np.mean([direct_support(folder, p, e, label="supported") for p, e, _ in SELF_TEST_PAIRS])
        contra = np.mean([direct_support(folder, p, c, label="supported") for p, _, c in SELF_TEST_PAIRS])
        model = load_grounding_model(folder, self_test=False)
        result = run_self_test(model.support, source=str(folder)) if abs(entail - contra) >= 0.2 else None
        means[order] = (entail, contra)
        if result is not None:  # only a model whose gap clears the margin reaches a verdict
            assert result.entailment_mean == pytest.approx(entail, abs=1e-6)
    (e1, c1), (e2, c2) = means["as built"], means["swapped"]
    assert e1 + e2 == pytest.approx(1.0, abs=1e-6) and c1 + c2 == pytest.approx(1.0, abs=1e-6)


def test_no_self_test_records_that_it_was_skipped(tiny_models):
    assert tiny_models["bert_cen"].self_test.to_dict() == {"ran": False, "entailment_mean": None,
                                                           "contradiction_mean": None, "passed": None}
