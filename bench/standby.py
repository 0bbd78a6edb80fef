"""Benchmark (not a test): how soon a job produces new output after a worker is SIGKILLed,
with one standby worker (``--standby-workers 1``) and without.

Method. ``bench/jobs/output_stamps.py`` runs paced (2,000 records/s) at parallelism 2 under
aligned checkpoints every 0.5 s, into a file sink. Once records reach the sink, the bench
SIGKILLs an active worker (never a standby) every ``--spacing`` seconds, ``--kills`` times
per run; with a standby, each kill first waits until the coordinator's web view lists one
registered and idle (the one the last kill took is replaced in the background, which on a
loaded machine can take longer than ``--spacing``). A kill's delay runs from the SIGKILL to
the first record that reaches the sink's block in an attempt built after it (the job's
probe stamps each batch with its attempt's build time): detection, the restart of every
worker's replicas, the restore and the replay up to the sink. Without a standby the delay
includes starting the lost worker's new process; with one, the standby (started,
registered, certificates and servers ready) takes over. Runs of the two configurations
alternate (``--rounds`` each), so drift in the machine's load hits both alike. Every run's
output is checked exactly once.

Prints one JSON line per run and, LAST, a summary: ``standby_new_output_s`` and
``cold_new_output_s`` (median over every kill), ``*_p90_s``, ``kills`` of each, and
``exactly_once``. The target (issue 48): a standby's median under 0.3 s.

    .venv/bin/python bench/standby.py                  # 2 rounds x 5 kills each, about 1.5 min
    .venv/bin/python bench/standby.py --rounds 1 --kills 3
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import psutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, SEGFLOW, median, percentile, report  # noqa: E402

JOB = os.path.join(ROOT, "bench", "jobs", "output_stamps.py")
RATE = 2000
WEB_VIEW = re.compile(r"web view at (http://\S+)")
STANDBY_WAIT = 30.0         # seconds a kill waits for the standby that replaces the one taken


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def active_workers(run: subprocess.Popen) -> list[psutil.Process]:
    """The run's worker processes that hold replicas: not standing by (a standby that took
    over says so in its title)."""
    found = []
    for p in psutil.Process(run.pid).children(recursive=True):
        try:
            words = " ".join(p.cmdline()).split()
        except psutil.NoSuchProcess:
            continue
        if "worker" in words and ("--standby" not in words or "took" in words):
            found.append(p)
    return found


class RunLog:
    """A run's stderr, read as it comes (so the pipe never fills), and the coordinator's web
    view found there, which lists the standby workers registered and idle."""

    def __init__(self, run: subprocess.Popen):
        self.lines: list[str] = []
        self.url: str | None = None
        self.reader = threading.Thread(target=self._read, args=(run,), daemon=True)
        self.reader.start()

    def _read(self, run: subprocess.Popen) -> None:
        for line in run.stderr:
            self.lines.append(line)
            found = WEB_VIEW.search(line)
            if found and self.url is None:
                self.url = found.group(1).rstrip("/") + "/api/job"

    def standby_ready(self, timeout: float) -> bool:
        """Wait until a standby is registered and idle: a kill while the one that took over
        the last loss is still being replaced measures a job without a standby."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.url is not None:
                try:
                    with urllib.request.urlopen(self.url, timeout=2) as reply:
                        if json.load(reply).get("standby"):
                            return True
                except (OSError, ValueError):
                    pass
            time.sleep(0.05)
        return False


def stamps(probe: str) -> list[tuple[float, float]]:
    """(attempt build time, time a record reached the sink's block), over every worker."""
    seen = []
    for name in os.listdir(probe):
        with open(os.path.join(probe, name), encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    seen.append((float(parts[0]), float(parts[1])))
    return seen


def one_run(standby: int, kills: int, spacing: float, rng: random.Random) -> dict:
    with tempfile.TemporaryDirectory(prefix="segflow-bench-standby-") as scratch:
        probe, output = f"{scratch}/probe", f"{scratch}/out"
        count = int(RATE * (3 + kills * spacing + 3))
        args = [SEGFLOW, "run", JOB, "-p", f"output={output}", "-p", f"probe={probe}", "-p", f"count={count}",
                "-p", f"rate={RATE}", "--parallelism", "2", "--checkpoint-protocol", "aligned",
                "--checkpoint-interval", "0.5", "--state", f"file://{scratch}/state", "--quiet",
                "--standby-workers", str(standby)]
        run = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        killed: list[float] = []
        log = RunLog(run)
        try:
            deadline = time.monotonic() + 60
            while run.poll() is None and time.monotonic() < deadline and not (os.path.isdir(probe) and
                                                                               os.listdir(probe)):
                time.sleep(0.05)
            time.sleep(1.5)
            while len(killed) < kills and run.poll() is None:
                if standby and not log.standby_ready(STANDBY_WAIT):
                    raise RuntimeError(f"no standby worker was ready within {STANDBY_WAIT} s of the last kill")
                victims = active_workers(run)
                if victims:
                    victim = rng.choice(victims)
                    victim.send_signal(signal.SIGKILL)
                    killed.append(time.time())
                time.sleep(spacing)
            run.wait(timeout=120)
            log.reader.join(10)
            stderr = "".join(log.lines)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
        lines = []
        for name in sorted(os.listdir(output)) if os.path.isdir(output) else []:
            if name.startswith("part-"):
                with open(os.path.join(output, name), encoding="utf-8") as f:
                    lines.extend(int(line) for line in f)
        seen = stamps(probe)
    delays = []
    for k, at in enumerate(killed):
        until = killed[k + 1] if k + 1 < len(killed) else float("inf")
        after = [now for built, now in seen if at < built < until and now > at]
        delays.append(round(min(after) - at, 3) if after else None)
    return {"standby_workers": standby, "ok": run.returncode == 0, "kills": len(killed), "delays_s": delays,
            "exactly_once": sorted(lines) == list(range(count)),
            **({"error": stderr.strip().splitlines()[-1:]} if run.returncode else {})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="runs of each configuration, interleaved")
    parser.add_argument("--kills", type=int, default=5, help="SIGKILLs per run")
    parser.add_argument("--spacing", type=float, default=2.5, help="seconds between kills")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    results: dict[int, list[dict]] = {0: [], 1: []}
    for round_ in range(args.rounds):
        for standby in (1, 0):
            result = one_run(standby, args.kills, args.spacing, rng)
            results[standby].append(result)
            progress(f"round {round_ + 1}/{args.rounds}, standby {standby}: delays {result['delays_s']} s, "
                     f"exactly once {result['exactly_once']}")
            print(json.dumps(result), flush=True)
    summary: dict = {"bench": "standby", "rate": RATE, "parallelism": 2, "protocol": "aligned"}
    for standby, name in ((1, "standby"), (0, "cold")):
        delays = sorted(d for r in results[standby] for d in r["delays_s"] if d is not None)
        summary[f"{name}_new_output_s"] = median(delays)
        summary[f"{name}_p90_s"] = percentile(delays, 90)
        summary[f"{name}_kills"] = len(delays)
    summary["exactly_once"] = all(r["exactly_once"] and r["ok"] for rs in results.values() for r in rs)
    report("standby", summary)


if __name__ == "__main__":
    main()
