"""A loaded grounding model: P(supported) of (premise, hypothesis) pairs, batched by length.

:func:`load_grounding_model` checks the folder (:func:`~sgi_core.grounding.folder.read_folder`),
picks its adapter (:func:`~sgi_core.grounding.adapters.detect_adapter`), builds the model
from ``transformers``' own classes with ``local_files_only=True`` and never
``trust_remote_code``, reads the tokenizer from the folder, and runs the self-test
(:mod:`sgi_core.grounding.selftest`) on the backend that loaded, unless told not to.

:meth:`GroundingModel.support` sorts the pairs by length so that each batch pads to
nearly its own length, and takes the logits from torch under ``torch.inference_mode()``
or, with the ``onnx`` backend, from an ONNX Runtime session of the network's export
(:mod:`sgi_core.grounding.onnx_network`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.grounding.adapters import ADAPTER_KINDS, Adapter, AdapterKind, detect_adapter
from sgi_core.grounding.folder import GroundingFolder, read_folder
from sgi_core.grounding.selftest import SelfTest, run_self_test

#: Tokens per input when neither the manifest, the tokenizer nor the config says.
FALLBACK_MAX_LENGTH = 512
_ROBERTA_LIKE = ("roberta", "xlm-roberta", "camembert", "longformer")


@dataclass(frozen=True)
class GroundingModel:
    """A grounding model ready to score pairs.

    Attributes
    ----------
    folder : GroundingFolder
    adapter : Adapter
    tokenizer, network
        The tokenizer and the torch module (eval mode); no network for a folder only
        checked (:func:`load_grounding_model` with ``network=False``).
    device : str
    max_length : int
        Tokens per input, template and special tokens included.
    self_test : SelfTest
        The load-time check (``skipped`` when it was not run).
    backend : {"torch", "onnx"}
        What computes the logits of :meth:`support`.
    session : OnnxLogits or None
        The ONNX Runtime session when ``backend`` is ``onnx``.
    """

    folder: GroundingFolder
    adapter: Adapter
    tokenizer: object = field(repr=False)
    network: object = field(repr=False)
    device: str = "cpu"
    max_length: int = FALLBACK_MAX_LENGTH
    self_test: SelfTest = field(default_factory=SelfTest.not_run)
    backend: str = "torch"
    session: object = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def cache_source(self) -> str:
        """What a cached probability depends on besides the pair: the folder's weights and how they are read.

        Not the backend: ``onnx`` gives torch's probabilities up to float rounding (max
        |difference| 1.5e-7 on a DeBERTa-v3-base, at most about 5e-6 on the tests' tiny
        models with deliberately large weights, where torch's own batching moves them by
        up to about 2e-6).
        """
        return f"grounding|{self.folder.fingerprint}|{sorted(self.adapter.to_dict().items())}|{self.max_length}"

    def count_tokens(self, texts) -> np.ndarray:
        """Tokens of each text alone, without special tokens."""
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.int64)
        ids = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(texts))

    @property
    def entry(self) -> AdapterKind:
        """The declared adapter kind that reads this model."""
        return ADAPTER_KINDS[self.adapter.kind]

    @property
    def overhead(self) -> int:
        """Tokens an input holds besides premise and hypothesis: special tokens, or a prompt's."""
        return self.entry.overhead(self)

    def network_inputs(self, premises: list[str], hypotheses: list[str]) -> dict:
        """The tensors by name that the network reads for these pairs (what its ONNX export is traced with)."""
        return self.entry.encode(self, premises, hypotheses)[0]

    def _forward(self, inputs: dict):
        if self.session is not None:
            return self.session(inputs)
        if self.network is None:
            raise SGIInputError(f"grounding model '{self.name}' was checked, not loaded: it has no network to "
                                "score with",
                                hint="Load it with load_grounding_model(..., network=True)")
        return self.entry.logits(self.network(**inputs))

    def inputs_of(self, batch) -> dict:
        """The tokenizer's tensors the network reads, on its device.

        A model with one segment type (RoBERTa's ``type_vocab_size`` 1) reads no segment
        ids: a generic tokenizer's second-segment ids would index past its table.
        """
        single_segment = self.folder.config.get("type_vocab_size", 2) < 2
        return {key: value.to(self.device) for key, value in batch.items()
                if key != "offset_mapping" and not (key == "token_type_ids" and single_segment)}

    def support(self, premises, hypotheses, *, batch_size: int = 16, progress=None) -> np.ndarray:
        """P(supported) of each pair: the supported label's softmax probability, or for a token
        classifier 1 - the largest P(hallucinated) of a hypothesis token.

        Pairs are sorted by length (tokens of premise and hypothesis) and run ``batch_size`` at a time;
        ``progress(done, total)`` is called after each batch.
        """
        import torch

        from sgi_core.models.device import count_batches

        premises, hypotheses = list(premises), list(hypotheses)
        out = np.empty(len(premises), dtype=np.float64)
        # Sorted by tokens, so that each batch pads to nearly its own length.
        lengths = (self.count_tokens(premises) + self.count_tokens(hypotheses)).tolist()
        done = 0
        with torch.inference_mode():
            for rows in count_batches(lengths, batch_size):
                inputs, batch = self.entry.encode(self, [premises[i] for i in rows], [hypotheses[i] for i in rows])
                out[rows] = self.entry.to_support(self, self._forward(inputs), batch).cpu().numpy()
                done += len(rows)
                if progress is not None:
                    progress(done, len(premises))
        return out

    def token_probabilities(self, premise: str, hypothesis: str) -> list[tuple[int, int, float]]:
        """``(start, end, P(hallucinated))`` of each hypothesis token, as character offsets in ``hypothesis``.

        Token classifiers only (the spans the Review page highlights). Torch computes
        them whatever the backend (one pair at a time, for one row's evidence).
        """
        import torch

        if not self.entry.marks_tokens:
            raise ValueError("token probabilities come from token classifiers only")
        batch = self.tokenizer([premise], [hypothesis], truncation="longest_first", max_length=self.max_length,
                               return_tensors="pt", return_offsets_mapping=True)
        offsets = batch["offset_mapping"][0].tolist()
        with torch.inference_mode():
            logits = self.entry.logits(self.network(**self.inputs_of(batch)))
        probs = torch.softmax(logits.float(), dim=-1)[0, :, self.adapter.label_index].cpu().tolist()
        return [(start, end, prob) for sid, (start, end), prob in zip(batch.sequence_ids(0), offsets, probs)
                if sid == 1 and end > start]


