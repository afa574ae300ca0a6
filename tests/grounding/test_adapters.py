"""Adapters detected from config.json, labels found by name, the manifest overriding detection."""

import json

import pytest

from sgi_core.errors import SGIInputError
from sgi_core.grounding.adapters import SUPPORTED_NAMES, detect_adapter, find_label
from sgi_core.grounding.folder import read_folder


def _folder(tmp_path, labels, architecture="BertForSequenceClassification", manifest=None):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": [architecture], "model_type": "bert",
                                                      "id2label": {str(k): v for k, v in labels.items()}}))
    (tmp_path / "model.safetensors").write_bytes(b"")  # detection reads no weights
    if manifest is not None:
        (tmp_path / "sgi_grounding.json").write_text(json.dumps(manifest))
    return detect_adapter(read_folder(tmp_path))


@pytest.mark.parametrize("labels, index", [
    ({0: "contradiction", 1: "entailment", 2: "neutral"}, 1),
    ({0: "entailment", 1: "neutral", 2: "contradiction"}, 0),
    ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, 2),
    ({0: "Not-Supported", 1: "Supported"}, 1),
    ({0: "supported", 1: "not_supported"}, 0),
])
def test_supported_label_found_by_name(tmp_path, labels, index):
    adapter = _folder(tmp_path, labels)
    assert adapter.label_index == index and adapter.kind == ("nli" if len(labels) == 3 else "consistency")


def test_unknown_labels_are_refused_with_how_to_name_them(tmp_path):
    with pytest.raises(SGIInputError, match=r"\(LABEL_0, LABEL_1, LABEL_2\) names no entailment/supported class. "
                                            r"Write sgi_grounding.json .*\"supported_label\": \"LABEL_2\""):
        _folder(tmp_path, {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})


def test_the_manifest_names_the_label(tmp_path):
    adapter = _folder(tmp_path, {0: "LABEL_0", 1: "LABEL_1"}, manifest={"supported_label": "LABEL_1"})
    assert (adapter.kind, adapter.label, adapter.label_index) == ("consistency", "LABEL_1", 1)


def test_the_manifest_overrides_the_adapter_and_hypothesis(tmp_path):
    adapter = _folder(tmp_path, {0: "entailment", 1: "not_entailment"},
                      manifest={"adapter": "nli", "hypothesis": "response", "max_length": 256})
    assert (adapter.kind, adapter.hypothesis, adapter.max_length) == ("nli", "response", 256)


@pytest.mark.parametrize("manifest, match", [
    ({"supported_label": "yes"}, "names the label 'yes', which its id2label"),
    ({"colour": "red"}, "unknown keys: colour"),
    ({"adapter": "magic"}, "names the adapter 'magic'"),
    ({"hypothesis": "word"}, "must be 'sentence' or 'response'"),
    ({"max_length": 4}, "must be a whole number >= 16"),
])
def test_bad_manifests_are_refused(tmp_path, manifest, match):
    with pytest.raises(SGIInputError, match=match):
        _folder(tmp_path, {0: "contradiction", 1: "entailment", 2: "neutral"}, manifest=manifest)


def test_token_classifier_reads_its_hallucinated_label(tmp_path):
    adapter = _folder(tmp_path, {0: "supported", 1: "hallucinated"}, architecture="BertForTokenClassification")
    assert (adapter.kind, adapter.label_index, adapter.hypothesis) == ("token", 1, "response")


def test_an_architecture_no_adapter_reads(tmp_path):
    with pytest.raises(SGIInputError, match="no adapter reads the architecture.*BertModel"):
        _folder(tmp_path, {0: "entailment"}, architecture="BertModel")


def test_two_labels_of_one_meaning_are_refused():
    with pytest.raises(SGIInputError, match="names more than one entailment class"):
        find_label({0: "entailment", 1: "Entailment"}, named=None, names=SUPPORTED_NAMES, what="entailment",
                   manifest_key="supported_label", folder="f")


def test_an_hhem_config_without_labels_needs_the_label_named(tiny_folders, tmp_path):
    import shutil

    folder = shutil.copytree(tiny_folders["hhem"], tmp_path / "hhem")
    config = json.loads((folder / "config.json").read_text())
    del config["id2label"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(SGIInputError, match=r"\(LABEL_0, LABEL_1\) names no entailment/supported class"):
        detect_adapter(read_folder(folder))
    (folder / "sgi_grounding.json").write_text(json.dumps({"adapter": "hhem", "encoder_folder": "t5",
                                                           "supported_label": "LABEL_1"}))
    adapter = detect_adapter(read_folder(folder))
    assert (adapter.kind, adapter.label_index, adapter.num_labels) == ("hhem", 1, 2)
