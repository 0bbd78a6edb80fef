"""segflow: stream and batch processing in Python, from a laptop to Kubernetes.

Build a pipeline on a :class:`StreamEnvironment`, then ``execute()`` it::

    env = segflow.StreamEnvironment(parallelism=4)
    counts = env.read_text("book.txt").flat_map(str.split).group_by_count().collect()
    env.execute()
    print(counts.get())

The names below are imported when first used: a coordinator or worker process imports
this package before anything else, and starts its workers or serves sooner for not
importing the whole API first (every local run waits for both).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .process_runner import install

if TYPE_CHECKING:
    from .api.environment import StreamEnvironment, StreamOutput
    from .api.iteration import IterationState, until_none_flagged
    from .api.stream import KeyedStream, Stream
    from .api.windowed import KeyedWindowedStream, WindowedStream
    from .api.windows import CountWindow, EventTimeWindow, ProcessingTimeWindow
    from .errors import JobFailed, JobLoadError, PipelineError, SegflowError, UserFunctionError
    from .plan.graph import BatchMode
    from .runtime.operators.time import WatermarkStrategy
    from .runtime.operators.windows import Window, WindowResult
    from .settings import Config

__version__ = "0.1.0"

_HOMES = {
    ".api.environment": ("StreamEnvironment", "StreamOutput"),
    ".api.iteration": ("IterationState", "until_none_flagged"),
    ".api.stream": ("KeyedStream", "Stream"),
    ".api.windowed": ("KeyedWindowedStream", "WindowedStream"),
    ".api.windows": ("CountWindow", "EventTimeWindow", "ProcessingTimeWindow"),
    ".errors": ("JobFailed", "JobLoadError", "PipelineError", "SegflowError", "UserFunctionError"),
    ".plan.graph": ("BatchMode",),
    ".runtime.operators.time": ("WatermarkStrategy",),
    ".runtime.operators.windows": ("Window", "WindowResult"),
    ".settings": ("Config",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'segflow' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME_OF])


def _run_in_processes(job_spec, config: Config, on_progress, on_event):
    from .launcher.processes import run_processes
    return run_processes(job_spec, config.parallelism, config.checkpointing, on_progress, on_event)


install(_run_in_processes)

__all__ = sorted(_HOME_OF)
