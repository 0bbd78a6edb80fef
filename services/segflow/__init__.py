"""segflow: stream and batch processing in Python, from a laptop to Kubernetes.

Build a pipeline on a :class:`StreamEnvironment`, then ``execute()`` it::

    env = segflow.StreamEnvironment(parallelism=4)
    counts = env.read_text("book.txt").flat_map(str.split).group_by_count().collect()
    env.execute()
    print(counts.get())
"""
from .api.environment import StreamEnvironment, StreamOutput, set_process_runner
from .api.iteration import IterationState
from .api.stream import KeyedStream, Stream
from .api.windowed import KeyedWindowedStream, WindowedStream
from .api.windows import CountWindow, EventTimeWindow, ProcessingTimeWindow
from .errors import JobFailed, JobLoadError, PipelineError, SegflowError, UserFunctionError
from .plan.graph import BatchMode
from .runtime.operators.time import WatermarkStrategy
from .runtime.operators.windows import Window, WindowResult
from .settings import Config

__version__ = "0.1.0"


def _run_in_processes(job_spec, config: Config, on_progress, on_event):
    from .launcher.processes import run_processes
    return run_processes(job_spec, config.parallelism, config.checkpointing, on_progress, on_event)


set_process_runner(_run_in_processes)

__all__ = [
    "BatchMode", "Config", "CountWindow", "EventTimeWindow", "IterationState", "JobFailed",
    "JobLoadError", "KeyedStream", "KeyedWindowedStream", "PipelineError", "ProcessingTimeWindow",
    "SegflowError", "Stream", "StreamEnvironment", "StreamOutput", "UserFunctionError",
    "WatermarkStrategy", "Window", "WindowResult", "WindowedStream",
]
