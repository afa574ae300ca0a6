"""ONNX Runtime backends on the CPU, ``onnx`` and ``onnx-int8``: exports of torch modules, made once and cached.

:func:`export_module` traces any torch module from named sample inputs into an ONNX
file, and :func:`ensure_module_export` keeps such a file in the cache folder;
:mod:`sgi_core.grounding.onnx_network` runs grounding models through them.

The transformer of a loaded sentence-transformers model is exported once, from the
installed weights, with ``torch.onnx.export`` into the cache folder; the int8 variant
is ONNX Runtime's dynamic quantisation of that export (weights int8 per channel,
activations quantised on the fly). Tokenising, pooling and normalising stay the
model's own sentence-transformers modules, so ``onnx`` returns the torch vectors up to
float rounding (max |difference| about 2e-7 on MiniLM) and ``onnx-int8`` an
approximation of them (cosine to fp32 at least 0.97 on HaluEval texts; see
``docs/PERFORMANCE.md``).

An export lives in ``<cache folder>/onnx/<key>/model.onnx`` beside ``model.onnx.sha256``,
where ``key`` hashes the exact source of the weights, the backend and the
quantisation config. It is written into a temporary folder and renamed into place,
so a killed export leaves nothing half-written under the key; a file whose hash does
not match (damaged, truncated) is removed and exported again.

``onnx-int8`` is the ``full`` recipe of :mod:`sgi_core.models.int8`. Its config follows
the CPU (:func:`~sgi_core.models.int8.quantization_target`): ``avx512_vnni`` (also
AVX-VNNI), ``avx2`` (8-bit arithmetic can saturate without VNNI, so weights use 7 bits:
``reduce_range``) or ``arm64``. That module also holds recipes that leave parts of the
graph in fp32; none of them is a backend.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
import warnings
from operator import attrgetter
from pathlib import Path

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.models.choices import BACKENDS  # noqa: F401  (exported here too)
from sgi_core.models.int8 import quantization_target, quantize_int8

_OPSET = 17
#: The export's file name in its folder (beside ``model.onnx.sha256``).
MODEL_FILE = "model.onnx"


def resolve_backend(backend: str, *, device: str = "cpu", precision: str = "fp32") -> str:
    """The backend ``auto`` stands for: ``onnx`` on the CPU in fp32 where ONNX Runtime is installed, else ``torch``.

    ``onnx`` reproduces torch's vectors (max |dSGI| about 1e-6; Table 1's AUROC and d equal
    to four decimals) and scored MiniLM about three times faster on this project's CPU
    benchmark (``docs/PERFORMANCE.md``); ``onnx-int8`` is faster still but moves d by about
    0.01, so it is never chosen for the user. Other names are returned as given.

    Examples
    --------
    >>> resolve_backend("auto", device="cuda"), resolve_backend("auto", precision="fp16"), resolve_backend("torch")
    ('torch', 'torch', 'torch')
    """
    if backend != "auto":
        return backend
    runs_here = importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None
    return "onnx" if device == "cpu" and precision == "fp32" and runs_here else "torch"


def check_backend(backend: str, *, device: str = "cpu", precision: str = "fp32") -> str:
    """Validate a backend name (``auto`` already resolved) against the device and precision it would run with.

    Raises
    ------
    SGIInputError
        For an unknown backend, an ONNX backend on another device than the CPU, or an
        ONNX backend with a precision other than fp32 (int8 is its own precision).

    Examples
    --------
    >>> check_backend("onnx-int8")
    'onnx-int8'
    """
    if backend not in BACKENDS:
        raise SGIInputError(f"unknown backend '{backend}'", hint=f"Use one of: {', '.join(BACKENDS)}")
    if backend != "torch" and device != "cpu":
        raise SGIInputError(f"backend '{backend}' runs on the CPU only; the device is '{device}'",
                            hint="Use --backend torch on a GPU, or --device cpu")
    if backend != "torch" and precision != "fp32":
        raise SGIInputError(f"backend '{backend}' takes --precision fp32 only (got {precision})",
                            hint="onnx-int8 is the reduced-precision choice on the CPU")
    return backend


def backend_tag(backend: str) -> str:
    """What a backend adds to the cache key of the vectors it makes ('' for torch)."""
    if backend == "onnx-int8":
        return f"onnx-int8-{quantization_target()}"
    return "" if backend == "torch" else backend


def export_folder(cache_dir: Path, source_fingerprint: str, backend: str) -> Path:
    """Where the export of these weights for ``backend`` lives under ``cache_dir``."""
    key = hashlib.sha256(f"{source_fingerprint}|{backend_tag(backend)}|opset{_OPSET}".encode()).hexdigest()[:24]
    return Path(cache_dir) / "onnx" / key


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_intact(folder: Path) -> bool:
    """Whether ``folder`` holds an export whose SHA-256 matches the one recorded beside it."""
    model, stamp = folder / MODEL_FILE, folder / f"{MODEL_FILE}.sha256"
    try:
        return model.is_file() and stamp.read_text().strip() == _sha256(model)
    except OSError:
        return False


def tokenize(st_model, texts: list[str]) -> dict:
    """The model's own tokenisation (``preprocess`` in sentence-transformers 5, ``tokenize`` before)."""
    return (getattr(st_model, "preprocess", None) or st_model.tokenize)(texts)


