"""Benchmark (not a test): segflow against what a user would write instead, in one run.

Two jobs on the same cached inputs, every output checked against the single-process loop:
word count over a Zipf corpus, and a Nexmark-style aggregate (parse a CSV of bids, price to
euro cents, count and sum per auction). Each runs as a hand-written loop (line by line), a
chunked loop (whole blocks of the file per call), ``multiprocessing.Pool(2)`` over byte
ranges, segflow at N = 1 and N = 2 worker processes (the record path; the aggregate also on
the columnar path) and Spark DataFrames on ``local[2]`` (its session start-up measured
once, apart). The best of ``--rounds`` runs
counts, start-up included except Spark's. Prints one JSON line per measurement, a
markdown table, and a JSON last line with the ratios issue 16 targets, with the p99
latency of Nexmark q1 at half its maximum throughput from ``bench/latency.py``.

    .venv/bin/python bench/compare.py [--size-mb 50] [--bids 10000000] [--rounds 3] [--no-spark]
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import multiprocessing
import os
import random
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from common import ROOT, read_counts, report, timed  # noqa: E402
from latency import p99_at_half_load  # noqa: E402
from segflow.datagen.corpus import cache_dir, corpus_path, word_counts  # noqa: E402
from segflow.jobs import run_job  # noqa: E402

WORDCOUNT = os.path.join(ROOT, "examples", "wordcount.py")
BID_AGGREGATE = os.path.join(BENCH, "jobs", "bid_aggregate.py")
BID_AGGREGATE_COLUMNAR = os.path.join(BENCH, "jobs", "bid_aggregate_columnar.py")
CHUNK = 1 << 20
AUCTIONS = 10_000


# ------------------------------------------------------------------ inputs
def bids_csv(bids: int, seed: int = 11) -> str:
    """A cached CSV of ``bids`` bids (auction, bidder, price, dateTime), skewed like Nexmark's."""
    path = os.path.join(cache_dir(), "bids", f"bids-{bids}-seed{seed}.csv")
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = random.Random(seed)
    hot = [rng.randrange(AUCTIONS) for _ in range(100)]
    temporary = path + ".tmp"
    with open(temporary, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["auction", "bidder", "price", "dateTime"])
        for i in range(bids):
            auction = rng.choice(hot) if rng.random() < 0.5 else rng.randrange(AUCTIONS)
            out.writerow([auction, rng.randrange(100_000), rng.randrange(100, 100_000), 1_700_000_000_000 + i])
    os.replace(temporary, path)
    return path


