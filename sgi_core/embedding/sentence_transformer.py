"""sentence-transformers backend."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sgi_core.embedding.base import ProgressCallback
from sgi_core.embedding.window import cut_to_window
from sgi_core.errors import SGIInputError
from sgi_core.models.device import (
    DEFAULT_TOKEN_BUDGET,
    check_precision,
    count_batches,
    token_budget_batches,
)
from sgi_core.models.logs import logger_at_error

#: transformers' logger for "Token indices sequence length is longer than the specified maximum ...".
_TOKENIZER_LOGGER = "transformers.tokenization_utils_base"


def tokenizing_past_the_limit():
    """Silence the tokenizer's over-length warning while counting tokens (a context manager).

    Counting the tokens of a text longer than the model reads is the point here (the
    project truncates on purpose and reports how many texts are truncated), so the
    warning's advice about indexing errors does not apply.
    """
    return logger_at_error(_TOKENIZER_LOGGER)


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


def check_precision_runs(precision: str, device: str) -> None:
    """Refuse a float type this torch build cannot compute on ``device``, before a model loads.

    One tiny pass through the operations of a transformer layer (``linear``,
    ``layer_norm``, ``gelu``, ``softmax``) in that type: builds of torch without
    half-precision CPU kernels fail there, instead of halfway through a file.

    Raises
    ------
    SGIInputError
        Naming the precision, the device and torch's own message.

    Examples
    --------
    >>> check_precision_runs("fp32", "cpu")
    """
    if check_precision(precision) == "fp32":
        return
    import torch
    import torch.nn.functional as F

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[precision]
    x = torch.ones(2, 4, dtype=dtype, device=device)
    try:
        F.softmax(F.gelu(F.layer_norm(F.linear(x, x), (2,))), dim=-1)
    except (RuntimeError, TypeError) as err:
        raise SGIInputError(
            f"precision '{precision}' does not run on device '{device}' with torch {torch.__version__}: {err}",
            hint="Use --precision fp32 on this device, or run on a GPU",
        ) from None


class SentenceTransformerEncoder:
    """Encode with a ``sentence_transformers.SentenceTransformer`` model.

    Texts are sorted by their number of tokens and encoded one batch at a time,
    so each batch pads to nearly its own length. sentence-transformers sorts by
    *characters* instead, a poor proxy for short texts: on HaluEval QA its batches
    of 64 hold 37% more tokens than the texts themselves, against 3% here
    (docs/PERFORMANCE.md). The length pass costs one extra run of the fast
    tokenizer, about 1% of the encode time. On the CPU a batch holds ``batch_size``
    texts; on a GPU (or whenever ``token_budget`` is given) it holds up to
    ``token_budget`` padded tokens (:func:`sgi_core.models.device.token_budget_batches`).
    The order only decides which texts share a batch, so the vectors equal
    ``SentenceTransformer.encode``'s up to float rounding. The returned rows are in
    input order, float32, not normalised (the geometry normalises). Remote code is
    trusted only when ``trust_model_code`` is set.

    Parameters
    ----------
    model_id : str
        Canonical model id (names the cache file), e.g. ``sentence-transformers/all-MiniLM-L6-v2``.
    path : str or Path
        Folder or hub id to load from.
    device : str
        Torch device, ``"cpu"`` by default (see :func:`sgi_core.models.device.resolve_device`).
    precision : {"fp32", "fp16", "bf16"}
        Weights and activations in this float type; vectors are returned as float32.
    token_budget : int, optional
        Padded tokens per batch; default :data:`~sgi_core.models.device.DEFAULT_TOKEN_BUDGET`
        on a GPU, and fixed ``batch_size`` batches on the CPU.
    source_fingerprint : str, optional
        Identifies the weights (:mod:`sgi_core.models.sources`); default ``model_id``.
    trust_model_code : bool
        Passed as ``trust_remote_code`` to sentence-transformers.
    backend : {"auto", "torch", "onnx", "onnx-int8"}
        What runs the transformer: torch, or an ONNX Runtime export of it on the CPU
        (:mod:`sgi_core.models.onnx_export`); tokenising and pooling are the same.
        ``auto`` is ``onnx`` on the CPU in fp32, else torch
        (:func:`~sgi_core.models.onnx_export.resolve_backend`); ``backend`` holds the one used.
    export_dir : path-like, optional
        Cache folder holding ONNX exports (default the embedding cache folder).

    Attributes
    ----------
    cache_key : str
        Source fingerprint, precision and (for ONNX) backend: the embedding cache keys
        vectors on it, so each backend has vectors of its own.
    """

    def __init__(
        self,
        model_id: str,
        path: str | Path,
        *,
        device: str = "cpu",
        precision: str = "fp32",
        token_budget: int | None = None,
        source_fingerprint: str | None = None,
        trust_model_code: bool = False,
        backend: str = "auto",
        export_dir: str | Path | None = None,
    ):
        configure_offline()
        from sentence_transformers import SentenceTransformer

        from sgi_core.models import onnx_export

        self.model_id = model_id
        self.device = device
        backend = onnx_export.resolve_backend(backend, device=device, precision=precision)
        onnx_export.check_backend(backend, device=device, precision=precision)
        check_precision_runs(precision, device)
        self.precision = precision
        self.backend = backend
        if token_budget is None and device != "cpu":
            token_budget = DEFAULT_TOKEN_BUDGET
        self.token_budget = token_budget
        # Caller keywords override the folder's own: transformers never unpickles beyond plain tensors.
        self.model = SentenceTransformer(str(path), device=device, trust_remote_code=trust_model_code,
                                         model_kwargs={"weights_only": True})
        if precision != "fp32":
            import torch

            self.model.to({"fp16": torch.float16, "bf16": torch.bfloat16}[precision])
        self.max_seq_length = self.model.max_seq_length
        fingerprint = source_fingerprint or model_id
        tag = onnx_export.backend_tag(backend)
        self.cache_key = f"{fingerprint}|{precision}" + (f"|{tag}" if tag else "")
        self._onnx = None
        if backend != "torch":
            from sgi_core.models.cache_folder import default_cache_dir

            folder = onnx_export.export_folder(Path(export_dir) if export_dir else default_cache_dir(), fingerprint,
                                                backend)
            self._onnx = onnx_export.OnnxTransformer(self.model, onnx_export.ensure_export(self.model, folder, backend))

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
        with tokenizing_past_the_limit():  # finding where to cut counts the tokens of texts past the limit
            texts = cut_to_window(texts, self.model.tokenizer, self.max_seq_length)
        total = len(texts)
        out = np.empty((total, self.dimension), dtype=np.float32)
        counts = self.token_counts(texts, truncate=True)
        if self.backend == "onnx-int8":  # one activation scale per batch: a text runs alone (as the ONNX encoder's)
            batch_size = 1
        if self.token_budget is None or batch_size == 1:
            batches = count_batches(counts, batch_size)
        else:
            batches = token_budget_batches(counts, self.token_budget)
        done = 0
        for batch in batches:
            out[batch] = self._embed([texts[i] for i in batch])
            done += len(batch)
            if progress is not None:
                progress(done, total)
        return out

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Vectors of one batch, float32, through the chosen backend."""
        if self._onnx is not None:
            return self._onnx.embed(texts)
        vectors = self.model.encode(texts, batch_size=len(texts), convert_to_tensor=True, show_progress_bar=False)
        return vectors.float().cpu().numpy()

    def token_counts(self, texts: Sequence[str], *, truncate: bool = False) -> np.ndarray:
        """Number of tokens of each text, special tokens included.

        With ``truncate=True``, capped at ``max_seq_length`` as the model sees them.
        """
        if len(texts) == 0:
            return np.zeros(0, dtype=np.int64)
        with tokenizing_past_the_limit():
            encoded = self.model.tokenizer(
                list(texts),
                add_special_tokens=True,
                truncation=truncate,
                max_length=self.max_seq_length if truncate else None,
                return_attention_mask=False,
                return_token_type_ids=False,
            )["input_ids"]
        return np.array([len(ids) for ids in encoded], dtype=np.int64)
