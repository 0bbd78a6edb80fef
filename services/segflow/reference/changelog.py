"""docs/changelog.md: CHANGELOG.md (the one the repository's readers and release tools
look for at the root) as a page of the site, word for word after the generated note."""
from __future__ import annotations

from .markdown import generated_note


def changelog_page(changelog: str) -> str:
    return generated_note("CHANGELOG.md") + "\n\n" + changelog
