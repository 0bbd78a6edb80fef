"""Every relative link and image in README.md and docs/**/*.md points at a file of the
repository that exists (anchors are checked by the strict site build). Links into code
blocks and inline code are not links; web addresses are not followed (no network)."""
import re
from pathlib import Path

import pytest

from markdown_pages import ROOT, pages, prose

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|^\s*\[[^\]]+\]:\s*(\S+)", re.M)
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def broken_links(page: Path, text: str) -> list[str]:
    broken = []
    for match in LINK.finditer(prose(text)):
        target = (match[1] or match[2]).split("#")[0].split("?")[0]
        if not target or EXTERNAL.match(target):
            continue
        resolved = (page.parent / target).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", pages(), ids=[str(page.relative_to(ROOT)) for page in pages()])
def test_relative_links_resolve(page):
    assert broken_links(page, page.read_text(encoding="utf-8")) == []


def test_the_checker_finds_broken_links():
    text = ("[ok](docs/index.md) [gone](docs/nowhere.md#x) ![pic](docs/images/none.png) [web](https://example.org)\n"
            "[outside](../shared/notes.md) [anchor](#quick-start) `[code](missing.md)`\n"
            "```\n[fenced](missing.md)\n```\n[ref]: docs/missing.md\n")
    assert broken_links(ROOT / "README.md", text) == ["docs/nowhere.md", "docs/images/none.png",
                                                      "../shared/notes.md", "docs/missing.md"]
