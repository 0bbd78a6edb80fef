"""The cost model of segment backup for a topology that splits and merges: chapter 4 of
Shen, Segment Backup, applied to each source-to-sink path (pure).

Chapter 4 models a linear pipeline. A topology is evaluated as its paths, each a linear
:class:`~.segment_cost.Pipeline` whose nodes see their real load (a node where paths merge
serves the tuples of all of them). How the paths combine:

- *recovery delay* (4.2): the job has recovered once the last connector of every path
  processes new tuples: the largest of the paths' delays;
- *overhead time and communication* (4.4, 4.5): what each node, channel and connector
  costs, counted once however many paths share it (a sum over paths would count a shared
  prefix once per path);
- *pending window* of a connector (4.7): a version's part of one output channel leaves
  once every next connector behind that channel acknowledged it, so each channel holds
  it for its slowest path; the connector's window is the sum over its channels;
- *storage* and *money* (4.8-4.11): from those, as for a chain.

On a chain every rule gives chapter 4's own figure (``tests/checkpoint`` checks this).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..errors import SegflowError
from . import segment_cost as chain
from .segment_cost import Delays, Pipeline, Prices

Channel = tuple[int, int]


@dataclass(frozen=True)
class Dag:
    """Table 4.2 for a topology of blocks: ``service[b]`` is block b's ``t^t`` and
    ``flows[(u, v)]`` the normal tuples per second u sends v; ``rate`` is what the sources
    emit per second in all (a source that feeds two blocks emits each tuple once) and
    ``block`` the tuples of one version at that rate, its barrier included (4.3)."""

    service: Mapping[int, float]
    flows: Mapping[Channel, float]
    connectors: frozenset[int]
    block: float
    rate: float
    tuple_bytes: float
    barrier_bytes: float
    checkpoint_bytes: float
    ack_bytes: float
    sink_outputs: Mapping[int, float] = field(default_factory=dict)   # a sink's tuples out per second (default: in)

    def __post_init__(self) -> None:
        unknown = sorted({n for c in self.flows for n in c} - set(self.service))
        if unknown:
            raise SegflowError(f"channels name blocks {unknown} that have no service time")
        idle = sorted(c for c, f in self.flows.items() if f <= 0)
        if idle:
            raise SegflowError(f"channels {idle} carried no tuple: the model needs each channel's rate; give the "
                               "calibration input that reaches every block, or a longer --calibrate")
        missing = (self.sources | self.sinks) - self.connectors
        if missing or not self.connectors <= set(self.service):
            raise SegflowError(f"connectors must be blocks of the topology and include every source and sink "
                               f"(missing {sorted(missing)})")
        if self.block <= 1 or self.rate <= 0:
            raise SegflowError(f"a version holds its barrier and at least one tuple: block must be > 1 and the "
                               f"rate > 0, got {self.block} and {self.rate}")

    @property
    def sources(self) -> frozenset[int]:
        return frozenset(self.service) - {v for _, v in self.flows}

    @property
    def sinks(self) -> frozenset[int]:
        return frozenset(self.service) - {u for u, _ in self.flows}

    @property
    def interval(self) -> float:
        """Seconds per version: ``block - 1`` tuples at ``rate``."""
        return (self.block - 1) / self.rate

    @property
    def barrier_factor(self) -> float:
        """Tuples sent per normal tuple once barriers count: ``f^t / f^o``."""
        return self.block / (self.block - 1)

    def inflow(self, node: int) -> float:
        return sum(f for (_, v), f in self.flows.items() if v == node)

    def output(self, node: int) -> float:
        """Normal tuples per second ``node`` sends on all its channels (a sink: emits)."""
        sent = sum(f for (u, _), f in self.flows.items() if u == node)
        return sent if node not in self.sinks else self.sink_outputs.get(node, self.inflow(node))


def from_pipeline(p: Pipeline) -> Dag:
    """A chain as a topology of blocks 1..N (what chapter 4 models)."""
    flows = {(i, i + 1): p.rate * p.ratio(1, i) for i in range(1, p.nodes)}
    return Dag({i: t for i, t in enumerate(p.service, start=1)}, flows, frozenset(p.connectors), p.block, p.rate,
               p.tuple_bytes, p.barrier_bytes, p.checkpoint_bytes, p.ack_bytes,
               {p.nodes: p.rate * p.ratio(1, p.nodes)})


def paths(dag: Dag) -> list[tuple[int, ...]]:
    """Every source-to-sink path (a job's blocks are few; a topology is a DAG)."""
    successors: dict[int, list[int]] = {}
    for u, v in sorted(dag.flows):
        successors.setdefault(u, []).append(v)
    found: list[tuple[int, ...]] = []

    def walk(path: tuple[int, ...]) -> None:
        nexts = successors.get(path[-1], [])
        if not nexts:
            found.append(path)
        for v in nexts:
            walk(path + (v,))
    for source in sorted(dag.sources):
        walk((source,))
    return found


def path_pipeline(dag: Dag, path: tuple[int, ...]) -> Pipeline:
    """``path`` as chapter 4's pipeline: each position's output is what it sends the next
    block of the path, each node's arrival is all it receives (the version's block scales
    with the path's first channel, so that versions come every ``dag.interval``)."""
    channels = list(zip(path, path[1:]))
    first = dag.flows[channels[0]]
    ratios = [dag.flows[b] / dag.flows[a] for a, b in zip(channels, channels[1:])]
    ratios.append(dag.output(path[-1]) / dag.flows[channels[-1]])
    factor = dag.barrier_factor
    arrivals = (first * factor,) + tuple(dag.inflow(n) * factor for n in path[1:])
    return Pipeline(service=tuple(dag.service[n] for n in path), ratios=tuple(ratios),
                    connectors=frozenset(i for i, n in enumerate(path, start=1) if n in dag.connectors)
                    | {1, len(path)},
                    block=first * dag.interval + 1, rate=first, tuple_bytes=dag.tuple_bytes,
                    barrier_bytes=dag.barrier_bytes, checkpoint_bytes=dag.checkpoint_bytes,
                    ack_bytes=dag.ack_bytes, arrivals=arrivals)


def recovery_delay(dag: Dag, d: Delays) -> float:
    """t^r: the slowest path's (4.2 per path)."""
    return max(chain.recovery_delay(path_pipeline(dag, p), d) for p in paths(dag))


def _acknowledging(dag: Dag) -> int:
    """Connectors that acknowledge versions upstream: all but the sources (4.4's C - 1)."""
    return len(dag.connectors - dag.sources)


def overhead_time(dag: Dag, d: Delays) -> float:
    """t^oh (4.4): barriers at every node, acks of every connector, writes of what each
    connector sends, each counted once."""
    versions = 1 / dag.interval
    writes = dag.barrier_factor * sum(d.write * dag.output(c) for c in dag.connectors)
    return versions * d.barrier * len(dag.service) + versions * d.ack * _acknowledging(dag) + writes


def overhead_communication(dag: Dag) -> float:
    """n^oh (4.5): a barrier on every channel, a checkpoint of every node, acks, and the
    windows' bytes, each counted once."""
    versions = 1 / dag.interval
    windows = dag.barrier_factor * sum(dag.tuple_bytes * dag.output(c) for c in dag.connectors)
    return (versions * (dag.barrier_bytes * len(dag.flows) + dag.checkpoint_bytes * len(dag.service))
            + versions * dag.ack_bytes * _acknowledging(dag) + windows)


def _window(dag: Dag, d: Delays, connector: int, of_path: Callable[[Pipeline, Delays, int], float]) -> float:
    """Per output channel, the slowest path's window through it; summed over channels."""
    total = 0.0
    for channel in sorted(c for c in dag.flows if c[0] == connector):
        through = [p for p in paths(dag) if any(pair == channel for pair in zip(p, p[1:]))]
        total += max(of_path(path_pipeline(dag, p), d, p.index(connector) + 1) for p in through)
    return total


def pending_window(dag: Dag, d: Delays, connector: int) -> float:
    """l^p (4.7) of ``connector``, tuples: see the module's doc for how channels combine."""
    return _window(dag, d, connector, chain.pending_window)


def versioned_pending_window(dag: Dag, d: Delays, connector: int) -> float:
    """As :func:`pending_window`, for windows cut at versions (``segment_cost``'s form)."""
    return _window(dag, d, connector, chain.versioned_pending_window)


def overhead_storage(dag: Dag, d: Delays) -> float:
    """s^oh (4.8-4.10): the connectors' windows and every node's checkpoint."""
    windows = dag.tuple_bytes * sum(pending_window(dag, d, c) for c in dag.connectors if c not in dag.sinks)
    return windows + dag.checkpoint_bytes * len(dag.service)


def money_per_second(dag: Dag, d: Delays, prices: Prices = Prices()) -> float:
    """c (4.11)."""
    return (prices.per_cpu_second * overhead_time(dag, d) + prices.per_network_byte * overhead_communication(dag)
            + prices.per_stored_byte_second * overhead_storage(dag, d))
