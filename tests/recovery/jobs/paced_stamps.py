"""A paced generator whose records carry the wall-clock time they left the source's block,
so a test can see when a restored generator produced each one."""
import time


def stamp(i):
    return f"{i} {time.time():.4f}"


def build(env, output, events="500", rate="100", catch_up="true"):
    (env.generate(lambda i: i, count=int(events), rate=float(rate), catch_up=catch_up == "true")
        .map(stamp)
        .shuffle()
        .write_text(output))
