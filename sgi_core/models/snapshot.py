"""A private copy of a model folder: what is checked is exactly what loads, and what is fingerprinted.

A loader reads a folder's files by name, after the trust check has read them: a folder
changed in between (a ``modules.json`` renamed over the checked one) would run code the
check never saw. :func:`snapshot_folder` copies every visible file of the folder into a
private temporary folder (mode 0700) and hashes each file's bytes as it copies them; the
trust check and the loader then both read the copy, which nobody else can write.

The copy refuses what would make the load reach outside what was copied: a link whose
target leaves the folder, a file that is neither a regular file nor a link to one, and a
JSON file the check would parse above :data:`MAX_CHECKED_JSON_BYTES`. The fingerprint
(:func:`content_fingerprint`) is a SHA-256 over each file's relative name and the SHA-256 of
its bytes, so two folders with the same names, sizes and times but other weights never
share cached scores. A file's digest is remembered by its device, inode, size and
modification and change times (the change time cannot be set back by a user), so an
unchanged folder is hashed once per process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sgi_core.errors import SGIInputError

#: Largest JSON file the trust check parses (tokenizer data files are not parsed: see ``trust``).
MAX_CHECKED_JSON_BYTES = 32 * 1024 * 1024
#: JSON files read as data by the tokenizers library, never parsed by the check; they may be large.
DATA_JSON_FILES = frozenset({"tokenizer.json", "vocab.json"})
_CHUNK = 1 << 20
_DIGESTS: dict[tuple[int, int, int, int, int], str] = {}
LINK_HINT = "Copy the folder with its links followed (cp -rL FOLDER COPY) and give the copy"


@dataclass(frozen=True)
class FolderSnapshot:
    """A checked-to-be-loaded copy of a model folder.

    Attributes
    ----------
    source : Path
        The user's folder, resolved.
    path : Path
        The private copy the check and the loader read.
    fingerprint : str
        ``folder:`` plus SHA-256 over (relative name, SHA-256 of the bytes) of each file.
    """

    source: Path
    path: Path
    fingerprint: str

    def bind(self, owner: object) -> None:
        """Delete the copy when ``owner`` (the loaded model) is collected, or at exit."""
        weakref.finalize(owner, shutil.rmtree, self.path, True)

    def remove(self) -> None:
        """Delete the copy now (a load that failed)."""
        shutil.rmtree(self.path, ignore_errors=True)

    @contextmanager
    def checking(self):
        """Run checks and a load on the copy: on an error, delete it and name the user's folder instead."""
        try:
            yield self.path
        except SGIInputError as err:
            self.remove()
            named = err.message.replace(str(self.path), str(self.source))
            raise SGIInputError(named, source=err.source, column=err.column, rows=err.rows, hint=err.hint) from None
        except BaseException:
            self.remove()
            raise


def _visible_files(root: Path) -> list[Path]:
    """Every file of ``root`` outside hidden folders (tools write caches there), links not followed."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        links = [d for d in dirnames if (Path(dirpath) / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in links)
        found.extend(Path(dirpath) / name for name in sorted(filenames) + links if not name.startswith("."))
    return found


def _regular_target(path: Path, root: Path) -> Path:
    """The regular file ``path`` stands for: itself, or a link's target inside ``root``."""
    relative = path.relative_to(root).as_posix()
    target = path.resolve() if path.is_symlink() else path
    if path.is_symlink() and not target.is_relative_to(root):
        raise SGIInputError(f"'{relative}' of model folder '{root}' is a link to '{target}', outside the folder",
                            hint=LINK_HINT)
    try:
        mode = target.stat().st_mode
    except OSError as err:
        raise SGIInputError(f"cannot read '{relative}' of model folder '{root}': {err.strerror}") from None
    if not stat.S_ISREG(mode):
        raise SGIInputError(f"'{relative}' of model folder '{root}' is not a regular file",
                            hint="Keep only the model's files (and folders) in it")
    if path.suffix == ".json" and path.name not in DATA_JSON_FILES and target.stat().st_size > MAX_CHECKED_JSON_BYTES:
        raise SGIInputError(f"'{relative}' of model folder '{root}' is {target.stat().st_size:,} bytes, over the "
                            f"{MAX_CHECKED_JSON_BYTES:,} a model's JSON configuration may hold",
                            hint="Give the folder a model was saved to: its configuration files are small")
    return target


def _copy_hashing(source: Path, target: Path | None) -> str:
    """SHA-256 of ``source``'s bytes, writing them to ``target`` (mode 0600) as they are read."""
    digest = hashlib.sha256()
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(source, flags), "rb") as reader:
        out = None if target is None else os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")
        try:
            while chunk := reader.read(_CHUNK):
                digest.update(chunk)
                if out is not None:
                    out.write(chunk)
        finally:
            if out is not None:
                out.close()
    return digest.hexdigest()


def _stat_key(path: Path) -> tuple[int, int, int, int, int]:
    info = path.stat()
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _fingerprint(entries: list[tuple[str, str]]) -> str:
    lines = "\n".join(f"{name}\t{digest}" for name, digest in sorted(entries))
    return "folder:" + hashlib.sha256(lines.encode("utf-8", "surrogatepass")).hexdigest()


def _root(folder: str | os.PathLike) -> Path:
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise SGIInputError(f"no model folder at '{folder}'", hint="Give the path of a local model folder")
    return root.resolve()


def content_fingerprint(folder: str | os.PathLike) -> str:
    """``folder:`` plus SHA-256 over (relative name, SHA-256 of the bytes) of every visible file.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
    ...     _ = (Path(a) / "config.json").write_text("{}"); _ = (Path(b) / "config.json").write_text("[]")
    ...     content_fingerprint(a) == content_fingerprint(b)
    False
    """
    root = _root(folder)
    entries = []
    for path in _visible_files(root):
        target = _regular_target(path, root)
        key = _stat_key(target)
        if key not in _DIGESTS:
            _DIGESTS[key] = _copy_hashing(target, None)
        entries.append((path.relative_to(root).as_posix(), _DIGESTS[key]))
    return _fingerprint(entries)


def snapshot_folder(folder: str | os.PathLike) -> FolderSnapshot:
    """Copy a model folder into a private temporary folder, hashing what is copied.

    Raises
    ------
    SGIInputError
        No such folder; a link leaving it; a special file; a JSON configuration over
        :data:`MAX_CHECKED_JSON_BYTES`; a file that cannot be read.
    """
    root = _root(folder)
    files = [(path, _regular_target(path, root)) for path in _visible_files(root)]
    copy = Path(tempfile.mkdtemp(prefix="sgi-model-"))
    entries = []
    try:
        for path, target in files:
            relative = path.relative_to(root)
            (copy / relative).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            before = _stat_key(target)
            digest = _copy_hashing(target, copy / relative)
            if _stat_key(target) == before:  # a file written during the copy is hashed again next time
                _DIGESTS[before] = digest
            entries.append((relative.as_posix(), digest))
    except OSError as err:
        shutil.rmtree(copy, ignore_errors=True)
        raise SGIInputError(f"cannot copy model folder '{root}': {err}") from None
    except BaseException:
        shutil.rmtree(copy, ignore_errors=True)
        raise
    return FolderSnapshot(root, copy, _fingerprint(entries))
