"""Benchmark (not a test): segflow wordcount at parallelism 1 vs a hand-written loop.

Runs both on the same cached ~50 MB Zipf corpus in one process run, alternating, and
keeps each one's best time (the machines are shared and noisy). Checks that both give the
same counts, then prints one JSON object:
{"segflow_s", "baseline_s", "ratio" (baseline_s / segflow_s), "words", ...}.

    .venv/bin/python bench/wordcount.py [--size-mb 50] [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import ROOT, read_counts  # noqa: E402
from segflow.datagen.corpus import corpus_path, word_counts as baseline  # noqa: E402
from segflow.jobs import run_job  # noqa: E402


def segflow_wordcount(path: str, output: str) -> dict[str, int]:
    run_job(os.path.join(ROOT, "examples", "wordcount.py"), {"input": path, "output": output}, 1)
    return read_counts(output)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    path = corpus_path(args.size_mb)
    best = {"segflow": float("inf"), "baseline": float("inf")}
    expected = got = None
    for _ in range(args.rounds):
        started = time.perf_counter()
        expected = baseline(path)
        best["baseline"] = min(best["baseline"], time.perf_counter() - started)
        with tempfile.TemporaryDirectory(prefix="segflow-bench-") as output:
            started = time.perf_counter()
            got = segflow_wordcount(path, output)
            best["segflow"] = min(best["segflow"], time.perf_counter() - started)
    if got != dict(expected):
        print(json.dumps({"error": "segflow and the baseline disagree on the counts"}))
        return 1
    print(json.dumps({
        "segflow_s": round(best["segflow"], 3),
        "baseline_s": round(best["baseline"], 3),
        "ratio": round(best["baseline"] / best["segflow"], 3),
        "words": sum(expected.values()),
        "distinct_words": len(expected),
        "corpus_bytes": os.path.getsize(path),
        "rounds": args.rounds,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
