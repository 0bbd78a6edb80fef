"""Window descriptors: what kind of window, and its size, step or gap.

Count windows count records; event-time windows use the timestamps given by
``add_timestamps``; processing-time windows use the wall clock (seconds) when a record
arrives. Sizes, steps and gaps of event-time windows are in the timestamps' unit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..errors import PipelineError
from ..runtime.operator import Operator
from ..runtime.operators.windows import (CountWindows, ProcessingTime, SessionWindows,
                                         TimeWindows, WindowOperator)


class WindowDescription:
    @property
    def name(self) -> str:
        return "window"

    needs_timestamps = False        # its input must carry event times (add_timestamps)
    clocked = False                 # closes windows on the wall clock, between records too

    def stamps_results(self, stamped: bool) -> bool:
        """Whether the window's results carry timestamps, given whether its input does
        (count windows pass them on)."""
        return stamped

    def make(self, aggregate: Callable[[list[Any]], Any], keyed: bool, flat: bool = False) -> Operator:
        raise NotImplementedError


def _positive(what: str, value: Any) -> None:
    if not value > 0:
        raise PipelineError(f"window {what} must be positive, got {value!r}")


@dataclass(frozen=True)
class CountWindow(WindowDescription):
    """Windows of ``size`` records, one starting every ``step`` records (per key after
    ``group_by``): for inputs without time, or "the last n" questions.

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=1)
        >>> out = env.from_iterable(range(6)).window_all(segflow.CountWindow(size=2, step=2)).sum().collect()
        >>> _ = env.execute()
        >>> out.get()
        [1, 5, 9]
    """

    size: int
    step: int

    def __post_init__(self) -> None:
        _positive("size", self.size)
        _positive("step", self.step)

    @staticmethod
    def sliding(size: int, step: int) -> "CountWindow":
        """Windows of ``size`` records, a new one every ``step`` records (they overlap when
        ``step < size``): moving averages.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> windows = env.from_iterable([2, 4, 6, 8]).window_all(segflow.CountWindow.sliding(2, 1))
            >>> out = windows.map(lambda xs: sum(xs) / len(xs)).collect()
            >>> _ = env.execute()
            >>> out.get()
            [3.0, 5.0, 7.0]
        """
        _positive("size", size)
        _positive("step", step)
        return CountWindow(size, step)

    @staticmethod
    def tumbling(size: int) -> "CountWindow":
        """Consecutive windows of ``size`` records each (the last one may be short).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> out = env.from_iterable("abcde").window_all(segflow.CountWindow.tumbling(2)).map("".join).collect()
            >>> _ = env.execute()
            >>> out.get()
            ['ab', 'cd', 'e']
        """
        _positive("size", size)
        return CountWindow(size, size)

    @property
    def name(self) -> str:
        return f"count_window({self.size}, {self.step})"

    def make(self, aggregate: Callable[[list[Any]], Any], keyed: bool, flat: bool = False) -> Operator:
        return CountWindows(self.size, self.step, aggregate, keyed, flat)


@dataclass(frozen=True)
class EventTimeWindow(WindowDescription):
    """Windows in event time, the timestamps ``add_timestamps`` gives (sizes in their
    unit): results do not depend on when records arrive, only on their timestamps and the
    watermarks. Made by :meth:`tumbling`, :meth:`sliding` or :meth:`session`.

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=1)
        >>> stamped = env.from_iterable([100, 900, 1_100]).add_timestamps(lambda t: t)
        >>> out = stamped.window_all(segflow.EventTimeWindow(size=1_000)).count().collect()
        >>> _ = env.execute()
        >>> out.get()
        [2, 1]
    """

    size: Any = None
    step: Any = None
    gap: Any = None

    def __post_init__(self) -> None:
        if self.gap is not None:
            _positive("gap", self.gap)
        elif self.size is None:
            raise PipelineError(f"{type(self).__name__} needs a size or a gap: use "
                                f"{type(self).__name__}.tumbling(size), .sliding(size, step) or .session(gap)")
        else:
            if self.step is None:                   # EventTimeWindow(size=...) is tumbling
                object.__setattr__(self, "step", self.size)
            _positive("size", self.size)
            _positive("step", self.step)

    @classmethod
    def sliding(cls, size: Any, step: Any) -> "EventTimeWindow":
        """Windows ``[k * step, k * step + size)``: a record is in every window that covers
        its timestamp ("the last minute, every ten seconds").

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> stamped = env.from_iterable([100, 1_100]).add_timestamps(lambda t: t)
            >>> windows = stamped.window_all(segflow.EventTimeWindow.sliding(2_000, 1_000))
            >>> out = windows.process(lambda w, ts: (w.start, w.end, len(ts))).collect()
            >>> _ = env.execute()
            >>> out.get()
            [(-1000, 1000, 1), (0, 2000, 2), (1000, 3000, 1)]
        """
        _positive("size", size)
        _positive("step", step)
        return cls(size=size, step=step)

    @classmethod
    def tumbling(cls, size: Any) -> "EventTimeWindow":
        """Back-to-back windows ``[k * size, (k + 1) * size)``: each record is in one.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> sales = env.from_iterable([("ann", 5, 100), ("ann", 7, 2_500), ("bob", 1, 900)])
            >>> keyed = sales.add_timestamps(lambda s: s[2]).group_by(lambda s: s[0]).map(lambda k, s: s[1])
            >>> out = keyed.window(segflow.EventTimeWindow.tumbling(1_000)).sum().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', 5), ('ann', 7), ('bob', 1)]
        """
        _positive("size", size)
        return cls(size=size, step=size)

    @classmethod
    def session(cls, gap: Any) -> "EventTimeWindow":
        """Sessions: a window closes after ``gap`` without records (per key after
        ``group_by``), so its length follows the activity.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> stamped = env.from_iterable([0, 1_000, 9_000, 9_500]).add_timestamps(lambda t: t)
            >>> windows = stamped.window_all(segflow.EventTimeWindow.session(5_000))
            >>> out = windows.process(lambda w, ts: (w.start, len(ts))).collect()
            >>> _ = env.execute()
            >>> out.get()
            [(0, 2), (9000, 2)]
        """
        _positive("gap", gap)
        return cls(gap=gap)

    kind = "event_time"
    needs_timestamps = True

    def stamps_results(self, stamped: bool) -> bool:
        """Results are stamped with their window's end (processing time: the clock's)."""
        return True

    @property
    def name(self) -> str:
        if self.gap is not None:
            return f"{self.kind}_session({self.gap})"
        return f"{self.kind}_window({self.size}, {self.step})"

    def make(self, aggregate: Callable[[list[Any]], Any], keyed: bool, flat: bool = False) -> Operator:
        return self._windows(aggregate, keyed, flat)

    def _windows(self, aggregate: Callable[[list[Any]], Any], keyed: bool, flat: bool) -> WindowOperator:
        if self.gap is not None:
            return SessionWindows(self.gap, aggregate, keyed, flat)
        return TimeWindows(self.size, self.step, aggregate, keyed, flat)


@dataclass(frozen=True)
class ProcessingTimeWindow(EventTimeWindow):
    """Like :class:`EventTimeWindow`, on the wall clock; sizes in seconds. Needs no
    timestamps, but which window a record lands in depends on when it arrives.

    Examples:
        However the records fall into minutes, every one is counted once:

        >>> env = segflow.StreamEnvironment(parallelism=1)
        >>> windows = env.from_iterable(["a", "b", "c"]).window_all(segflow.ProcessingTimeWindow.tumbling(60))
        >>> out = windows.count().collect()
        >>> _ = env.execute()
        >>> sum(out.get())
        3
    """

    kind = "processing_time"
    needs_timestamps = False
    clocked = True

    def make(self, aggregate: Callable[[list[Any]], Any], keyed: bool, flat: bool = False) -> Operator:
        return ProcessingTime(self._windows(aggregate, keyed, flat))
