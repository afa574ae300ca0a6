"""Tiny grounding model folders, built once per session from configs with random weights."""

import pytest

from tests.grounding.tiny_models import NLI_ORDERS, classifier_folder, hhem_folder

#: Every folder the tests build: name -> (architecture or "hhem", labels, token classifier).
FOLDERS = {
    **{f"bert_{order}": ("bert", labels, False) for order, labels in NLI_ORDERS.items()},
    "roberta_enc": ("roberta", NLI_ORDERS["enc"], False),
    "deberta_cne": ("deberta", NLI_ORDERS["cne"], False),
    "modernbert_cen": ("modernbert", NLI_ORDERS["cen"], False),
    "roberta_two": ("roberta", {0: "unsupported", 1: "supported"}, False),
    "deberta_two": ("deberta", {0: "not_supported", 1: "supported"}, False),
    "modernbert_token": ("modernbert", {0: "supported", 1: "hallucinated"}, True),
    "bert_token": ("bert", {0: "hallucinated", 1: "supported"}, True),
    "hhem": ("hhem", None, False),
}


@pytest.fixture(scope="session")
def tiny_folders(tmp_path_factory):
    """name -> folder of every model in :data:`FOLDERS`."""
    root = tmp_path_factory.mktemp("grounding-models")
    out = {}
    for name, (arch, labels, token) in FOLDERS.items():
        out[name] = hhem_folder(root / name) if arch == "hhem" else classifier_folder(root / name, arch, labels,
                                                                                        token=token)
    return out


@pytest.fixture(scope="session")
def tiny_models(tiny_folders):
    """name -> loaded model run by torch (self-test skipped: random weights answer nothing).

    Torch is the reference the ``onnx`` backend is held to, and writes no export outside a test's cache folder.
    """
    from sgi_core.grounding.runtime import load_grounding_model

    return {name: load_grounding_model(folder, backend="torch", self_test=False)
            for name, folder in tiny_folders.items()}