def _max_length(adapter: Adapter, tokenizer, config: dict, folder) -> int:
    limits = []
    tokenizer_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tokenizer_max, int) and 0 < tokenizer_max < 1_000_000:
        limits.append(tokenizer_max)
    positions = config.get("max_position_embeddings")
    if isinstance(positions, int) and positions > 0 and ADAPTER_KINDS[adapter.kind].reads_positions:
        # RoBERTa-class models number positions from pad_token_id + 1.
        offset = int(config.get("pad_token_id") or 1) + 1 if config.get("model_type") in _ROBERTA_LIKE else 0
        limits.append(positions - offset)
    if adapter.max_length is None:
        return min(limits) if limits else FALLBACK_MAX_LENGTH
    if limits and adapter.max_length > min(limits):
        raise SGIInputError(f"the manifest of model folder '{folder}' sets max_length {adapter.max_length}, beyond "
                            f"the {min(limits)} tokens the model reads",
                            hint=f"Set max_length to {min(limits)} or less")
    return adapter.max_length


def load_grounding_model(path, *, name: str | None = None, trust_model_code: bool = False, device: str | None = None,
                         backend: str = "auto", self_test: bool = True, network: bool = True,
                         snapshot=None) -> GroundingModel:
    """Check, load and self-test a grounding model folder.

    Parameters
    ----------
    path : path-like
        The local folder; nothing is downloaded.
    name : str, optional
        Its short name (default: the folder's name).
    trust_model_code : bool
        Consent to unpickle ``.bin``/``.ckpt``/``.pt`` weights.
    device : str, optional
        As :func:`sgi_core.models.device.resolve_device` takes it.
    backend : {"auto", "torch", "onnx"}
        What computes the logits: ``onnx`` (ONNX Runtime on the CPU, the network exported
        once into the cache folder) or ``torch``; ``auto`` is ``onnx`` on the CPU where
        onnxruntime and onnx are installed, else ``torch``. A network that does not export
        runs on torch with a warning (:func:`~sgi_core.grounding.onnx_network.onnx_logits`);
        :attr:`GroundingModel.backend` says which ran.
    self_test : bool, default True
        Run :func:`~sgi_core.grounding.selftest.run_self_test` and refuse a model that
        scores the built-in contradictions above the entailments.
    network : bool, default True
        False checks the folder without building anything that scores (with
        ``self_test=False`` only): its private copy, trust check, fingerprint, adapter and
        tokenizer, as a Ray driver needs them before its actors load the folder themselves
        (:mod:`sgi_core.pipelines.ray_models`). The model then has no network and no
        session, and :meth:`GroundingModel.support` refuses to run.
    snapshot : FolderSnapshot, optional
        Another process's verified snapshot of ``path`` to read in place
        (:func:`~sgi_core.grounding.folder.read_folder`).

    Raises
    ------
    SGIInputError
        From the folder checks, the adapter's detection, the backend
        (:func:`~sgi_core.grounding.onnx_network.resolve_grounding_backend`: ``onnx-int8``
        is refused) or the self-test.
    """
    from transformers import AutoTokenizer

    from sgi_core.grounding.onnx_network import onnx_logits, resolve_grounding_backend
    from sgi_core.models.device import resolve_device

    if not network and self_test:
        raise ValueError("the self-test needs the network: load_grounding_model(network=False) takes self_test=False")
    resolved = resolve_device(device)
    backend = resolve_grounding_backend(backend, resolved)
    folder = read_folder(path, name=name, trust_model_code=trust_model_code, snapshot=snapshot)
    adapter = detect_adapter(folder)
    entry = ADAPTER_KINDS[adapter.kind]
    try:
        tokenizer = AutoTokenizer.from_pretrained(entry.tokenizer_folder(folder), local_files_only=True,
                                                  trust_remote_code=False)
        adapter = entry.bind_tokenizer(adapter, tokenizer, folder)
        module = entry.network(folder, adapter).to(resolved) if network else None
    except SGIInputError:
        raise
    except Exception as err:  # a damaged file fails deep inside transformers or safetensors, by many types
        reason = str(err).splitlines()[0] if str(err).strip() else "no message"
        raise SGIInputError(f"cannot load model folder '{folder.source}': {type(err).__name__}: {reason}",
                            hint="Check that the folder is a complete save_pretrained copy of the model "
                                 "(weights not truncated, tokenizer files present)") from None
    max_length = _max_length(adapter, tokenizer, folder.config, folder.source)
    model = GroundingModel(folder, adapter, tokenizer, module, resolved, max_length)
    if not network:
        return model
    session = onnx_logits(model) if backend == "onnx" else None
    if session is not None:
        model = replace(model, backend="onnx", session=session)
    if not self_test:
        return model
    return replace(model, self_test=run_self_test(model.support, source=str(folder.source)))
