"""``backend="onnx"``: each adapter's probabilities as torch gives them, exported once, rebuilt when damaged."""

import argparse
import json

import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.grounding.family import provenance
from sgi_core.grounding.onnx_network import export_source
from sgi_core.grounding.runtime import load_grounding_model
from sgi_core.models import onnx_export
from tests.grounding.conftest import FOLDERS

#: Pairs of different lengths: run three at a time, each batch pads its shorter pairs.
PREMISES = ["Paris is the capital of France.", "Water boils at one hundred degrees.",
            "A quick brown fox jumps over the lazy dog near the river that flows north through the valley.",
            "Tom is a doctor.", "It rained heavily in Oslo all day on Monday."]
HYPOTHESES = ["Paris is in France.", "Water boils.", "The fox jumps.", "Tom works at a hospital in the city.",
              "It was dry in Oslo."]


def load(folder, backend="onnx"):
    return load_grounding_model(folder, backend=backend, self_test=False)


@pytest.fixture
def export_calls(monkeypatch) -> list:
    """The folders' exports made while the test runs, one entry each."""
    calls, export = [], onnx_export.export_module

    def counted(*args, **kwargs):
        calls.append(args[3])
        return export(*args, **kwargs)

    monkeypatch.setattr(onnx_export, "export_module", counted)
    return calls


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_onnx_gives_the_torch_probabilities(tiny_folders, tiny_models, name):
    onnx, reference = load(tiny_folders[name]), tiny_models[name]
    assert (onnx.backend, reference.backend) == ("onnx", "torch")
    expected = reference.support(PREMISES, HYPOTHESES, batch_size=3)
    np.testing.assert_allclose(onnx.support(PREMISES, HYPOTHESES, batch_size=3), expected, atol=1e-5, rtol=0)
    assert np.ptp(expected) > 1e-4  # a wrong label, token or row would show
    assert onnx.cache_source == reference.cache_source  # one pair cache for both backends


@pytest.mark.parametrize("name, segments", [("roberta_enc", False), ("roberta_two", False), ("bert_cen", True),
                                            ("hhem", False)])
def test_the_session_reads_the_inputs_the_network_reads(tiny_folders, name, segments):
    names = set(load(tiny_folders[name]).session.input_names)
    assert names == {"input_ids", "attention_mask"} | ({"token_type_ids"} if segments else set())


def test_the_export_is_made_once_and_rebuilt_when_damaged(tiny_folders, tiny_models, isolated_cache, export_calls):
    first = load(tiny_folders["bert_token"])
    again = load(tiny_folders["bert_token"])
    assert len(export_calls) == 1 and again.backend == "onnx"
    folder = onnx_export.export_folder(isolated_cache, export_source(first), "onnx")
    model = folder / onnx_export.MODEL_FILE
    with open(model, "r+b") as handle:
        handle.truncate(model.stat().st_size // 2)
    rebuilt = load(tiny_folders["bert_token"])
    assert len(export_calls) == 2 and onnx_export.is_intact(folder)
    np.testing.assert_allclose(rebuilt.support(PREMISES, HYPOTHESES, batch_size=3),
                               tiny_models["bert_token"].support(PREMISES, HYPOTHESES, batch_size=3), atol=1e-5)


def test_each_folder_has_its_own_export(tiny_folders, isolated_cache, export_calls):
    load(tiny_folders["bert_cen"])
    load(tiny_folders["bert_enc"])
    assert len(export_calls) == 2 and len(list((isolated_cache / "onnx").iterdir())) == 2


def test_a_network_that_does_not_export_runs_on_torch_with_a_warning(tiny_folders, tiny_models, isolated_cache,
                                                                    monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("Exporting the operator 'aten::bucketize' to ONNX opset version 17 is not supported")

    monkeypatch.setattr(onnx_export, "export_module", fails)
    with pytest.warns(RuntimeWarning, match="grounding model 'deberta_cne' .*does not export to ONNX .*aten::bucketize"
                                           ".*torch runs it"):
        model = load(tiny_folders["deberta_cne"])
    assert model.backend == "torch" and model.session is None
    np.testing.assert_allclose(model.support(PREMISES, HYPOTHESES),
                               tiny_models["deberta_cne"].support(PREMISES, HYPOTHESES), atol=0)
    assert not list((isolated_cache / "onnx").iterdir())  # nothing half-written is left


def test_int8_is_refused_for_grounding_models(tiny_folders):
    with pytest.raises(SGIInputError, match="grounding models do not run in int8") as refused:
        load(tiny_folders["bert_cen"], backend="onnx-int8")
    assert "onnx" in refused.value.hint and "torch" in refused.value.hint
    with pytest.raises(SGIInputError, match="unknown backend 'tensorrt'"):
        load(tiny_folders["bert_cen"], backend="tensorrt")


def test_auto_is_onnx_on_the_cpu_and_torch_without_onnx_runtime(tiny_folders, monkeypatch):
    import importlib.util

    assert load_grounding_model(tiny_folders["hhem"], device="cpu", self_test=False).backend == "onnx"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    assert load_grounding_model(tiny_folders["hhem"], device="cpu", self_test=False).backend == "torch"


def test_the_self_test_runs_on_the_backend_that_loaded(tiny_folders, monkeypatch):
    from sgi_core.grounding import runtime

    backends = []
    monkeypatch.setattr(runtime, "run_self_test", lambda support, source: backends.append(support.__self__.backend)
                        or runtime.SelfTest.not_run())
    load_grounding_model(tiny_folders["roberta_two"], backend="onnx")
    load_grounding_model(tiny_folders["roberta_two"], backend="torch")
    assert backends == ["onnx", "torch"]


def test_provenance_records_the_backend(tiny_folders, tiny_models):
    record = json.loads(provenance([load(tiny_folders["modernbert_token"]), tiny_models["hhem"]]))
    assert [(m["name"], m["backend"]) for m in record] == [("modernbert_token", "onnx"), ("hhem", "torch")]


@pytest.mark.parametrize("given, runs", [("onnx-int8", "onnx"), ("onnx", "onnx"), ("torch", "torch"),
                                         ("auto", "onnx")])
def test_the_command_line_backend_runs_the_grounding_models(tiny_folders, given, runs):
    from sgi_core.commands.resource_options import given_resources

    args = argparse.Namespace(grounding_model=[f"m={tiny_folders['bert_cen']}"], trust_model_code=False,
                              device="cpu", backend=given, no_self_test=True)
    assert [model.backend for model in given_resources(args)["grounding_models"]] == [runs]
