"""Windows over a partition's elements, with the engine's semantics on bounded input.

Each function walks one partition in order, as the engine's replica would: records
(``(timestamp, record)`` on a timestamped flow) and :class:`Mark` watermarks. A watermark
closes the time windows it passes and makes older records late (dropped); at the end of
the partition every open window is emitted. A window's result is timestamped with the
window's end (time windows, sessions: last record + gap) or the newest timestamp of its
records, raised to the current watermark (count windows).
"""
from __future__ import annotations

import math
from collections import deque
from heapq import heappop, heappush
from itertools import count
from operator import itemgetter
from typing import Any, Callable, Iterator

from ..runtime.operators.windows import apply_window_function
from .errors import PartitionFn
from .flows import Mark

Aggregate = Callable[[list], Any]


def _results(aggregate: Aggregate, flat: bool, keyed: bool, key: Any, values: list, start: Any, end: Any) -> list:
    """The window's output records: one, or several for a window join (``flat``)."""
    result = apply_window_function(aggregate, key, start, end, values)
    results = result if flat else (result,)
    return [(key, r) for r in results] if keyed else list(results)


def count_windows(size: int, step: int, aggregate: Aggregate, keyed: bool, flat: bool,
                  stamped: bool) -> PartitionFn:
    """Per key, in arrival order: a window fires at ``size`` values, then its oldest
    ``step`` values leave (all of them when ``step > size``). At the end a window fires
    again if it holds values that no window has emitted yet."""
    def run(elements: Iterator) -> Iterator:
        open_windows: dict = {}         # key -> [deque of (value, ts), values not emitted yet]
        watermark = None

        def fire(key: Any, window: list) -> list:
            window[1] = 0
            known = [t for _, t in window[0] if t is not None]
            first, last = (min(known), max(known)) if known else (None, None)
            ts = last
            if ts is not None and watermark is not None and watermark > ts:
                ts = watermark
            out = _results(aggregate, flat, keyed, key, [v for v, _ in window[0]], first, last)
            return [(ts, r) for r in out] if stamped else out

        for e in elements:
            if type(e) is Mark:
                watermark = e.ts
                yield e
                continue
            ts, x = e if stamped else (None, e)
            key, value = x if keyed else (None, x)
            window = open_windows.get(key)
            if window is None:
                window = open_windows[key] = [deque(), 0]
            window[0].append((value, ts))
            window[1] += 1
            if len(window[0]) == size:
                yield from fire(key, window)
                for _ in range(min(step, size)):
                    window[0].popleft()
        for key, window in open_windows.items():
            if window[1]:
                yield from fire(key, window)
    return run


def time_windows(size: Any, step: Any, aggregate: Aggregate, keyed: bool, flat: bool) -> PartitionFn:
    """Aligned windows ``[start, start + size)``, ``start`` a multiple of ``step``; they
    close in order of end (then of opening) when the watermark reaches their end."""
    def run(elements: Iterator) -> Iterator:
        values: dict = {}               # (key, start) -> values
        ends: list = []                 # heap of (end, opening order, key, start)
        opened = count()
        watermark = None

        def close(limit: Any) -> list:
            out = []
            while ends and (limit is None or ends[0][0] <= limit):
                end, _, key, start = heappop(ends)
                out += [(end, r) for r in _results(aggregate, flat, keyed, key, values.pop((key, start)), start, end)]
            return out

        for e in elements:
            if type(e) is Mark:
                watermark = e.ts
                yield from close(watermark)
                yield e
                continue
            ts, x = e
            key, value = x if keyed else (None, x)
            start = (math.floor((ts - size) / step) + 1) * step
            while start <= ts:
                end = start + size
                if watermark is None or end > watermark:
                    window = values.get((key, start))
                    if window is None:
                        window = values[(key, start)] = []
                        heappush(ends, (end, next(opened), key, start))
                    window.append(value)
                start += step
        yield from close(None)
    return run


def session_windows(gap: Any, aggregate: Aggregate, keyed: bool, flat: bool) -> PartitionFn:
    """Per key, records at most ``gap`` apart share a session. A record joins every
    session it touches (its own value first, then theirs, as the engine merges them);
    a session's values are emitted in timestamp order."""
    by_time = itemgetter(0)

    def run(elements: Iterator) -> Iterator:
        sessions: dict = {}             # key -> [[first ts, last ts, [(ts, value), ...]], ...]
        deadlines: list = []            # heap of (last + gap, order, key)
        order = count()
        watermark = None

        def close(key: Any, session: list) -> list:
            ordered = [v for _, v in sorted(session[2], key=by_time)]
            end = session[1] + gap
            return [(end, r) for r in _results(aggregate, flat, keyed, key, ordered, session[0], end)]

        for e in elements:
            if type(e) is Mark:
                watermark = e.ts
                while deadlines and deadlines[0][0] < watermark:
                    _, _, key = heappop(deadlines)
                    still_open = []
                    for session in sorted(sessions.get(key, []), key=by_time):
                        if session[1] + gap < watermark:
                            yield from close(key, session)
                        else:
                            still_open.append(session)
                    if still_open:
                        sessions[key] = still_open
                    else:
                        sessions.pop(key, None)
                yield e
                continue
            ts, x = e
            key, value = x if keyed else (None, x)
            if watermark is not None and ts < watermark:
                continue
            merged = [ts, ts, [(ts, value)]]
            apart = []
            for session in sessions.get(key, []):
                if session[0] - gap <= ts <= session[1] + gap:
                    merged[0] = min(merged[0], session[0])
                    merged[1] = max(merged[1], session[1])
                    merged[2].extend(session[2])
                else:
                    apart.append(session)
            sessions[key] = apart + [merged]
            heappush(deadlines, (merged[1] + gap, next(order), key))
        closing = [(session[1] + gap, i, key, session)
                   for i, (key, open_sessions) in enumerate(sessions.items()) for session in open_sessions]
        for _, _, key, session in sorted(closing, key=itemgetter(0, 1)):
            yield from close(key, session)
    return run
