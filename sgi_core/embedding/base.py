"""The encoder protocol and the deterministic test encoder."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

#: Called as ``progress(done, total)`` while texts are encoded.
ProgressCallback = Callable[[int, int], None]


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into an ``(n, d)`` float32 embedding matrix.

    Attributes
    ----------
    model_id : str
        Identifies the model; names the embedding cache file.
    cache_key : str, optional
        Fingerprint of the exact source of the vectors (weights folder or package
        version, API endpoint and model, precision): cached vectors are keyed on it,
        so two encoders with the same ``cache_key`` must give the same vectors.
        Encoders without it are keyed on ``model_id`` (:func:`cache_key`).
    dimension : int, optional
        Width of the vectors; when present, cached vectors of another width are
        never used.
    """

    model_id: str

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 64, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        """Return one row per text, float32, in input order."""
        ...


def cache_key(encoder: Encoder) -> str:
    """The encoder's ``cache_key`` attribute, else its ``model_id``.

    Examples
    --------
    >>> cache_key(HashingEncoder(dim=16))
    'hashing-16'
    """
    return getattr(encoder, "cache_key", None) or encoder.model_id


def backend_used(encoder: Encoder) -> str:
    """What ran the encoder's model: its ``backend`` attribute, else ``"torch"``.

    The test and API encoders have no backend choice (no ONNX export of them exists), so
    they record the default that every command accepted before backends existed.

    Examples
    --------
    >>> backend_used(HashingEncoder(dim=16))
    'torch'
    """
    return getattr(encoder, "backend", None) or "torch"


class HashingEncoder:
    """Deterministic bag-of-words encoder for fast tests; no model weights.

    Each lower-cased word token is mapped by BLAKE2b (stable across processes,
    unlike Python's salted ``hash``) to a dimension and a sign; a text's vector is
    the signed count of its tokens, plus a small text-specific offset so that no
    text maps to the zero vector. Texts sharing words get small angles, so SGI
    behaves qualitatively like a real model's.

    Parameters
    ----------
    dim : int
        Embedding width.

    Examples
    --------
    >>> enc = HashingEncoder(dim=16)
    >>> enc.encode(["a cat", "a cat"]).shape
    (2, 16)
    """

    def __init__(self, dim: int = 256):
        self.dim = int(dim)
        self.model_id = f"hashing-{self.dim}"
        self.max_seq_length = None

    @property
    def dimension(self) -> int:
        return self.dim

    def _token_slot(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dim, 1.0 if (value >> 63) & 1 else -1.0

    def encode(self, texts, *, batch_size: int = 64, progress: ProgressCallback | None = None):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in str(text).lower().split():
                slot, sign = self._token_slot(token.strip(".,;:!?\"'()[]"))
                out[i, slot] += sign
            slot, sign = self._token_slot("\x00" + str(text))
            out[i, slot] += 0.01 * sign
            if progress is not None and (i + 1) % batch_size == 0:
                progress(i + 1, len(texts))
        if progress is not None:
            progress(len(texts), len(texts))
        return out


