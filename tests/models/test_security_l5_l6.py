"""A Dense module's activation must be a torch.nn activation (L5); the ONNX export folders are the owner's (L6)."""

import json
import os
import stat

import pytest

from sgi_core.errors import SGIInputError
from sgi_core.models import onnx_export
from sgi_core.models.cache_folder import private_folder
from sgi_core.models.trust import TORCH_ACTIVATIONS, check_model_code


def dense_folder(root, activation):
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}]
    (root / "modules.json").write_text(json.dumps(modules))
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 4}))
    (root / "2_Dense").mkdir()
    config = {"in_features": 4, "out_features": 2, "bias": True}
    if activation is not None:
        config["activation_function"] = activation
    (root / "2_Dense" / "config.json").write_text(json.dumps(config))
    return root


@pytest.mark.parametrize("activation", ["torch.os.system", "torch.hub.load", "torch.load",
                                        "torch.utils.cpp_extension.load", "evil_module.Act", "torch.nn.Tanh.x",
                                        "torch.nn.modules.activation.Threshold", "torch"])
def test_a_dense_activation_outside_torch_nn_activations_is_refused(tmp_path, activation):
    folder = dense_folder(tmp_path, activation)
    with pytest.raises(SGIInputError, match=rf"'2_Dense/config.json' names module '{activation}'.*--trust-model-code"):
        check_model_code(folder)
    check_model_code(folder, trust_model_code=True)


@pytest.mark.parametrize("activation", [None, "torch.nn.modules.activation.Tanh", "torch.nn.modules.linear.Identity",
                                        "torch.nn.Identity", "torch.nn.GELU", "torch.nn.modules.activation.ReLU"])
def test_torch_nn_activations_pass(tmp_path, activation):
    check_model_code(dense_folder(tmp_path, activation))


def test_the_allowed_activations_are_torch_nn_modules_made_without_arguments():
    import importlib

    import torch

    for name in TORCH_ACTIVATIONS:
        module, cls = name.rsplit(".", 1)
        made = getattr(importlib.import_module(module), cls)()  # as sentence-transformers' Dense.load calls it
        assert isinstance(made, torch.nn.Module), name


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_onnx_export_folders_are_created_owner_only(tmp_path, monkeypatch):
    monkeypatch.setattr(onnx_export, "_export_fp32", lambda st_model, target: target.write_bytes(b"onnx"))
    cache = tmp_path / "fresh" / "cache"
    folder = onnx_export.export_folder(cache, "weights", "onnx")
    old = os.umask(0o022)
    try:
        model = onnx_export.ensure_export(None, folder, "onnx")
    finally:
        os.umask(old)
    assert model.read_bytes() == b"onnx"
    assert {str(p.relative_to(tmp_path)): _mode(p) for p in (tmp_path / "fresh", cache, cache / "onnx", folder)} == {
        "fresh": 0o700, "fresh/cache": 0o700, "fresh/cache/onnx": 0o700, str(folder.relative_to(tmp_path)): 0o700}


def test_a_private_folder_keeps_existing_parents_and_refuses_a_file(tmp_path):
    os.chmod(tmp_path, 0o755)
    old = os.umask(0o022)
    try:
        private_folder(tmp_path / "a" / "b")
    finally:
        os.umask(old)
    assert (_mode(tmp_path), _mode(tmp_path / "a"), _mode(tmp_path / "a" / "b")) == (0o755, 0o700, 0o700)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        private_folder(tmp_path / "file")
    with pytest.raises(OSError):
        private_folder(tmp_path / "file" / "below")
