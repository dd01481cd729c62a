"""The documentation's links hold: every relative link in README.md and docs/**/*.md points at a
file that exists and, for an #anchor into a Markdown file, at one of its headings (GitHub's anchor
rules); every page under docs/ is listed in docs/README.md. Standard library only; needs no binary."""

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

# [text](target) and ![alt](target); a target has no spaces (an optional "title" after one is dropped).
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def prose_lines(text: str):
    """The lines outside fenced code blocks, with their numbers; inline code spans blanked out,
    since a link inside one is not a link."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def github_anchor(heading: str) -> str:
    """GitHub's id for a heading: its text as rendered (links and emphasis dropped to their text,
    code spans to their content), lower-cased, everything but letters, digits, '_', '-' and
    spaces removed, spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = INLINE_CODE.sub(lambda m: m.group(2), text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file; a repeated one gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        slug = github_anchor(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def links(path: Path):
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for m in LINK.finditer(INLINE_CODE.sub(lambda c: " " * len(c.group(0)), line)):
            yield number, m.group(1)


def broken_links(path: Path) -> list[str]:
    problems = []
    for number, target in links(path):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        where = f"{path.relative_to(REPO)}:{number}: {target}"
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{where}: no such file")
        elif not dest.is_relative_to(REPO):
            problems.append(f"{where}: outside the repository")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{where}: no heading with that anchor in {dest.relative_to(REPO)}")
    return problems


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path):
    assert broken_links(page) == []


def test_every_docs_page_is_in_the_index():
    index = DOCS / "README.md"
    assert index.is_file(), "docs/README.md, the index of the pages, is missing"
    listed = set()
    for _, target in links(index):
        file_part = target.partition("#")[0]
        if file_part and not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            listed.add((index.parent / file_part).resolve())
    missing = [str(p.relative_to(REPO)) for p in sorted(DOCS.rglob("*.md"))
               if p != index and p.resolve() not in listed]
    assert missing == [], f"pages not listed in docs/README.md: {missing}"


def test_the_anchor_rules():
    assert github_anchor("Taking a profile: `apiary run --profile`") == "taking-a-profile-apiary-run---profile"
    assert github_anchor("A million blocks on the chain's clock") == "a-million-blocks-on-the-chains-clock"
    assert github_anchor("`--rc state|volatile`") == "--rc-statevolatile"
    assert github_anchor("Over 2,000 blocks") == "over-2000-blocks"
    assert github_anchor("Tuning: scripts/rc-tune") == "tuning-scriptsrc-tune"


def test_the_checker_finds_a_broken_link(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    (tmp_path / "a.md").write_text("# Top\n\n## Next step\n\n[ok](a.md#next-step) [here](#top)\n"
                                   "```\n[not a link](nowhere.md)\n```\n`[code](nowhere.md)`\n")
    (tmp_path / "b.md").write_text("[gone](missing.md) [bad anchor](a.md#no-such) [fine](a.md)\n")
    assert broken_links(tmp_path / "a.md") == []
    assert broken_links(tmp_path / "b.md") == [
        "b.md:1: missing.md: no such file",
        "b.md:1: a.md#no-such: no heading with that anchor in a.md",
    ]
