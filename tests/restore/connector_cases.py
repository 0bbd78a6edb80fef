"""Registry entries of the connectors: sources (their state is a read position) and sinks
(their state is the epochs they staged). A new connector is one more entry here.

A source reads ``site.data``, which ``prepare`` puts where it reads it from; a sink's output
is what it published in the end, read back from its storage in epoch order."""
from __future__ import annotations

import csv
import json
import os

import redis
from hypothesis import strategies as st

from segflow.runtime.operators.redis_streams import RedisStreamSink, RedisStreamSource
from segflow.runtime.operators.s3_objects import S3Objects
from segflow.runtime.operators.s3_sink import S3Sink
from segflow.runtime.operators.sinks import FileSink
from segflow.runtime.operators.sources import CsvSource, GeneratorSource, IterableSource, JsonLinesSource, \
    ParallelSource, \
    TextFileSource
from segflow.runtime.operators.columnar import ArrowCsvSource
from segflow.runtime.operators.two_phase import published_part

from .case import RestoreCase, Site
from .operator_cases import doubled
from .streams import event_lists, keyed, polls, small_ints

FORMATS = ("text", "csv", "jsonl")
SUFFIXES = {"text": ".txt", "csv": ".csv", "jsonl": ".jsonl"}
SOURCE_STREAMS = 3
SERVER_EXAMPLES = 12
lines = st.lists(st.text(alphabet="ab,\r é", max_size=4), max_size=12)
rows = st.lists(st.tuples(small_ints, small_ints), max_size=12)


# -- sources -----------------------------------------------------------------------------------

def input_path(site: Site) -> str:
    return os.path.join(site.directory, "input")


def write_lines(site: Site) -> None:
    text_lines, newline_at_end = site.data
    with open(input_path(site), "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(text_lines) + ("\n" if newline_at_end else ""))


def write_json_lines(site: Site) -> None:
    with open(input_path(site), "w", encoding="utf-8", newline="") as f:
        f.write("".join((json.dumps(v) if v is not None else "") + "\n" for v in site.data))


def write_csv(site: Site) -> None:
    with open(input_path(site), "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["x", "y"])
        writer.writerows(site.data)


def source_stream(site: Site, number: int) -> str:
    return f"in-{site.example}-{number}"


def add_stream_entries(site: Site) -> None:
    client = redis.Redis.from_url(site.redis_url)
    try:
        for number, value in site.data:
            client.xadd(source_stream(site, number), {"v": value})
    finally:
        client.close()


def every_replicas_share(site: Site):
    """``from_parallel``'s function: replica i of n reads records i, i + n, ..."""
    return lambda index, replicas: site.data[index::replicas]


SOURCES = [
    RestoreCase("from_iterable", IterableSource, lambda s: IterableSource(s.data), polls(),
                data=st.lists(small_ints, max_size=15)),
    RestoreCase("from_parallel", ParallelSource, lambda s: ParallelSource(every_replicas_share(s)), polls(),
                data=st.lists(small_ints, max_size=15)),
    RestoreCase("generate", GeneratorSource, lambda s: GeneratorSource(doubled, s.data, None), polls(),
                data=st.integers(0, 20)),
    RestoreCase("read_text", TextFileSource, lambda s: TextFileSource(input_path(s)), polls(),
                data=st.tuples(lines, st.booleans()), prepare=write_lines),
    RestoreCase("read_jsonl", JsonLinesSource, lambda s: JsonLinesSource(input_path(s)), polls(),
                data=st.lists(st.one_of(st.none(), small_ints, st.lists(small_ints, max_size=2)), max_size=12),
                prepare=write_json_lines),
    *[RestoreCase(f"read_csv[{'headers' if headers else 'no headers'}]", CsvSource,
                  lambda s, h=headers: CsvSource(input_path(s), ",", h), polls(), data=rows, prepare=write_csv)
      for headers in (True, False)],
    RestoreCase("read_csv[columnar]", ArrowCsvSource, lambda s: ArrowCsvSource(input_path(s), ",", True, None, 8),
                polls(), data=rows, prepare=write_csv),
    RestoreCase("read_redis_stream", RedisStreamSource,
                lambda s: RedisStreamSource(s.redis_url, [source_stream(s, n) for n in range(SOURCE_STREAMS)],
                                            None, None, None),
                polls(), data=st.lists(st.tuples(st.integers(0, SOURCE_STREAMS - 1), small_ints), max_size=12),
                prepare=add_stream_entries, needs=("redis",), examples=SERVER_EXAMPLES),
]


# -- sinks -------------------------------------------------------------------------------------

def in_epoch_order(parts: dict[str, bytes]) -> bytes:
    """The published parts (``name -> content``) one after the other, by (replica, epoch):
    a restored run splits the output in more epochs than an uninterrupted one."""
    names = sorted(filter(published_part, parts), key=published_part)
    return b"".join(parts[name] for name in names)


def published_files(site: Site, log: list) -> bytes:
    directory = os.path.join(site.directory, site.output)
    parts = {}
    for name in filter(published_part, os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            parts[name] = f.read()
    return in_epoch_order(parts)


def s3_url(site: Site) -> str:
    return f"s3://restore-property/{site.output}/"


def published_objects(site: Site, log: list) -> bytes:
    store = S3Objects(s3_url(site), site.s3_endpoint)
    try:
        return in_epoch_order({name: store.get(name) for name in store.list("part-")})
    finally:
        store.close()


def published_entries(site: Site, log: list) -> list:
    client = redis.Redis.from_url(site.redis_url)
    try:
        return [fields for _, fields in client.xrange(site.output)]
    finally:
        client.close()


sink_events = event_lists(keyed(), rounds=1)

SINKS = [
    *[RestoreCase(f"write_{fmt}", FileSink, lambda s, f=fmt: FileSink(os.path.join(s.directory, s.output), f, None),
                  sink_events, observe=published_files)
      for fmt in FORMATS],
    # One format against the S3 server: the encoders are the file sink's, run in every
    # format above; what S3 adds (uploads, commit by copy) does not depend on the format.
    RestoreCase("write_s3[jsonl]", S3Sink, lambda s: S3Sink(s3_url(s), "jsonl", None, endpoint=s.s3_endpoint),
                sink_events, observe=published_objects, needs=("s3",), examples=SERVER_EXAMPLES),
    RestoreCase("write_redis_stream", RedisStreamSink, lambda s: RedisStreamSink(s.redis_url, s.output, None),
                sink_events, observe=published_entries, needs=("redis",), examples=SERVER_EXAMPLES),
]

CONNECTOR_CASES = SOURCES + SINKS
