"""What every grounding adapter declares, and what they share: labels read by name, prompt templates, pair inputs.

An adapter kind is one :class:`AdapterKind` entry: how it is detected from ``config.json``,
which label (or token) it reads, how it builds its network from transformers' own classes,
how it encodes a (premise, hypothesis) pair, and how its logits become P(supported). The
runtime calls the entry and holds no branch on the kind. Labels are read by their **name**,
never by position: publishers order NLI labels differently, and an inverted model looks like
a good one turned upside down.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, field

from sgi_core.errors import SGIInputError
from sgi_core.grounding.folder import MANIFEST_NAME

#: Label names that mean the premise supports the hypothesis (after lower-casing, '-' and ' ' read as '_').
SUPPORTED_NAMES = ("entailment", "entailed", "entails", "entail", "supported", "support", "consistent",
                   "grounded", "faithful", "factual")
#: Label names that mean the hypothesis is not supported (a token classifier's positive class).
HALLUCINATED_NAMES = ("hallucinated", "hallucination", "unsupported", "not_supported", "inconsistent",
                      "not_consistent", "unfaithful", "contradiction", "not_entailment", "non_entailment")
#: Manifest keys every adapter reads; an entry adds its own (:attr:`AdapterKind.manifest_keys`).
COMMON_MANIFEST_KEYS = frozenset({"adapter", "supported_label", "hallucinated_label", "hypothesis", "max_length"})


@dataclass(frozen=True)
class Adapter:
    """How one folder is read.

    Attributes
    ----------
    kind : str
        The name of its :class:`AdapterKind` entry.
    label : str
        The label (or, for a generating checker, the token text) whose probability is read:
        the supported one, or for a token classifier the hallucinated one.
    label_index : int
        Its index in the model's output (a token id for a generating checker, set at load).
    hypothesis : {"sentence", "response"}
    max_length : int or None
        The manifest's tokens per input; None: the model's own.
    prompt : str or None
        The template of adapters that read one text (``{text1}`` premise, ``{text2}`` hypothesis).
    num_labels : int
        Outputs of the classifier.
    contrast : str or None
        A generating checker's "not supported" token text, read against ``label``.
    contrast_index : int or None
        Its token id, set at load.
    """

    kind: str
    label: str
    label_index: int
    hypothesis: str
    max_length: int | None = None
    prompt: str | None = None
    num_labels: int = 2
    contrast: str | None = None
    contrast_index: int | None = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "label": self.label, "label_index": self.label_index,
                "hypothesis": self.hypothesis, "max_length": self.max_length}


@dataclass(frozen=True)
class AdapterKind:
    """One adapter kind: everything the runtime asks of it.

    Attributes
    ----------
    name : str
        What the manifest's ``adapter`` names and the scored file records.
    detects : callable
        ``detects(config) -> bool``: whether it reads a folder whose manifest names no adapter
        (tried in the registry's order).
    default_hypothesis : {"sentence", "response"}
    read_label : callable
        ``read_label(config, manifest, folder) -> Adapter`` fields ``(label, label_index,
        num_labels, contrast)``.
    network : callable
        ``network(folder, adapter)``: the torch module, built from transformers' classes.
    encode : callable
        ``encode(model, premises, hypotheses) -> (inputs, batch)``: tensors by name, padded.
    logits : callable
        ``logits(output)``: the logits tensor of the network's output.
    to_support : callable
        ``to_support(model, logits, batch)``: P(supported) of each pair, a torch tensor.
    overhead : callable
        ``overhead(model) -> int``: tokens an input holds besides premise and hypothesis.
    tokenizer_folder : callable
        ``tokenizer_folder(folder) -> Path``.
    bind_tokenizer : callable
        ``bind_tokenizer(adapter, tokenizer, folder) -> Adapter``: fields only a tokenizer knows.
    prompt : str or None
        The default template of an adapter that reads one text (a manifest's or config's
        ``prompt`` replaces it); None for pair adapters.
    output_axes : dict
        The dynamic axes of the exported logits.
    reads_positions : bool
        Whether ``max_position_embeddings`` of the config bounds an input.
    own_code : bool
        Builds its network itself from transformers' classes, so the folder's ``auto_map`` is
        never read and its architecture need not be one transformers defines.
    marks_tokens : bool
        Gives P(hallucinated) per hypothesis token (the spans the Review page marks).
    manifest_keys : frozenset
        Manifest keys of its own.
    """

    name: str
    detects: Callable
    default_hypothesis: str
    read_label: Callable
    network: Callable
    encode: Callable
    logits: Callable
    to_support: Callable
    overhead: Callable
    tokenizer_folder: Callable = field(default=lambda folder: folder.path)
    bind_tokenizer: Callable = field(default=lambda adapter, tokenizer, folder: adapter)
    prompt: str | None = None
    output_axes: dict = field(default_factory=lambda: {0: "batch"})
    reads_positions: bool = True
    own_code: bool = False
    marks_tokens: bool = False
    manifest_keys: frozenset = frozenset()


def _norm(name) -> str:
    return str(name).strip().lower().replace("-", "_").replace(" ", "_")


def id2label(config: dict, folder) -> dict[int, str]:
    """The config's ``id2label`` with integer keys, in index order.

    Raises
    ------
    SGIInputError
        Absent, or keys that are not 0..n-1.
    """
    raw = config.get("id2label")
    if not isinstance(raw, dict) or not raw:
        raise SGIInputError(f"the config.json of model folder '{folder}' has no id2label",
                            hint="A classifier's config.json names its labels in id2label")
    try:
        labels = {int(key): str(value) for key, value in raw.items()}
    except (TypeError, ValueError):
        raise SGIInputError(f"id2label of model folder '{folder}' has keys that are not label indices") from None
    if sorted(labels) != list(range(len(labels))):
        raise SGIInputError(f"id2label of model folder '{folder}' does not number its labels 0..{len(labels) - 1}")
    return dict(sorted(labels.items()))


def find_label(labels: dict[int, str], *, named: str | None, names: tuple[str, ...], what: str,
               manifest_key: str, folder) -> tuple[str, int]:
    """The label ``named`` (the manifest's), else the one label whose name is in ``names``.

    Names are compared whole (``not_supported`` is never read as ``supported``).

    Examples
    --------
    >>> find_label({0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"}, named=None, names=SUPPORTED_NAMES,
    ...            what="entailment", manifest_key="supported_label", folder="f")
    ('ENTAILMENT', 1)
    """
    if named is not None:
        hits = [i for i, label in labels.items() if label == named]
        if not hits:
            raise SGIInputError(f"{MANIFEST_NAME} of model folder '{folder}' names the label {named!r}, which its "
                                f"id2label ({', '.join(labels.values())}) does not hold",
                                hint=f"Set {manifest_key!r} to one of the labels of config.json's id2label")
        return named, hits[0]
    hits = [i for i, label in labels.items() if _norm(label) in names]
    if len(hits) != 1:
        found = "names no" if not hits else "names more than one"
        raise SGIInputError(
            f"the labels of model folder '{folder}' ({', '.join(labels.values())}) {found} {what} class",
            hint=f"Write {MANIFEST_NAME} in the folder naming it, e.g. {{\"{manifest_key}\": "
                 f"\"{labels[max(labels)]}\"}}, after checking the model card says what each label means")
    return labels[hits[0]], hits[0]


def supported_label(config: dict, manifest: dict, folder) -> tuple[str, int, int, None]:
    """The supported label of a classifier's ``id2label`` (the manifest's ``supported_label`` first)."""
    labels = id2label(config, folder)
    label, index = find_label(labels, named=manifest.get("supported_label"), names=SUPPORTED_NAMES,
                              what="entailment/supported", manifest_key="supported_label", folder=folder)
    return label, index, len(labels), None


def check_prompt(prompt, folder) -> None:
    """Accept a template whose only fields are plain ``{text1}`` and ``{text2}``, each at least once.

    ``str.format`` reads attributes, indices and format specs from a field (``{text1.__class__}``,
    ``{text2:>200000000}``): nothing but the two plain names may stand in braces (``{{`` and
    ``}}`` are literal braces).

    Examples
    --------
    >>> check_prompt("Premise: {text1} Hypothesis: {text2} {{literal}}", "f")
    >>> check_prompt("{text1:>9} {text2}", "f")
    Traceback (most recent call last):
    ...
    sgi_core.errors.SGIInputError: the prompt of model folder 'f' holds the field '{text1:>9}': only {text1} ...
    """
    hint = "Write the premise as {text1} and the hypothesis as {text2}; double a literal brace ({{ and }})"
    if not isinstance(prompt, str):
        raise SGIInputError(f"the prompt of model folder '{folder}' is not a text", hint=hint)
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(prompt)
                  if name is not None]
    except ValueError as err:
        raise SGIInputError(f"the prompt of model folder '{folder}' cannot be read as a template: {err}",
                            hint=hint) from None
    for name, spec, conversion in fields:
        if name not in ("text1", "text2") or spec or conversion:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise SGIInputError(f"the prompt of model folder '{folder}' holds the field '{shown}': only "
                                "{text1} and {text2} may stand in braces", hint=hint)
    if {name for name, _, _ in fields} != {"text1", "text2"}:
        raise SGIInputError(f"the prompt of model folder '{folder}' must hold {{text1}} and {{text2}}", hint=hint)


def prompt_of(manifest: dict, config: dict, default: str, folder) -> str:
    """The template a one-text adapter fills: the manifest's ``prompt``, else the config's, else ``default``."""
    prompt = manifest.get("prompt", config.get("prompt", default))
    check_prompt(prompt, folder)
    return prompt


def filled_prompts(model, premises: list[str], hypotheses: list[str]):
    """A one-text adapter's batch: each pair written into the prompt, truncated and padded."""
    texts = [model.adapter.prompt.format(text1=p, text2=h) for p, h in zip(premises, hypotheses)]
    batch = model.tokenizer(texts, truncation=True, max_length=model.max_length, padding=True, return_tensors="pt")
    return {key: batch[key].to(model.device) for key in ("input_ids", "attention_mask")}, batch


def prompt_overhead(model) -> int:
    """Tokens of a one-text adapter's prompt with both texts empty, plus its end token."""
    return int(model.count_tokens([model.adapter.prompt.format(text1="", text2="")])[0]) + 1


def pair_inputs(model, premises: list[str], hypotheses: list[str]):
    """The tokenizer's pair template, premise first, truncated longest-first and padded."""
    batch = model.tokenizer(premises, hypotheses, truncation="longest_first", max_length=model.max_length,
                            padding=True, return_tensors="pt")
    return model.inputs_of(batch), batch


def pair_overhead(model) -> int:
    """Special tokens the tokenizer adds to a pair."""
    return int(model.tokenizer.num_special_tokens_to_add(pair=True))


def softmax_label(model, logits, batch):
    """The softmax probability of the adapter's label."""
    import torch

    return torch.softmax(logits.float(), dim=-1)[..., model.adapter.label_index]
