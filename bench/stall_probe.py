"""The machine's stalls, measured apart from the job: a process of its own that sleeps a
millisecond at a time and writes down every wake-up that came late.

On a shared machine the other load freezes every process for tens of milliseconds at a
time (on the 2-core machine of issue 48, a sleeper alone saw 43 stalls over 30 ms in 110 s,
up to 0.29 s, while the CPU pressure stood near 50 %): a job's replay stops with the rest,
and a recovery's figures move with them. The bench's recovery model takes the share of
wall time these stalls took before a failure (:func:`stall_share`) as an input, as it takes
the measured restart, instead of reading a frozen machine as a slow runtime.

    python bench/stall_probe.py OUT     # until SIGTERM: "<unix time the sleep began> <seconds it took>" lines
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

SLEEP = 0.001           # seconds a probe sleeps at a time
LATE = 0.005            # a wake-up this much later than asked is a stall


def stall_share(stalls: list[tuple[float, float]], start: float, end: float, sleep: float = SLEEP) -> float:
    """The share of ``start``..``end`` (unix seconds) the ``stalls`` (when each sleep began,
    how long it took) took beyond the sleep asked, each clipped to the window."""
    if end <= start:
        raise ValueError(f"a window must end after it starts, got {start} .. {end}")
    lost = 0.0
    for began, took in stalls:
        stalled_from, stalled_to = max(began + sleep, start), min(began + took, end)
        lost += max(0.0, stalled_to - stalled_from)
    return lost / (end - start)


def read_stalls(path: str) -> list[tuple[float, float]]:
    """The stalls a probe wrote to ``path`` so far."""
    with open(path, encoding="utf-8") as f:
        return [(float(began), float(took)) for began, took in (line.split() for line in f if line.count(" ") == 1)]


class StallProbe:
    """A running probe (a process of its own: a thread of the bench would also wait for the
    bench's own Python), writing to ``path``; :meth:`stop` ends it by its pid."""

    def __init__(self, path: str):
        self.path = path
        self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), path])

    def stalls(self) -> list[tuple[float, float]]:
        return read_stalls(self.path) if os.path.exists(self.path) else []

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)


def probe(path: str) -> None:
    """Sleep :data:`SLEEP` at a time until SIGTERM, appending each late wake-up to ``path``."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(path, "a", encoding="utf-8") as out:
        began = time.time()
        while True:
            time.sleep(SLEEP)
            now = time.time()
            if now - began > SLEEP + LATE:
                out.write(f"{began:.6f} {now - began:.6f}\n")
                out.flush()
            began = now


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the file the late wake-ups are appended to")
    probe(parser.parse_args().out)
