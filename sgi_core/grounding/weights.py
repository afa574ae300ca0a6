"""A folder's weights as one state dict: safetensors read as data, pickles only with the user's consent.

:func:`~sgi_core.grounding.folder.read_folder` has already refused pickle-only folders
without consent; even with it, ``torch.load`` runs with ``weights_only=True``, which
unpickles tensors and plain containers only.
"""

from __future__ import annotations

from pathlib import Path


def load_state(folder: Path, weights: tuple[str, ...]) -> dict:
    """Every tensor of the weight files ``weights`` (relative to ``folder``) by name."""
    import torch
    from safetensors.torch import load_file

    state: dict = {}
    for name in weights:
        path = folder / name
        if path.suffix == ".safetensors":
            state.update(load_file(path, device="cpu"))
        else:
            state.update(torch.load(path, map_location="cpu", weights_only=True))
    return state
