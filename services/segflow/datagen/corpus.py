"""A deterministic Zipf-like text corpus, cached outside the repository.

The same size and seed always give the same bytes, so benchmark runs compare like with
like and the file is generated once per machine.
"""
from __future__ import annotations

import collections
import itertools
import os
import random
from typing import Callable

SYLLABLES = [c + v for c in "bdfghklmnprstvz" for v in "aeiou"] + ["an", "el", "is", "on", "ur"]
FORMAT_VERSION = 2   # part of the cache file name: bump when the generated text changes


def cache_dir() -> str:
    return os.environ.get("SEGFLOW_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "segflow"))


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    vocab: list[str] = []
    while len(vocab) < size:
        length = min(5, max(1, int(rng.expovariate(1 / 1.6)) + 1))
        word = "".join(rng.choices(SYLLABLES, k=length))
        if word not in words:
            words.add(word)
            vocab.append(word.capitalize() if rng.random() < 0.1 else word)
    return vocab


def write_corpus(path: str, size_mb: float, seed: int = 7, vocabulary: int = 50_000,
                 progress: Callable[[float], None] | None = None) -> None:
    """Write about ``size_mb`` MiB of lines of words drawn with Zipf(1.1) frequencies."""
    rng = random.Random(seed)
    vocab = _vocabulary(vocabulary, rng)
    weights = list(itertools.accumulate(1 / (rank + 1) ** 1.1 for rank in range(vocabulary)))
    target = int(size_mb * 1024 * 1024)
    written = 0
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        while written < target:
            words = rng.choices(vocab, cum_weights=weights, k=100_000)
            lengths = [rng.randint(4, 16) for _ in range(100_000 // 8)]
            lines, start = [], 0
            for n in lengths:
                if start >= len(words):
                    break
                lines.append(" ".join(words[start:start + n]))
                start += n
            text = "\n".join(lines) + "\n"
            f.write(text)
            written += len(text.encode("utf-8"))
            if progress is not None:
                progress(min(1.0, written / target))
    os.replace(temporary, path)


def corpus_path(size_mb: float = 50, seed: int = 7,
                progress: Callable[[float], None] | None = None) -> str:
    """Path of the cached corpus, generating it on first use."""
    directory = os.path.join(cache_dir(), "corpus")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"zipf-v{FORMAT_VERSION}-{size_mb:g}mb-seed{seed}.txt")
    if not os.path.exists(path):
        write_corpus(path, size_mb, seed, progress=progress)
    return path


def word_counts(path: str) -> collections.Counter:
    """What a word count of ``path`` must give, by the plainest loop: the oracle the tests
    check segflow against and the baseline the benchmarks time it against."""
    counts: collections.Counter = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            counts.update(line.lower().split())
    return counts