def byte_ranges(path: str, parts: int) -> list[tuple[int, int]]:
    size = os.path.getsize(path)
    step = -(-size // parts)
    return [(start, min(start + step, size)) for start in range(0, size, step)]


def lines_in(path: str, start: int, end: int):
    """The lines that begin in ``[start, end)`` (a line belongs to the range it starts in)."""
    with open(path, "rb") as f:
        if start:
            f.seek(start - 1)
            f.readline()                      # the rest of the line that began before start
        while f.tell() < end:
            line = f.readline()
            if not line:
                return
            yield line.decode("utf-8")


def chunks_in(path: str, start: int, end: int):
    """Whole lines from ``[start, end)``, about ``CHUNK`` bytes at a time."""
    lines = []
    size = 0
    for line in lines_in(path, start, end):
        lines.append(line)
        size += len(line)
        if size >= CHUNK:
            yield "".join(lines)
            lines, size = [], 0
    if lines:
        yield "".join(lines)


# ---------------------------------------------------------------- word count
def wc_loop(path: str) -> dict:
    return dict(word_counts(path))


def wc_range(args) -> collections.Counter:
    path, start, end = args
    counts: collections.Counter = collections.Counter()
    for chunk in chunks_in(path, start, end):
        counts.update(chunk.lower().split())
    return counts


def wc_chunked(path: str) -> dict:
    return dict(wc_range((path, 0, os.path.getsize(path))))


def wc_pool(path: str) -> dict:
    with multiprocessing.Pool(2) as pool:
        parts = pool.map(wc_range, [(path, a, b) for a, b in byte_ranges(path, 8)])
    total: collections.Counter = collections.Counter()
    for part in parts:
        total.update(part)
    return dict(total)


def wc_segflow(path: str, parallelism: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="segflow-compare-") as output:
        run_job(WORDCOUNT, {"input": path, "output": output}, parallelism, runtime="processes")
        return read_counts(output)


def wc_spark(session, path: str) -> dict:
    from pyspark.sql import functions as F
    words = session.read.text(path).select(F.explode(F.split(F.lower("value"), r"\s+")).alias("word"))
    rows = words.where(F.col("word") != "").groupBy("word").count().collect()
    return {r["word"]: r["count"] for r in rows}


# ----------------------------------------------------------------- aggregate
def nx_add(totals: dict, auction: int, cents: int) -> None:
    count, total = totals.get(auction, (0, 0))
    totals[auction] = (count + 1, total + cents)


def nx_loop(path: str) -> dict:
    totals: dict = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            nx_add(totals, int(row["auction"]), int(row["price"]) * 908 // 1000)
    return totals


def nx_range(args) -> dict:
    path, start, end = args
    totals: dict = {}
    for chunk in chunks_in(path, start, end):
        for line in chunk.splitlines():
            auction, _, price, _ = line.split(",")
            if auction != "auction":
                nx_add(totals, int(auction), int(price) * 908 // 1000)
    return totals


def nx_chunked(path: str) -> dict:
    return nx_range((path, 0, os.path.getsize(path)))


def nx_pool(path: str) -> dict:
    with multiprocessing.Pool(2) as pool:
        parts = pool.map(nx_range, [(path, a, b) for a, b in byte_ranges(path, 8)])
    totals: dict = {}
    for part in parts:
        for auction, (count, cents) in part.items():
            have = totals.get(auction, (0, 0))
            totals[auction] = (have[0] + count, have[1] + cents)
    return totals


def nx_segflow(path: str, parallelism: int) -> dict:
    _, output = run_job(BID_AGGREGATE, {"input": path}, parallelism, runtime="processes")
    return dict(output.get())


def nx_columnar(path: str, parallelism: int) -> dict:
    _, output = run_job(BID_AGGREGATE_COLUMNAR, {"input": path}, parallelism, runtime="processes")
    return {auction: (v["n"], v["cents"]) for auction, v in output.get()}


def nx_spark(session, path: str) -> dict:
    from pyspark.sql import functions as F
    bids = session.read.csv(path, header=True, inferSchema=False)
    cents = (F.col("price").cast("long") * 908 / 1000).cast("long")
    rows = bids.groupBy(F.col("auction").cast("long").alias("auction")) \
        .agg(F.count("*").alias("n"), F.sum(cents).alias("cents")).collect()
    return {r["auction"]: (r["n"], r["cents"]) for r in rows}


# ------------------------------------------------------------------ running
def measure(job: str, records: int, runs: dict, rounds: int) -> dict:
    """Best time of each configuration, rounds interleaved; outputs checked against the loop's."""
    best = {name: float("inf") for name in runs}
    expected = None
    for _ in range(rounds):
        for name, run in runs.items():
            result, seconds = timed(run)
            if expected is None:
                expected = result
            elif result != expected:
                raise SystemExit(f"{job}/{name}: output differs from the loop's "
                                 f"({len(result)} vs {len(expected)} keys)")
            best[name] = min(best[name], seconds)
    rows = {}
    for name, seconds in best.items():
        rows[name] = {"job": job, "config": name, "records": records, "seconds": round(seconds, 3),
                      "records_per_s": round(records / seconds)}
        print(json.dumps(rows[name]), flush=True)
    return rows


def table(results: dict[str, dict]) -> str:
    configs = list(dict.fromkeys(config for rows in results.values() for config in rows))
    lines = ["| | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for config in configs:
        cells = [f"{results[job][config]['records_per_s'] / 1e6:.2f} M/s" if config in results[job] else "-"
                 for job in results]
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=50, help="word-count corpus size")
    parser.add_argument("--bids", type=int, default=10_000_000,
                        help="bids in the aggregate's CSV (issue 16 measured 10M)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each configuration (the best counts)")
    parser.add_argument("--no-spark", action="store_true", help="leave Spark out (no JVM start)")
    args = parser.parse_args()
    corpus, bids = corpus_path(args.size_mb), bids_csv(args.bids)
    words = sum(len(line.split()) for line in open(corpus, encoding="utf-8"))
    wc_runs = {"loop": lambda: wc_loop(corpus), "chunked loop": lambda: wc_chunked(corpus),
               "Pool(2)": lambda: wc_pool(corpus), "segflow N=1": lambda: wc_segflow(corpus, 1),
               "segflow N=2": lambda: wc_segflow(corpus, 2)}
    nx_runs = {"loop": lambda: nx_loop(bids), "chunked loop": lambda: nx_chunked(bids),
               "Pool(2)": lambda: nx_pool(bids), "segflow N=1": lambda: nx_segflow(bids, 1),
               "segflow N=2": lambda: nx_segflow(bids, 2),
               "segflow columnar N=1": lambda: nx_columnar(bids, 1),
               "segflow columnar N=2": lambda: nx_columnar(bids, 2)}
    spark_start = None
    if not args.no_spark:
        from segflow.spark.session import get_session
        session, spark_start = timed(lambda: get_session("local[2]"))
        print(json.dumps({"spark_session_start_seconds": round(spark_start, 3)}), flush=True)
        wc_runs["Spark DataFrame local[2]"] = lambda: wc_spark(session, corpus)
        nx_runs["Spark DataFrame local[2]"] = lambda: nx_spark(session, bids)
    results = {"word count": measure("wordcount", words, wc_runs, args.rounds),
               "Nexmark aggregate": measure("nexmark_aggregate", args.bids, nx_runs, args.rounds)}
    print(table(results), flush=True)
    latency = p99_at_half_load()
    print(json.dumps({"q1_latency": latency}), flush=True)
    wc, nx = results["word count"], results["Nexmark aggregate"]

    def ratio(rows, a, b):
        return round(rows[a]["records_per_s"] / rows[b]["records_per_s"], 3)
    report("compare", {"wc_n2_over_pool": ratio(wc, "segflow N=2", "Pool(2)"),
                      "nx_n2_over_pool": ratio(nx, "segflow N=2", "Pool(2)"),
                      "nx_n1_over_loop": ratio(nx, "segflow N=1", "loop"),
                      "wc_n1_over_loop": ratio(wc, "segflow N=1", "loop"),
                      "nx_n2_over_spark_df": None if args.no_spark else ratio(nx, "segflow N=2",
                                                                             "Spark DataFrame local[2]"),
                      "nx_columnar_over_spark_df": None if args.no_spark else ratio(
                          nx, "segflow columnar N=2", "Spark DataFrame local[2]"),
                      "nx_columnar_n2_over_pool": ratio(nx, "segflow columnar N=2", "Pool(2)"),
                      "p99_latency_ms": latency["p99_latency_ms"],
                      "spark_session_start_seconds": None if spark_start is None else round(spark_start, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
