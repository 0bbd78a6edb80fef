"""The disaster-recovery tests' job: events from a Redis stream outside both clusters
(replayable: its position is in the snapshots); per key, counts in event-time tumbling
windows of 100; each count appended to another Redis stream, exactly once."""
import segflow


def watermark(record, ts):
    return ts - 50 if ts % 200 in (0, 1) else None


def build(env, redis, source, sink, events="20000", rate="800"):
    (env.read_redis_stream(redis, source, count=int(events), rate=float(rate))
        .map(lambda entry: (entry[1]["k"], int(entry[1]["t"])))
        .add_timestamps(lambda e: e[1], watermark)
        .group_by(lambda e: e[0])
        .window(segflow.EventTimeWindow.tumbling(100))
        .count()
        .unkey()
        .write_redis_stream(redis, sink, lambda kv: {"k": kv[0], "n": kv[1]}))
