"""Events (key, time) from a rate-limited deterministic generator; per key, counts in
event-time tumbling windows of 100 time units, as lines ``key<TAB>count``."""


def event(i):
    return (f"k{(i * 7919) % 13}", i)


def watermark(record, ts):
    return ts - 50 if ts % 200 in (0, 1) else None


def line(kv):
    return f"{kv[0]}\t{kv[1]}"


def build(env, output, events="24000", rate="6000"):
    """``output``: a directory, or s3://bucket/prefix (endpoint from $AWS_ENDPOINT_URL)."""
    counts = (env.generate(event, count=int(events), rate=float(rate))
              .add_timestamps(lambda e: e[1], watermark)
              .group_by(lambda e: e[0])
              .window(__import__("segflow").EventTimeWindow.tumbling(100))
              .count()
              .unkey())
    counts.write_text(output, line)
