"""Choosing connectors and a barrier interval with the cost model of Shen, Segment Backup,
chapter 4, per path for a topology that splits or merges (pure; see :mod:`.segment_cost_dag`).

Candidates are every set of intermediate blocks (the sources and the sinks are always
connectors) and a few barrier intervals. Exhaustive for up to ``EXHAUSTIVE`` intermediate
nodes; beyond that a greedy heuristic: start from the spout and the sink, and add, one at a
time, the node that lowers the recovery delay most, while it still lowers it. Among the
candidates that meet ``max_recovery_delay`` the cheapest (money per second, equation 4.11)
wins; when none meets it, the one with the least recovery delay, flagged as missing it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations
from typing import Iterable

from .segment_cost import Delays, Prices
from .segment_cost_dag import (Dag, money_per_second, overhead_communication, overhead_storage, overhead_time,
                               pending_window, recovery_delay)

EXHAUSTIVE = 12
INTERVALS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)


@dataclass(frozen=True)
class Choice:
    connectors: tuple[int, ...]       # block ids (a chain from ``from_pipeline``: 1-based positions)
    interval: float                   # seconds between barriers
    recovery_delay: float             # t^r, seconds
    overhead_time: float              # t^oh, seconds of work per second
    overhead_bytes_per_s: float       # n^oh
    storage_bytes: float              # s^oh
    money_per_hour: float
    windows: dict                     # connector -> average tuples in its pending window
    meets_target: bool


def evaluate(dag: Dag, delays: Delays, prices: Prices, connectors: Iterable[int], interval: float,
             max_recovery_delay: float) -> Choice:
    """One candidate's predictions (raises :class:`UnstableQueue` for a saturated node)."""
    p = replace(dag, connectors=frozenset(connectors), block=max(2.0, dag.rate * interval + 1))
    delay = recovery_delay(p, delays)
    return Choice(tuple(sorted(p.connectors)), interval, delay, overhead_time(p, delays), overhead_communication(p),
                  overhead_storage(p, delays), money_per_second(p, delays, prices) * 3600,
                  {c: pending_window(p, delays, c) for c in sorted(p.connectors) if c not in p.sinks},
                  delay <= max_recovery_delay)


def _candidate_sets(dag: Dag, delays: Delays, prices: Prices, interval: float,
                    max_recovery_delay: float) -> list[tuple[int, ...]]:
    ends = tuple(sorted(dag.sources | dag.sinks))
    inner = sorted(set(dag.service) - set(ends))
    if len(inner) <= EXHAUSTIVE:
        return [ends + extra for k in range(len(inner) + 1) for extra in combinations(inner, k)]
    chosen, found = list(ends), [ends]
    best = evaluate(dag, delays, prices, chosen, interval, max_recovery_delay).recovery_delay
    while True:
        trials = [(evaluate(dag, delays, prices, chosen + [n], interval, max_recovery_delay).recovery_delay, n)
                  for n in inner if n not in chosen]
        if not trials or min(trials)[0] >= best:
            return found
        best, node = min(trials)
        chosen.append(node)
        found.append(tuple(chosen))


def choose(dag: Dag, delays: Delays, prices: Prices, max_recovery_delay: float,
           intervals: Iterable[float] = INTERVALS) -> Choice:
    """The cheapest choice that meets the recovery target (see the module's doc)."""
    choices = []
    for interval in intervals:
        for connectors in _candidate_sets(dag, delays, prices, interval, max_recovery_delay):
            choices.append(evaluate(dag, delays, prices, connectors, interval, max_recovery_delay))
    meeting = [c for c in choices if c.meets_target]
    if meeting:
        return min(meeting, key=lambda c: (c.money_per_hour, c.recovery_delay))
    return min(choices, key=lambda c: (c.recovery_delay, c.money_per_hour))
