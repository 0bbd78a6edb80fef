"""Word count over a file, slowed down so that a test can kill workers while it runs."""
import time

from segflow import BatchMode


def pace(line):
    time.sleep(0.0004)
    return line.lower().split()


def build(env, input, output):
    (env.read_text(input)
        .batch_mode(BatchMode.adaptive(64, 0.02))
        .flat_map(pace)
        .group_by_count()
        .write_text(output, lambda wc: f"{wc[0]}\t{wc[1]}"))
