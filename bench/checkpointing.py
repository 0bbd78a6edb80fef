"""Benchmark (not a test): the cost of the checkpointing protocols (seeds 001 and 003).

For each workload and protocol, at parallelism 2 with a fixed checkpoint interval, with
and without one injected failure (SIGKILL of a worker mid-run), it measures throughput,
average checkpoint time and size, alignment time, recovery time and the throughput
overhead versus ``none``; and the ABS overhead curve of seed 001 (run time of
``aligned`` against the checkpoint interval). Prints a table on stderr and JSON lines on
stdout; the last line is a summary with ``aligned_1s_overhead`` (fractional throughput
loss of ``aligned`` at a 1 s interval versus ``none`` on wordcount at parallelism 2).

Workloads so far: wordcount on the cached Zipf corpus. Protocols: those available.

    .venv/bin/python bench/checkpointing.py [--size-mb 200] [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEGFLOW = os.path.join(os.path.dirname(sys.executable), "segflow")

from segflow.api.environment import AVAILABLE_PROTOCOLS  # noqa: E402
from segflow.datagen.corpus import corpus_path  # noqa: E402

DONE = re.compile(r"done in ([\d.]+) s, ([\d,]+) source records")


def run(protocol: str, interval: float, corpus: str, kill_at: float | None = None) -> dict:
    """One run of wordcount at parallelism 2; returns times, records and checkpoint stats."""
    with tempfile.TemporaryDirectory(prefix="segflow-bench-") as scratch:
        args = [SEGFLOW, "run", os.path.join(ROOT, "examples", "wordcount.py"), "-p", f"input={corpus}",
                "-p", f"output={scratch}/out", "--parallelism", "2", "--processes",
                "--checkpoint-protocol", protocol, "--checkpoint-interval", str(interval),
                "--state", f"file://{scratch}/state"]
        env = dict(os.environ, SEGFLOW_LOG_LEVEL="info")
        started = time.perf_counter()
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        killed = {}
        if kill_at is not None:
            def killer():
                time.sleep(kill_at)
                for child in psutil.Process(process.pid).children(recursive=True):
                    if "w1" in child.cmdline() and "worker" in child.cmdline():
                        child.send_signal(signal.SIGKILL)
                        killed["at"] = time.perf_counter()
                        return
            threading.Thread(target=killer, daemon=True).start()
        _, stderr = process.communicate()
        wall = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{protocol} failed:\n{stderr[-2000:]}")
    match = DONE.search(stderr)
    seconds, records = float(match.group(1)), int(match.group(2).replace(",", ""))
    checkpoints = [json.loads(line) for line in stderr.splitlines()
                   if line.startswith("{") and '"checkpoint complete"' in line]
    regular = [c for c in checkpoints if c["id"] < 2 ** 62]
    restored = [json.loads(line)["ts"] for line in stderr.splitlines()
                if line.startswith("{") and '"msg": "restored"' in line]
    recovery = (max(restored) - (time.time() - (time.perf_counter() - killed["at"]))) if restored and killed else None
    return {
        "seconds": seconds, "wall_seconds": round(wall, 3), "records": records,
        "checkpoints": len(regular),
        "avg_checkpoint_s": round(sum(c["seconds"] for c in regular) / len(regular), 4) if regular else None,
        "avg_checkpoint_bytes": round(sum(c["bytes"] for c in regular) / len(regular)) if regular else None,
        "avg_alignment_s": round(sum(c["alignment_seconds"] for c in regular) / len(regular), 4) if regular else None,
        "recovery_s": round(recovery, 3) if recovery is not None else None,
    }


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    corpus = corpus_path(args.size_mb)
    configs = [(p, False) for p in AVAILABLE_PROTOCOLS] + [(p, True) for p in AVAILABLE_PROTOCOLS if p != "none"]
    runs: dict = {c: [] for c in configs}
    for _ in range(args.rounds):          # interleaved: every round runs every configuration
        for protocol, failure in configs:
            kill_at = None
            if failure:
                kill_at = max(2.0, best(runs[("none", False)])["seconds"] * 0.6)
            runs[(protocol, failure)].append(run(protocol, args.interval, corpus, kill_at))
    records = best(runs[("none", False)])["records"]   # the same input in every run
    rows = {}
    for (protocol, failure), results in runs.items():
        row = best(results)
        row.update(workload="wordcount", protocol=protocol, failure=failure, interval=args.interval,
                   records=records, records_per_s=round(records / row["seconds"]))
        rows[(protocol, failure)] = row
    base = rows[("none", False)]["records_per_s"]
    for row in rows.values():
        row["throughput_overhead"] = round(1 - row["records_per_s"] / base, 4)
        print(json.dumps(row), flush=True)
    curve = []
    for interval in (0.25, 0.5, 1.0, 2.0, 4.0):
        seconds = best([run("aligned", interval, corpus) for _ in range(args.rounds)])["seconds"]
        # each point is paired with a fresh baseline run: the machine's load drifts
        baseline = best([run("none", interval, corpus) for _ in range(args.rounds)])["seconds"]
        point = {"curve": "abs_overhead", "interval": interval, "seconds": seconds,
                 "baseline_seconds": baseline, "overhead": round(seconds / baseline - 1, 4)}
        curve.append(point)
        print(json.dumps(point), flush=True)
    print(f"{'protocol':<10} {'failure':<8} {'rec/s':>10} {'overhead':>9} {'chk':>4} {'chk s':>7} "
          f"{'align s':>8} {'recov s':>8}", file=sys.stderr)
    for r in rows.values():
        print(f"{r['protocol']:<10} {str(r['failure']):<8} {r['records_per_s']:>10} "
              f"{r['throughput_overhead']:>9.1%} {r['checkpoints']:>4} {str(r['avg_checkpoint_s']):>7} "
              f"{str(r['avg_alignment_s']):>8} {str(r['recovery_s']):>8}", file=sys.stderr)
    print(json.dumps({"aligned_1s_overhead": rows[("aligned", False)]["throughput_overhead"]
                      if args.interval == 1.0 else None,
                      "unaligned_1s_overhead": rows[("unaligned", False)]["throughput_overhead"]
                      if args.interval == 1.0 else None,
                      "abs_curve": {str(p["interval"]): p["overhead"] for p in curve}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
