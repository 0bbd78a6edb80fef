"""``segflow demo``: what segflow is for, in about half a minute.

Runs ``examples/sensor_averages.py`` (per-sensor statistics over event-time windows from
a rate-limited generator) on worker processes with aligned checkpoints every second,
prints the web view's address, SIGKILLs a worker once a few checkpoints are complete,
lets the job recover from its last checkpoint, and checks the output against a direct
computation: every window exactly once.
"""
from __future__ import annotations

import collections
import json
import os
import signal
import tempfile
import threading
import time
import urllib.request
from typing import Callable

from ..errors import SegflowError
from ..jobs.loader import JobModule, build_job, load_job
from ..observability.logs import LOG_LEVEL_ENV
from ..settings import Config
from .progress_bar import Progress, expected_records

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
JOB = os.path.join(ROOT, "examples", "sensor_averages.py")
KILL_AFTER_CHECKPOINTS = 3


def read_lines(directory: str) -> collections.Counter:
    lines: collections.Counter = collections.Counter()
    for name in sorted(os.listdir(directory)):
        if name.startswith("part-"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                lines.update(line.rstrip("\n") for line in f)
    return lines


def differences(expected: collections.Counter, got: collections.Counter) -> str:
    """What is wrong with ``got`` ("" when it is exact)."""
    missing, extra = expected - got, got - expected
    if not missing and not extra:
        return ""
    return (f"{sum(missing.values())} windows missing, {sum(extra.values())} extra or twice, "
            f"e.g. {sorted(missing or extra)[:3]}")


class WorkerKiller:
    """Watches the job through its web view's ``/api/job`` and SIGKILLs one worker once
    ``after`` checkpoints are complete (as a crash would: no goodbye, no flush)."""

    def __init__(self, after: int, say: Callable[[str], None]):
        self.after = after
        self.say = say
        self.killed = ""

    def watch(self, web_url: str) -> None:
        threading.Thread(target=self._run, args=(web_url,), name="demo-killer", daemon=True).start()

    def _run(self, web_url: str) -> None:
        while True:
            try:
                with urllib.request.urlopen(f"{web_url}api/job", timeout=2) as reply:
                    job = json.load(reply)
            except OSError:
                return                   # the job is over
            complete = [c for c in job["checkpoints"] if c["complete"]]
            if job["phase"] == "RUNNING" and len(complete) >= self.after and len(job["workers"]) > 1:
                victim = job["workers"][-1]
                self.say(f"checkpoint {complete[0]['id']} is complete: killing worker {victim['name']} "
                         f"(pid {victim['pid']}) with SIGKILL")
                try:
                    os.kill(victim["pid"], signal.SIGKILL)
                except ProcessLookupError:
                    return
                self.killed = victim["name"]
                return
            time.sleep(0.2)


def run_demo(readings: int, rate: float, parallelism: int, kill: bool = True) -> int:
    job = JOB
    if not os.path.exists(job):
        raise SegflowError(f"segflow demo runs {job}, which only a checkout of the repository has: clone it and "
                           "run make demo there")
    os.environ.setdefault(LOG_LEVEL_ENV, "error")     # the demo tells the story; the services keep quiet
    progress = Progress(enabled=None)

    def say(text: str) -> None:
        progress.say(f"segflow demo: {text}")

    killer = WorkerKiller(KILL_AFTER_CHECKPOINTS, say)

    def announce(text: str) -> None:
        progress.say(f"segflow: {text}")
        if text.startswith("web view at ") and kill:
            killer.watch(text.rsplit(" ", 1)[1])

    with tempfile.TemporaryDirectory(prefix="segflow-demo-") as work:
        output, state = os.path.join(work, "out"), os.path.join(work, "state")
        say(f"{os.path.relpath(job, ROOT)}: {readings:,} sensor readings at {rate:,.0f}/s on {parallelism} worker "
            f"processes, aligned checkpoints every second in file://{state}"
            + (f"; a worker is killed after checkpoint {KILL_AFTER_CHECKPOINTS}" if kill else ""))
        env, _ = build_job(JobModule(job, params={"output": output, "readings": str(readings), "rate": str(rate)}),
                           Config(parallelism=parallelism, runtime="processes", checkpoint_protocol="aligned",
                                  checkpoint_interval=1.0, state_url=f"file://{state}"))
        progress.expect(expected_records(env.graph))
        started = time.monotonic()
        try:
            result = env.execute(on_progress=progress, on_event=announce)
        finally:
            progress.finish()
        seconds = time.monotonic() - started
        got = read_lines(output)
    expected = load_job(JobModule(job, "expected"), signature="(readings)")(readings)
    say(f"done in {seconds:.1f} s with {result.recoveries} recover{'y' if result.recoveries == 1 else 'ies'}")
    wrong = differences(expected, got)
    if wrong:
        say(f"WRONG OUTPUT: {wrong}")
        return 1
    print("sensor    window start  readings      sum    mean")
    rows = sorted((line.split("\t") for line in got), key=lambda row: (row[0], int(row[1])))
    for sensor, start, count, total, mean in rows[:5]:
        print(f"{sensor}  {int(start):>12,} {int(count):>9} {int(total):>8,} {mean:>7}")
    say(f"all {sum(expected.values()):,} windows match a direct computation exactly: none lost, none twice"
        + (f", across the loss of worker {killer.killed}" if killer.killed else ""))
    return 0
