"""What cannot run on Spark, and how a user function's failure in a Spark worker comes
back to the driver as one readable message."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from ..errors import JobFailed, PipelineError

PartitionFn = Callable[[Iterable], Iterable]


class UnsupportedOnSpark(PipelineError):
    """An operator of the job has no meaning on bounded input, or no Spark translation."""

    def __init__(self, operator: str, location: str, why: str, instead: str):
        self.operator = operator
        super().__init__(f"{operator} (defined at {location}) cannot run on Spark: {why}; {instead}")


class OperatorFailed(Exception):
    """Raised inside a Spark worker when a user function raises. Spark returns only the
    worker's traceback text to the driver, so the message names the operator on one line
    that :func:`job_failure` finds again."""


_MARKER = f"{OperatorFailed.__module__}.{OperatorFailed.__qualname__}: "


def _failed(name: str, location: str, exc: Exception) -> OperatorFailed:
    return OperatorFailed(f"{name} (defined at {location}) raised {type(exc).__name__}: "
                          f"{' '.join(str(exc).split())}")


def guarded(name: str, location: str, partition: PartitionFn) -> PartitionFn:
    """``partition`` whose failures name the operator (the innermost one that failed)."""
    def run(elements: Iterable) -> Iterator:
        try:
            yield from partition(elements)
        except OperatorFailed:
            raise
        except Exception as exc:
            raise _failed(name, location, exc) from exc
    return run


def guarded_call(name: str, location: str, fn: Callable) -> Callable:
    """``fn`` whose failures name the operator, for functions that Spark calls itself
    (the combining functions of keyed aggregations)."""
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except OperatorFailed:
            raise
        except Exception as exc:
            raise _failed(name, location, exc) from exc
    return call


def job_failure(exc: Exception) -> JobFailed:
    """A failed Spark job as the error the CLI prints: the operator's message when a user
    function raised, else the last line Spark reported."""
    text = str(exc)
    at = text.rfind(_MARKER)
    if at >= 0:
        return JobFailed(text[at + len(_MARKER):].splitlines()[0])
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return JobFailed(f"the Spark job failed: {lines[-1] if lines else type(exc).__name__}")
