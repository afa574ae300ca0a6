"""What a shared report is of: files and their fingerprints, rows, model, backend, precision, labels, tool, date."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path

from sgi_core import __version__


def file_fingerprint(source) -> str:
    """``sha256:<first 16 hex digits>`` of a file's bytes (a path or the bytes themselves).

    Examples
    --------
    >>> file_fingerprint(b"abc")
    'sha256:ba7816bf8f01cfea'
    """
    raw = source if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
    return "sha256:" + hashlib.sha256(raw).hexdigest()[:16]


def provenance(**parts) -> dict:
    """The given parts in order (None left out), then the tool's version and the date (UTC).

    Examples
    --------
    >>> p = provenance(file="qa.csv", rows=300, model=None)
    >>> list(p)[:3], p["tool"]
    (['file', 'rows', 'tool'], 'sgi-workbench 0.1.0')
    """
    out = {name.replace("_", " "): value for name, value in parts.items() if value is not None}
    out["tool"] = f"sgi-workbench {__version__}"
    out["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return out