def export_module(module, inputs: dict, output: str, target: Path, *, output_axes: dict[int, str],
                  pick=None) -> None:
    """Trace ``module(**inputs)`` into an fp32 ONNX file (opset 17, TorchScript exporter).

    Parameters
    ----------
    module : torch.nn.Module
        In inference mode (no dropout in the traced graph).
    inputs : dict of str to torch.Tensor
        The sample inputs by name, each ``(batch, tokens)``: the graph's inputs, in this
        order, with both axes dynamic.
    output : str
        The name of the graph's one output.
    target : Path
        The file written.
    output_axes : dict of int to str
        The output's dynamic axes, e.g. ``{0: "batch"}``.
    pick : callable, optional
        Reads the output from what ``module`` returns (e.g. its ``logits``); default: the value itself.
    """
    import torch

    names = list(inputs)

    # The attribute is named ``model`` so that the graph's node names read ``/model/<module path>/...``, the names the
    # int8 recipes (:mod:`sgi_core.models.int8`) select by.
    class Named(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, *values):
            out = self.model(**dict(zip(names, values)))
            return out if pick is None else pick(out)

    axes = {**{name: {0: "batch", 1: "tokens"} for name in names}, output: output_axes}
    # The tracer's warnings describe its own conversion of transformers' code, not the user's data.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Named(module), tuple(inputs.values()), str(target), input_names=names,
                          output_names=[output], dynamic_axes=axes, opset_version=_OPSET, dynamo=False)


def _export_fp32(st_model, target: Path) -> None:
    transformer = st_model[0].auto_model.train(False)  # inference mode: no dropout in the traced graph
    sample = tokenize(st_model, ["an export sample", "a second, longer export sample sentence"])
    inputs = {name: sample[name] for name in ("input_ids", "attention_mask", "token_type_ids") if name in sample}
    export_module(transformer, inputs, "token_embeddings", target, output_axes={0: "batch", 1: "tokens"},
                  pick=attrgetter("last_hidden_state"))


def ensure_export(st_model, folder: Path, backend: str) -> Path:
    """The path of an intact export of ``st_model`` for ``backend``, made if missing or damaged.

    Parameters
    ----------
    st_model : sentence_transformers.SentenceTransformer
        Loaded on the CPU in fp32.
    folder : Path
        :func:`export_folder` of the model's weights and the backend.
    backend : {"onnx", "onnx-int8"}
    """
    return ensure_module_export(folder, backend, lambda target: _export_fp32(st_model, target))


def ensure_module_export(folder: Path, backend: str, write_fp32) -> Path:
    """The path of an intact export in ``folder``, made with ``write_fp32(path)`` if missing or damaged.

    Parameters
    ----------
    folder : Path
        :func:`export_folder` of the weights and the backend.
    backend : {"onnx", "onnx-int8"}
        ``onnx-int8`` quantises the fp32 file ``write_fp32`` wrote.
    write_fp32 : callable
        Writes the fp32 export to the path it is given (e.g. with :func:`export_module`).
    """
    if is_intact(folder):
        return folder / MODEL_FILE
    shutil.rmtree(folder, ignore_errors=True)
    from sgi_core.models.cache_folder import private_folder

    private_folder(folder.parent)  # the cache folder and its onnx/ folder: the owner's only (0700)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=folder.parent))
    try:
        write_fp32(staging / "fp32.onnx")
        model = staging / MODEL_FILE
        if backend == "onnx-int8":
            quantize_int8(staging / "fp32.onnx", model, "full")
            (staging / "fp32.onnx").unlink()
        else:
            (staging / "fp32.onnx").rename(model)
        (staging / f"{MODEL_FILE}.sha256").write_text(_sha256(model))
        try:
            os.rename(staging, folder)
        except OSError:  # another process finished the same export first
            if not is_intact(folder):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder / MODEL_FILE


def cpu_session(model_path: Path):
    """An ONNX Runtime session of ``model_path`` on the CPU whose idle threads sleep (``$OMP_NUM_THREADS`` when set).

    Raises
    ------
    SGIInputError
        When onnxruntime is not installed.
    """
    try:
        import onnxruntime as ort
    except ImportError:
        raise SGIInputError("the ONNX backends need onnxruntime, which is not installed",
                            hint="pip install -r requirements.txt (it lists onnxruntime), or use --backend torch"
                            ) from None
    options = ort.SessionOptions()
    options.log_severity_level = 3
    # Idle worker threads sleep instead of spinning: on a loaded or shared CPU spinning
    # threads take the cores the busy ones need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # A process given a number of threads (a Ray actor gets its CPUs as OMP_NUM_THREADS, which torch
    # reads too) runs that many; ONNX Runtime's own default is one per core of the machine.
    threads = os.environ.get("OMP_NUM_THREADS", "")
    if threads.isdigit() and int(threads) > 0:
        options.intra_op_num_threads = int(threads)
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


class OnnxTransformer:
    """The exported transformer in an ONNX Runtime session, fed by the model's own tokenizer.

    ``embed(texts)`` tokenises with sentence-transformers (same truncation), runs the
    session, and applies the model's remaining modules (pooling, normalisation) to
    the token embeddings, returning float32 rows in the order of ``texts``.
    """

    def __init__(self, st_model, model_path: Path):
        self.st_model = st_model
        self.session = cpu_session(model_path)
        self.input_names = [item.name for item in self.session.get_inputs()]

    def embed(self, texts: list[str]) -> np.ndarray:
        import torch

        features = tokenize(self.st_model, texts)
        feeds = {name: features[name].numpy().astype(np.int64) for name in self.input_names}
        token_embeddings = self.session.run(None, feeds)[0]
        features["token_embeddings"] = torch.from_numpy(token_embeddings)
        with torch.no_grad():
            for module in list(self.st_model)[1:]:
                features = module(features)
        return features["sentence_embedding"].float().numpy()
