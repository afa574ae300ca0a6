"""Which adapter reads a grounding model, detected from its ``config.json`` and its manifest.

Every adapter scores a pair (premise, hypothesis) with the probability that the
premise supports the hypothesis, read from the output by its **label name**, never by
position: publishers order NLI labels differently (contradiction/entailment/neutral,
entailment/neutral/contradiction, contradiction/neutral/entailment), and an inverted
model looks like a good one turned upside down.

========================  =====================================  ==========================================
adapter                   meant for                              input and score
========================  =====================================  ==========================================
``"nli"``                 ``*ForSequenceClassification`` with    the tokenizer's pair template, premise (a
                          three or more labels: NLI              context chunk) first, hypothesis (a response
                          cross-encoders (BERT, RoBERTa,         sentence) second, as MNLI-class models are
                          DeBERTa-v2/v3, ModernBERT)             trained; P(entailment) of the softmax
``"consistency"``         ``*ForSequenceClassification`` with    the same pair template (MiniCheck: document,
                          two labels: MiniCheck-RoBERTa/         then claim); P(supported)
                          DeBERTa-class checkers
``"hhem"``                an HHEM-2.1-open-class folder: a       one text, ``prompt.format(text1=premise,
                          flan-t5 encoder and a 2-way head       text2=hypothesis)``, through transformers'
                          (:mod:`sgi_core.grounding.hhem`)       ``T5EncoderModel``; the head reads the first
                                                                 token; P(consistent)
``"token"``               ``*ForTokenClassification``:           the pair template, context chunk first, the
                          LettuceDetect-class span markers       whole response second (as trained); support
                          (ModernBERT, BERT)                     = 1 - the largest P(hallucinated) of a
                                                                 response token
========================  =====================================  ==========================================

The manifest (:data:`~sgi_core.grounding.folder.MANIFEST_NAME`) may set ``adapter``,
``supported_label`` (the label meaning entailed/supported), ``hallucinated_label``
(token classifiers), ``hypothesis`` (``"sentence"`` or ``"response"``), ``max_length``,
and for HHEM ``encoder_folder`` (the subfolder holding flan-t5's ``config.json`` and
tokenizer) and ``prompt``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sgi_core.errors import SGIInputError
from sgi_core.grounding.folder import MANIFEST_NAME, GroundingFolder

ADAPTERS = ("nli", "consistency", "hhem", "token")
#: How each adapter reads the response by default: sentence by sentence, or whole.
DEFAULT_HYPOTHESIS = {"nli": "sentence", "consistency": "sentence", "hhem": "sentence", "token": "response"}
#: Label names that mean the premise supports the hypothesis (after lower-casing, '-' and ' ' read as '_').
SUPPORTED_NAMES = ("entailment", "entailed", "entails", "entail", "supported", "support", "consistent",
                   "grounded", "faithful", "factual")
#: Label names that mean the hypothesis is not supported (a token classifier's positive class).
HALLUCINATED_NAMES = ("hallucinated", "hallucination", "unsupported", "not_supported", "inconsistent",
                      "not_consistent", "unfaithful", "contradiction", "not_entailment", "non_entailment")
#: HHEM-2.1-open's published prompt (its config.json's ``prompt``); a manifest or config ``prompt`` replaces it.
HHEM_PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}"
_MANIFEST_KEYS = {"adapter", "supported_label", "hallucinated_label", "hypothesis", "max_length", "encoder_folder",
                  "prompt"}


@dataclass(frozen=True)
class Adapter:
    """How one folder is read.

    Attributes
    ----------
    kind : str
        One of :data:`ADAPTERS`.
    label : str
        The name of the label whose probability is read: the supported one, or for
        ``"token"`` the hallucinated one.
    label_index : int
        Its index in the model's output.
    hypothesis : {"sentence", "response"}
    max_length : int or None
        The manifest's tokens per input; None: the model's own.
    prompt : str or None
        HHEM's template.
    num_labels : int
        Outputs of the classifier.
    """

    kind: str
    label: str
    label_index: int
    hypothesis: str
    max_length: int | None = None
    prompt: str | None = None
    num_labels: int = 2

    def to_dict(self) -> dict:
        return {"kind": self.kind, "label": self.label, "label_index": self.label_index,
                "hypothesis": self.hypothesis, "max_length": self.max_length}


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
    sgi_core.errors.SGIInputError: the HHEM prompt of model folder 'f' holds the field '{text1:>9}': only {text1} ...
    """
    import string

    hint = "Write the premise as {text1} and the hypothesis as {text2}; double a literal brace ({{ and }})"
    if not isinstance(prompt, str):
        raise SGIInputError(f"the HHEM prompt of model folder '{folder}' is not a text", hint=hint)
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(prompt)
                  if name is not None]
    except ValueError as err:
        raise SGIInputError(f"the HHEM prompt of model folder '{folder}' cannot be read as a template: {err}",
                            hint=hint) from None
    for name, spec, conversion in fields:
        if name not in ("text1", "text2") or spec or conversion:
            field = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise SGIInputError(f"the HHEM prompt of model folder '{folder}' holds the field '{field}': only "
                                "{text1} and {text2} may stand in braces", hint=hint)
    if {name for name, _, _ in fields} != {"text1", "text2"}:
        raise SGIInputError(f"the HHEM prompt of model folder '{folder}' must hold {{text1}} and {{text2}}", hint=hint)


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


