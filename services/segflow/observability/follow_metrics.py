"""A hot standby's worker's follow gauges (worker.follower serves them), and reading them
back from its ``/metrics`` page, as the standby's coordinator (its web view) and the
operator (``status.disasterRecovery.standby``) do: pure."""
from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

FOLLOWED_VERSION = "segflow_followed_version"
LAG_VERSIONS = "segflow_follow_lag_versions"
LAG_SECONDS = "segflow_follow_lag_seconds"


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
