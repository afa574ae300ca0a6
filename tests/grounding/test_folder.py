"""Safe loading: a folder is the only source, pickles need consent, code shipped with a model never runs."""

import json
import shutil

import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.grounding.folder import parse_model_option, read_folder
from sgi_core.grounding.runtime import load_grounding_model
from sgi_core.grounding.scoring import grounding_scores

FRAME = pd.DataFrame({"context": ["Paris is the capital of France.", "Water boils at one hundred degrees."],
                      "response": ["Paris is in France.", "Water boils."]})


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


@pytest.fixture
def pickle_only(tiny_folders, tmp_path):
    import torch
    from safetensors.torch import load_file

    folder = _copy(tiny_folders["bert_cen"], tmp_path / "pickled")
    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    return folder


def test_pickle_only_folder_is_refused_with_how_to_convert(pickle_only):
    with pytest.raises(SGIInputError, match=r"only pickled weights \(pytorch_model.bin\).*safetensors.torch "
                                            r"import save_file.*--trust-model-code"):
        load_grounding_model(pickle_only, self_test=False)


def test_pickle_only_folder_loads_with_consent_and_scores_as_its_safetensors(pickle_only, tiny_models):
    model = load_grounding_model(pickle_only, name="bert_cen", trust_model_code=True, self_test=False)
    assert not model.folder.safetensors
    pd.testing.assert_frame_equal(grounding_scores(FRAME, model), grounding_scores(FRAME, tiny_models["bert_cen"]))


def _edit_config(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def test_auto_map_is_refused(tiny_folders, tmp_path):
    folder = _copy(tiny_folders["bert_cen"], tmp_path / "mapped")
    _edit_config(folder, auto_map={"AutoModelForSequenceClassification": "modeling_evil.Evil"})
    (folder / "modeling_evil.py").write_text("raise SystemExit('ran')\n")
    with pytest.raises(SGIInputError, match=r"code shipped with the model \(auto_map\), which is never run"):
        load_grounding_model(folder, self_test=False)


def test_an_architecture_transformers_lacks_is_refused(tiny_folders, tmp_path):
    folder = _copy(tiny_folders["bert_cen"], tmp_path / "custom")
    _edit_config(folder, architectures=["EvilForSequenceClassification"])
    with pytest.raises(SGIInputError, match="architecture 'EvilForSequenceClassification', which transformers does"):
        load_grounding_model(folder, self_test=False)


def test_hhem_auto_map_is_never_read(tiny_models):
    # The HHEM folder's config names its own code; the manifest's adapter builds the model from transformers.
    assert "auto_map" in tiny_models["hhem"].folder.config and tiny_models["hhem"].adapter.kind == "hhem"


def test_json_naming_a_module_fails_the_trust_check(tiny_folders, tmp_path):
    folder = _copy(tiny_folders["bert_cen"], tmp_path / "named")
    (folder / "extra_config.json").write_text(json.dumps({"tokenizer_class": "evil_module.Tokenizer"}))
    with pytest.raises(SGIInputError, match="would import code of its own.*evil_module.Tokenizer"):
        read_folder(folder)


@pytest.mark.parametrize("make, match", [
    (lambda d: d, "no config.json"),
    (lambda d: d / "missing", "no model folder at"),
])
def test_folders_without_a_model(tmp_path, make, match):
    with pytest.raises(SGIInputError, match=match):
        read_folder(make(tmp_path))


def test_a_folder_without_weights(tiny_folders, tmp_path):
    folder = _copy(tiny_folders["bert_cen"], tmp_path / "empty")
    (folder / "model.safetensors").unlink()
    with pytest.raises(SGIInputError, match=r"holds no weights \(\*.safetensors\)"):
        read_folder(folder)


def test_a_folder_name_becomes_a_short_name(tiny_folders, tmp_path):
    folder = _copy(tiny_folders["bert_cen"], tmp_path / "deberta-v3.mnli")
    assert read_folder(folder).name == "deberta_v3_mnli"


def test_a_bad_short_name(tiny_folders):
    with pytest.raises(SGIInputError, match="may hold only letters, digits and '_'.*NAME=DIR"):
        read_folder(tiny_folders["bert_cen"], name="my-model")


@pytest.mark.parametrize("text, expected", [("nli=dir/a", ("nli", "dir/a")), ("dir/a", (None, "dir/a")),
                                            ("./x=y", (None, "./x=y")), ("a_1=/abs", ("a_1", "/abs"))])
def test_parse_model_option(text, expected):
    assert parse_model_option(text) == expected


def test_the_fingerprint_follows_the_weights(tiny_folders, tmp_path):
    folder = _copy(tiny_folders["bert_cen"], tmp_path / "fp")
    before = read_folder(folder).fingerprint
    assert read_folder(folder).fingerprint == before
    (folder / "model.safetensors").write_bytes((folder / "model.safetensors").read_bytes()[:-4] + b"\0\0\0\0")
    assert read_folder(folder).fingerprint != before


def test_a_single_segment_model_reads_no_segment_ids_from_a_generic_tokenizer(tiny_folders, tiny_models, tmp_path):
    folder = _copy(tiny_folders["roberta_enc"], tmp_path / "generic")
    config = json.loads((folder / "tokenizer_config.json").read_text())
    # A BERT-style tokenizer: segment ids, 1 on the second segment, which a one-row segment table cannot read.
    config["model_input_names"] = ["input_ids", "token_type_ids", "attention_mask"]
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    model = load_grounding_model(folder, name="roberta_enc", self_test=False)
    assert max(model.tokenizer(["a"], ["b"])["token_type_ids"][0]) == 1
    pd.testing.assert_frame_equal(grounding_scores(FRAME, model), grounding_scores(FRAME, tiny_models["roberta_enc"]))
