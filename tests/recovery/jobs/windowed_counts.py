"""Events (key, time) from a rate-limited deterministic generator; per key, counts in
event-time tumbling windows of 100 time units."""


def event(i):
    return (f"k{(i * 7919) % 13}", i)


def watermark(record, ts):
    return ts - 50 if ts % 200 in (0, 1) else None


def build(env, output, events="24000", rate="6000"):
    (env.generate(event, count=int(events), rate=float(rate))
        .add_timestamps(lambda e: e[1], watermark)
        .group_by(lambda e: e[0])
        .window(__import__("segflow").EventTimeWindow.tumbling(100))
        .count()
        .unkey()
        .write_text(output, lambda kv: f"{kv[0]}\t{kv[1]}"))
