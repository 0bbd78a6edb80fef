"""Crash points for the operator-restart tests.

``SEGFLOW_OPERATOR_FAILPOINTS="after-create=0.2,after-status=0.1"`` makes the operator
SIGKILL itself with that probability each time it passes the named point: between its
API calls, where a restart is hardest to get right and a kill from outside rarely lands.
Unset (as in production), nothing happens.
"""
from __future__ import annotations

import os
import random
import signal


def _points() -> dict[str, float]:
    points = {}
    for item in os.environ.get("SEGFLOW_OPERATOR_FAILPOINTS", "").split(","):
        name, _, chance = item.partition("=")
        if name.strip():
            points[name.strip()] = float(chance or 1)
    return points


POINTS = _points()


def reached(point: str) -> None:
    chance = POINTS.get(point)
    if chance and random.random() < chance:
        os.kill(os.getpid(), signal.SIGKILL)
