"""Benchmark (not a test): Nexmark q0-q8 (the shipped examples) at parallelism 1 and 2.

Each query runs over the same generated events, in one process at N = 1 and on two
worker processes at N = 2 (start-up included), its output checked against the DuckDB
oracle of tests/nexmark/oracle.py. Prints a markdown table of events per second, then as
its last line one JSON object: ``qK_p1_eps``, ``qK_p2_eps`` per query, and
``q6_over_q5_per_event`` (q6's events/s over q5's, at N = 1: q6 joins auctions with their
bids in an interval join, q5 counts bids in sliding windows; the target is >= 1).

    .venv/bin/python bench/nexmark.py [--events 200000] [--rounds 3] [--queries q5,q6]
"""
from __future__ import annotations

import argparse
import collections
import glob
import importlib.util
import os
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from common import ROOT, report, timed  # noqa: E402
from segflow.jobs import run_job  # noqa: E402


def _oracle():
    """tests/nexmark/oracle.py, loaded by path (this script is itself called nexmark)."""
    spec = importlib.util.spec_from_file_location("nexmark_oracle", os.path.join(ROOT, "tests", "nexmark", "oracle.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ORACLE = _oracle()
QUERIES, nexmark_lines = ORACLE.QUERIES, ORACLE.nexmark_lines

RUNS = {1: "threads", 2: "processes"}


def run_query(query: str, events: int, parallelism: int, directory: str) -> float:
    """Seconds of one run (start-up included), after checking its output."""
    output = os.path.join(directory, f"{query}-{parallelism}")
    _, seconds = timed(lambda: run_job(os.path.join(ROOT, "examples", f"nexmark_{query}.py"),
                                       {"output": output, "events": str(events)}, parallelism,
                                       runtime=RUNS[parallelism]))
    got = collections.Counter(line for part in glob.glob(os.path.join(output, "part-*"))
                              for line in open(part, encoding="utf-8").read().splitlines())
    if got != collections.Counter(nexmark_lines(query, events)):
        raise SystemExit(f"{query} at parallelism {parallelism} wrote a wrong result")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3, help="runs per configuration (the fastest counts)")
    parser.add_argument("--queries", default=",".join(sorted(QUERIES)),
                        help="comma-separated, e.g. q5,q6 (q6_over_q5_per_event needs both)")
    args = parser.parse_args()
    queries = args.queries.split(",")
    unknown = sorted(set(queries) - set(QUERIES))
    if unknown:
        parser.error(f"unknown queries {', '.join(unknown)}; there are {', '.join(sorted(QUERIES))}")
    results = {}
    with tempfile.TemporaryDirectory() as directory:
        for round_ in range(args.rounds):          # interleaved rounds: the machine's noise hits all alike
            for query in queries:
                for parallelism in RUNS:
                    seconds = run_query(query, args.events, parallelism, directory)
                    key = f"{query}_p{parallelism}_eps"
                    results[key] = max(results.get(key, 0.0), args.events / seconds)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print("| query | N=1 events/s | N=2 events/s |\n|---|---|---|")
    for query in queries:
        print(f"| {query} | {results[f'{query}_p1_eps']:,.0f} | {results[f'{query}_p2_eps']:,.0f} |")
    if {"q5", "q6"} <= set(queries):
        results["q6_over_q5_per_event"] = results["q6_p1_eps"] / results["q5_p1_eps"]
    results["events"] = args.events
    report("nexmark", {k: round(v, 3) if isinstance(v, float) else v for k, v in results.items()})


if __name__ == "__main__":
    main()
