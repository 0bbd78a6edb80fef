"""Windowed word count: per word, count windows of 10 occurrences sliding by 5.

    segflow run examples/windowed_wordcount.py -p input=book.txt -p output=out/ --parallelism 2

Each word's occurrences form count windows: a window closes at its 10th occurrence and the
next one starts 5 occurrences later; at the end the open window closes with what it has.
Writes one ``word<TAB>count`` line per window (10, or fewer for a word's last window).
"""
from segflow import CountWindow


def split_words(line):
    return line.lower().split()


def build(env, input, output):
    (env.read_text(input)
        .flat_map(split_words)
        .group_by(lambda word: word)
        .window(CountWindow.sliding(10, 5))
        .count()
        .write_text(output, lambda pair: f"{pair[0]}\t{pair[1]}"))
