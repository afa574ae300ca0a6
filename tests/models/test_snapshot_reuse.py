"""Another process's snapshot is read in place only where it provably holds the bytes that process hashed."""

import os
from pathlib import Path

import pytest

from sgi_core.models.snapshot import reuse_snapshot, snapshot_folder


@pytest.fixture
def made(tmp_path):
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "sub" / "weights.bin").write_bytes(b"\x00\x01" * 1000)
    snapshot = snapshot_folder(folder)
    yield folder, snapshot
    snapshot.remove()


def reuse(snapshot, folder, **changes):
    args = {"files": snapshot.files, "fingerprint": snapshot.fingerprint, **changes}
    return reuse_snapshot(snapshot.path, args["files"], args["fingerprint"], source=folder)


def test_an_untouched_snapshot_is_read_in_place_and_never_deleted_by_its_reader(made):
    folder, snapshot = made
    reused = reuse(snapshot, folder)
    assert (reused.path, reused.fingerprint, reused.source, reused.owned) == (snapshot.path, snapshot.fingerprint,
                                                                              folder.resolve(), False)
    reused.remove()
    reused.bind(object())
    assert (snapshot.path / "config.json").is_file()
    assert sorted(name for name, _, _ in snapshot.files) == ["config.json", "sub/weights.bin"]


def test_a_file_written_again_with_the_same_bytes_is_not_proved_unchanged(made):
    folder, snapshot = made
    target = snapshot.path / "sub" / "weights.bin"
    target.write_bytes(target.read_bytes())
    assert reuse(snapshot, folder) is None


@pytest.mark.parametrize("change", ["extra file", "hidden file", "missing file", "link", "open folder", "open file",
                                    "extra folder"])
def test_a_snapshot_with_anything_else_is_refused(made, change):
    folder, snapshot = made
    path = snapshot.path
    if change == "extra file":
        (path / "sub" / "more.json").write_text("{}")
    elif change == "hidden file":
        (path / ".hidden").write_text("x")
    elif change == "missing file":
        (path / "config.json").unlink()
    elif change == "link":
        (path / "config.json").unlink()
        (path / "config.json").symlink_to(folder / "config.json")
    elif change == "open folder":
        path.chmod(0o755)
    elif change == "open file":
        (path / "config.json").chmod(0o644)
    else:
        (path / "sub" / "empty").mkdir(mode=0o755)
    assert reuse(snapshot, folder) is None


def test_records_that_do_not_give_the_fingerprint_or_a_missing_folder_are_refused(made, tmp_path):
    folder, snapshot = made
    assert reuse(snapshot, folder, fingerprint="folder:" + "0" * 64) is None
    forged = tuple((name, "0" * 64, key) for name, _, key in snapshot.files)
    assert reuse(snapshot, folder, files=forged) is None
    assert reuse(snapshot, folder, files=()) is None
    assert reuse_snapshot(tmp_path / "absent", snapshot.files, snapshot.fingerprint, source=folder) is None
    link = tmp_path / "link"
    link.symlink_to(snapshot.path)
    assert reuse_snapshot(link, snapshot.files, snapshot.fingerprint, source=folder) is None
    assert os.stat(snapshot.path).st_mode & 0o777 == 0o700 and Path(snapshot.path).is_dir()
