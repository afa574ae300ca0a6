"""Torch device and precision choice, and how texts are grouped into batches.

A device is ``auto``, ``cpu``, ``cuda`` (or ``cuda:<index>``) or ``mps``; ``auto``
picks CUDA when torch sees a CUDA GPU, else Apple's MPS when available, else the CPU.
``$SGI_DEVICE`` is the default when no device is given.

Batches: texts are sorted by token count (longest first) so that each batch pads to
nearly its own length. On the CPU a batch holds a fixed number of texts; on a GPU it
holds as many texts as fit a *token budget*, counted as padded tokens
(texts in the batch x tokens of its longest text), so short texts travel in large
batches and long ones in small batches of about the same cost.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.models.choices import DEVICES, PRECISIONS  # noqa: F401  (the choices, exported here too)

DEVICE_ENV = "SGI_DEVICE"

#: Padded tokens per batch on a GPU: 32,768 sits inside the 16-64k range where an H100
#: reaches its forward-pass limit for MiniLM-sized models (an earlier measurement; see docs/PERFORMANCE.md, GPU).
DEFAULT_TOKEN_BUDGET = 32_768


def _no_accelerator_possible(kind: str) -> bool:
    """True when ``kind`` cannot be present, known without importing torch (which takes seconds).

    CUDA needs a torch build for it (a ``+cpu`` build has none) and, on Linux, the NVIDIA
    driver's device nodes; MPS exists only on macOS.
    """
    import importlib.metadata
    import platform

    if kind == "mps":
        return platform.system() != "Darwin"
    try:
        cpu_build = importlib.metadata.version("torch").endswith("+cpu")
    except importlib.metadata.PackageNotFoundError:
        return True
    return cpu_build or (platform.system() == "Linux" and not os.path.exists("/dev/nvidiactl"))


def _torch_sees(kind: str) -> bool:
    # Once torch is loaded, asking it costs nothing; before, a device that cannot exist is not worth its import.
    if "torch" not in sys.modules and _no_accelerator_possible(kind):
        return False
    import torch

    if kind == "cuda":
        return torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_device(device: str | None = None) -> str:
    """The torch device to load a model on.

    Parameters
    ----------
    device : str, optional
        ``auto``, ``cpu``, ``cuda``, ``cuda:<index>`` or ``mps``; default ``$SGI_DEVICE``,
        else ``auto``.

    Returns
    -------
    str
        ``cpu``, ``cuda``, ``cuda:<index>`` or ``mps``.

    Raises
    ------
    SGIInputError
        For an unknown name, or a device torch does not see here.

    Examples
    --------
    >>> resolve_device("cpu")
    'cpu'
    """
    source = "device"
    if device is None:
        device = os.environ.get(DEVICE_ENV) or "auto"
        source = f"${DEVICE_ENV}" if os.environ.get(DEVICE_ENV) else source
    name = device.strip().lower()
    kind, _, index = name.partition(":")
    if kind not in DEVICES or (index and (kind != "cuda" or not index.isdigit())):
        raise SGIInputError(
            f"unknown {source} '{device}'", hint=f"Use one of {', '.join(DEVICES)} (or cuda:<index>)"
        )
    if kind == "auto":
        return "cuda" if _torch_sees("cuda") else "mps" if _torch_sees("mps") else "cpu"
    if kind in ("cuda", "mps") and not _torch_sees(kind):
        raise SGIInputError(
            f"{source} '{device}' is not available: "
            f"torch sees no {'CUDA GPU' if kind == 'cuda' else 'Apple MPS device'}",
            hint=f"Use --device auto or cpu (or set {DEVICE_ENV}=cpu)",
        )
    if index:
        import torch

        if int(index) >= torch.cuda.device_count():
            raise SGIInputError(
                f"{source} '{device}' is not available: torch sees {torch.cuda.device_count()} CUDA GPU(s)",
                hint="Use cuda:0 or --device auto",
            )
    return name


def check_precision(precision: str) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else an :class:`SGIInputError`."""
    if precision not in PRECISIONS:
        raise SGIInputError(f"unknown precision '{precision}'", hint=f"Use one of {', '.join(PRECISIONS)}")
    return precision


def _longest_first(token_counts) -> tuple[np.ndarray, np.ndarray]:
    counts = np.asarray(token_counts, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    return order, counts[order]


def count_batches(token_counts, batch_size: int) -> list[np.ndarray]:
    """Positions of the texts, longest first, in batches of ``batch_size`` texts.

    Examples
    --------
    >>> [b.tolist() for b in count_batches([3, 9, 5], 2)]
    [[1, 2], [0]]
    """
    order, _ = _longest_first(token_counts)
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def token_budget_batches(token_counts, token_budget: int) -> list[np.ndarray]:
    """Positions of the texts, longest first, in batches of at most ``token_budget`` padded tokens.

    A batch starting at a text of ``L`` tokens (the longest in it) takes the next texts
    while ``n * L <= token_budget``; a text longer than the budget forms a batch alone.

    Examples
    --------
    >>> [b.tolist() for b in token_budget_batches([2, 8, 3, 8, 1], 16)]
    [[1, 3], [2, 0, 4]]
    """
    if token_budget < 1:
        raise SGIInputError(f"token_budget must be an int >= 1. Got {token_budget} instead")
    order, counts = _longest_first(token_counts)
    batches = []
    start = 0
    while start < len(order):
        per_batch = max(1, token_budget // max(int(counts[start]), 1))
        batches.append(order[start : start + per_batch])
        start += per_batch
    return batches
