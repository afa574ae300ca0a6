"""int8 recipes for the ONNX export: full dynamic quantisation, and variants that leave parts of it in fp32.

``full`` (:data:`INT8_VARIANTS`) is the ``onnx-int8`` backend
(:func:`sgi_core.models.onnx_export.ensure_export`), in the config of this CPU
(:func:`quantization_target`, :data:`QUANTIZATION`). The others keep the embedding
block, the last transformer layers or chosen projections in fp32 (:func:`fp32_nodes`), or
fix the activation ranges once from calibration inputs (static QDQ);
:func:`quantize_int8` makes any of them from an fp32 export, and
``benchmarks/int8_variants.py`` measures how far each moves SGI and Table 1. None of them
is a backend of its own: on 2,000 paired HaluEval rows none kept every row's |dSGI| within
0.05 and Table 1's AUROC and d within 0.002 of fp32 (``docs/PERFORMANCE.md``).
"""

from __future__ import annotations

import platform
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sgi_core.models.logs import logger_at_error

#: ``onnxruntime.quantization.quantize_dynamic`` options by CPU target.
QUANTIZATION = {
    "avx512_vnni": {"per_channel": True, "reduce_range": False},
    "avx2": {"per_channel": True, "reduce_range": True},
    "arm64": {"per_channel": True, "reduce_range": False},
}
#: The transformer layer of an exported node: ``/model/encoder/layer.<i>/...``.
_LAYER = re.compile(r"/layer\.(\d+)/")
#: What the nodes of the embedding block (word, position and token-type tables, their sum, LayerNorm) are named.
_EMBEDDINGS = "/embeddings/"


@dataclass(frozen=True)
class Int8Variant:
    """One way of quantising the fp32 export to int8, and which nodes it leaves in fp32.

    Attributes
    ----------
    name : str
    op_types : tuple of str
        Operator types quantised; empty: all that ``quantize_dynamic`` handles (in a
        transformer export: ``MatMul`` with constant weights, ``Gather`` from the embedding
        tables, ``Transpose`` of quantised tensors).
    keep_embeddings : bool
        Leave the embedding block in fp32.
    keep_last_layers : int
        Leave the last ``keep_last_layers`` transformer layers in fp32.
    keep_patterns : tuple of str
        Regular expressions: nodes whose name matches one stay in fp32.
    static : bool
        Static QDQ quantisation (``quantize_static``: activation ranges fixed once from
        calibration inputs by min/max, uint8 activations, int8 weights per channel)
        instead of dynamic (activation ranges measured on every batch).
    """

    name: str
    op_types: tuple[str, ...] = ()
    keep_embeddings: bool = False
    keep_last_layers: int = 0
    keep_patterns: tuple[str, ...] = ()
    static: bool = False


#: The int8 recipes compared by ``benchmarks/int8_variants.py``; ``full`` is the ``onnx-int8`` backend.
INT8_VARIANTS = {variant.name: variant for variant in (
    Int8Variant("full"),
    Int8Variant("matmul", op_types=("MatMul",)),
    Int8Variant("keep-last1", keep_embeddings=True, keep_last_layers=1),
    Int8Variant("keep-last2", keep_embeddings=True, keep_last_layers=2),
    # int8 only in the projections that, quantised alone, move the vectors least: query, key, attention output.
    Int8Variant("qk-attn-out", op_types=("MatMul",),
                keep_patterns=(r"/value/", r"/intermediate/", r"/layer\.\d+/output/")),
    Int8Variant("static-qdq", op_types=("MatMul",), static=True),
)}


