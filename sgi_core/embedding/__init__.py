"""Encoders, the model registry and the embedding cache."""

from sgi_core.embedding.base import Encoder, HashingEncoder, ProgressCallback, backend_used, cache_key
from sgi_core.embedding.cache import (
    CacheWarning,
    EmbeddingCache,
    default_cache_dir,
    encode_unique,
)
from sgi_core.embedding.device import DEVICES, PRECISIONS, resolve_device
from sgi_core.embedding.onnx_runtime import BACKENDS
from sgi_core.embedding.registry import (
    DEFAULT_MODEL,
    REGISTRY,
    ModelAvailability,
    ModelSpec,
    load_encoder,
    model_availability,
    resolve_spec,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_MODEL",
    "DEVICES",
    "PRECISIONS",
    "REGISTRY",
    "CacheWarning",
    "EmbeddingCache",
    "Encoder",
    "HashingEncoder",
    "ModelAvailability",
    "ModelSpec",
    "ProgressCallback",
    "backend_used",
    "cache_key",
    "default_cache_dir",
    "encode_unique",
    "load_encoder",
    "model_availability",
    "resolve_device",
    "resolve_spec",
]
