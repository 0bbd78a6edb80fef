"""The end of a block: batching per destination and the edge strategies (Noir's EndBlock)."""
from __future__ import annotations

import time
from typing import Any

from ..plan.graph import BatchMode, Strategy
from .channels import Outlet
from .elements import Batch, Control, Terminate
from .hashing import partition_by_key, partition_timestamped


class EdgeSender:
    """Sends one edge's share of a replica's output to the receivers' outlets."""

    def __init__(self, strategy: Strategy, outlets: list[Outlet], mode: BatchMode, first_rr: int):
        self.strategy = strategy
        self.outlets = outlets
        self.size = mode.size
        self.timeout = mode.timeout
        n = len(outlets)
        self.items: list[list] = [[] for _ in range(n)]
        self.stamps: list[list | None] = [None] * n
        self.since: list[float] = [0.0] * n
        self.born: list[float | None] = [None] * n
        self.rr = first_rr % n if n else 0
        self.records_out = 0
        self.batches_out = 0
        self.closed = False   # Terminate went out: nothing may follow it

    def send(self, batch: Batch, born: float | None = None) -> None:
        self.records_out += len(batch.items)
        strategy = self.strategy
        if strategy is Strategy.HASH:
            n = len(self.outlets)
            if n == 1:
                self._add(0, batch.items, batch.timestamps, born)
            elif batch.timestamps is None:
                for dst, part in enumerate(partition_by_key(batch.items, n)):
                    if part:
                        self._add(dst, part, None, born)
            else:
                for dst, (part, part_stamps) in enumerate(partition_timestamped(batch.items, batch.timestamps, n)):
                    if part:
                        self._add(dst, part, part_stamps, born)
        elif strategy is Strategy.BROADCAST:
            for dst in range(len(self.outlets)):
                self._add(dst, batch.items, batch.timestamps, born)
        elif strategy is Strategy.ROUND_ROBIN:
            # Record by record (Noir's Random is per item): the j-th record of the edge goes
            # to replica (first + j) % n, so a batch bigger than the others, or the only
            # batch of a small input, is still spread over every replica.
            n = len(self.outlets)
            items, stamps = batch.items, batch.timestamps
            first = self.rr
            self.rr = (first + len(items)) % n
            if n == 1:
                self._add(0, items, stamps, born)
            else:
                for k in range(min(n, len(items))):
                    self._add((first + k) % n, items[k::n], None if stamps is None else stamps[k::n], born)
        else:
            self._add(0, batch.items, batch.timestamps, born)

    def _add(self, dst: int, items: list, stamps: list | None, born: float | None) -> None:
        buffered = self.items[dst]
        if not buffered:
            if len(items) >= self.size:
                self._emit(dst, Batch(items, stamps, born))
                return
            self.since[dst] = time.monotonic()
            self.born[dst] = born
            self.items[dst] = list(items)
            self.stamps[dst] = list(stamps) if stamps is not None else None
        else:
            buffered.extend(items)
            oldest = self.born[dst]
            if born is not None and (oldest is None or born < oldest):
                self.born[dst] = born
            if stamps is not None:
                buffered_stamps = self.stamps[dst]
                assert buffered_stamps is not None, "an edge's batches are all timestamped or none is"
                buffered_stamps.extend(stamps)
        if len(self.items[dst]) >= self.size:
            self._flush_one(dst)
        elif self.timeout is not None and time.monotonic() - self.since[dst] >= self.timeout:
            self._flush_one(dst)

    def _flush_one(self, dst: int) -> None:
        items, stamps = self.items[dst], self.stamps[dst]
        self.items[dst] = []
        self.stamps[dst] = None
        self._emit(dst, Batch(items, stamps, self.born[dst]))

    def _emit(self, dst: int, batch: Batch) -> None:
        self.batches_out += 1
        self.outlets[dst].send(batch)

    def flush(self) -> None:
        for dst, items in enumerate(self.items):
            if items:
                self._flush_one(dst)

    def flush_expired(self, now: float) -> None:
        if self.timeout is None:
            return
        for dst, items in enumerate(self.items):
            if items and now - self.since[dst] >= self.timeout:
                self._flush_one(dst)

    def send_control(self, element: Control) -> None:
        if self.closed:
            return
        self.flush()
        for outlet in self.outlets:
            outlet.send(element)
        if type(element) is Terminate:
            self.closed = True


class Router:
    """All outgoing edges of one replica, grouped by output port."""

    def __init__(self, ports: dict[int, list[EdgeSender]], destinations: dict[int, int] | None = None):
        self.ports = ports
        self.main = ports.get(0, [])
        self.destinations = destinations or {}   # id(sender) -> receiving block, for metrics

    def by_destination(self) -> list[tuple[int, EdgeSender]]:
        return [(self.destinations.get(id(s), -1), s) for edges in self.ports.values() for s in edges]

    def send(self, batch: Batch, born: float | None = None) -> None:
        for edge in self.main:
            edge.send(batch, born)

    def send_port(self, port: int, element: Any) -> None:
        for edge in self.ports.get(port, []):
            if type(element) is Batch:
                edge.send(element)
            else:
                edge.send_control(element)

    def send_control(self, element: Control) -> None:
        for edge in self.main:
            edge.send_control(element)

    def flush(self) -> None:
        for edges in self.ports.values():
            for edge in edges:
                edge.flush()

    def flush_expired(self, now: float) -> None:
        for edges in self.ports.values():
            for edge in edges:
                edge.flush_expired(now)

    @property
    def records_out(self) -> int:
        return sum(e.records_out for e in self.main)
