"""The bundled-runs example of docs/COMPARING_RUNS.md runs as written and prints what the page shows.

Its margin table is computed. The commands are read from the page and run with the real MiniLM;
every line the page quotes must be a line of what they print.
"""

import re
import shlex

import pytest

from benchmarks.margin_table import margin_table
from sgi_core.cli import main
from tests.conftest import REPO

PAGE = (REPO / "docs" / "COMPARING_RUNS.md").read_text(encoding="utf-8")
SECTION = PAGE[:PAGE.index("## Gating a file against a policy")]
PREFIX = ".venv/bin/python -m sgi_core "


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    """Each indented block of ``text`` with the paragraph just above it (its lines joined)."""
    blocks, lead, current, fresh = [], "", [], True
    for line in text.splitlines():
        if line.startswith("    "):
            current.append(line[4:])
            continue
        if current:
            blocks.append((lead, current))
            current = []
        if not line.strip():
            fresh = True
        else:
            lead = line if fresh else f"{lead} {line}"
            fresh = False
    return blocks


def _commands() -> list[list[str]]:
    block = next(lines for _, lines in _blocks(SECTION) if lines[0].startswith(PREFIX))
    joined = " ".join(line.rstrip("\\").strip() for line in block).split(PREFIX)
    return [shlex.split(part) for part in joined if part.strip()]


def _quoted(after: str) -> list[str]:
    return next(lines for lead, lines in _blocks(SECTION) if after in lead)


def test_the_page_holds_the_computed_margin_tables():
    first, second = margin_table().split("\n\n")
    assert first in PAGE and second in PAGE


@pytest.mark.slow
def test_the_bundled_runs_example_prints_what_the_page_shows(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    compare, gate = _commands()
    assert compare[0] == "compare" and gate[0] == "gate"
    assert main(compare) == 0
    printed = capsys.readouterr().out.splitlines()
    for line in _quoted("`compare` prints"):
        assert line in printed, line
    margin = gate[gate.index("--max-rate-increase") + 1]
    assert main(gate) == 0
    printed = capsys.readouterr().out.splitlines()
    for line in _quoted("`gate` passes"):
        assert line in printed, line
    assert f"<= {margin} allowed" in printed[1]
    # A margin below what 40 keys can plan for passes: the interval already clears it.
    cleared = re.search(r"With `--max-rate-increase (\S+)` it passes too", SECTION).group(1)
    gate[gate.index("--max-rate-increase") + 1] = cleared
    assert main(gate) == 0
    printed = capsys.readouterr().out.splitlines()
    for line in _quoted("it passes too"):
        assert line in printed, line
    # The figures the prose quotes from these outputs.
    sequence, newcombe = re.search(r"on the bundled\s+runs (\[\S+, \S+\]) against Newcombe's (\[\S+, \S+\])",
                                   SECTION).groups()
    quoted = "\n".join(_quoted("`compare` prints"))
    assert f"labels only: base 52.5%, new 20.0%, new - base -0.325 {newcombe}" in quoted
    assert f"(--sequential): new - base {sequence}" in quoted
