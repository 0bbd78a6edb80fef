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
    size: int
    step: int

    def __post_init__(self) -> None:
        _positive("size", self.size)
        _positive("step", self.step)

    @staticmethod
    def sliding(size: int, step: int) -> "CountWindow":
        _positive("size", size)
        _positive("step", step)
        return CountWindow(size, step)

    @staticmethod
    def tumbling(size: int) -> "CountWindow":
        _positive("size", size)
        return CountWindow(size, size)

    @property
    def name(self) -> str:
        return f"count_window({self.size}, {self.step})"

    def make(self, aggregate: Callable[[list[Any]], Any], keyed: bool, flat: bool = False) -> Operator:
        return CountWindows(self.size, self.step, aggregate, keyed, flat)


@dataclass(frozen=True)
class EventTimeWindow(WindowDescription):
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
        _positive("size", size)
        _positive("step", step)
        return cls(size=size, step=step)

    @classmethod
    def tumbling(cls, size: Any) -> "EventTimeWindow":
        _positive("size", size)
        return cls(size=size, step=size)

    @classmethod
    def session(cls, gap: Any) -> "EventTimeWindow":
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
    """Like :class:`EventTimeWindow`, on the wall clock; sizes in seconds."""

    kind = "processing_time"
    needs_timestamps = False
    clocked = True

    def make(self, aggregate: Callable[[list[Any]], Any], keyed: bool, flat: bool = False) -> Operator:
        return ProcessingTime(self._windows(aggregate, keyed, flat))
