"""The wordcount contract's inputs, shared by the engine's and Spark's command-line tests:
a corpus with the awkward cases (case, accents, quotes, tabs, a last line without a
newline) and the answer computed directly."""
from __future__ import annotations

import os
import random
import subprocess

from segflow.datagen.corpus import word_counts as oracle  # noqa: F401  (the tests import it from here)

from .processes import ROOT, SEGFLOW

WORDCOUNT = os.path.join(ROOT, "examples", "wordcount.py")


def segflow(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The ``segflow`` command, run from the project's root."""
    return subprocess.run([SEGFLOW, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def write_corpus(directory) -> str:
    rng = random.Random(3)
    vocab = ["alpha", "Beta", "GAMMA", "delta", "été", "naïve", "x", "y-z", "don't", "\"q\""]
    lines = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 12))) + ("\t" if i % 7 == 0 else "")
             for i in range(4000)]
    path = os.path.join(directory, "in.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\nlast line without newline")
    return path


def read_parts(directory: str) -> list[tuple[str, int]]:
    """The ``word<TAB>count`` rows of a finished run's part files."""
    rows = []
    names = sorted(os.listdir(directory))
    assert "_SUCCESS" in names, "a finished job's output is marked complete"
    names.remove("_SUCCESS")
    for name in names:
        assert name.startswith("part-"), f"unexpected file {name} in the output directory"
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            for line in f:
                word, tab, count = line.rstrip("\n").partition("\t")
                assert tab, f"line without a tab: {line!r}"
                rows.append((word, int(count)))
    return rows
