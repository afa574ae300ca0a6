"""Sequence-to-sequence checkers (MiniCheck-FT5 class): P(supported) from the first decoder step's logits.

A ``*ForConditionalGeneration`` model (flan-t5 fine-tuned as MiniCheck-FT5 is) reads one text,
``prompt.format(text1=premise, text2=hypothesis)``, and would answer with a "supported" token
(``"1"``) or a "not supported" one (``"0"``). Nothing is generated: the decoder runs one step
from its start token, and

    P(supported) = softmax(z[support], z[no_support])[0]

over the logits ``z`` of that step. The manifest's ``support_token`` and ``no_support_token``
name the two texts (each must be one token of the model's vocabulary), ``prompt`` the template.

References
----------
Tang, Laban and Durrett, "MiniCheck: Efficient Fact-Checking of LLMs on Grounding Documents",
EMNLP 2024.
"""

from __future__ import annotations

from dataclasses import replace

from sgi_core.errors import SGIInputError
from sgi_core.grounding.adapters.base import AdapterKind, filled_prompts, prompt_overhead
from sgi_core.grounding.folder import MANIFEST_NAME

#: MiniCheck-FT5's input template.
SEQ2SEQ_PROMPT = "premise: {text1} hypothesis: {text2}"


def _tokens(config: dict, manifest: dict, folder) -> tuple[str, int, int, str]:
    support, contrast = manifest.get("support_token", "1"), manifest.get("no_support_token", "0")
    if not (isinstance(support, str) and isinstance(contrast, str) and support.strip() and contrast.strip()
            and support != contrast):
        raise SGIInputError(f"'support_token' and 'no_support_token' in {MANIFEST_NAME} of model folder '{folder}' "
                            f"must be two different texts; got {support!r} and {contrast!r}")
    return support, -1, 2, contrast


def _token_id(tokenizer, text: str, key: str, folder) -> int:
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) != 1 or ids[0] == tokenizer.unk_token_id:
        raise SGIInputError(f"the {key} {text!r} of model folder '{folder}' is not one token of its vocabulary "
                            f"(it reads as {len(ids)})", hint=f"Name a one-token text as {key!r} in {MANIFEST_NAME}")
    return int(ids[0])


def _bind(adapter, tokenizer, folder):
    return replace(adapter, label_index=_token_id(tokenizer, adapter.label, "support_token", folder.source),
                   contrast_index=_token_id(tokenizer, adapter.contrast, "no_support_token", folder.source))


def _network(folder, adapter):
    """The model wrapped so that ``forward(input_ids, attention_mask)`` gives the first decoder step's logits."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    model = AutoModelForSeq2SeqLM.from_pretrained(folder.path, local_files_only=True, trust_remote_code=False,
                                                  use_safetensors=folder.safetensors, weights_only=True)
    start = model.config.decoder_start_token_id
    start = model.config.pad_token_id if start is None else start

    class FirstStep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            decoder = torch.full((input_ids.shape[0], 1), start, dtype=input_ids.dtype, device=input_ids.device)
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              decoder_input_ids=decoder).logits[:, 0, :]

    return FirstStep().train(False)


def _to_support(model, logits, batch):
    import torch

    pair = logits.float()[:, [model.adapter.label_index, model.adapter.contrast_index]]
    return torch.softmax(pair, dim=-1)[:, 0]


SEQ2SEQ = AdapterKind(
    name="seq2seq",
    detects=lambda config: any(str(a).endswith("ForConditionalGeneration") for a in config.get("architectures") or []),
    default_hypothesis="sentence", read_label=_tokens, network=_network, encode=filled_prompts,
    logits=lambda output: output, to_support=_to_support, overhead=prompt_overhead, bind_tokenizer=_bind,
    prompt=SEQ2SEQ_PROMPT, reads_positions=False, manifest_keys=frozenset({"prompt", "support_token",
                                                                          "no_support_token"}))
