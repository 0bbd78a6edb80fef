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
                                         TimeWindows)


class WindowDescription:
    name = "window"

    def make(self, aggregate: Callable[[list], Any], keyed: bool, flat: bool = False) -> Operator:
        raise NotImplementedError


def _positive(what: str, value: Any) -> None:
    if not value > 0:
        raise PipelineError(f"window {what} must be positive, got {value!r}")


@dataclass(frozen=True)
class CountWindow(WindowDescription):
    size: int
    step: int

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

    def make(self, aggregate, keyed, flat=False):
        return CountWindows(self.size, self.step, aggregate, keyed, flat)


@dataclass(frozen=True)
class EventTimeWindow(WindowDescription):
    size: Any = None
    step: Any = None
    gap: Any = None

    @staticmethod
    def sliding(size: Any, step: Any) -> "EventTimeWindow":
        _positive("size", size)
        _positive("step", step)
        return EventTimeWindow(size=size, step=step)

    @staticmethod
    def tumbling(size: Any) -> "EventTimeWindow":
        _positive("size", size)
        return EventTimeWindow(size=size, step=size)

    @staticmethod
    def session(gap: Any) -> "EventTimeWindow":
        _positive("gap", gap)
        return EventTimeWindow(gap=gap)

    @property
    def name(self) -> str:
        kind = type(self).__name__.replace("Window", "").lower().replace("eventtime", "event_time")
        kind = kind.replace("processingtime", "processing_time")
        if self.gap is not None:
            return f"{kind}_session({self.gap})"
        return f"{kind}_window({self.size}, {self.step})"

    def make(self, aggregate, keyed, flat=False):
        if self.gap is not None:
            return SessionWindows(self.gap, aggregate, keyed, flat)
        return TimeWindows(self.size, self.step, aggregate, keyed, flat)


@dataclass(frozen=True)
class ProcessingTimeWindow(EventTimeWindow):
    """Like :class:`EventTimeWindow`, on the wall clock; sizes in seconds."""

    @staticmethod
    def sliding(size: float, step: float) -> "ProcessingTimeWindow":
        _positive("size", size)
        _positive("step", step)
        return ProcessingTimeWindow(size=size, step=step)

    @staticmethod
    def tumbling(size: float) -> "ProcessingTimeWindow":
        _positive("size", size)
        return ProcessingTimeWindow(size=size, step=size)

    @staticmethod
    def session(gap: float) -> "ProcessingTimeWindow":
        _positive("gap", gap)
        return ProcessingTimeWindow(gap=gap)

    def make(self, aggregate, keyed, flat=False):
        return ProcessingTime(super().make(aggregate, keyed, flat))
