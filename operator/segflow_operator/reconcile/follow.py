"""What a hot standby's workers follow, from their ``/metrics`` (pure): each worker's
followed version and lag, and the standby's as a whole (its least followed worker: a
takeover waits for the slowest)."""
from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from segflow.checkpoint.follow import FOLLOWED_VERSION, LAG_SECONDS, LAG_VERSIONS


@dataclass(frozen=True)
class FollowSample:
    """One worker's follow: the newest version it holds, and how far behind it may be."""
    version: int
    lag_versions: int
    lag_seconds: float


def parse_follow(text: str) -> FollowSample | None:
    """A worker's follow from its metrics page (None: it follows nothing, e.g. it took over)."""
    values = {family.name: family.samples[0].value for family in text_string_to_metric_families(text)
              if family.name in (FOLLOWED_VERSION, LAG_VERSIONS, LAG_SECONDS) and family.samples}
    if len(values) < 3:
        return None
    return FollowSample(int(values[FOLLOWED_VERSION]), int(values[LAG_VERSIONS]), float(values[LAG_SECONDS]))


def summarize(samples: list[FollowSample]) -> FollowSample | None:
    """The standby's follow: the oldest version a worker holds, the largest lags (None: no
    worker answered)."""
    if not samples:
        return None
    return FollowSample(min(s.version for s in samples), max(s.lag_versions for s in samples),
                        max(s.lag_seconds for s in samples))
