"""Grounding models on ONNX Runtime: the network's logits from an export of the loaded torch module.

The torch network (a ``*ForSequenceClassification``/``*ForTokenClassification`` model, or
HHEM's T5 encoder and head) is traced once with
:func:`sgi_core.models.onnx_export.export_module` into
``<cache folder>/onnx/<key>/model.onnx``, where ``key`` hashes the folder's fingerprint,
the adapter kind and the number of labels (:func:`export_source`), the backend and the
opset; an export whose SHA-256 does not match is made again. The graph's inputs are the
tensors the model's own tokenisation gives the network (no ``token_type_ids`` for a
single-segment model), its output the logits. Tokenising, HHEM's prompt, the softmax at
the adapter's label and a token classifier's mask of hypothesis tokens stay in
:class:`~sgi_core.grounding.runtime.GroundingModel`, so ``onnx`` gives torch's
probabilities up to float rounding (max |difference| 1.5e-7 on a DeBERTa-v3-base, a few
1e-6 at most on the tests' tiny models), and the pair cache is shared by both backends.

Only ``onnx`` runs grounding models: ``onnx-int8`` is refused, and the command line
and the dashboard give them ``onnx`` when embeddings run in int8
(:func:`grounding_backend`). BERT, RoBERTa, DeBERTa-v2/v3, ModernBERT and T5 (HHEM)
networks export; one whose export or session fails (an architecture the TorchScript
exporter cannot trace) runs on torch, with a warning naming the model.
"""

from __future__ import annotations

import warnings

import numpy as np

from sgi_core.errors import SGIInputError

#: Backends a grounding model takes: ``auto`` resolves as for embeddings.
GROUNDING_BACKENDS = ("auto", "torch", "onnx")
#: Pairs the export is traced with: two of different lengths, so the sample is padded.
SAMPLE_PAIRS = (("Paris is the capital of France.", "Paris is in France."),
                ("A quick brown fox jumps over the lazy dog near the river.", "The fox jumps."))


def grounding_backend(backend: str) -> str:
    """The backend grounding models run on when embeddings run on ``backend``: ``onnx`` for ``onnx-int8``.

    Examples
    --------
    >>> grounding_backend("onnx-int8"), grounding_backend("auto"), grounding_backend("torch")
    ('onnx', 'auto', 'torch')
    """
    return "onnx" if backend == "onnx-int8" else backend


def resolve_grounding_backend(backend: str, device: str) -> str:
    """``torch`` or ``onnx`` for ``backend`` on ``device``: ``auto`` is onnx on the CPU where ONNX Runtime is installed.

    Raises
    ------
    SGIInputError
        ``onnx-int8`` (grounding models are not quantised), an unknown name, or ``onnx``
        on another device than the CPU.
    """
    from sgi_core.models.onnx_export import check_backend, resolve_backend

    if backend == "onnx-int8":
        raise SGIInputError("grounding models do not run in int8 (backend 'onnx-int8')",
                            hint="Use backend onnx (their fp32 export on ONNX Runtime) or torch")
    if backend not in GROUNDING_BACKENDS:
        raise SGIInputError(f"unknown backend '{backend}' for grounding models",
                            hint=f"Use one of: {', '.join(GROUNDING_BACKENDS)}")
    return check_backend(resolve_backend(backend, device=device), device=device)


def export_source(model) -> str:
    """What the export of ``model``'s network depends on: the folder's weights, the adapter kind and the labels."""
    return f"grounding|{model.folder.fingerprint}|{model.adapter.kind}|{model.adapter.num_labels}"


class OnnxLogits:
    """The exported network in an ONNX Runtime session: ``logits(inputs)`` as the torch network gives them.

    Parameters
    ----------
    model_path : Path
        The export.
    """

    def __init__(self, model_path):
        from sgi_core.models.onnx_export import cpu_session

        self.session = cpu_session(model_path)
        self.input_names = [item.name for item in self.session.get_inputs()]

    def __call__(self, inputs: dict):
        """The logits, a float32 torch tensor, of the network's input tensors by name."""
        import torch

        feeds = {name: inputs[name].cpu().numpy().astype(np.int64) for name in self.input_names}
        return torch.from_numpy(self.session.run(None, feeds)[0])


def onnx_logits(model) -> OnnxLogits | None:
    """A session of the export of ``model``'s network, exported into the cache folder when missing or damaged.

    Parameters
    ----------
    model : GroundingModel
        Loaded on the CPU, run by torch.

    Returns
    -------
    OnnxLogits or None
        None, with a warning naming the model, when the network does not export or
        its export does not load.
    """
    from sgi_core.models import onnx_export
    from sgi_core.models.cache_folder import default_cache_dir

    inputs = model.network_inputs([p for p, _ in SAMPLE_PAIRS], [h for _, h in SAMPLE_PAIRS])
    folder = onnx_export.export_folder(default_cache_dir(), export_source(model), "onnx")

    def write(target):
        onnx_export.export_module(model.network, inputs, "logits", target, output_axes=model.entry.output_axes,
                                  pick=model.entry.logits)

    try:
        return OnnxLogits(onnx_export.ensure_module_export(folder, "onnx", write))
    except SGIInputError:
        raise
    except Exception as err:  # the exporter's and ONNX Runtime's failures have no common type
        reason = f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"
        warnings.warn(f"grounding model '{model.name}' ({model.folder.config.get('model_type', model.adapter.kind)}) "
                      f"does not export to ONNX ({reason}); torch runs it", RuntimeWarning, stacklevel=3)
        return None
