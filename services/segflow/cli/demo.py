"""``segflow demo``: word count over a generated Zipf corpus, with the top words."""
from __future__ import annotations

import os
import sys
import tempfile
import time

from ..datagen.corpus import corpus_path
from ..jobs.loader import run_job
from .progress_bar import Progress, human

WORDCOUNT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "wordcount.py")


def read_counts(directory: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in sorted(os.listdir(directory)):
        if name.startswith("part-"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                for line in f:
                    word, _, count = line.rstrip("\n").rpartition("\t")
                    counts[word] = counts.get(word, 0) + int(count)
    return counts


def run_demo(size_mb: float, parallelism: int) -> int:
    out = sys.stderr

    shown = {"step": -1}

    def generating(fraction: float) -> None:
        step = int(fraction * 10)
        if out.isatty():
            out.write(f"\rgenerating a {size_mb:g} MiB corpus (cached for next time): {fraction:4.0%}")
        elif step != shown["step"]:
            out.write(f"generating a {size_mb:g} MiB corpus (cached for next time): {step * 10}%\n")
        shown["step"] = step
        out.flush()

    path = corpus_path(size_mb, progress=generating)
    if out.isatty() and shown["step"] >= 0:
        out.write("\n")
    job = os.path.abspath(WORDCOUNT)
    with tempfile.TemporaryDirectory(prefix="segflow-demo-") as output:
        print(f"running {os.path.relpath(job)} on {path} with parallelism {parallelism}", file=out)
        started = time.monotonic()
        progress = Progress(enabled=True)
        try:
            env, _ = run_job(job, {"input": path, "output": output}, parallelism,
                             on_progress=progress)
        finally:
            progress.finish()
        seconds = time.monotonic() - started
        counts = read_counts(output)
    words = sum(counts.values())
    lines = env.result.records_in.get(1, 0)
    size = os.path.getsize(path)
    print("top 10 words:")
    for word, count in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))[:10]:
        print(f"  {word:<14} {count:>10,}")
    print(f"{lines:,} lines, {words:,} words, {len(counts):,} distinct, in {seconds:.2f} s: "
          f"{human(words / seconds)} words/s, {size / seconds / 2**20:.1f} MiB/s")
    return 0