def quantization_target(machine: str | None = None, cpu_flags: set[str] | None = None) -> str:
    """The int8 config for this CPU: ``avx512_vnni``, ``avx2`` or ``arm64``.

    Parameters
    ----------
    machine : str, optional
        ``platform.machine()`` by default.
    cpu_flags : set of str, optional
        The CPU's feature flags; read from ``/proc/cpuinfo`` by default (empty elsewhere).

    Examples
    --------
    >>> quantization_target("x86_64", {"avx2", "avx512_vnni"})
    'avx512_vnni'
    >>> quantization_target("x86_64", {"avx2"})
    'avx2'
    >>> quantization_target("aarch64", set())
    'arm64'
    """
    machine = (machine or platform.machine()).lower()
    if machine in ("arm64", "aarch64"):
        return "arm64"
    flags = _cpu_flags() if cpu_flags is None else cpu_flags
    return "avx512_vnni" if flags & {"avx512_vnni", "avx_vnni"} else "avx2"


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def fp32_nodes(graph, variant: Int8Variant) -> list[str]:
    """Names of the nodes of ``graph`` that ``variant`` leaves in fp32, in graph order.

    A node is kept when it is in the embedding block (``/embeddings/`` in its name) and
    ``keep_embeddings`` is set, when it is in one of the last ``keep_last_layers`` layers
    (``/layer.<i>/`` with ``i >= L - keep_last_layers`` for ``L`` layers), or when its name
    matches one of ``keep_patterns``.

    Parameters
    ----------
    graph : onnx.GraphProto
        The fp32 export's graph (``onnx.load(path).graph``).
    variant : Int8Variant
    """
    layers = {int(m.group(1)) for node in graph.node if (m := _LAYER.search(node.name))}
    first_kept = max(layers, default=-1) + 1 - variant.keep_last_layers
    patterns = [re.compile(pattern) for pattern in variant.keep_patterns]

    def kept(name: str) -> bool:
        layer = _LAYER.search(name)
        return ((variant.keep_embeddings and _EMBEDDINGS in name)
                or (layer is not None and int(layer.group(1)) >= first_kept)
                or any(pattern.search(name) for pattern in patterns))

    return [node.name for node in graph.node if kept(node.name)]


def _calibration_reader(feeds: Iterable[dict], names: set[str]):
    from onnxruntime.quantization import CalibrationDataReader

    class Feeds(CalibrationDataReader):
        def __init__(self):
            self._feeds = ({name: value for name, value in feed.items() if name in names} for feed in feeds)

        def get_next(self):
            return next(self._feeds, None)

    return Feeds()


def quantize_int8(source: Path, target: Path, variant: str = "full", calibration: Iterable[dict] | None = None) -> None:
    """Write the int8 ``variant`` (:data:`INT8_VARIANTS`) of the fp32 export ``source`` to ``target``.

    Weights are int8 per output channel ``c``, ``w_q = round(w / s_c)`` with
    ``s_c = max|w_c| / 127`` (``/ 64`` with ``reduce_range``), in this CPU's config
    (:data:`QUANTIZATION`). Activations are uint8 per tensor, ``x_q = round(x / s) + z``
    with ``s = (max(x_max, 0) - min(x_min, 0)) / 255`` and ``z = round(-min(x_min, 0) / s)``,
    ``x_min`` and ``x_max`` measured on every batch (dynamic) or fixed once from the
    calibration inputs (static). The nodes of :func:`fp32_nodes` are left in fp32.

    Parameters
    ----------
    source, target : Path
    variant : str
    calibration : iterable of dict, optional
        Input batches (input name -> int64 array) whose activation ranges a static variant
        is calibrated on; required by static variants, unused by dynamic ones.

    Raises
    ------
    ValueError
        For a static variant without ``calibration``.
    """
    import onnx
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    recipe = INT8_VARIANTS[variant]
    if recipe.static and calibration is None:
        raise ValueError(f"the static int8 variant '{variant}' needs calibration inputs")
    graph = onnx.load(str(source), load_external_data=False).graph
    options = {**QUANTIZATION[quantization_target()], "op_types_to_quantize": list(recipe.op_types) or None,
               "nodes_to_exclude": fp32_nodes(graph, recipe), "weight_type": QuantType.QInt8}
    # ONNX Runtime's quantisation logs a pre-processing tip through the root logger on every call.
    with logger_at_error():
        if not recipe.static:
            quantize_dynamic(str(source), str(target), **options)
            return
        quantize_static(str(source), str(target), _calibration_reader(calibration, {i.name for i in graph.input}),
                        quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8, **options)
