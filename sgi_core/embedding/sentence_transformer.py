"""sentence-transformers backend."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from sgi_core.embedding.base import ProgressCallback

#: Texts handed to one ``SentenceTransformer.encode`` call between progress reports.
_CHUNK_BATCHES = 8


def configure_offline() -> None:
    """Make the Hugging Face libraries fail fast instead of waiting on the network.

    Sets ``HF_HUB_OFFLINE=1`` (and ``TRANSFORMERS_OFFLINE=1``) unless the user set
    them, or set ``SGI_ONLINE=1`` to allow hub downloads.
    """
    # Weight-loading progress bars are noise on the command line and in logs.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if os.environ.get("SGI_ONLINE") == "1":
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class SentenceTransformerEncoder:
    """Encode with a ``sentence_transformers.SentenceTransformer`` model.

    Texts are sorted by length once for the whole call and fed in chunks, so each
    batch pads to similar lengths and progress is reported between chunks. The
    returned rows are in input order, float32, not normalised (the geometry
    normalises). Remote code is never trusted.

    Parameters
    ----------
    model_id : str
        Canonical model id (the cache key), e.g. ``sentence-transformers/all-MiniLM-L6-v2``.
    path : str or Path
        Folder or hub id to load from.
    device : str
        Torch device, ``"cpu"`` by default.
    """

    def __init__(self, model_id: str, path: str | Path, *, device: str = "cpu"):
        configure_offline()
        from sentence_transformers import SentenceTransformer

        self.model_id = model_id
        self.model = SentenceTransformer(str(path), device=device, trust_remote_code=False)
        self.max_seq_length = self.model.max_seq_length

    @property
    def dimension(self) -> int:
        get = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(get())

    @property
    def tokenizer(self):
        return self.model.tokenizer

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 64, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        texts = list(texts)
        total = len(texts)
        dim = self.dimension
        out = np.empty((total, dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        chunk = batch_size * _CHUNK_BATCHES
        for start in range(0, total, chunk):
            idx = order[start : start + chunk]
            out[idx] = self.model.encode(
                [texts[i] for i in idx],
                batch_size=batch_size,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            if progress is not None:
                progress(min(start + chunk, total), total)
        return out

    def token_counts(self, texts: Sequence[str]) -> np.ndarray:
        """Number of tokens of each text without truncation (special tokens included)."""
        encoded = self.model.tokenizer(list(texts), add_special_tokens=True, truncation=False)["input_ids"]
        return np.array([len(ids) for ids in encoded], dtype=np.int64)
