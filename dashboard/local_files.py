"""The Data page's path box: files on this machine, opened only under the folder the operator named.

Whoever reaches the app can type a path, and 127.0.0.1 is shared by every account and
container on the machine, so the box is off unless :data:`LOCAL_FILES_ROOT_ENV` names a
folder when the app starts. A typed path is resolved (``..`` and symbolic links
followed) and must then lie under that folder; names starting with ``.`` (``.env``,
``.ssh/``) are refused below it, and so is anything that is not a regular file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sgi_core.errors import SGIInputError

#: Environment variable naming the one folder the path box may open files under.
LOCAL_FILES_ROOT_ENV = "SGI_LOCAL_FILES_ROOT"
_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_HINT = "Give the path of a CSV, TSV, JSON Lines or Parquet file under {root}"


def local_files_root() -> Path | None:
    """The folder named by :data:`LOCAL_FILES_ROOT_ENV`, resolved; None when unset (the path box is off)."""
    named = os.environ.get(LOCAL_FILES_ROOT_ENV, "").strip()
    return Path(named).expanduser().resolve() if named else None


def _hidden(parts) -> list[str]:
    return [part for part in parts if part.startswith(".") and part not in (".", "..")]


def _resolved(text: str, hint: str) -> tuple[Path, Path]:
    """``(typed, resolved)`` of a typed path under the root; refused outside it or through a hidden name."""
    root = local_files_root()
    if root is None:
        raise SGIInputError("opening files on this machine is off",
                            hint=f"Set {LOCAL_FILES_ROOT_ENV} to a folder before starting the app, or upload the file")
    if not root.is_dir():
        raise SGIInputError(f"{LOCAL_FILES_ROOT_ENV} names no folder", source=str(root),
                            hint="Set it to an existing folder and restart the app")
    if "\0" in text:
        raise SGIInputError("the path holds a NUL byte", source=repr(text), hint=hint.format(root=root))
    typed = Path(text.strip()).expanduser()
    typed = typed if typed.is_absolute() else root / typed
    path = typed.resolve()
    hint = hint.format(root=root)
    if not path.is_relative_to(root):
        raise SGIInputError("this path leads outside the folder files may be opened from", source=str(typed),
                            hint=hint)
    hidden = _hidden(path.relative_to(root).parts) + _hidden(typed.parts[len(root.parts):])
    if hidden:
        raise SGIInputError(f"hidden files and folders ('{hidden[0]}') are not opened", source=str(typed), hint=hint)
    return typed, path


def local_folder(text: str) -> Path:
    """The folder a typed path names under :func:`local_files_root` (a grounding model's folder).

    Raises
    ------
    SGIInputError
        As :func:`local_file`, and for a path that is not a folder.
    """
    hint = "Give the path of a model folder under {root}"
    typed, path = _resolved(text, hint)
    if not path.is_dir():
        raise SGIInputError("no folder at this path", source=str(typed),
                            hint=hint.format(root=local_files_root()))
    return path


def local_file(text: str) -> Path:
    """The regular file a typed path names under :func:`local_files_root` (relative paths start there).

    Raises
    ------
    SGIInputError
        The box is off, the root is not a folder, the path leads outside the root (a
        symbolic link included), passes a name starting with ``.``, names nothing, a
        folder, a pipe, a device or a socket.
    """
    typed, path = _resolved(text, _HINT)
    hint = _HINT.format(root=local_files_root())
    try:
        mode = path.stat().st_mode
    except OSError:
        raise SGIInputError("no file at this path", source=str(typed), hint=hint) from None
    if stat.S_ISDIR(mode):
        raise SGIInputError("this is a folder, not a file", source=str(typed), hint=hint)
    kind = next((name for test, name in _KINDS if test(mode)), None)
    if kind is not None:
        raise SGIInputError(f"this is {kind}, not a file", source=str(typed), hint=hint)
    return path
