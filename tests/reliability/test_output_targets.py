"""Where an output goes: never onto a device, pipe, link or the input; standard output on request; no leftovers."""

import json
import os
import stat
import subprocess
import sys

import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.embedding import EmbeddingCache
from sgi_core.errors import SGIInputError
from sgi_core.io import export
from sgi_core.io.export import atomic_output, to_csv_bytes, write_table, write_text_output
from tests.conftest import REPO, SAMPLE_CSV
from tests.reliability.test_output_writes import expected_csv, leftovers, many_rows

SCORE = ["--model", "hashing-256", "--no-cache"]


def score(source, out) -> int:
    return main(["score", str(source), "-o", str(out), *SCORE])


def test_a_fifo_output_is_refused_and_stays_a_fifo(tmp_path, capsys):
    source = many_rows(tmp_path / "in.csv", 3)
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    assert score(source, fifo) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: the output exists and is not a regular file (a device, pipe or socket); writing would replace it "
        f"(file '{fifo}'). Give the path of a regular file, or - for standard output")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.parametrize("target_kind", ["fifo", "regular file"])
def test_an_output_that_is_a_link_is_refused_and_the_link_kept(tmp_path, capsys, target_kind):
    # A rename onto a link replaces the link (as it replaced /dev/null): refuse instead of guessing.
    source = many_rows(tmp_path / "in.csv", 3)
    target = tmp_path / "target"
    os.mkfifo(target) if target_kind == "fifo" else target.write_text("keep me")
    link = tmp_path / "out.csv"
    link.symlink_to(target)
    assert score(source, link) == 2
    assert "the output is a symbolic link (to '" in capsys.readouterr().err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target_kind == "fifo" or target.read_text() == "keep me"


def test_dash_writes_the_csv_to_standard_output(tmp_path):
    source = many_rows(tmp_path / "in.csv", 4)
    run = subprocess.run([sys.executable, "-m", "sgi_core", "score", str(source), "-o", "-", *SCORE],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr.decode()[-400:]
    assert run.stdout == expected_csv(source)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]  # no file named "-"


def test_write_text_output_to_dash_prints_it(capsysbinary):
    write_text_output('{"a": 1}\n', "-")
    assert capsysbinary.readouterr().out == b'{"a": 1}\n'


def test_the_input_as_output_is_refused_and_left_unchanged(tmp_path, capsys):
    source = many_rows(tmp_path / "in.csv", 3)
    before = source.read_bytes()
    hard_link = tmp_path / "same.csv"
    os.link(source, hard_link)
    for out in (source, hard_link, tmp_path / "." / "in.csv"):
        assert score(source, out) == 2
        assert "the output is the input file; it would be replaced by the result" in capsys.readouterr().err
    assert source.read_bytes() == before


def test_an_output_in_a_missing_folder_is_refused_before_scoring(tmp_path, capsys):
    source = many_rows(tmp_path / "in.csv", 3)
    out = tmp_path / "missing" / "out.csv"
    assert score(source, out) == 2
    assert capsys.readouterr().err.startswith(f"error: the folder '{out.parent}' for the output does not exist")


def test_a_killed_run_leaves_a_temporary_file_that_the_next_run_deletes(tmp_path):
    out = tmp_path / "out.csv"
    killed = ("import os, sys; from sgi_core.io.export import atomic_output\n"
              "with atomic_output(sys.argv[1]) as handle:\n"
              "    handle.write(b'half a table'); handle.flush(); os._exit(9)")
    run = subprocess.run([sys.executable, "-c", killed, str(out)], env={**os.environ, "PYTHONPATH": str(REPO)},
                         timeout=60)
    assert run.returncode == 9 and len(leftovers(tmp_path)) == 1
    write_table(pd.DataFrame({"a": [1]}), out)
    assert leftovers(tmp_path) == [] and out.read_bytes() == b"a\r\n1\r\n"


def test_a_running_writer_keeps_its_temporary_file(tmp_path):
    out = tmp_path / "out.csv"
    with atomic_output(out) as handle:
        handle.write(b"x")
        assert export.remove_stale_partials(out) == [] and len(leftovers(tmp_path)) == 1
    assert out.read_bytes() == b"x" and leftovers(tmp_path) == []


def test_the_data_is_synced_to_disk_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append(("fsync", stat.S_ISREG(os.fstat(fd).st_mode))),
                                                 real_fsync(fd)))
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append(("replace", str(b))), real_replace(a, b)))
    write_table(pd.DataFrame({"a": [1]}), tmp_path / "out.csv")
    assert events[:2] == [("fsync", True), ("replace", str(tmp_path / "out.csv"))]


@pytest.mark.parametrize("bad", ["file", "path through a file"])
def test_a_bad_cache_folder_is_one_clear_error(tmp_path, monkeypatch, capsys, bad):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    folder = a_file if bad == "file" else a_file / "sub"
    with pytest.raises(SGIInputError, match=rf"^cannot use '{folder}' as the embedding cache folder: .*"
                                            r"Set SGI_CACHE_DIR to a writable folder"):
        EmbeddingCache("m", cache_dir=folder)
    monkeypatch.setenv("SGI_CACHE_DIR", str(folder))
    source = many_rows(tmp_path / "in.csv", 3)
    assert main(["score", str(source), "-o", str(tmp_path / "out.csv"), "--model", "hashing-16"]) == 2
    assert "as the embedding cache folder" in capsys.readouterr().err


def test_to_csv_bytes_is_what_standard_output_gets(capsysbinary):
    frame = pd.DataFrame({"text": ["=1", "plain"], "x": [0.5, 2.0]})
    with atomic_output("-") as handle:
        handle.write(to_csv_bytes(frame))
    assert capsysbinary.readouterr().out == to_csv_bytes(frame)


@pytest.mark.parametrize("command", [["report", "--models", "hashing-16", "--n-boot", "0", "--no-cache", "--json"],
                                     ["gate", "--model", "hashing-16", "--write-policy"]], ids=["report", "gate"])
@pytest.mark.parametrize("target", ["a folder", "a missing folder", "the input"])
def test_json_outputs_are_checked_before_any_work(tmp_path, capsys, command, target):
    source = tmp_path / "labelled.csv"
    source.write_bytes(SAMPLE_CSV.read_bytes())
    out = {"a folder": tmp_path, "a missing folder": tmp_path / "missing" / "out.json", "the input": source}[target]
    name, *options = command
    assert main([name, str(source), *options, str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no report or policy was computed first
    what = "report JSON" if name == "report" else "policy"
    expected = {"a folder": f"the {what} is a folder, not a file",
                "a missing folder": f"the folder '{out.parent}' for the {what} does not exist",
                "the input": f"the {what} is the input file"}[target]
    assert captured.err.startswith(f"error: {expected}")
    assert source.read_bytes() == SAMPLE_CSV.read_bytes()


def test_report_json_is_written_whole(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["report", str(SAMPLE_CSV), "--models", "hashing-16", "--n-boot", "0", "--no-cache",
                 "--json", str(out)]) == 0
    assert json.loads(out.read_text())["models"] and leftovers(tmp_path) == []
