"""The workbench's cache folder and the owner-only folders it makes: the models' exports and every cache live there."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$SGI_CACHE_DIR`` or ``~/.cache/sgi_workbench/embeddings``."""
    env = os.environ.get("SGI_CACHE_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "sgi_workbench" / "embeddings"


def private_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) if missing; every folder created here is the owner's only (0700).

    Folders that already exist keep their mode.
    """
    missing = []
    path = Path(folder)
    while not path.is_dir() and path.parent != path:
        missing.append(path)
        path = path.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            if not path.is_dir():  # a file in its place
                raise
            continue  # made by another process meanwhile
        os.chmod(path, 0o700)  # whatever the umask
