"""bench/dr.py's job: the tests' disaster-recovery job (tests/disaster/jobs/dr_counts.py) with
two more blocks in the chain, so that segment backup can be given 2, 3 or 4 connectors,
and a count of the records its first operator processes (re-read or replayed ones
included), flushed to Redis every 100 records: ``records - events`` is what was
reprocessed (a lower bound: counts not flushed when the datacenter is lost are lost)."""
import os

import redis as redis_client

import segflow

FLUSH_EVERY = 100


def watermark(record, ts):
    return ts - 50 if ts % 200 in (0, 1) else None


class Counted:
    """Parses an entry and counts it in Redis (``counter``), in batches."""

    def __init__(self, url, counter):
        self.url, self.counter = url, counter
        self.pending = 0
        self.client = None

    def __getstate__(self):
        """Snapshots keep the count not yet flushed, not the connection."""
        return {**self.__dict__, "client": None}

    def __call__(self, entry):
        self.pending += 1
        if self.pending >= FLUSH_EVERY:
            if self.client is None:
                self.client = redis_client.Redis.from_url(
                    self.url, password=os.environ.get("SEGFLOW_REDIS_PASSWORD") or None)
            self.client.incrby(self.counter, self.pending)
            self.pending = 0
        return entry[1]["k"], int(entry[1]["t"])


def build(env, redis, source, sink, counter, events="12000", rate="800"):
    (env.read_redis_stream(redis, source, count=int(events), rate=float(rate))
        .rich_map(lambda: Counted(redis, counter))
        .add_timestamps(lambda e: e[1], watermark)       # in order, before the shuffles mix the records
        .shuffle().map(lambda e: e)
        .shuffle().map(lambda e: e)
        .group_by(lambda e: e[0])
        .window(segflow.EventTimeWindow.tumbling(100))
        .count()
        .unkey()
        .write_redis_stream(redis, sink, lambda kv: {"k": kv[0], "n": kv[1]}))
