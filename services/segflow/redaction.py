"""One place that keeps credentials out of everything segflow shows: logs, errors, the
StreamJob status and events.

Store and connector URLs may carry a password (``redis://user:pw@host``) or a signed
query (``?X-Amz-Signature=...``); error texts of client libraries may echo them. Every
path that shows text to a person passes it through :func:`redact`, which masks the
password of every URL in it, every query value, and any value of the environment
variables that hold secrets.
"""
from __future__ import annotations

import os
import re

MASK = "***"
# Environment variables whose values are secrets wherever they appear.
SECRET_ENV = ("SEGFLOW_REDIS_PASSWORD", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "SEGFLOW_STATE_KEY",
              "SEGFLOW_TLS_KEY")
_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^\s/?#'\"<>]*@)?([^\s?#'\"<>]*)(\?[^\s#'\"<>]*)?")
_PEM = re.compile(r"-----BEGIN ([A-Z ]*PRIVATE KEY)-----.*?-----END \1-----", re.S)
MIN_SECRET = 6              # shorter environment values are not searched for (too many false hits)


def _userinfo(userinfo: str) -> str:
    user, colon, _ = userinfo[:-1].partition(":")
    return f"{user}:{MASK}@" if colon else userinfo


def _query(query: str) -> str:
    pairs = (p.partition("=") for p in query[1:].split("&"))
    return "?" + "&".join(f"{name}={MASK}" if eq else name for name, eq, _ in pairs)


def redact_url(url: str) -> str:
    """``url`` with its password and query values masked."""
    return redact(url, secrets_from_env=False)


def redact(text: str, secrets_from_env: bool = True) -> str:
    """``text`` with URL passwords, query values, private keys and known secret values masked."""
    if not text:
        return text
    text = _PEM.sub(f"-----{MASK} PRIVATE KEY-----", text)
    text = _URL.sub(lambda m: m.group(1) + (_userinfo(m.group(2)) if m.group(2) else "") + m.group(3)
                    + (_query(m.group(4)) if m.group(4) else ""), text)
    if secrets_from_env:
        for name in SECRET_ENV:
            value = os.environ.get(name, "")
            if len(value) >= MIN_SECRET:
                text = text.replace(value, MASK)
    return text
