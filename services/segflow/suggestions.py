"""Suggestions ("did you mean ...?") for names a user typed: job parameters, options, commands."""
from __future__ import annotations

import difflib
from typing import Iterable


def did_you_mean(typed: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` when ``typed`` is close to one of ``known``; else ``""``."""
    close = difflib.get_close_matches(typed, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