def detect_adapter(folder: GroundingFolder) -> Adapter:
    """The adapter of a checked folder: the manifest's ``adapter``, else from ``architectures``.

    Raises
    ------
    SGIInputError
        An unknown manifest key or adapter, an architecture no adapter reads, or labels
        naming no supported (token classifiers: hallucinated) class.
    """
    manifest, config, where = folder.manifest, folder.config, folder.source
    unknown = set(manifest) - _MANIFEST_KEYS
    if unknown:
        raise SGIInputError(f"{MANIFEST_NAME} of model folder '{where}' has unknown keys: {', '.join(sorted(unknown))}",
                            hint=f"Keys it may hold: {', '.join(sorted(_MANIFEST_KEYS))}")
    kind = manifest.get("adapter")
    if kind is None:
        architectures = config.get("architectures") or []
        labels = config.get("id2label") or {}
        if any(str(a).endswith("ForTokenClassification") for a in architectures):
            kind = "token"
        elif any(str(a).endswith("ForSequenceClassification") for a in architectures):
            kind = "consistency" if len(labels) == 2 else "nli"
        else:
            raise SGIInputError(f"no adapter reads the architecture {architectures or 'none'} of model folder "
                                f"'{where}'", hint=f"Grounding models are *ForSequenceClassification or "
                                                   f"*ForTokenClassification; set 'adapter' in {MANIFEST_NAME} "
                                                   f"to one of {', '.join(ADAPTERS)}")
    if kind not in ADAPTERS:
        raise SGIInputError(f"{MANIFEST_NAME} of model folder '{where}' names the adapter {kind!r}",
                            hint=f"Choose among {', '.join(ADAPTERS)}")
    hypothesis = manifest.get("hypothesis", DEFAULT_HYPOTHESIS[kind])
    if hypothesis not in ("sentence", "response"):
        raise SGIInputError(f"'hypothesis' in {MANIFEST_NAME} of model folder '{where}' must be 'sentence' or "
                            f"'response'; got {hypothesis!r}")
    max_length = manifest.get("max_length")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 16):
        raise SGIInputError(f"'max_length' in {MANIFEST_NAME} of model folder '{where}' must be a whole number "
                            f">= 16; got {max_length!r}")
    # An HHEM folder's config.json may name no labels; transformers would call its two LABEL_0 and LABEL_1.
    labels = id2label(config, where) if kind != "hhem" or "id2label" in config else {0: "LABEL_0", 1: "LABEL_1"}
    if kind == "token":
        label, index = find_label(labels, named=manifest.get("hallucinated_label"), names=HALLUCINATED_NAMES,
                                  what="hallucinated", manifest_key="hallucinated_label", folder=where)
    else:
        label, index = find_label(labels, named=manifest.get("supported_label"), names=SUPPORTED_NAMES,
                                  what="entailment/supported", manifest_key="supported_label", folder=where)
    prompt = manifest.get("prompt", config.get("prompt", HHEM_PROMPT)) if kind == "hhem" else None
    if prompt is not None:
        check_prompt(prompt, where)
    return Adapter(kind, label, index, hypothesis, max_length, prompt, len(labels))
