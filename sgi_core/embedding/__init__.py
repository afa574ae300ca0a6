"""Encoders, the model registry and the embedding cache."""

from __future__ import annotations

from sgi_core import lazy_package

#: Each public name and the module that defines it; imported on first use, so that importing one module of
#: the package does not import them all.
_EXPORTS = {
    "Encoder": "sgi_core.embedding.base",
    "HashingEncoder": "sgi_core.embedding.base",
    "ProgressCallback": "sgi_core.embedding.base",
    "backend_used": "sgi_core.embedding.base",
    "cache_key": "sgi_core.embedding.base",
    "CacheWarning": "sgi_core.embedding.cache",
    "EmbeddingCache": "sgi_core.embedding.cache",
    "default_cache_dir": "sgi_core.embedding.cache",
    "encode_unique": "sgi_core.embedding.cache",
    "DEVICES": "sgi_core.models.choices",
    "PRECISIONS": "sgi_core.models.choices",
    "resolve_device": "sgi_core.models.device",
    "BACKENDS": "sgi_core.models.choices",
    "DEFAULT_MODEL": "sgi_core.models.choices",
    "REGISTRY": "sgi_core.embedding.registry",
    "ModelAvailability": "sgi_core.embedding.registry",
    "ModelSpec": "sgi_core.embedding.registry",
    "load_encoder": "sgi_core.embedding.registry",
    "model_availability": "sgi_core.embedding.registry",
    "resolve_spec": "sgi_core.embedding.registry",
}

lazy_package(__name__, _EXPORTS)
