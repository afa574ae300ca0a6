"""Encoders, the model registry and the embedding cache."""

from sgi_core.embedding.base import Encoder, HashingEncoder, ProgressCallback
from sgi_core.embedding.cache import EmbeddingCache, default_cache_dir, encode_unique
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
    "DEFAULT_MODEL",
    "REGISTRY",
    "EmbeddingCache",
    "Encoder",
    "HashingEncoder",
    "ModelAvailability",
    "ModelSpec",
    "ProgressCallback",
    "default_cache_dir",
    "encode_unique",
    "load_encoder",
    "model_availability",
    "resolve_spec",
]
