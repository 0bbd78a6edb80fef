"""The web view of a standby's coordinator (``/api/job`` while it awaits the lease): that
it stands by, for which cluster, and, when hot, what each of its workers follows, read
from the workers' own ``/metrics`` (the addresses their held registrations gave)."""
from __future__ import annotations

import urllib.error
import urllib.request

from typing import Callable

from ..observability.follow_metrics import FollowSample, parse_follow
from ..settings import CheckpointSettings
from .lease_wait import HeldCalls

STANDBY_PHASE = "STANDBY"


def standby_state(settings: CheckpointSettings, follows: dict[str, FollowSample | None]) -> dict:
    """``/api/job`` of a standby: ``follows`` is each registered worker's follow (None: it
    follows nothing)."""
    return {"job": settings.job_name, "phase": STANDBY_PHASE, "standby_mode": "hot" if settings.follow_interval else
            "warm", "cluster": settings.lease_owner, "protocol": settings.protocol.value,
            "follow_seconds": settings.follow_interval,
            "workers": [{"name": name, "following": sample is not None,
                         "version": sample.version if sample else None,
                         "lag_versions": sample.lag_versions if sample else None,
                         "lag_seconds": round(sample.lag_seconds, 2) if sample else None}
                        for name, sample in sorted(follows.items())]}


def _follow_of(address: str, timeout: float) -> FollowSample | None:
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=timeout) as response:  # noqa: S310
            return parse_follow(response.read().decode("utf-8", "replace"))
    except (OSError, urllib.error.URLError, ValueError):
        return None


class StandbyView:
    """``/api/job`` while the coordinator stands by (the I/O around :func:`standby_state`)."""

    def __init__(self, settings: CheckpointSettings, held: HeldCalls, timeout: float = 0.3):
        self.settings, self.held, self.timeout = settings, held, timeout

    def __call__(self) -> dict:
        follows = {name: _follow_of(address, self.timeout) if self.settings.follow_interval and address else None
                   for name, address in list(self.held.registered.items())}
        return standby_state(self.settings, follows)


class ShownView:
    """What ``/api/job`` serves now: a standby's view until the coordinator runs the job,
    then the job's (one web server throughout, on the port the pod declares)."""

    def __init__(self, view: Callable[[], dict]):
        self.view = view

    def __call__(self) -> dict:
        return self.view()
