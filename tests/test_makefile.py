"""The Makefile declares only targets it defines and writes the fast tier's markers once; CI lints and runs both."""

import re

from tests.conftest import REPO

MAKEFILE = (REPO / "Makefile").read_text(encoding="utf-8")
CI = (REPO / ".ci" / "run").read_text(encoding="utf-8")
#: Where the test tiers are spoken of: each may name the make targets, none may spell out the markers again.
TIER_TEXTS = [REPO / ".ci" / "run", REPO / "README.md", REPO / "pyproject.toml", *sorted((REPO / "docs").glob("*.md"))]


def undeclared_phony(makefile: str) -> set[str]:
    """Names in ``.PHONY`` that no rule of ``makefile`` defines."""
    phony = {name for line in re.findall(r"^\.PHONY:(.*)$", makefile, flags=re.M) for name in line.split()}
    defined = set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", makefile, flags=re.M))
    return phony - defined


def fast_tier(makefile: str) -> str:
    """The marker expression of ``make test-fast``."""
    return re.search(r"^FAST_TIER\s*:=\s*(.+)$", makefile, flags=re.M).group(1).strip()


def test_phony_names_only_defined_targets():
    assert undeclared_phony(MAKEFILE) == set()
    assert {"run", "test", "test-fast", "test-slow", "lint"} <= set(re.findall(r"^([\w-]+):", MAKEFILE, flags=re.M))


def test_an_undefined_phony_target_is_found():
    planted = ".PHONY: run bench\nPY := python\nrun: setup\n\tpython -m x\n"
    assert undeclared_phony(planted) == {"bench"}


def test_the_fast_tier_is_written_once_and_ci_runs_lint_and_both_tiers():
    markers = fast_tier(MAKEFILE)
    assert markers == "not slow and not e2e and not statistical"
    assert MAKEFILE.count(markers) == 1
    assert [path.name for path in TIER_TEXTS if markers in path.read_text(encoding="utf-8")] == []
    steps = [line.split()[1] for line in CI.splitlines() if line.startswith("make ")]
    assert steps == ["lint", "test-fast", "test-slow"]
