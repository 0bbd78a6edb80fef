"""The engine's own operator, run over one Spark partition as a replica runs it over its
input: records in batches, each :class:`Mark` as a watermark at the same place between
the records, and the partition's end as end of stream. Spark then computes what the
engine computes, window by window and fold by fold, without a second implementation.
"""
from __future__ import annotations

import copy
from typing import Any, Iterable, Iterator

from ..errors import UserFunctionError
from ..runtime.elements import Batch, Watermark
from ..runtime.operator import Operator, Output, ReplicaContext
from .errors import OperatorFailed, PartitionFn
from .flows import Mark

CHUNK = 4096            # records handed to the operator at once


def _context() -> ReplicaContext:
    def no_output(*_: Any) -> None:
        raise RuntimeError("a chain operator on Spark has no side outputs")
    return ReplicaContext(block=-1, index=0, replicas=1, worker="spark", side_output=no_output, deliver=no_output)


def _records(out: Output, stamped: bool) -> Iterator:
    """The operator's output as flow elements: records (``(ts, record)`` when stamped)
    and, on a timestamped flow, its watermarks as marks."""
    if out is None:
        return
    for element in (out,) if isinstance(out, Batch) else out:
        kind = type(element)
        if kind is Batch:
            if not stamped:
                yield from element.items
            else:
                stamps = element.timestamps or [None] * len(element.items)
                yield from zip(stamps, element.items)
        elif isinstance(element, Watermark) and stamped:
            yield Mark(element.ts)


def _chunks(elements: Iterable, stamped: bool) -> Iterator:
    """Batches of consecutive records, and the marks between them, in order."""
    pending: list = []
    for e in elements:
        if type(e) is Mark:
            if pending:
                yield _batch(pending, stamped)
                pending = []
            yield e
            continue
        pending.append(e)
        if len(pending) == CHUNK:
            yield _batch(pending, stamped)
            pending = []
    if pending:
        yield _batch(pending, stamped)


def _batch(pending: list, stamped: bool) -> Batch:
    if not stamped:
        return Batch(pending)
    return Batch([x for _, x in pending], [ts for ts, _ in pending])


def over_partition(op: Operator, stamped: bool, stamped_out: bool) -> PartitionFn:
    """``op`` (a fresh copy per partition) over a partition of a (un)timestamped flow."""
    def run(elements: Iterable) -> Iterator:
        live = copy.deepcopy(op)
        live.open(_context())
        try:
            for e in _chunks(elements, stamped):
                if type(e) is Mark:
                    yield from _records(live.on_watermark(e.ts), stamped_out)
                    if stamped_out:
                        yield e
                else:
                    yield from _records(live.process(e), stamped_out)
            yield from _records(live.on_end(), stamped_out)
            yield from _records(live.on_terminate(), stamped_out)
        except UserFunctionError as exc:
            raise OperatorFailed(" ".join(str(exc).split())) from exc
        finally:
            live.close()
    return run
