"""segflow: stream and batch processing in Python, from a laptop to Kubernetes.

Build a pipeline on a :class:`StreamEnvironment`, then ``execute()`` it::

    env = segflow.StreamEnvironment(parallelism=4)
    counts = env.read_text("book.txt").flat_map(str.split).group_by_count().collect()
    env.execute()
    print(counts.get())
"""
from .api.environment import Config, StreamEnvironment, StreamOutput
from .api.iteration import IterationState
from .api.stream import KeyedStream, Stream
from .api.windowed import KeyedWindowedStream, WindowedStream
from .api.windows import CountWindow, EventTimeWindow, ProcessingTimeWindow
from .errors import JobFailed, JobLoadError, PipelineError, SegflowError, UserFunctionError
from .plan.graph import BatchMode
from .runtime.operators.time import WatermarkStrategy
from .runtime.operators.windows import Window, WindowResult

__version__ = "0.1.0"

__all__ = [
    "BatchMode", "Config", "CountWindow", "EventTimeWindow", "IterationState", "JobFailed",
    "JobLoadError", "KeyedStream", "KeyedWindowedStream", "PipelineError", "ProcessingTimeWindow",
    "SegflowError", "Stream", "StreamEnvironment", "StreamOutput", "UserFunctionError",
    "WatermarkStrategy", "Window", "WindowResult", "WindowedStream",
]
