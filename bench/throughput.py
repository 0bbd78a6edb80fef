"""Benchmark (not a test): throughput of the distributed runtime.

On the same generated input, in one run: segflow with worker processes at N = 1 and 2,
segflow with threads (--threads, parallelism 2), and a hand-written single-process loop,
for wordcount (a cached Zipf corpus) and a Nexmark q5-style keyed count. Prints one JSON
line per configuration (records/s over the job's run time, and over wall time including
process start-up), then a summary object with the ratios.

    .venv/bin/python bench/throughput.py [--size-mb 50] [--bids 10000000]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(BENCH, "jobs"))
sys.path.insert(0, BENCH)

from bid_count import auction_of  # noqa: E402
from common import ROOT, read_counts, report, timed  # noqa: E402
from segflow.datagen.corpus import corpus_path, word_counts  # noqa: E402
from segflow.jobs import run_job  # noqa: E402

WORDCOUNT = os.path.join(ROOT, "examples", "wordcount.py")
BID_COUNT = os.path.join(ROOT, "bench", "jobs", "bid_count.py")


def wordcount_baseline(path):
    return dict(word_counts(path))


def wordcount_segflow(path, parallelism, runtime):
    with tempfile.TemporaryDirectory(prefix="segflow-bench-") as output:
        env, _ = run_job(WORDCOUNT, {"input": path, "output": output}, parallelism, runtime=runtime)
        return read_counts(output), env.result.seconds


def bids_baseline(n):
    return dict(collections.Counter(auction_of(i) for i in range(n)))


def bids_segflow(n, parallelism, runtime):
    env, output = run_job(BID_COUNT, {"bids": str(n)}, parallelism, runtime=runtime)
    return dict(output.get()), env.result.seconds


CONFIGS = [("baseline", 1, None), ("segflow-threads", 2, "threads"),
           ("segflow-n1", 1, "processes"), ("segflow-n2", 2, "processes")]


def measure(workload, records, baseline, segflow):
    rows, expected = {}, None
    for name, parallelism, runtime in CONFIGS:
        if runtime is None:
            result, wall = timed(baseline)
            seconds = wall
            expected = result
        else:
            (result, seconds), wall = timed(lambda: segflow(parallelism, runtime))
        if expected is not None and result != expected:
            raise SystemExit(f"{workload}/{name} disagrees with the baseline")
        row = {"workload": workload, "config": name, "records": records,
               "seconds": round(seconds, 3), "wall_seconds": round(wall, 3),
               "records_per_s": round(records / seconds), "wall_records_per_s": round(records / wall)}
        rows[name] = row
        print(json.dumps(row), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=50)
    parser.add_argument("--bids", type=int, default=10_000_000)
    args = parser.parse_args()
    path = corpus_path(args.size_mb)
    words = sum(len(line.split()) for line in open(path, encoding="utf-8"))
    wc = measure("wordcount", words, lambda: wordcount_baseline(path),
                 lambda p, r: wordcount_segflow(path, p, r))
    bids = measure("q5_keyed_count", args.bids, lambda: bids_baseline(args.bids),
                   lambda p, r: bids_segflow(args.bids, p, r))

    def ratio(rows, a, b, key="records_per_s"):
        return round(rows[a][key] / rows[b][key], 3)

    report("throughput", {
        "wordcount_n2_over_n1": ratio(wc, "segflow-n2", "segflow-n1"),
        "wordcount_n2_over_baseline": ratio(wc, "segflow-n2", "baseline"),
        "wordcount_n2_over_baseline_wall": ratio(wc, "segflow-n2", "baseline", "wall_records_per_s"),
        "q5_n2_over_n1": ratio(bids, "segflow-n2", "segflow-n1"),
        "q5_n2_over_baseline": ratio(bids, "segflow-n2", "baseline"),
        "threads_over_n1_wordcount": ratio(wc, "segflow-threads", "segflow-n1"),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
