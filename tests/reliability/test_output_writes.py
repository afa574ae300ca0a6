"""Outputs are written atomically: concurrent runs, planted links, folders, partial files, file mode."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.embedding import HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.io.export import to_csv_bytes, write_table
from sgi_core.io.triples import load_triples
from sgi_core.pipelines.local_engine import read_chunks, score_to_file
from sgi_core.scoring import score_table
from tests.conftest import REPO
from tests.reliability.hostile_files import TRIPLE, csv_lines


class CountingEncoder(HashingEncoder):
    """Hashing encoder that counts the texts it is asked to encode."""

    def __init__(self):
        super().__init__(dim=16)
        self.encoded = 0

    def encode(self, texts, **kwargs):
        self.encoded += len(texts)
        return super().encode(texts, **kwargs)


def many_rows(path, n):
    """``n`` distinct triples, so that every row costs an encoding."""
    lines = [f"{q} {i},{c} {i},{r} {i}" for i, (q, c, r) in enumerate([TRIPLE] * n)]
    path.write_bytes(csv_lines("question,context,response", *lines))
    return path


def expected_csv(source):
    return to_csv_bytes(score_table(load_triples(source), HashingEncoder(256)))


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


def test_two_processes_writing_one_output_leave_one_complete_file(tmp_path):
    source = many_rows(tmp_path / "in.csv", 3000)
    out = tmp_path / "out.csv"
    command = [sys.executable, "-m", "sgi_core", "score", str(source), "-o", str(out), "--model", "hashing-256",
               "--no-cache", "--chunk-rows", "100"]
    env = {**os.environ, "SGI_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):
        runs = [subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for _ in range(2)]
        results = [run.communicate(timeout=120) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], [err.decode()[-400:] for _, err in results]
        assert out.read_bytes() == expected_csv(source)
        assert leftovers(tmp_path) == []


def test_a_link_planted_at_the_old_temporary_name_is_not_followed(tmp_path):
    source = many_rows(tmp_path / "in.csv", 3)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out.csv"
    (tmp_path / ".out.csv.partial").symlink_to(victim)
    assert main(["score", str(source), "-o", str(out), "--model", "hashing-256", "--no-cache"]) == 0
    assert victim.read_text() == "keep me"
    assert not out.is_symlink() and out.read_bytes() == expected_csv(source)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_an_output_folder_fails_before_any_text_is_encoded(tmp_path, suffix):
    source = many_rows(tmp_path / "in.csv", 3)
    folder = tmp_path / f"out{suffix}"
    folder.mkdir()
    encoder = CountingEncoder()
    message = f"the output is a folder, not a file (file '{folder}'). Give a file name ending in .csv or .parquet"
    with pytest.raises(SGIInputError, match=f"^{message.replace('(', r'[(]').replace(')', r'[)]')}$"):
        score_to_file(read_chunks(source), folder, encoder)
    assert encoder.encoded == 0
    assert main(["score", str(source), "-o", str(folder), "--model", "hashing-256", "--no-cache"]) == 2
    with pytest.raises(SGIInputError, match="the output is a folder"):
        write_table(pd.DataFrame({"a": [1]}), folder)
    assert leftovers(tmp_path) == []


def test_a_failed_write_keeps_the_previous_output_and_leaves_no_temporary_file(tmp_path):
    out = tmp_path / "out.parquet"
    write_table(pd.DataFrame({"a": [1, 2]}), out)
    before = out.read_bytes()
    unconvertible = pd.DataFrame({"a": [1, "text", 2.5, b"x"]}, dtype=object)  # pyarrow cannot type this column
    with pytest.raises(Exception, match="Conversion failed|cannot mix|Expected bytes"):
        write_table(unconvertible, out)
    assert out.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_outputs_get_the_mode_a_plain_open_gives(tmp_path):
    reference = tmp_path / "plain.txt"
    reference.write_bytes(b"x")
    write_table(pd.DataFrame({"a": [1]}), tmp_path / "out.csv")
    assert (tmp_path / "out.csv").stat().st_mode & 0o777 == reference.stat().st_mode & 0o777


@pytest.mark.parametrize("argument, message", [
    (["--batch-size", "0"], "python -m sgi_core score: error: argument --batch-size: must be a whole number >= 1; "
                            "got '0'"),
    (["--model", "hashing-0"], "error: bad test encoder name 'hashing-0'. Use 'hashing' or 'hashing-<dim>' with a dim "
                               "of 1 or more"),
])
def test_zero_batch_size_and_zero_width_encoder_are_one_line_errors(tmp_path, capsys, argument, message):
    source = many_rows(tmp_path / "in.csv", 3)
    args = ["score", str(source), "-o", str(tmp_path / "out.csv"), "--no-cache", "--model", "hashing-16", *argument]
    try:
        status = main(args)
    except SystemExit as refused:  # counts are refused while the arguments are parsed
        status = refused.code
    assert status == 2
    assert capsys.readouterr().err.splitlines()[-1] == message
    assert not (tmp_path / "out.csv").exists() and leftovers(tmp_path) == []
