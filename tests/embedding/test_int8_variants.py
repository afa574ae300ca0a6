"""int8 variants of the ONNX export: which nodes each leaves in fp32, and how close its vectors stay to fp32."""

import numpy as np
import onnx
import pytest
from onnx import helper

from sgi_core.embedding.onnx_encoder import torch_free_encoder
from sgi_core.models.int8 import INT8_VARIANTS, fp32_nodes, quantize_int8
from sgi_core.models.onnx_export import MODEL_FILE, ensure_export, export_folder

#: A graph named as torch exports a 12-layer BERT: embeddings, then per layer q/k/v, attention output and FFN.
LAYER_NODES = ("attention/self/query/MatMul", "attention/self/key/MatMul", "attention/self/value/MatMul",
               "attention/self/MatMul", "attention/output/dense/MatMul", "intermediate/dense/MatMul",
               "output/dense/MatMul", "output/LayerNorm/LayerNormalization")
EMBEDDING_NODES = ("/model/embeddings/word_embeddings/Gather", "/model/embeddings/position_embeddings/Gather",
                   "/model/embeddings/LayerNorm/LayerNormalization")


def _graph(layers: int = 12) -> onnx.GraphProto:
    names = [*EMBEDDING_NODES, *(f"/model/encoder/layer.{i}/{part}" for i in range(layers) for part in LAYER_NODES),
             "/model/Gather_4"]
    return helper.make_graph([helper.make_node("Identity", ["x"], ["x"], name=name) for name in names], "g", [], [])


def test_full_and_matmul_only_leave_no_node_named_in_fp32():
    assert fp32_nodes(_graph(), INT8_VARIANTS["full"]) == []
    assert fp32_nodes(_graph(), INT8_VARIANTS["matmul"]) == []
    assert INT8_VARIANTS["matmul"].op_types == ("MatMul",)  # the embedding Gathers are not quantised at all


@pytest.mark.parametrize("variant, layers", [("keep-last1", (11,)), ("keep-last2", (10, 11))])
def test_keeping_the_last_layers_keeps_the_embeddings_and_those_layers_by_number(variant, layers):
    kept = fp32_nodes(_graph(), INT8_VARIANTS[variant])
    expected = [*EMBEDDING_NODES, *(f"/model/encoder/layer.{i}/{part}" for i in layers for part in LAYER_NODES)]
    assert kept == expected  # layer 11 and 10, not 9 or 2: numbers, not names, are compared


def test_the_attention_variant_keeps_value_and_feed_forward_projections():
    kept = fp32_nodes(_graph(layers=2), INT8_VARIANTS["qk-attn-out"])
    parts = ("attention/self/value/MatMul", "intermediate/dense/MatMul", "output/dense/MatMul",
             "output/LayerNorm/LayerNormalization")
    assert kept == [f"/model/encoder/layer.{i}/{part}" for i in range(2) for part in parts]
    assert not any("attention/output" in name or "query" in name or "key" in name for name in kept)


def test_a_static_variant_needs_calibration_inputs(tmp_path):
    with pytest.raises(ValueError, match="needs calibration inputs"):
        quantize_int8(tmp_path / "absent.onnx", tmp_path / "out.onnx", "static-qdq")


@pytest.fixture(scope="module")
def minilm_fp32(minilm_torch, tmp_path_factory):
    """The torch-free fp32 ``onnx`` encoder of MiniLM and the path of its export, in a folder of this module's own."""
    cache = tmp_path_factory.mktemp("int8-variants")
    fingerprint = minilm_torch.cache_key.split("|")[0]
    path = ensure_export(minilm_torch.model, export_folder(cache, fingerprint, "onnx"), "onnx")
    encoder = torch_free_encoder(minilm_torch.model_id, minilm_torch.model[0].auto_model.name_or_path,
                                 fingerprint=fingerprint, backend="onnx", export_dir=cache)
    return encoder, path


@pytest.mark.slow
def test_on_the_minilm_export_keep_last1_excludes_the_embeddings_and_layer_5(minilm_fp32, tmp_path):
    _, path = minilm_fp32
    graph = onnx.load(str(path)).graph
    kept = set(fp32_nodes(graph, INT8_VARIANTS["keep-last1"]))
    assert {"/model/embeddings/word_embeddings/Gather", "/model/embeddings/position_embeddings/Gather",
            "/model/embeddings/token_type_embeddings/Gather"} <= kept
    assert kept == {n.name for n in graph.node if "/embeddings/" in n.name or "/encoder/layer.5/" in n.name}
    quantize_int8(path, tmp_path / MODEL_FILE, "keep-last1")
    ops = {n.name: n.op_type for n in onnx.load(str(tmp_path / MODEL_FILE)).graph.node}
    assert ops["/model/encoder/layer.5/intermediate/dense/MatMul"] == "MatMul"  # left in fp32
    assert ops["/model/encoder/layer.4/intermediate/dense/MatMul_quant"] == "MatMulInteger"


@pytest.mark.slow
def test_the_attention_variant_is_closer_to_fp32_than_full_int8(minilm_fp32, tmp_path):
    encoder, path = minilm_fp32
    texts = ["Arthur's Magazine was started first.", "The capital of France is Paris.",
             "Kim Jong-il was born in 1941 in the Soviet Union.", "Who directed the film that won in 1994?",
             "A river flows from the mountains to the sea, carrying sediment along its banks."]
    reference = encoder.encode(texts)
    errors = {}
    for variant in ("full", "qk-attn-out"):
        quantize_int8(path, tmp_path / f"{variant}.onnx", variant)
        int8 = encoder.with_model(tmp_path / f"{variant}.onnx", f"onnx-int8-{variant}")
        assert int8.cache_key == encoder.cache_key.replace("|onnx", f"|onnx-int8-{variant}")
        errors[variant] = 1 - np.sum(int8.encode(texts) * reference, axis=1)  # unit vectors: 1 - cosine
    assert np.all(errors["qk-attn-out"] < errors["full"]) and errors["qk-attn-out"].max() < 1e-3
    assert errors["qk-attn-out"].min() > 0  # really quantised
