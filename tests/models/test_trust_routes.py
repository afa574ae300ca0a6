"""Every route by which a model folder names code is held to the allow-list, whatever the string looks like."""

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sgi_core.errors import SGIInputError
from sgi_core.models.trust import ALLOWED_REFERENCES, TORCH_ACTIVATIONS, check_model_code, is_allowed
from tests.conftest import REPO

EVIL_CODE = "from pathlib import Path\nPath({marker!r}).write_text('ran')\n\nclass Evil:\n    pass\n"
MINILM_MODULES = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]


def _folder(root: Path, modules: list[dict], files: dict[str, object] = ()) -> Path:
    folder = root / "model"
    folder.mkdir()
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    for relative, content in dict(files).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(content if isinstance(content, str) else json.dumps(content))
    return folder


@pytest.mark.parametrize("class_ref", ["evil.Evil ", "evil.Evil\t", "evil-mod.Evil", " evil.Evil", "evil.Evil\n",
                                       "someone/repo--evil.Evil", "sentence_transformers.models.Pooling ",
                                       "sentence_transformers.util.import_from_string"])
def test_module_types_that_a_pattern_would_skip_are_refused(tmp_path, class_ref):
    modules = [{"idx": 0, "name": "0", "path": "", "type": class_ref}]
    folder = _folder(tmp_path, modules, {"evil.py": EVIL_CODE.format(marker=str(tmp_path / "marker"))})
    with pytest.raises(SGIInputError, match=r"'modules.json' names module .*--trust-model-code"):
        check_model_code(folder)


@pytest.mark.parametrize("value", [5, None, ["sentence_transformers.models.Pooling"], {"a": "b"}])
def test_a_reference_that_is_not_a_string_is_refused(tmp_path, value):
    folder = _folder(tmp_path, [{"idx": 0, "name": "0", "path": "", "type": value}])
    with pytest.raises(SGIInputError, match="would import code of its own"):
        check_model_code(folder)


def _router_folder(root: Path, sub_config: dict, nested: dict | None = None) -> Path:
    router = {"types": {"query": "sentence_transformers.models.Dense"}, "structure": {"query": ["query"]},
              "parameters": {}}
    files = {"2_Router/router_config.json": router, "2_Router/query/config.json": sub_config}
    if nested:
        files.update(nested)
    return _folder(root, [*MINILM_MODULES, {"idx": 2, "name": "2", "path": "2_Router",
                                            "type": "sentence_transformers.models.Router"}], files)


def test_a_router_sub_module_activation_is_checked(tmp_path):
    dense = {"in_features": 4, "out_features": 4, "bias": True,
             "activation_function": "torch.utils.collect_env.main"}
    folder = _router_folder(tmp_path, dense)
    with pytest.raises(SGIInputError, match=r"'2_Router/query/config.json' "
                                            r"names module 'torch.utils.collect_env.main'"):
        check_model_code(folder)


def test_nested_modules_json_and_router_sub_folders_are_followed(tmp_path):
    nested = {"2_Router/query/modules.json": [{"idx": 0, "name": "0", "path": "", "type": "evil.Evil "}]}
    folder = _router_folder(tmp_path, {"in_features": 4, "out_features": 4}, nested)
    with pytest.raises(SGIInputError, match=r"'2_Router/query/modules.json' names module 'evil.Evil '"):
        check_model_code(folder)


def test_router_types_and_nested_paths_must_stay_inside_the_folder(tmp_path):
    router = {"types": {"../../outside": "sentence_transformers.models.Dense"}, "structure": {}, "parameters": {}}
    folder = _folder(tmp_path, MINILM_MODULES, {"2_Router/router_config.json": router})
    with pytest.raises(SGIInputError, match=r"module path '\.\./\.\./outside'.*leaves the folder"):
        check_model_code(folder)


@pytest.mark.parametrize(("key", "value"), [("activation_fn", "os.system"),
                                            ("sbert_ce_default_activation_function", "builtins.exec"),
                                            ("tokenizer_class", "evil.Tokenizer")])
def test_transformers_and_cross_encoder_routes_are_checked(tmp_path, key, value):
    folder = _folder(tmp_path, MINILM_MODULES)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "sentence_transformers": {key: value}}))
    with pytest.raises(SGIInputError, match="'config.json' names module"):
        check_model_code(folder)


def test_plain_names_and_the_allow_list_pass(tmp_path):
    files = {"config.json": {"model_type": "llama", "rope_scaling": {"type": "linear"}, "hidden_act": "gelu_new",
                             "tokenizer_class": "BertTokenizer"},
             "1_Pooling/config.json": {"pooling_mode_mean_tokens": True},
             "2_Dense/config.json": {"activation_function": "torch.nn.modules.activation.Tanh"},
             "tokenizer.json": {"model": {"type": "not.checked"}}}
    modules = [*MINILM_MODULES, {"idx": 2, "name": "2", "path": "2_Dense",
                                 "type": "sentence_transformers.base.modules.dense.Dense"}]
    check_model_code(_folder(tmp_path, modules, files))


def test_the_allow_list_names_exactly_the_installed_module_classes():
    """Every listed name resolves to a class of sentence-transformers (or torch.nn), and every module class the
    installed release exports is listed: the list written out cannot drift from the loader it guards."""
    import torch

    for name in ALLOWED_REFERENCES:
        where, _, attribute = name.rpartition(".")
        value = getattr(importlib.import_module(where), attribute)
        assert inspect.isclass(value) and (issubclass(value, torch.nn.Module) or "tokenizer" in where), name
    base = importlib.import_module("sentence_transformers.base.modules").Module
    for package in ("sentence_transformers.models", "sentence_transformers.sparse_encoder.models"):
        for attribute, value in vars(importlib.import_module(package)).items():
            if inspect.isclass(value) and issubclass(value, base) and value.__name__ not in ("Module", "InputModule"):
                assert f"{package}.{attribute}" in ALLOWED_REFERENCES
                assert f"{value.__module__}.{value.__qualname__}" in ALLOWED_REFERENCES
    assert TORCH_ACTIVATIONS <= ALLOWED_REFERENCES
    assert not is_allowed("torch.nn.modules.activation.Tanh ")


@pytest.mark.slow
@pytest.mark.parametrize("class_ref", ["evil.Evil ", "evil-mod.Evil"])
def test_score_never_runs_the_folder_code(tmp_path, class_ref):
    """The reproducer end to end: ``score --model FOLDER --backend torch`` stops before the folder's code runs."""
    marker = tmp_path / "marker"
    module_file = class_ref.split(".")[0] + ".py"
    folder = _folder(tmp_path, [{"idx": 0, "name": "0", "path": "", "type": class_ref}],
                     {module_file: EVIL_CODE.format(marker=str(marker))})
    rows = tmp_path / "rows.csv"
    rows.write_text("question,context,response\nq,c,r\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "hf-modules"),
           "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "sgi_core", "score", str(rows), "-o", str(tmp_path / "out.csv"),
                           "--model", str(folder), "--backend", "torch"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "would import code of its own" in done.stderr
    assert not marker.exists()
