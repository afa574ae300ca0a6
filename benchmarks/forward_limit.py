"""The practical limit of encoding on a device: a plain transformers forward pass.

No sentence-transformers: ``AutoTokenizer`` and ``AutoModel`` load from the folder the
encoder itself loaded. The texts are tokenised once (truncated to the encoder's
``max_seq_length``), sorted by token count and cut into batches of at most
``token_budget`` padded tokens (:func:`sgi_core.models.device.token_budget_batches`);
each batch runs under ``torch.inference_mode``, and its vectors are mean-pooled over the
attention mask and L2-normalised on the device,

    v = sum_t m_t h_t / sum_t m_t,    v_hat = v / ||v||,

so only the finished vectors come back to the host, once. This is the pooling of
MiniLM and mpnet; for a model that pools otherwise (CLS, last token) the benchmark's
SGI difference against the reference shows it.
"""

from __future__ import annotations

import numpy as np

from sgi_core.models.device import token_budget_batches

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def transformer_folder(encoder) -> str:
    """The folder (or hub id) the encoder's transformer module was loaded from."""
    return encoder.model[0].auto_model.name_or_path


def load_forward_model(folder: str, device: str, precision: str):
    """``(tokenizer, model)`` from ``folder``, the model on ``device`` in ``precision``, in eval mode."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, dtype=getattr(torch, DTYPES[precision]))
    return tokenizer, model.to(device).eval()


def mean_pooled(tokenizer, model, texts: list[str], *, max_length: int, token_budget: int) -> np.ndarray:
    """Unit vectors of ``texts`` (float32, input order) from one pass of ``model`` over token-budget batches.

    Examples
    --------
    >>> from sgi_core.embedding import load_encoder
    >>> encoder = load_encoder("minilm", device="cpu")
    >>> tokenizer, model = load_forward_model(transformer_folder(encoder), "cpu", "fp32")
    >>> texts = ["a cat", "The capital of France is Paris."]
    >>> got = mean_pooled(tokenizer, model, texts, max_length=encoder.max_seq_length, token_budget=64)
    >>> want = encoder.encode(texts)
    >>> bool(np.allclose(got, want / np.linalg.norm(want, axis=1, keepdims=True), atol=1e-5))
    True
    """
    import torch
    import torch.nn.functional as F

    device = model.device
    ids = tokenizer(texts, truncation=True, max_length=max_length, return_attention_mask=False,
                    return_token_type_ids=False)["input_ids"]
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    out = torch.empty((len(texts), model.config.hidden_size), dtype=torch.float32, device=device)
    with torch.inference_mode():
        for batch in token_budget_batches(lengths, token_budget):
            width = int(lengths[batch[0]])  # the batch's longest text comes first
            input_ids = np.full((len(batch), width), tokenizer.pad_token_id, dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : lengths[i]] = ids[i]
            mask = torch.from_numpy(np.arange(width) < lengths[batch][:, None]).to(device)
            hidden = model(input_ids=torch.from_numpy(input_ids).to(device), attention_mask=mask).last_hidden_state
            weights = mask.unsqueeze(-1).to(torch.float32)
            pooled = (hidden.float() * weights).sum(dim=1) / weights.sum(dim=1)
            out[torch.from_numpy(batch).to(device)] = F.normalize(pooled, dim=1)
    return out.cpu().numpy()
