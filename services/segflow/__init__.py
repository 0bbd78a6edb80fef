"""segflow: stream and batch processing in Python, from a laptop to Kubernetes.

Build a pipeline on a :class:`StreamEnvironment`, then ``execute()`` it::

    env = segflow.StreamEnvironment(parallelism=4)
    counts = env.read_text("book.txt").flat_map(str.split).group_by_count().collect()
    env.execute()
    print(counts.get())

The public names are those the ``TYPE_CHECKING`` imports below name, the one list of
them: type checkers read it, and ``__getattr__`` reads it back when a name is first used
and imports it then. A coordinator or worker process imports this package before anything
else, and starts its workers or serves sooner for not importing the whole API first
(every local run waits for both); ``__version__`` (pyproject.toml's ``version``, from the
installed package's metadata) is looked up only when asked too, as ``importlib.metadata``
costs 8-20 ms.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable

from .process_runner import install

if TYPE_CHECKING:
    from .api.environment import StreamEnvironment as StreamEnvironment, StreamOutput as StreamOutput
    from .api.iteration import IterationState as IterationState, until_none_flagged as until_none_flagged
    from .api.stream import KeyedStream as KeyedStream, Stream as Stream
    from .api.windowed import KeyedWindowedStream as KeyedWindowedStream, WindowedStream as WindowedStream
    from .api.windows import (CountWindow as CountWindow, EventTimeWindow as EventTimeWindow,
                              ProcessingTimeWindow as ProcessingTimeWindow)
    from .errors import (JobFailed as JobFailed, JobLoadError as JobLoadError, PipelineError as PipelineError,
                         SegflowError as SegflowError, UserFunctionError as UserFunctionError)
    from .plan.graph import BatchMode as BatchMode
    from .runtime.operators.time import WatermarkStrategy as WatermarkStrategy
    from .runtime.operators.windows import Window as Window, WindowResult as WindowResult
    from .settings import Config as Config

_home_of: dict[str, str] = {}


def _homes() -> dict[str, str]:
    """Each public name -> the module it lives in, read (once) from the ``TYPE_CHECKING``
    imports above."""
    if not _home_of:
        import ast
        with open(__file__, encoding="utf-8") as source:
            tree = ast.parse(source.read())
        block = next(node for node in tree.body
                     if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
        _home_of.update({alias.name: "." * imports.level + (imports.module or "")
                         for imports in block.body if isinstance(imports, ast.ImportFrom) for alias in imports.names})
    return _home_of


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("segflow")
    except PackageNotFoundError:
        return "(not installed as a package)"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    elif name == "__all__":
        value = sorted(_homes())
    elif name in _homes():
        value = getattr(importlib.import_module(_homes()[name], __name__), name)
    else:
        raise AttributeError(f"module 'segflow' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_homes(), "__all__", "__version__"})


def _run_in_processes(job_spec: Any, config: Config, on_progress: Callable[..., None] | None,
                      on_event: Callable[[str], None] | None) -> Any:
    """A :data:`.process_runner.ProcessRunner`: ``job_spec`` is a loaded job module, the
    result a ``DistributedResult`` (both types live above the API)."""
    from .launcher.processes import run_processes
    return run_processes(job_spec, config.parallelism, config.checkpointing, on_progress, on_event,
                         standby_workers=config.standby_workers)


install(_run_in_processes)
