"""Every relative link and anchor in README.md and docs/*.md resolves, and every module path the docs name exists.

Anchors follow GitHub's heading slugs: lower case, punctuation other than hyphens dropped,
spaces made hyphens, a repeated heading numbered -1, -2, ...
"""

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
MODULE = re.compile(r"(?<![\w/.-])((?:sgi_core|dashboard)/[\w/]*\.py)\b")
INLINE_CODE = re.compile(r"`[^`]*`")


def _prose_lines(text: str) -> list[str]:
    """The lines of ``text`` outside fenced and indented code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("    "):
            lines.append(line)
    return lines


def _slug(heading: str) -> str:
    text = INLINE_CODE.sub(lambda m: m.group(0).strip("`"), heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes for the headings of the Markdown file ``path``."""
    seen, found = Counter(), set()
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        match = re.match(r"#{1,6} +(.+?) *#* *$", line)
        if match:
            slug = _slug(match.group(1))
            found.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
            seen[slug] += 1
    return found


def broken_links(page: Path, root: Path) -> list[str]:
    """Each relative link, anchor or module path of ``page`` that does not resolve under ``root``."""
    text = page.read_text(encoding="utf-8")
    broken = []
    for line in _prose_lines(text):
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue
            file_part, _, anchor = target.partition("#")
            linked = (page.parent / file_part).resolve() if file_part else page
            if not linked.exists():
                broken.append(f"{target}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{target}: no heading gives #{anchor}")
    broken += [f"{module}: no such module" for module in MODULE.findall(text) if not (root / module).is_file()]
    return broken


PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_link_anchor_and_module_path_resolves(page):
    assert broken_links(page, REPO) == []


def test_a_broken_link_an_unknown_anchor_and_a_missing_module_are_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "sgi_core").mkdir()
    (tmp_path / "sgi_core" / "real.py").write_text("")
    (tmp_path / "docs" / "PAGE.md").write_text("# A page\n\n## Two words, `code` too\n\n## Two words, `code` too\n")
    readme = tmp_path / "README.md"
    readme.write_text(
        "# Top\n\n"
        "[ok](docs/PAGE.md#two-words-code-too) [ok](docs/PAGE.md#two-words-code-too-1) [ok](#top)\n"
        "[web](https://example.org/x) `[in code](docs/NOPE.md)` `sgi_core/real.py`\n"
        "[gone](docs/NOPE.md) [bad anchor](docs/PAGE.md#three-words) [self](#bottom)\n"
        "The module `sgi_core/missing.py` and dashboard/pages/gone.py.\n\n"
        "    [in an indented block](docs/ALSO_NOPE.md)\n"
    )
    assert broken_links(readme, tmp_path) == [
        "docs/NOPE.md: no such file",
        "docs/PAGE.md#three-words: no heading gives #three-words",
        "#bottom: no heading gives #bottom",
        "sgi_core/missing.py: no such module",
        "dashboard/pages/gone.py: no such module",
    ]


def test_the_real_readme_fails_when_a_link_is_planted(tmp_path):
    (tmp_path / "docs").mkdir()
    for page in PAGES:
        (tmp_path / page.relative_to(REPO)).write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nSee [nowhere](docs/NOWHERE.md).\n", encoding="utf-8")
    assert "docs/NOWHERE.md: no such file" in broken_links(readme, REPO)
