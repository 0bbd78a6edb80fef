"""The Markdown the documentation tests read: README.md and every page under docs/, and
the fenced code blocks and links in them."""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NO_RUN = re.compile(r"^\s*<!--\s*no-run:\s*(?P<reason>\S.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass(frozen=True)
class Block:
    page: Path
    line: int            # of the opening fence, counting from 1
    lang: str
    code: str
    no_run: str | None   # the reason of a `<!-- no-run: reason -->` line right above it

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path, text: str | None = None) -> list[Block]:
    """Fenced blocks, also indented ones (inside list items), dedented. The marker counts
    only on the last non-blank line before the fence, so it cannot drift onto another
    block."""
    lines = (page.read_text(encoding="utf-8") if text is None else text).splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        close = re.compile(rf"^\s*{re.escape(opening['ticks'])}\s*$")
        end = next((j for j in range(i + 1, len(lines)) if close.match(lines[j])), len(lines))
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = NO_RUN.match(before)
        found.append(Block(page, i + 1, opening["lang"].lower(), textwrap.dedent("\n".join(lines[i + 1:end])),
                           marker["reason"] if marker else None))
        i = end + 1
    return found


def prose(text: str) -> str:
    """The text outside fenced blocks and inline code, where links are links."""
    kept, fence = [], None
    for line in text.splitlines():
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = re.compile(rf"^\s*{re.escape(opening['ticks'])}\s*$")
        elif fence is not None and fence.match(line):
            fence = None
        elif fence is None:
            kept.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(kept)
