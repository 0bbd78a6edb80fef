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
