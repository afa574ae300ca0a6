"""What a user may choose when a model loads: names only, so that the command line's parser imports no numpy.

:mod:`sgi_core.models.device`, :mod:`sgi_core.models.onnx_export` and
:mod:`sgi_core.embedding.registry` use these and export them under their own names.
"""

#: The embedding model loaded when none is named (:data:`sgi_core.embedding.registry.REGISTRY`).
DEFAULT_MODEL = "minilm"
#: Where a model runs (``auto``: CUDA, else Apple's MPS, else the CPU).
DEVICES = ("auto", "cpu", "cuda", "mps")
#: The floating-point precision of a model's weights on its device.
PRECISIONS = ("fp32", "fp16", "bf16")
#: What runs a model: ``auto`` (ONNX Runtime where the export exists or can be made, else torch) or one of them.
BACKENDS = ("auto", "torch", "onnx", "onnx-int8")
