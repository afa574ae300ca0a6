"""An HHEM-class consistency model built from transformers' T5 encoder and a two-way head written here.

HHEM-2.1-open (Vectara) is a flan-t5-base encoder with a linear head; its folder ships
code of its own (``auto_map``), which is never run. This module builds the same
network from ``transformers.T5EncoderModel`` and one ``torch.nn.Linear``, and loads
both from the folder's safetensors:

    logits = W · h_0 + b,    P(consistent) = softmax(logits)[supported]

where ``h_0`` is the encoder's last hidden state at the first token of
``prompt.format(text1=premise, text2=hypothesis)``. The weights are read under their
names in HHEM's checkpoint, ``t5.transformer.*`` (the encoder) and ``t5.classifier.*``
(the head); ``transformer.*`` / ``classifier.*`` are read too. The T5 configuration
and tokenizer come from ``encoder_folder`` in the manifest (a subfolder holding
flan-t5's ``config.json`` and ``tokenizer.json``), else the folder itself.

References
----------
Vectara, HHEM-2.1-Open model card, https://huggingface.co/vectara/hallucination_evaluation_model.
"""

from __future__ import annotations

from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.grounding.adapters.base import (
    AdapterKind,
    filled_prompts,
    prompt_overhead,
    softmax_label,
    supported_label,
)

#: HHEM-2.1-open's published prompt (its config.json's ``prompt``); a manifest or config ``prompt`` replaces it.
HHEM_PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}"

_ENCODER_PREFIXES = ("t5.transformer.", "transformer.")
_HEAD_PREFIXES = ("t5.classifier.", "classifier.")


def encoder_folder(folder: Path, manifest: dict) -> Path:
    """The folder of the T5 config and tokenizer: ``encoder_folder`` of the manifest (inside ``folder``), else
    ``folder``."""
    named = manifest.get("encoder_folder")
    if named is None:
        return folder
    path = (folder / str(named)).resolve()
    if not path.is_relative_to(folder) or not (path / "config.json").is_file():
        raise SGIInputError(f"'encoder_folder' of model folder '{folder}' must name a subfolder holding config.json",
                            hint="Copy flan-t5's config.json and tokenizer.json into a subfolder and name it there")
    return path


def _take(state: dict, prefixes: tuple[str, ...]) -> dict:
    for prefix in prefixes:
        found = {key[len(prefix):]: value for key, value in state.items() if key.startswith(prefix)}
        if found:
            return found
    return {}


def load_hhem(folder: Path, manifest: dict, weights: tuple[str, ...], num_labels: int):
    """``torch.nn.Module`` whose forward(input_ids, attention_mask) gives the head's logits at the first token.

    Raises
    ------
    SGIInputError
        A checkpoint without encoder or head weights under the names above, or whose
        shapes do not fit the T5 configuration.
    """
    import torch
    from transformers import T5Config, T5EncoderModel

    from sgi_core.grounding.weights import load_state

    config = T5Config.from_pretrained(encoder_folder(folder, manifest), local_files_only=True, trust_remote_code=False)
    state = load_state(folder, weights)
    encoder_state, head_state = _take(state, _ENCODER_PREFIXES), _take(state, _HEAD_PREFIXES)
    if not encoder_state or set(head_state) != {"weight", "bias"}:
        raise SGIInputError(f"the weights of model folder '{folder}' hold no T5 encoder (t5.transformer.*) and "
                            "two-way head (t5.classifier.weight, .bias)",
                            hint="Give the folder of an HHEM-class checkpoint, or set 'adapter' in its manifest")

    class HHEMHead(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = T5EncoderModel(config)
            self.classifier = torch.nn.Linear(config.d_model, num_labels)

        def forward(self, input_ids, attention_mask):
            hidden = self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            return self.classifier(hidden[:, 0, :])

    model = HHEMHead()
    try:
        # encoder.embed_tokens is tied to shared: a checkpoint may hold either name.
        missing, unexpected = model.transformer.load_state_dict(encoder_state, strict=False)
        model.classifier.load_state_dict(head_state)
    except RuntimeError as err:
        raise SGIInputError(f"the weights of model folder '{folder}' do not fit its T5 configuration: "
                            f"{str(err).splitlines()[0]}") from None
    missing = [key for key in missing if key != "encoder.embed_tokens.weight"]
    if missing or unexpected:
        raise SGIInputError(f"the T5 encoder weights of model folder '{folder}' do not match its configuration "
                            f"(missing {missing[:3]}, unexpected {list(unexpected)[:3]})")
    return model.train(False)  # inference mode: no dropout


def _label(config: dict, manifest: dict, folder) -> tuple[str, int, int, None]:
    # An HHEM folder's config.json may name no labels; transformers would call its two LABEL_0 and LABEL_1.
    named = config if "id2label" in config else {**config, "id2label": {"0": "LABEL_0", "1": "LABEL_1"}}
    return supported_label(named, manifest, folder)


HHEM = AdapterKind(
    name="hhem", detects=lambda config: False, default_hypothesis="sentence", read_label=_label,
    network=lambda folder, adapter: load_hhem(folder.path, folder.manifest, folder.weights, adapter.num_labels),
    encode=filled_prompts, logits=lambda output: output, to_support=softmax_label, overhead=prompt_overhead,
    tokenizer_folder=lambda folder: encoder_folder(folder.path, folder.manifest), prompt=HHEM_PROMPT,
    reads_positions=False, own_code=True, manifest_keys=frozenset({"encoder_folder", "prompt"}))
