"""An example job with every source capped at ``rate`` records per second per replica,
so that a kill test can stop its workers while it runs: the examples finish in well under
a second otherwise. The example itself is unchanged; each source it opens is wrapped.

The cap is in the source itself, not in an operator after it: a slow operator downstream
fills the channels, and an aligned barrier then waits behind everything buffered, so no
checkpoint would complete while the job runs (back-pressure, as in Flink)."""
import importlib.util

from segflow.runtime.elements import Batch
from segflow.runtime.executor import SourceOperator
from segflow.runtime.operator import Delegating
from segflow.runtime.operators.sources import Pace

SOURCES = ("from_iterable", "from_parallel", "read_text", "read_csv", "generate", "read_redis_stream")


class PacedSource(Delegating, SourceOperator):
    """The source ``inner``, polled for no more than ``rate`` records per second."""

    def __init__(self, inner: SourceOperator, rate: float):
        self.inner = inner
        self.rate = rate
        self.produced = 0

    def open(self, ctx) -> None:
        super().open(ctx)
        self.pace = Pace(self.rate)

    def poll(self, max_items: int):
        allowed = self.pace.allowance(self.produced, max_items)
        if not allowed:
            return Batch([])
        batch = self.inner.poll(allowed)
        if batch is not None:
            self.produced += len(batch.items)
        return batch

    def close(self) -> None:
        self.inner.close()


class SlowedSources:
    """The stream environment as the example sees it: every source it opens is paced."""

    def __init__(self, env, rate: float):
        self._env = env
        self._rate = rate

    def __getattr__(self, name):
        attribute = getattr(self._env, name)
        if name not in SOURCES:
            return attribute

        def paced(*args, **kwargs):
            stream = attribute(*args, **kwargs)
            graph = self._env.graph
            source = graph.blocks[graph.inputs_of(stream.block.id)[0].src].operators[0]
            make, rate = source.factory, self._rate
            source.factory = lambda: PacedSource(make(), rate)
            return stream
        return paced


def build(env, example, rate, **params):
    spec = importlib.util.spec_from_file_location("slowed_example_job", example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(SlowedSources(env, float(rate)), **params)
