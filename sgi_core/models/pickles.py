"""A model folder's weight files: safetensors are read as data, pickles only with the user's consent.

Loading a pickle (``.bin``, ``.ckpt``, ``.pt``, ``.pth``) runs whatever code it holds, and a
folder's own configuration can ask transformers to unpickle without ``weights_only``. A folder
whose weights are only pickles is refused unless the user opts in, with the lines that convert
them to safetensors once.
"""

from __future__ import annotations

from pathlib import Path

from sgi_core.errors import SGIInputError

#: Weight files that are unpickled to load, so that loading them runs whatever they hold.
PICKLE_SUFFIXES = (".bin", ".ckpt", ".pt", ".pth")

CONVERT_HINT = (
    "Convert the weights to safetensors once, in a Python you trust with this file: "
    "`import torch; from safetensors.torch import save_file; "
    "state = torch.load('DIR/pytorch_model.bin', map_location='cpu', weights_only=True); "
    "save_file({k: v.contiguous() for k, v in state.items()}, 'DIR/model.safetensors')`; "
    "or pass --trust-model-code to unpickle them here (runs any code they hold)"
)


def weight_files(folder: Path, *, trust_model_code: bool, shown: str | Path | None = None) -> tuple[str, ...]:
    """The weight files a load reads: every ``*.safetensors``, else the pickles when consented.

    Parameters
    ----------
    folder : Path
        The folder, resolved.
    trust_model_code : bool
        Consent to unpickle.
    shown : path-like, optional
        The folder named in messages (the user's, where ``folder`` is a private copy).

    Raises
    ------
    SGIInputError
        No weights at all, or pickles only without consent.
    """
    shown = folder if shown is None else shown
    # Tools write caches under hidden folders (.cache/); those are never the model's weights.
    files = sorted(p for p in folder.rglob("*")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    safe = tuple(p.relative_to(folder).as_posix() for p in files if p.suffix == ".safetensors")
    if safe:
        return safe
    pickled = tuple(p.relative_to(folder).as_posix() for p in files if p.suffix in PICKLE_SUFFIXES)
    if not pickled:
        raise SGIInputError(f"model folder '{shown}' holds no weights (*.safetensors)",
                            hint="Give the folder the model was saved to (save_pretrained writes model.safetensors)")
    if not trust_model_code:
        raise SGIInputError(f"model folder '{shown}' holds only pickled weights ({', '.join(pickled)}), "
                            "and loading a pickle runs any code it holds", hint=CONVERT_HINT)
    return pickled
