"""A job whose keyed state is large enough that reading it back costs time: events
(key, time) from a rate-limited deterministic generator over ``keys`` keys; per key,
counts in event-time tumbling windows of ``width``, written as text lines."""
import segflow


def watermark(record, ts):
    return ts - 50 if ts % 200 in (0, 1) else None


def build(env, output, events="60000", rate="6000", keys="20000", width="20000"):
    keys, width = int(keys), int(width)
    (env.generate(lambda i: (f"k{(i * 7919) % keys}", i), count=int(events), rate=float(rate))
        .add_timestamps(lambda e: e[1], watermark)
        .group_by(lambda e: e[0])
        .window(segflow.EventTimeWindow.tumbling(width))
        .count()
        .unkey()
        .write_text(output, lambda kv: f"{kv[0]}\t{kv[1]}"))
