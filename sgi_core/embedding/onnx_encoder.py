"""The default CPU path without torch: the model's own tokenizer, its ONNX export, pooling and normalising in numpy.

Once a sentence-transformers model has been exported for ONNX Runtime
(:func:`sgi_core.models.onnx_export.ensure_export`, done once by the torch path),
:class:`OnnxEncoder` runs it without importing torch, transformers or
sentence-transformers: ``tokenizers`` reads the folder's ``tokenizer.json`` and cuts at
the model's ``max_seq_length`` (``sentence_bert_config.json``), ONNX Runtime runs the
export, and numpy applies the folder's remaining modules as ``modules.json`` lists them:
``Pooling`` (``1_Pooling/config.json``: mean, CLS or max over the attention mask) and
``Normalize`` (``x / max(||x||, 1e-12)``, torch's ``F.normalize``). A folder with any other
module (Dense layers, custom code) is not handled here: :func:`torch_free_encoder` returns
None and the torch path runs. The vectors equal the ``onnx`` backend's
(:class:`~sgi_core.embedding.sentence_transformer.SentenceTransformerEncoder`) up to float
rounding, and share its cache key, so both read the same cached vectors.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sgi_core.embedding.base import ProgressCallback
from sgi_core.embedding.window import cut_to_window
from sgi_core.models.device import token_budget_batches

#: The sentence-transformers modules this path applies in numpy, after the transformer.
HANDLED_MODULES = ("sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
                   "sentence_transformers.models.Normalize")
#: Padded tokens per batch: on ONNX Runtime's CPU path a batch of more tokens costs more CPU per token
#: (its activations outgrow the caches), so batches stay this small whatever ``batch_size`` allows
#: (docs/PERFORMANCE.md).
TOKEN_BUDGET = 512
#: Pooling modes of ``1_Pooling/config.json`` computed here.
POOLING_MODES = ("pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens")


class FastTokenizer:
    """A ``tokenizers.Tokenizer`` called as the Hugging Face tokenizers are where this project calls them.

    ``tokenizer(text or texts, add_special_tokens=..., truncation=..., max_length=...,
    return_offsets_mapping=...)`` returns ``{"input_ids": ..., "offset_mapping": ...}`` for
    one text (lists) or several (lists of lists); other keyword arguments are accepted and
    ignored (masks and type ids are not asked for by those callers).
    """

    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(path))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def __call__(self, texts, *, add_special_tokens: bool = True, truncation: bool = False,
                 max_length: int | None = None, return_offsets_mapping: bool = False, **_ignored) -> dict:
        single = isinstance(texts, str)
        encodings = self.encode(list([texts] if single else texts), add_special_tokens=add_special_tokens,
                                max_length=max_length if truncation else None)
        out = {"input_ids": [e.ids for e in encodings]}
        if return_offsets_mapping:
            out["offset_mapping"] = [e.offsets for e in encodings]
        return {name: value[0] for name, value in out.items()} if single else out

    def encode(self, texts: list[str], *, add_special_tokens: bool = True, max_length: int | None = None):
        """``tokenizers`` encodings of ``texts``, cut at ``max_length`` tokens (special tokens included) when given."""
        if max_length is None:
            self._tokenizer.no_truncation()
        else:
            self._tokenizer.enable_truncation(max_length=max_length)
        return self._tokenizer.encode_batch(texts, add_special_tokens=add_special_tokens)


def _modules(folder: Path) -> list[dict] | None:
    try:
        return json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _pooling_mode(folder: Path, modules: list[dict]) -> str | None:
    pooling = next((m for m in modules if m.get("type") == HANDLED_MODULES[1]), None)
    if pooling is None:
        return None
    config = json.loads((folder / pooling.get("path", "") / "config.json").read_text(encoding="utf-8"))
    chosen = [mode for mode, on in config.items() if mode.startswith("pooling_mode_") and on]
    return chosen[0] if len(chosen) == 1 and chosen[0] in POOLING_MODES else None


def pool(token_embeddings: np.ndarray, attention_mask: np.ndarray, mode: str) -> np.ndarray:
    """Sentence vectors from token vectors, as sentence-transformers' ``Pooling`` computes them.

    ``mean``: ``sum_t m_t e_t / max(sum_t m_t, 1e-9)``; ``cls``: the first token's vector;
    ``max``: the maximum over unmasked tokens (masked ones set to ``-1e9``).

    Examples
    --------
    >>> e = np.array([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]]], dtype=np.float32)
    >>> pool(e, np.array([[1, 1, 0]]), "pooling_mode_mean_tokens").tolist()
    [[2.0, 3.0]]
    """
    mask = attention_mask[..., None].astype(token_embeddings.dtype)
    if mode == "pooling_mode_cls_token":
        return token_embeddings[:, 0]
    if mode == "pooling_mode_max_tokens":
        return np.where(mask > 0, token_embeddings, np.float32(-1e9)).max(axis=1)
    return (token_embeddings * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), np.float32(1e-9))


class OnnxEncoder:
    """A sentence-transformers model folder run through its ONNX export with no torch (see the module notes).

    Attributes match :class:`~sgi_core.embedding.sentence_transformer.SentenceTransformerEncoder`'s:
    ``model_id``, ``device`` ("cpu"), ``precision`` ("fp32"), ``backend``, ``max_seq_length``,
    ``cache_key``, ``dimension``, ``tokenizer``.
    """

    def __init__(self, model_id: str, folder: Path, model_path: Path, *, cache_key: str, backend: str,
                 pooling_mode: str, normalize: bool, max_seq_length: int):
        from sgi_core.models.onnx_export import cpu_session

        self.model_id, self.cache_key, self.backend = model_id, cache_key, backend
        self._folder = folder
        self.device, self.precision = "cpu", "fp32"
        self.max_seq_length = max_seq_length
        self.tokenizer = FastTokenizer(folder / "tokenizer.json")
        self._pooling_mode, self._normalize = pooling_mode, normalize
        self._session = cpu_session(model_path)
        self._inputs = [item.name for item in self._session.get_inputs()]
        self.dimension = int(json.loads((folder / "config.json").read_text(encoding="utf-8"))["hidden_size"])

    def with_model(self, model_path: Path, backend: str) -> OnnxEncoder:
        """This encoder's tokenizer, pooling and normalising around another export of its transformer.

        ``model_path`` is, say, an int8 variant of the export
        (:func:`~sgi_core.models.int8.quantize_int8`); ``backend`` names it, in
        the ``backend`` attribute and the last part of ``cache_key``.
        """
        cache_key = f"{self.cache_key.rsplit('|', 1)[0]}|{backend}"
        return OnnxEncoder(self.model_id, self._folder, model_path, cache_key=cache_key, backend=backend,
                           pooling_mode=self._pooling_mode, normalize=self._normalize,
                           max_seq_length=self.max_seq_length)

    def feeds(self, texts: list[str]) -> dict[str, np.ndarray]:
        """``input_ids``, ``attention_mask`` and ``token_type_ids`` of ``texts``: int64, zero-padded to the longest."""
        return self._feeds(self.tokenizer.encode(texts, max_length=self.max_seq_length))

    @staticmethod
    def _feeds(encodings) -> dict[str, np.ndarray]:
        width = max(len(e.ids) for e in encodings)
        feeds = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in ("input_ids", "attention_mask",
                                                                                      "token_type_ids")}
        for row, e in enumerate(encodings):
            n = len(e.ids)
            feeds["input_ids"][row, :n], feeds["attention_mask"][row, :n] = e.ids, 1
            feeds["token_type_ids"][row, :n] = e.type_ids
        return feeds

    def _vectors(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        token_embeddings = self._session.run(None, {name: feeds[name] for name in self._inputs})[0]
        vectors = pool(token_embeddings, feeds["attention_mask"], self._pooling_mode)
        if self._normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), np.float32(1e-12))
        return vectors.astype(np.float32)

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self._vectors(self.feeds(texts))

    def token_counts(self, texts: Sequence[str], *, truncate: bool = False) -> np.ndarray:
        """Number of tokens of each text, special tokens included (capped at ``max_seq_length`` with ``truncate``)."""
        if len(texts) == 0:
            return np.zeros(0, dtype=np.int64)
        encodings = self.tokenizer.encode(list(texts), max_length=self.max_seq_length if truncate else None)
        return np.array([len(e.ids) for e in encodings], dtype=np.int64)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64,
               progress: ProgressCallback | None = None) -> np.ndarray:
        """One float32 row per text, in input order.

        Each text is tokenised once; the texts, longest first, go in batches of at most
        ``batch_size`` texts and :data:`TOKEN_BUDGET` padded tokens (one text per batch on
        ``onnx-int8``, whose dynamic quantisation scales each batch as a whole).
        """
        texts = cut_to_window(texts, self.tokenizer, self.max_seq_length)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode(texts, max_length=self.max_seq_length)
        counts = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        # int8's activations are quantised with one scale per tensor, taken from the whole batch: a text's vector
        # would move with the texts beside it, so each text runs alone.
        batch_size = 1 if self.backend == "onnx-int8" else batch_size
        done = 0
        for budget_batch in token_budget_batches(counts, TOKEN_BUDGET):
            for start in range(0, len(budget_batch), batch_size):
                batch = budget_batch[start : start + batch_size]
                out[batch] = self._vectors(self._feeds([encodings[i] for i in batch]))
                done += len(batch)
                if progress is not None:
                    progress(done, len(texts))
        return out


def torch_free_encoder(model_id: str, folder, *, fingerprint: str, backend: str,
                       export_dir: Path) -> OnnxEncoder | None:
    """An :class:`OnnxEncoder` of the model folder when its export for ``backend`` exists and its modules are handled.

    None (the torch path then runs, and exports) when the folder is not a local
    sentence-transformers folder with a ``tokenizer.json``, lists a module other than
    :data:`HANDLED_MODULES`, pools in another way, or has no intact export yet.
    """
    from sgi_core.models import onnx_export

    folder = Path(folder)
    modules = _modules(folder) if folder.is_dir() else None
    if not modules or not (folder / "tokenizer.json").is_file():
        return None
    if any(m.get("type") not in HANDLED_MODULES for m in modules):
        return None
    mode = _pooling_mode(folder, modules)
    export = onnx_export.export_folder(export_dir, fingerprint, backend)
    if mode is None or not onnx_export.is_intact(export):
        return None
    try:
        max_seq_length = int(json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
                             ["max_seq_length"])
    except (OSError, ValueError, KeyError):
        return None
    tag = onnx_export.backend_tag(backend)
    return OnnxEncoder(model_id, folder, export / onnx_export.MODEL_FILE, cache_key=f"{fingerprint}|fp32|{tag}",
                       backend=backend, pooling_mode=mode,
                       normalize=any(m.get("type") == HANDLED_MODULES[2] for m in modules),
                       max_seq_length=max_seq_length)
