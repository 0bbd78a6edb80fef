"""Rates from cumulative counts that arrive in bursts (the progress line and the web view)."""
from __future__ import annotations

from collections import deque

RATE_WINDOW = 5.0       # seconds of counts a rate is averaged over


class RateMeter:
    """Per-block rates averaged over the last ``window`` seconds. Counts reach the client in
    bursts (each worker reports about once a second, not in step with the refreshes), so
    the rate between two refreshes swings between 0 and many times the real one; over a
    window of several reports it is the rate the job runs at. Pure: times are given."""

    def __init__(self, window: float = RATE_WINDOW):
        self.window = window
        self.samples: deque[tuple[float, dict[int, int]]] = deque()

    def add(self, now: float, totals: dict[int, int]) -> dict[int, float]:
        """Record the totals at ``now``; the rates (records/s) per block since the oldest
        sample of the window (0 until two samples lie a moment apart)."""
        self.samples.append((now, dict(totals)))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()
        first_time, first = self.samples[0]
        elapsed = now - first_time
        if elapsed < 0.1:
            return {block: 0.0 for block in totals}
        return {block: max(0, total - first.get(block, 0)) / elapsed for block, total in totals.items()}
