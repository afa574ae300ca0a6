"""A model folder loads from a private copy of exactly what was checked; what it names stays inside it."""

import json
import os
import shutil
from pathlib import Path

import pytest

from sgi_core.embedding import load_encoder, registry
from sgi_core.errors import SGIInputError
from sgi_core.grounding.folder import read_folder
from sgi_core.models import snapshot as snapshot_module
from sgi_core.models.snapshot import MAX_CHECKED_JSON_BYTES, content_fingerprint, snapshot_folder
from sgi_core.models.trust import check_model_code
from tests.grounding.tiny_models import NLI_ORDERS, classifier_folder

EVIL_CODE = "from pathlib import Path\nPath({marker!r}).write_text('ran')\n\nclass Evil:\n    pass\n"


class _Payload:
    """Unpickling this writes the marker: what a hostile ``pytorch_model.bin`` does."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "ran"))


def _minilm_copy(target: Path) -> Path:
    shutil.copytree(registry._minilm_package_path(), target)
    return target


def _pickled_weights(folder: Path, marker: Path) -> None:
    (folder / "model.safetensors").unlink()
    import torch

    torch.save({"payload": _Payload(marker)}, folder / "pytorch_model.bin")


def test_a_loader_keyword_block_is_refused_without_the_opt_in(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "modules.json").write_text("[]")
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64,
                                                                  "model_kwargs": {"weights_only": False}}))
    with pytest.raises(SGIInputError, match=r"passes 'weights_only' to the loader in 'model_kwargs'"
                                            r".*--trust-model-code"):
        check_model_code(folder)
    check_model_code(folder, trust_model_code=True)
    for block in ("model_args", "config_kwargs", "processor_kwargs", "tokenizer_args"):
        (folder / "sentence_bert_config.json").write_text(json.dumps({block: {"trust_remote_code": True}}))
        with pytest.raises(SGIInputError, match=f"in '{block}'"):
            check_model_code(folder)
    (folder / "sentence_bert_config.json").write_text(json.dumps({"model_kwargs": {"torch_dtype": "float32"},
                                                                  "tokenizer_args": {"do_lower_case": True}}))
    check_model_code(folder)  # dtypes and casing change no loading rule


@pytest.mark.slow
@pytest.mark.parametrize("with_kwargs", [True, False])
def test_a_pickled_embedding_folder_never_runs_its_pickle(tmp_path, with_kwargs):
    marker = tmp_path / "marker"
    folder = _minilm_copy(tmp_path / "model")
    _pickled_weights(folder, marker)
    if with_kwargs:
        config = json.loads((folder / "sentence_bert_config.json").read_text())
        (folder / "sentence_bert_config.json").write_text(json.dumps({**config,
                                                                      "model_kwargs": {"weights_only": False}}))
    match = "passes 'weights_only'" if with_kwargs else r"holds only pickled weights \(pytorch_model.bin\)"
    with pytest.raises(SGIInputError, match=match) as caught:
        load_encoder(str(folder), device="cpu", backend="torch")
    assert str(folder.resolve()) in str(caught.value) and "sgi-model-" not in str(caught.value)
    assert not marker.exists()


@pytest.mark.slow
def test_a_folder_swapped_after_the_check_loads_what_was_checked(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    folder = _minilm_copy(tmp_path / "model")
    real_check = registry.check_model_code

    def check_then_swap(path, **kwargs):
        real_check(path, **kwargs)  # what a watcher does the moment the check is over
        (folder / "evil_module.py").write_text(EVIL_CODE.format(marker=str(marker)))
        evil = [{"idx": 0, "name": "0", "path": "", "type": "evil_module.Evil"}]
        (folder / "modules.new").write_text(json.dumps(evil))
        os.replace(folder / "modules.new", folder / "modules.json")

    monkeypatch.setattr(registry, "check_model_code", check_then_swap)
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "hf-modules"))
    monkeypatch.syspath_prepend(str(folder))
    encoder = load_encoder(str(folder), device="cpu", backend="torch")
    assert not marker.exists()
    assert encoder.encode(["A man is eating food."]).shape == (1, 384)


def test_grounding_checks_and_loads_the_copy(tmp_path):
    folder = classifier_folder(tmp_path / "nli", "bert", NLI_ORDERS["enc"])
    checked = read_folder(folder)
    assert checked.source == folder.resolve() and checked.path != checked.source
    assert checked.fingerprint == content_fingerprint(folder)
    assert (checked.path / "config.json").read_bytes() == (folder / "config.json").read_bytes()
    assert oct(checked.path.stat().st_mode & 0o777) == "0o700"
    (folder / "config.json").write_text(json.dumps({"auto_map": {"AutoModel": "evil.Evil"}}))  # after the check
    assert "auto_map" not in (checked.path / "config.json").read_text()
    copy = checked.path
    del checked
    assert not copy.exists()  # the copy goes with the model that loaded it


def test_shards_and_files_named_outside_the_folder_are_refused(tmp_path):
    outside = tmp_path / "outside.safetensors"
    outside.write_bytes(b"\x00" * 8)
    folder = classifier_folder(tmp_path / "nli", "bert", NLI_ORDERS["enc"])
    index = {"metadata": {}, "weight_map": {"bert.pooler.dense.weight": str(outside)}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(SGIInputError, match=r"names the file '.*outside.safetensors', outside the folder"):
        read_folder(folder)
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"w": "../outside.safetensors"}}))
    with pytest.raises(SGIInputError, match="outside the folder"):
        read_folder(folder)
    (folder / "model.safetensors.index.json").unlink()
    config = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "vocab_file": "/etc/passwd"}))
    with pytest.raises(SGIInputError, match=r"'tokenizer_config.json' .* names the file '/etc/passwd'"):
        read_folder(folder, trust_model_code=True)  # trusted or not: the fingerprint covers the folder only


def test_links_leaving_the_folder_are_refused(tmp_path):
    folder = classifier_folder(tmp_path / "nli", "bert", NLI_ORDERS["enc"])
    shards = tmp_path / "shards"
    shards.mkdir()
    os.replace(folder / "model.safetensors", shards / "model.safetensors")
    (folder / "weights").symlink_to(shards)
    with pytest.raises(SGIInputError, match=r"'weights' of model folder .* is a link to .*shards', outside the folder"):
        read_folder(folder)
    (folder / "weights").unlink()
    (folder / "model.safetensors").symlink_to(shards / "model.safetensors")
    with pytest.raises(SGIInputError, match=r"cp -rL"):
        read_folder(folder)
    (folder / "model.safetensors").unlink()
    shutil.copy(shards / "model.safetensors", folder / "real.bin.safetensors")
    (folder / "model.safetensors").symlink_to("real.bin.safetensors")  # a link inside the folder is copied
    copy = read_folder(folder).path
    assert not (copy / "model.safetensors").is_symlink()


def test_an_oversized_json_is_refused_before_it_is_read(tmp_path, monkeypatch):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with open(folder / "huge.json", "wb") as handle:
        handle.truncate(8 * 1024**3)  # sparse: 8 GB that would be read whole
    monkeypatch.setattr(snapshot_module, "_copy_hashing", lambda *a: pytest.fail("read a file over the cap"))
    with pytest.raises(SGIInputError, match=rf"'huge.json' .* 8,589,934,592 bytes, "
                                            rf"over the {MAX_CHECKED_JSON_BYTES:,}"):
        snapshot_folder(folder)


def test_a_nul_byte_in_a_folder_path_is_an_input_error():
    with pytest.raises(SGIInputError, match="holds a NUL byte"):
        read_folder("models/nli\0x")


def test_a_snapshot_copies_what_was_hashed_and_a_failed_check_removes_it(tmp_path):
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text('{"a": 1}')
    (folder / "1_Pooling" / "config.json").write_text('{"b": 2}')
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x").write_text("tool state")
    snap = snapshot_folder(folder)
    copied = sorted(p.relative_to(snap.path).as_posix() for p in snap.path.rglob("*") if p.is_file())
    assert copied == ["1_Pooling/config.json", "config.json"]
    assert snap.fingerprint == content_fingerprint(folder)
    with pytest.raises(SGIInputError, match=rf"^cannot read '{folder.resolve()}'"):
        with snap.checking():
            raise SGIInputError(f"cannot read '{snap.path}'")
    assert not snap.path.exists()
