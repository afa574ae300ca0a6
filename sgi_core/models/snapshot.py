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

Another process of the same user on the same machine (a Ray actor beside its driver) may
read a snapshot in place instead of copying the folder again (:func:`reuse_snapshot`): only
where the snapshot is still private (a real folder of this user's, closed to others), holds
exactly the files the snapshot wrote, each a regular file of this user's whose device, inode,
size and modification and change times are those it had once written, and their recorded
digests give the fingerprint. A file written since has another change time, so the bytes read
are the bytes hashed, under the same rule as the per-process memo; anything else is refused,
and the caller copies the folder as usual.
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
    files : tuple of (str, str, tuple of int)
        Each copied file's relative name, SHA-256 and stat key (device, inode, size,
        modification and change times in ns) once written: what :func:`reuse_snapshot` checks.
    owned : bool
        False for another process's snapshot read in place (:func:`reuse_snapshot`): that
        process deletes it, never this one.
    """

    source: Path
    path: Path
    fingerprint: str
    files: tuple = ()
    owned: bool = True

    def bind(self, owner: object) -> None:
        """Delete the copy when ``owner`` (the loaded model) is collected, or at exit (a copy this process made)."""
        if self.owned:
            weakref.finalize(owner, shutil.rmtree, self.path, True)

    def remove(self) -> None:
        """Delete the copy now (a load that failed), if this process made it."""
        if self.owned:
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
    entries, written = [], []
    try:
        for path, target in files:
            relative = path.relative_to(root)
            (copy / relative).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            before = _stat_key(target)
            digest = _copy_hashing(target, copy / relative)
            if _stat_key(target) == before:  # a file written during the copy is hashed again next time
                _DIGESTS[before] = digest
            entries.append((relative.as_posix(), digest))
            written.append((relative.as_posix(), digest, _stat_key(copy / relative)))
    except OSError as err:
        shutil.rmtree(copy, ignore_errors=True)
        raise SGIInputError(f"cannot copy model folder '{root}': {err}") from None
    except BaseException:
        shutil.rmtree(copy, ignore_errors=True)
        raise
    return FolderSnapshot(root, copy, _fingerprint(entries), tuple(written))


def _private(info: os.stat_result) -> bool:
    """This user's, and closed to everyone else."""
    return info.st_uid == os.getuid() and not info.st_mode & 0o077


def reuse_snapshot(path: str | os.PathLike, files, fingerprint: str, *,
                   source: str | os.PathLike) -> FolderSnapshot | None:
    """Another process's snapshot of ``source``, to read in place, where it provably holds the bytes it hashed.

    Parameters
    ----------
    path : path-like
        The snapshot (:attr:`FolderSnapshot.path` of the process that made it).
    files : sequence of (str, str, tuple of int)
        Its :attr:`FolderSnapshot.files`.
    fingerprint : str
        The fingerprint that process checked.
    source : path-like
        The user's folder it copies (named in messages).

    Returns
    -------
    FolderSnapshot or None
        Not :attr:`~FolderSnapshot.owned` (never deleted here), or None unless: ``path``
        and every folder in it are real folders of this user's closed to others; it holds
        exactly ``files`` (hidden ones included), each a regular file of this user's, closed
        to others, with its recorded stat key (a write since changes the change time); and
        the recorded digests give ``fingerprint``.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "config.json").write_text("{}")
    ...     made = snapshot_folder(folder)
    ...     same = reuse_snapshot(made.path, made.files, made.fingerprint, source=folder)
    ...     _ = (made.path / "config.json").write_text("{}")  # the same bytes, written again
    ...     again = reuse_snapshot(made.path, made.files, made.fingerprint, source=folder)
    ...     made.remove()
    >>> (same.path == made.path, same.owned, again)
    (True, False, None)
    """
    root = Path(path)
    expected = {name: tuple(key) for name, _, key in files}
    if not expected or _fingerprint([(name, digest) for name, digest, _ in files]) != fingerprint:
        return None
    seen = 0
    try:
        if not (stat.S_ISDIR((info := os.lstat(root)).st_mode) and _private(info)):
            return None
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames:
                info = os.lstat(Path(dirpath) / name)
                if not (stat.S_ISDIR(info.st_mode) and _private(info)):  # a link to a folder is not walked: refused
                    return None
            for name in filenames:
                file = Path(dirpath) / name
                info = os.lstat(file)
                key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
                if not (stat.S_ISREG(info.st_mode) and _private(info)) or expected.get(
                        file.relative_to(root).as_posix()) != key:
                    return None
                seen += 1
    except OSError:
        return None
    if seen != len(expected):
        return None
    return FolderSnapshot(Path(source).expanduser().resolve(), root, fingerprint, tuple(files), owned=False)
