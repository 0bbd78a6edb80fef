"""Sinks: records back to the caller, a function per record, and part files.

File sinks write what the engine writes without checkpoints: one
``part-NNNNN.<ext>`` per partition (an empty one for an empty partition), rendered by the
engine's own formatter so both engines' files are byte-compatible, and ``_SUCCESS`` once
every partition is written. A run first removes the part files and ``_SUCCESS`` of earlier
runs, as the engine does.
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Iterable, Iterator

from ..runtime.operators.sinks import CollectSink, FileSink, ForEachSink
from ..runtime.operators.two_phase import SUCCESS, success_marker
from . import steps
from .errors import guarded_call

if TYPE_CHECKING:
    from pyspark import RDD

CHUNK = 4096
_OLD_PART = re.compile(r"^\.?part-\d{5}[.-]")


@steps.sink("collect")
def collect(rdd: "RDD", sink: CollectSink, results: dict) -> None:
    results[sink.sink_id] = rdd.collect()


@steps.sink("for_each")
def for_each(rdd: "RDD", sink: ForEachSink, results: dict) -> None:
    fn = guarded_call(sink.name, sink.location, sink.fn)

    def run(records: Iterable) -> None:
        for x in records:
            fn(x)
    rdd.foreachPartition(run)


@steps.sink("write_parts")
def write_parts(rdd: "RDD", sink: FileSink, results: dict) -> None:
    """Write each partition of ``rdd`` to ``directory/part-NNNNN<suffix>``."""
    directory, suffix = sink.directory, sink.suffix
    render = guarded_call(sink.name, sink.location, sink.render)
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if _OLD_PART.match(name) or name == SUCCESS:
            os.remove(os.path.join(directory, name))

    def write(index: int, records: Iterable) -> Iterator:
        os.makedirs(directory, exist_ok=True)
        temporary = os.path.join(directory, f".part-{index:05d}.inprogress")
        with open(temporary, "w", encoding="utf-8", newline="") as f:
            chunk: list = []
            for x in records:
                chunk.append(x)
                if len(chunk) == CHUNK:
                    f.write(render(chunk))
                    chunk = []
            f.write(render(chunk))
        os.replace(temporary, os.path.join(directory, f"part-{index:05d}{suffix}"))
        return iter(())
    rdd.mapPartitionsWithIndex(write).count()
    with open(os.path.join(directory, SUCCESS), "wb") as f:
        f.write(success_marker(rdd.getNumPartitions(), checkpointed=False))
