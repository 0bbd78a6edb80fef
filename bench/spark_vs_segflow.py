"""Benchmark (not a test): segflow on worker processes vs Spark on the same bounded jobs.

In one run, on the same generated input: bounded wordcount (a cached Zipf corpus) and
k-means (generated points, ``replay`` for a fixed number of rounds), each on segflow's
distributed runtime with N = 2 worker processes and on Spark ``local[2]`` through
``--engine spark``'s translation. Spark's session start-up (a JVM) is measured once,
apart; every job is run ``--rounds`` times alternating and keeps its best time (the
machines are shared and noisy). Both engines' outputs are checked to agree. Prints one
JSON line per measurement, then one per workload with the ratios (> 1: segflow faster).

    .venv/bin/python bench/spark_vs_segflow.py [--size-mb 20] [--points 200000] [--rounds 2]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from common import ROOT, report, timed  # noqa: E402
from segflow.datagen.corpus import corpus_path  # noqa: E402
from segflow.jobs import run_job  # noqa: E402
from segflow.spark.runner import run_job_on_spark  # noqa: E402
from segflow.spark.session import get_session  # noqa: E402

WORKERS = 2


def lines_of(directory: str) -> list[str]:
    lines: list[str] = []
    for part in sorted(glob.glob(os.path.join(directory, "part-*"))):
        with open(part, encoding="utf-8") as f:
            lines += f.read().splitlines()
    return sorted(lines)


def run(engine: str, job: str, params: dict[str, str]) -> tuple[list[str], float, float]:
    """(output lines, job seconds, wall seconds) of one run."""
    with tempfile.TemporaryDirectory(prefix="segflow-bench-") as output:
        params = {**params, "output": output}
        if engine == "segflow":
            (env, _), wall = timed(lambda: run_job(job, params, WORKERS, runtime="processes"))
        else:
            (env, _), wall = timed(lambda: run_job_on_spark(job, params, WORKERS))
        return lines_of(output), env.result.seconds, wall


def agree(workload: str, a: list[str], b: list[str]) -> bool:
    if workload != "kmeans":
        return a == b
    rows = [[[float(c) for c in line.split("\t")] for line in lines] for lines in (a, b)]
    return len(a) == len(b) and all(abs(x - y) < 1e-6 for ra, rb in zip(*rows) for x, y in zip(ra, rb))


def measure(workload: str, job: str, params: dict[str, str], records: int, rounds: int) -> dict:
    best: dict[str, dict] = {}
    outputs: dict[str, list[str]] = {}
    for _ in range(rounds):
        for engine in ("segflow", "spark"):
            lines, seconds, wall = run(engine, job, params)
            outputs[engine] = lines
            if engine not in best or seconds < best[engine]["seconds"]:
                best[engine] = {"seconds": seconds, "wall_seconds": wall}
    if not agree(workload, outputs["segflow"], outputs["spark"]):
        raise SystemExit(f"{workload}: segflow and Spark disagree")
    for engine, config in (("segflow", f"segflow-processes-n{WORKERS}"), ("spark", f"spark-local[{WORKERS}]")):
        print(json.dumps({"workload": workload, "config": config, "records": records,
                          "seconds": round(best[engine]["seconds"], 3),
                          "wall_seconds": round(best[engine]["wall_seconds"], 3),
                          "records_per_s": round(records / best[engine]["seconds"])}), flush=True)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=20, help="wordcount corpus size")
    parser.add_argument("--points", type=int, default=200_000, help="k-means points")
    parser.add_argument("--iterations", type=int, default=10, help="k-means rounds (at most)")
    parser.add_argument("--rounds", type=int, default=2, help="runs per job; the best counts")
    args = parser.parse_args()
    corpus = corpus_path(args.size_mb)
    started = time.perf_counter()
    get_session(f"local[{WORKERS}]")
    print(json.dumps({"config": f"spark-local[{WORKERS}]", "session_start_seconds":
                      round(time.perf_counter() - started, 3)}), flush=True)
    with open(corpus, "rb") as f:
        lines = sum(1 for _ in f)
    workloads = [
        ("wordcount", os.path.join(ROOT, "examples", "wordcount.py"), {"input": corpus}, lines),
        ("kmeans", os.path.join(ROOT, "examples", "kmeans.py"),
         {"points": str(args.points), "iterations": str(args.iterations)}, args.points),
    ]
    ratios = {}
    for workload, job, params, records in workloads:
        best = measure(workload, job, params, records, args.rounds)
        spark, segflow = best["spark"], best["segflow"]
        ratios[workload] = {"spark_over_segflow_seconds": round(spark["seconds"] / segflow["seconds"], 3),
                            "spark_over_segflow_wall": round(spark["wall_seconds"] / segflow["wall_seconds"], 3)}
    report("spark_vs_segflow", ratios)
    return 0


if __name__ == "__main__":
    sys.exit(main())
