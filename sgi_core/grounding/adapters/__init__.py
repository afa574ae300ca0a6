"""Which adapter reads a grounding model: one declared entry per kind, detected from ``config.json`` and the manifest.

========================  =====================================  ==========================================
adapter                   meant for                              input and score
========================  =====================================  ==========================================
``"nli"``                 ``*ForSequenceClassification`` with    the tokenizer's pair template, premise (a
                          three or more labels: NLI              context chunk) first, hypothesis (a response
                          cross-encoders                         sentence) second; P(entailment)
``"consistency"``         the same with two labels: MiniCheck-   the same pair template; P(supported)
                          RoBERTa/DeBERTa-class checkers
``"hhem"``                an HHEM-2.1-open-class folder          one text, ``prompt.format(text1=premise,
                          (:mod:`.hhem`)                         text2=hypothesis)``; P(consistent)
``"seq2seq"``             ``*ForConditionalGeneration``:         one text from ``prompt``; the first decoder
                          MiniCheck-FT5-class (:mod:`.seq2seq`)  step's support against no-support token
``"token"``               ``*ForTokenClassification``:           the pair template, the whole response
                          LettuceDetect-class span markers       second; 1 - the largest P(hallucinated)
========================  =====================================  ==========================================

The manifest (:data:`~sgi_core.grounding.folder.MANIFEST_NAME`) may set ``adapter``,
``supported_label``, ``hallucinated_label`` (token classifiers), ``hypothesis`` (``"sentence"``
or ``"response"``), ``max_length``, and each adapter's own keys. Adding a kind is one module
declaring an :class:`~.base.AdapterKind` and one line in :data:`ADAPTER_KINDS`.
"""

from __future__ import annotations

from sgi_core.errors import SGIInputError
from sgi_core.grounding.adapters.base import (
    COMMON_MANIFEST_KEYS,
    HALLUCINATED_NAMES,
    SUPPORTED_NAMES,
    Adapter,
    AdapterKind,
    check_prompt,
    find_label,
    id2label,
    prompt_of,
)
from sgi_core.grounding.adapters.classifier import CONSISTENCY, NLI
from sgi_core.grounding.adapters.hhem import HHEM, HHEM_PROMPT
from sgi_core.grounding.adapters.seq2seq import SEQ2SEQ
from sgi_core.grounding.adapters.token import TOKEN
from sgi_core.grounding.folder import MANIFEST_NAME, GroundingFolder, check_config

#: Every adapter kind by name, in the order detection tries them.
ADAPTER_KINDS: dict[str, AdapterKind] = {kind.name: kind for kind in (TOKEN, NLI, CONSISTENCY, SEQ2SEQ, HHEM)}
ADAPTERS = tuple(ADAPTER_KINDS)
#: How each adapter reads the response by default: sentence by sentence, or whole.
DEFAULT_HYPOTHESIS = {name: kind.default_hypothesis for name, kind in ADAPTER_KINDS.items()}

__all__ = ["ADAPTERS", "ADAPTER_KINDS", "DEFAULT_HYPOTHESIS", "HALLUCINATED_NAMES", "HHEM_PROMPT", "SUPPORTED_NAMES",
           "Adapter", "AdapterKind", "check_prompt", "detect_adapter", "find_label", "id2label"]


def _manifest_keys() -> frozenset:
    return COMMON_MANIFEST_KEYS.union(*(kind.manifest_keys for kind in ADAPTER_KINDS.values()))


def _detected(config: dict, where) -> AdapterKind:
    found = next((kind for kind in ADAPTER_KINDS.values() if kind.detects(config)), None)
    if found is None:
        raise SGIInputError(f"no adapter reads the architecture {config.get('architectures') or 'none'} of model "
                            f"folder '{where}'", hint=f"Grounding models are *ForSequenceClassification, "
                                                      f"*ForTokenClassification or *ForConditionalGeneration; set "
                                                      f"'adapter' in {MANIFEST_NAME} to one of {', '.join(ADAPTERS)}")
    return found


def detect_adapter(folder: GroundingFolder) -> Adapter:
    """The adapter of a checked folder: the manifest's ``adapter``, else the first entry that detects it.

    Raises
    ------
    SGIInputError
        An unknown manifest key or adapter, an architecture no adapter reads, code shipped
        with the model or a class transformers lacks (:func:`~sgi_core.grounding.folder.check_config`),
        labels naming no supported (token classifiers: hallucinated) class, or a bad prompt.
    """
    manifest, config, where = folder.manifest, folder.config, folder.source
    unknown = set(manifest) - _manifest_keys()
    if unknown:
        raise SGIInputError(f"{MANIFEST_NAME} of model folder '{where}' has unknown keys: {', '.join(sorted(unknown))}",
                            hint=f"Keys it may hold: {', '.join(sorted(_manifest_keys()))}")
    named = manifest.get("adapter")
    if named is not None and named not in ADAPTER_KINDS:
        raise SGIInputError(f"{MANIFEST_NAME} of model folder '{where}' names the adapter {named!r}",
                            hint=f"Choose among {', '.join(ADAPTERS)}")
    kind = ADAPTER_KINDS[named] if named is not None else _detected(config, where)
    check_config(folder.path, config, own_code=kind.own_code, shown=where)
    hypothesis = manifest.get("hypothesis", kind.default_hypothesis)
    if hypothesis not in ("sentence", "response"):
        raise SGIInputError(f"'hypothesis' in {MANIFEST_NAME} of model folder '{where}' must be 'sentence' or "
                            f"'response'; got {hypothesis!r}")
    max_length = manifest.get("max_length")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 16):
        raise SGIInputError(f"'max_length' in {MANIFEST_NAME} of model folder '{where}' must be a whole number "
                            f">= 16; got {max_length!r}")
    label, index, num_labels, contrast = kind.read_label(config, manifest, where)
    prompt = prompt_of(manifest, config, kind.prompt, where) if kind.prompt is not None else None
    return Adapter(kind.name, label, index, hypothesis, max_length, prompt, num_labels, contrast)
