"""Checks on where an output will be written, made before any work is done.

An output is written to a temporary file beside it and renamed onto it
(:func:`sgi_core.io.export.atomic_output`). A rename replaces whatever has the name:
run as root, ``-o /dev/null`` turned the device into a regular file. So an existing
target must be a regular file; a device, pipe, socket or symbolic link is refused
(``-`` names standard output instead). The folder must exist and the output must not
be one of the inputs. Each check runs before the model loads or any request is paid
for, so a typo costs nothing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sgi_core.errors import SGIInputError

#: The output name that means standard output.
STDOUT = "-"


def is_stdout(path) -> bool:
    """Whether ``path`` names standard output (``-``)."""
    return path is not None and os.fspath(path) == STDOUT


def _is_same_file(path: Path, other) -> bool:
    try:
        return os.path.samefile(path, other)
    except (OSError, TypeError, ValueError):
        return False


def check_output_file(path: str | os.PathLike, *, inputs=(), what: str = "output",
                      file_hint: str = "Give a file name") -> None:
    """Refuse an output path that cannot be written, or whose writing would destroy something else.

    Parameters
    ----------
    path : path-like
        Where the output will be written; ``-`` (standard output) passes.
    inputs : iterable of path-like
        Files the same run reads; the output may not be any of them.
    what : str
        What the output is, in messages (``"output"``, ``"report JSON"``).
    file_hint : str
        What to do when ``path`` is a folder.

    Raises
    ------
    SGIInputError
        A symbolic link, a folder, an existing device, pipe or socket, a missing or
        unwritable folder, or one of ``inputs``.

    Examples
    --------
    >>> check_output_file("/dev/null")
    Traceback (most recent call last):
    ...
    sgi_core.errors.SGIInputError: the output exists and is not a regular file (a device, pipe or socket); ...
    """
    if is_stdout(path):
        return
    path = Path(path)
    name = str(path)
    if path.is_symlink():
        raise SGIInputError(f"the {what} is a symbolic link (to '{os.readlink(path)}'); writing would replace the link",
                            source=name, hint="Give the path of the file itself, or remove the link")
    if path.exists():
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise SGIInputError(f"the {what} is a folder, not a file", source=name, hint=file_hint)
        if not stat.S_ISREG(mode):
            raise SGIInputError(f"the {what} exists and is not a regular file (a device, pipe or socket); writing "
                                "would replace it", source=name,
                                hint="Give the path of a regular file, or - for standard output")
    folder = path.absolute().parent
    if not folder.is_dir():
        raise SGIInputError(f"the folder '{folder}' for the {what} does not exist", source=name,
                            hint="Create the folder first, or write somewhere else")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SGIInputError(f"the folder '{folder}' for the {what} cannot be written to", source=name,
                            hint="Write somewhere else, or ask for write permission on the folder")
    for source in inputs:
        if source is not None and _is_same_file(path, source):
            raise SGIInputError(f"the {what} is the input file; it would be replaced by the result", source=name,
                                hint="Write the result to another file")
