"""Associative word count: every replica counts the words of its share of the file into a
dictionary, and one fold merges the dictionaries (local pre-aggregation, then one combine).

    segflow run examples/wordcount_assoc.py -p input=book.txt -p output=out/ --parallelism 4

Writes ``word<TAB>count`` lines (sorted by word, in one part file); words are
``line.lower().split()``. Compare examples/wordcount.py, which shuffles partial counts
by word instead.
"""
from collections import Counter


def count_line(counts, line):
    counts.update(line.lower().split())
    return counts


def merge(total, partial):
    total.update(partial)
    return total


def lines_of(counts):
    return [f"{word}\t{n}" for word, n in sorted(counts.items())]


def build(env, input, output):
    (env.read_text(input)
        .fold_assoc(Counter(), count_line, merge)
        .flat_map(lines_of)
        .write_text(output))
