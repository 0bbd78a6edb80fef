"""What a hot standby follows as a whole, from its workers' follows (pure): its least
followed worker, since a takeover waits for the slowest."""
from __future__ import annotations

from segflow.observability.follow_metrics import FollowSample


def summarize(samples: list[FollowSample]) -> FollowSample | None:
    """The standby's follow: the oldest version a worker holds, the largest lags (None: no
    worker answered)."""
    if not samples:
        return None
    return FollowSample(min(s.version for s in samples), max(s.lag_versions for s in samples),
                        max(s.lag_seconds for s in samples))
