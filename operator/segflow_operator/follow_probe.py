"""Reads a hot standby's worker pods' ``/metrics`` for what they follow (the I/O edge of
:mod:`.reconcile.follow`). A worker that does not answer within ``timeout`` is left out:
the status then shows the others' follow, and the next step asks again."""
from __future__ import annotations

import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from segflow.observability.follow_metrics import FollowSample, parse_follow

from .reconcile.views import PodView


def _sample(url: str, timeout: float) -> FollowSample | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:   # noqa: S310 - a pod's http URL
            return parse_follow(response.read().decode("utf-8", "replace"))
    except (OSError, urllib.error.URLError, ValueError):
        return None


def probe(pods: list[PodView], port: int, timeout: float = 0.5) -> list[FollowSample]:
    """The follow of every ready worker pod in ``pods`` that answers, asked at once."""
    urls = [f"http://{p.ip}:{port}/metrics" for p in pods if p.role == "worker" and p.ready and p.ip and
            not p.deleting]
    if not urls:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(urls)), thread_name_prefix="follow-probe") as pool:
        return [s for s in pool.map(lambda url: _sample(url, timeout), urls) if s is not None]
