"""Times as the operator writes them to a StreamJob's status: RFC 3339, UTC, to the second."""
from __future__ import annotations

import datetime

RFC3339 = "%Y-%m-%dT%H:%M:%SZ"


def rfc3339(seconds: float) -> str:
    """A Unix time in the status's form."""
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(RFC3339)


def seconds_between(earlier: str, later: str) -> float:
    """Seconds from one status time to another; ValueError if either is not in that form."""
    return (datetime.datetime.strptime(later, RFC3339) - datetime.datetime.strptime(earlier, RFC3339)).total_seconds()
