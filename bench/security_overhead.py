"""Benchmark (not a test): what mutual TLS and sealed state cost.

Runs the same jobs, alternating in one run, with this tree and with a baseline tree (a
checkout of a commit before issue 14, given with --baseline; it runs with this venv and
PYTHONPATH pointing at its services), at parallelism 2: wordcount over a cached corpus
(pre-aggregated: little crosses the network) and a keyed count where every record
crosses a TLS channel, each with and without aligned checkpoints to a file store (every
snapshot sealed). Prints one JSON line per run, then a
summary with the median ratio new/baseline per configuration (> 1: slower).

    git worktree add /tmp/segflow-baseline 000fd19
    .venv/bin/python bench/security_overhead.py --baseline /tmp/segflow-baseline [--rounds 3] [--size-mb 30]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "services"))
sys.path.insert(0, BENCH)

from common import report  # noqa: E402
from segflow.datagen.corpus import corpus_path  # noqa: E402

SEGFLOW = os.path.join(ROOT, ".venv", "bin", "segflow")
WORDCOUNT = os.path.join(ROOT, "examples", "wordcount.py")
SHUFFLE = os.path.join(BENCH, "jobs", "shuffle_all.py")
ALIGNED = ["--checkpoint-protocol", "aligned", "--checkpoint-interval", "1"]
CONFIGS = {                             # name: (job, its parameters, extra arguments)
    "wordcount N=2": (WORDCOUNT, {"input": "CORPUS"}, []),
    "wordcount N=2 aligned 1s": (WORDCOUNT, {"input": "CORPUS"}, ALIGNED),
    "shuffle 2M records N=2": (SHUFFLE, {"records": "2000000"}, []),
    "shuffle 2M records N=2 aligned 1s": (SHUFFLE, {"records": "2000000"}, ALIGNED),
}


def run(tree: str, corpus: str, job: str, params: dict, extra: list[str]) -> float:
    """Wall seconds of one ``segflow run`` at parallelism 2 with the services of ``tree``."""
    with tempfile.TemporaryDirectory(prefix="segflow-bench-") as work:
        given = [a for k, v in params.items() for a in ("-p", f"{k}={corpus if v == 'CORPUS' else v}")]
        args = [SEGFLOW, "run", job, *given, "-p", f"output={work}/out", "--parallelism", "2", "--quiet", *extra]
        if extra:
            args += ["--state", f"file://{work}/state"]
        env = {**os.environ, "PYTHONPATH": os.path.join(tree, "services")}
        started = time.perf_counter()
        subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="a checkout of the tree to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size-mb", type=float, default=30)
    args = parser.parse_args()
    corpus = corpus_path(args.size_mb)
    ratios: dict[str, list[float]] = {name: [] for name in CONFIGS}
    for round_ in range(args.rounds):
        for name, (job, params, extra) in CONFIGS.items():
            seconds = {}
            for label, tree in (("baseline", args.baseline), ("new", ROOT)):
                seconds[label] = run(tree, corpus, job, params, extra)
                print(json.dumps({"round": round_, "config": name, "tree": label, "seconds": round(seconds[label], 3),
                                  "mb_per_s": round(args.size_mb / seconds[label], 2)}), flush=True)
            ratios[name].append(seconds["new"] / seconds["baseline"])
    report("security_overhead", {"summary": {name: round(statistics.median(r), 3) for name, r in ratios.items()},
                                 "rounds": args.rounds, "size_mb": args.size_mb})
    return 0


if __name__ == "__main__":
    sys.exit(main())
