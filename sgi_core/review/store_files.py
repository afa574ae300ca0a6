"""Opening the files that hold people's labels: no symbolic link, regular files only, never more than a cap.

The annotations file lives at a predictable path and ``--labels FILE`` names any path, so
each is opened with ``O_NOFOLLOW`` (a symbolic link planted at the path is refused, not
followed to its target) and checked to be a regular file after it is open (a device such
as ``/dev/zero``, a pipe or a folder is refused before a byte is read); reads stop at a
cap, so no file can fill the memory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from sgi_core.errors import SGIInputError

try:  # POSIX; elsewhere O_APPEND alone keeps single writes whole
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

_MB = 1024 * 1024
# Where the platform has no O_NOFOLLOW (Windows), a link is refused by the check made after opening.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# Opening a pipe for reading would wait for a writer: opened without waiting, it is refused as not a regular file.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def too_large(size: int, limit: int, *, what: str, source: str) -> SGIInputError:
    """The error for a file of ``size`` bytes over ``limit``."""
    return SGIInputError(f"the {what} is larger than {limit / _MB:g} MB ({size / _MB:.1f} MB), more than can be "
                         "read at once", source=source,
                         hint="Move it aside (its labels can be imported back in parts), or raise the limit with "
                              "SGI_MAX_INPUT_MB if this machine has several times its size in free memory")


def open_regular(path: str | os.PathLike, flags: int, *, what: str, mode: int = 0o600) -> int:
    """A descriptor of ``path`` opened with ``flags`` and ``O_NOFOLLOW``, refused unless it is a regular file.

    Raises
    ------
    FileNotFoundError
        When nothing is at ``path`` and ``flags`` holds no ``O_CREAT``.
    SGIInputError
        A symbolic link, a folder, a device, pipe or socket, or a file that cannot be opened.
    """
    name = str(path)
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode)
    except FileNotFoundError:
        raise
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK) or Path(path).is_symlink():
            raise SGIInputError(f"the {what} is a symbolic link, which is not followed", source=name,
                                hint="Remove the link and put the file itself at this path") from None
        if err.errno == errno.EISDIR:
            raise SGIInputError(f"the {what} is a folder, not a file", source=name) from None
        raise SGIInputError(f"cannot open the {what}: {err.strerror}", source=name) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SGIInputError(f"the {what} is not a regular file (a folder, device, pipe or socket)", source=name,
                            hint="Give the path of an ordinary file")
    return fd


@contextlib.contextmanager
def opened(path: str | os.PathLike, flags: int, *, what: str, lock: int | None = None):
    """:func:`open_regular` as a context manager, holding ``flock(lock)`` (``fcntl.LOCK_SH`` or ``LOCK_EX``) inside."""
    fd = open_regular(path, flags, what=what)
    try:
        if lock is not None and fcntl is not None:
            fcntl.flock(fd, lock)
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


def read_range(fd: int, start: int, stop: int) -> bytes:
    """Bytes ``start`` to ``stop`` of an open file (fewer when it ends sooner)."""
    chunks, position = [], start
    while position < stop:
        chunk = os.pread(fd, min(stop - position, 8 * _MB), position)
        if not chunk:
            break
        chunks.append(chunk)
        position += len(chunk)
    return b"".join(chunks)


def read_regular_file(path: str | os.PathLike, *, limit: int, what: str) -> bytes:
    """Every byte of a regular file of at most ``limit`` bytes, opened as :func:`open_regular` says.

    Raises
    ------
    SGIInputError
        Nothing at ``path``, a link, not a regular file, or larger than ``limit``.
    """
    try:
        with opened(path, os.O_RDONLY, what=what) as fd:
            size = os.fstat(fd).st_size
            if size > limit:
                raise too_large(size, limit, what=what, source=str(path))
            # One byte past the size tells a file still growing beyond the limit from one that fits.
            raw = read_range(fd, 0, limit + 1)
    except FileNotFoundError:
        raise SGIInputError(f"no {what} at this path", source=str(path)) from None
    if len(raw) > limit:
        raise too_large(len(raw), limit, what=what, source=str(path))
    return raw


def append_locked(path: str | os.PathLike, payload: bytes, *, limit: int, what: str) -> None:
    """Append ``payload`` to ``path`` in one locked, fsync-ed write; the file is made 0600 in a 0700 folder.

    When the file does not end with a newline (a writer died in the middle of a line)
    the write starts with one, so the damaged line stays one damaged line.

    Raises
    ------
    SGIInputError
        The path is a link or not a regular file, or the file would grow past ``limit``
        bytes (it could no longer be read back).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    exclusive = fcntl.LOCK_EX if fcntl is not None else None
    with opened(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, what=what, lock=exclusive) as fd:
        size = os.fstat(fd).st_size
        lead = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
        payload = lead + payload
        if size + len(payload) > limit:
            raise too_large(size + len(payload), limit, what=what, source=str(path))
        written = 0
        while written < len(payload):
            written += os.write(fd, payload[written:])
        os.fsync(fd)
