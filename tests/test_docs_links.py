"""Every relative Markdown link in the README and the docs resolves.

A link is `[text](target)` outside fenced code blocks. A target with a scheme (https:,
mailto:) is not checked; any other target must name a file or directory that exists
relative to the page, and a `#fragment` on a Markdown page (or alone, for the page itself)
must match one of that page's headings as GitHub slugs them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", "target", ".pytest_cache", "node_modules", ".venv", "venv", "build", "dist"}

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


# The project's own pages; run outputs (a reproduction's STUDY.md in ./out, say) are not.
SOURCE_DIRS = ("docs", "benchmarks", "crates", "python", "scripts", "tests")


def markdown_pages(root: Path = ROOT) -> list[Path]:
    pages = [root / "README.md"]
    for d in SOURCE_DIRS:
        pages += (p for p in (root / d).rglob("*.md")
                  if not any(part in SKIP_DIRS for part in p.relative_to(root).parts))
    return sorted(p for p in pages if p.is_file())


def _prose_lines(text: str):
    """(line number, line) for every line outside a fenced code block."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to
    hyphens (hyphens and underscores kept)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[`*]", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in _prose_lines(page.read_text(encoding="utf-8")):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = _slug(m.group(1))
        k = seen.get(slug, 0)
        seen[slug] = k + 1
        out.add(slug if k == 0 else f"{slug}-{k}")
    return out


def broken_links(page: Path) -> list[str]:
    """'page:line: target (why)' for every relative link of `page` that does not resolve."""
    bad = []
    for n, line in _prose_lines(page.read_text(encoding="utf-8")):
        for m in LINK.finditer(line):
            target = m.group(1)
            if SCHEME.match(target):
                continue
            path, _, frag = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}:{n}: {target}"
            if not dest.exists():
                bad.append(f"{where} (no such file)")
            elif frag and dest.suffix == ".md" and frag.lower() not in anchors(dest):
                bad.append(f"{where} (no heading #{frag} in {dest.name})")
    return bad


def test_the_pages_are_found():
    pages = {p.relative_to(ROOT).as_posix() for p in markdown_pages()}
    assert {"README.md", "docs/reproduce.md", "docs/status.md", "docs/speed.md"} <= pages


@pytest.mark.parametrize("page", markdown_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page: Path):
    assert broken_links(page) == []


def test_a_broken_link_is_reported(tmp_path: Path):
    (tmp_path / "there.md").write_text("# A heading, with `code`\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#a-heading-with-code) [web](https://example.org/x)\n"
        "[gone](missing.md) ![img](gone.png) [bad anchor](there.md#nowhere)\n"
        "```\n[in code](not-checked.md)\n```\n"
    )
    bad = broken_links(page)
    assert [b.split(": ", 1)[1] for b in bad] == [
        "missing.md (no such file)",
        "gone.png (no such file)",
        "there.md#nowhere (no heading #nowhere in there.md)",
    ]
