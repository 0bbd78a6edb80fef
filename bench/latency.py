"""Benchmark (not a test): end-to-end latency of Nexmark q1 at parallelism 2, at half of
its maximum throughput (issue 16's p99 target: <= 50 ms).

First q1 runs unthrottled on two worker processes (its events per second from the first
bid's generation to the last one's: start-up left out); then at half that rate for
``--seconds``, and every bid's latency is taken in the block the source's block deals the
converted bids to, round-robin (as to a sink in other processes): from its generation in
the source to its arrival there, through the source's batch (q1's conversion runs in the
source's block), the channel (across the data plane for half of them) and that block's
queue. Prints one JSON line: ``max_eps``, ``rate``,
``samples``, ``p50_latency_ms``, ``p99_latency_ms``, ``max_latency_ms``.

    .venv/bin/python bench/latency.py [--seconds 10]
"""
from __future__ import annotations

import argparse
import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from common import report  # noqa: E402
from segflow.datagen.nexmark import AUCTIONS_PER_BLOCK, BLOCK  # noqa: E402
from segflow.jobs import run_job  # noqa: E402

JOB = os.path.join(BENCH, "jobs", "q1_latency.py")
SAMPLED_ONE_IN = 8
BID_SHARE = (BLOCK - 1 - AUCTIONS_PER_BLOCK) / BLOCK     # the generator's events that are bids


def run(events: int, rate: float | None) -> list[tuple[float, float]]:
    """``(generated at, latency)`` of every eighth bid, in seconds, ordered by generation."""
    params = {"events": str(events)} | ({"rate": str(rate)} if rate else {})
    _, output = run_job(JOB, params, 2, runtime="processes")
    return sorted(output.get())


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def p99_at_half_load(seconds: float = 10.0, events: int = 400_000) -> dict:
    """One measurement's figures (bench/compare.py reports its p99 too). Throughput counts
    from the first bid's generation to the last one's: start-up is left out."""
    samples = run(events, None)
    bids_per_s = SAMPLED_ONE_IN * len(samples) / (samples[-1][0] - samples[0][0])
    max_eps = bids_per_s / BID_SHARE
    rate = max_eps / 2
    latencies = sorted(latency for _, latency in run(int(rate * seconds), rate))
    return {"max_eps": round(max_eps), "rate": round(rate), "samples": len(latencies),
            "p50_latency_ms": round(percentile(latencies, 0.50) * 1000, 1),
            "p99_latency_ms": round(percentile(latencies, 0.99) * 1000, 1),
            "max_latency_ms": round(latencies[-1] * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the throttled run")
    args = parser.parse_args()
    report("latency", p99_at_half_load(args.seconds))


if __name__ == "__main__":
    main()
