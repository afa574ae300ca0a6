"""The Data page's path box: off unless the operator names a folder, and confined to it."""

import os

import pytest

from dashboard import local_files
from dashboard.views import texts
from sgi_core.errors import SGIInputError
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, goto, metric

SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----"


@pytest.fixture
def tree(tmp_path):
    """A root folder with one good file and every kind of thing the box must refuse, and a secret beside it."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / "data.csv").write_bytes(SAMPLE_CSV.read_bytes())
    (root / "sub" / "more.csv").write_bytes(SAMPLE_CSV.read_bytes())
    (root / ".env").write_text(f"{SECRET}\n")
    (root / ".hidden" / "data.csv").write_bytes(SAMPLE_CSV.read_bytes())
    (tmp_path / "id_ed25519").write_text(f"{SECRET}\n")
    (root / "key.csv").symlink_to(tmp_path / "id_ed25519")
    (root / "hidden.csv").symlink_to(root / ".env")
    os.mkfifo(root / "pipe.csv")
    return root


def path_box(at):
    return [t for t in at.text_input if t.key == "data.path"]


def open_path(at, text: str):
    goto(at, "data")
    (box,) = path_box(at)
    box.set_value(text).run()
    assert not at.exception
    return [e.value for e in at.error]


def test_the_path_box_is_off_by_default(app, monkeypatch):
    monkeypatch.delenv(local_files.LOCAL_FILES_ROOT_ENV, raising=False)
    goto(app, "data")
    assert_clean(app)
    assert path_box(app) == []
    assert any("Opening files on this machine by path is off" in c.value and "SGI_LOCAL_FILES_ROOT" in c.value
               for c in app.caption)
    with pytest.raises(SGIInputError, match="opening files on this machine is off. Set SGI_LOCAL_FILES_ROOT"):
        local_files.local_file(str(SAMPLE_CSV))


def test_the_compare_runs_path_box_is_off_by_default_and_confined(app, tree, monkeypatch):
    monkeypatch.delenv(local_files.LOCAL_FILES_ROOT_ENV, raising=False)
    goto(app, "compare_runs")
    assert not app.exception and not [t for t in app.text_input if t.key == "compare.path"]
    monkeypatch.setenv(local_files.LOCAL_FILES_ROOT_ENV, str(tree))
    goto(app, "compare_runs")
    app.text_input(key="compare.path").set_value("key.csv").run()
    assert not app.exception
    assert [e.value for e in app.error][0].startswith(texts.plain("this path leads outside the folder"))


def test_files_under_the_root_open_by_absolute_or_relative_path(app, tree, monkeypatch):
    monkeypatch.setenv(local_files.LOCAL_FILES_ROOT_ENV, str(tree))
    assert open_path(app, str(tree / "data.csv")) == []
    assert app.session_state["data.name"] == str(tree / "data.csv") and metric(app, "Rows read") == "300"
    assert open_path(app, "sub/more.csv") == []
    assert app.session_state["data.name"] == str(tree / "sub" / "more.csv")


@pytest.mark.parametrize("typed, message", [
    ("{tmp}/id_ed25519", "this path leads outside the folder files may be opened from"),
    ("../id_ed25519", "this path leads outside the folder files may be opened from"),
    ("key.csv", "this path leads outside the folder files may be opened from"),  # a link out of the root
    (".env", "hidden files and folders ('.env') are not opened"),
    (".hidden/data.csv", "hidden files and folders ('.hidden') are not opened"),
    ("hidden.csv", "hidden files and folders ('.env') are not opened"),  # a link to a dot-file
    ("pipe.csv", "this is a named pipe (FIFO), not a file"),
    ("sub", "this is a folder, not a file"),
    ("nothing.csv", "no file at this path"),
    ("/etc/passwd", "this path leads outside the folder files may be opened from"),
    ("data\0.csv", "the path holds a NUL byte"),
])
def test_paths_outside_hidden_or_not_files_are_refused(app, tree, monkeypatch, typed, message):
    monkeypatch.setenv(local_files.LOCAL_FILES_ROOT_ENV, str(tree))
    shown = open_path(app, typed.format(tmp=tree.parent))
    assert len(shown) == 1 and shown[0].startswith(texts.plain(message)), shown
    assert texts.plain(f"under {tree}") in shown[0]
    assert app.session_state["data.name"] == SAMPLE_CSV.name  # the sample stays the current file
    page_text = " ".join(str(e.value) for kind in ("markdown", "caption", "error", "info", "warning")
                         for e in getattr(app, kind))
    assert SECRET not in page_text


def test_a_nul_byte_in_a_model_folder_path_is_an_input_error(tree, monkeypatch):
    monkeypatch.setenv(local_files.LOCAL_FILES_ROOT_ENV, str(tree))
    with pytest.raises(SGIInputError, match="the path holds a NUL byte"):
        local_files.local_folder("sub\0")
