"""Running a job's graph on Spark.

The graph is walked from its sinks back to its sources: each block becomes a flow (an
RDD with one partition per replica of the block), built from the flows of its inputs and
the Spark form of its operators. Flows used more than once (splits, side inputs of loops)
are cached so that sources and user functions run once, as in the engine.
"""
from __future__ import annotations

import os
import sys
import time
from collections import Counter
from itertools import chain, count
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..api.environment import Config, StreamEnvironment
from ..errors import PipelineError, SegflowError
from ..jobs.loader import JobModule, build_job, load_job
from ..plan.graph import BlockSpec, Edge, JobGraph, OperatorSpec, Strategy
from ..plan.placement import Worker, plan
from ..runtime.local import RunResult
from ..runtime.operator import Operator
from ..runtime.operators import aggregate as agg
from ..runtime.operators.iteration import IterationStart
from ..runtime.operators.joins import Concat, HashJoin, IntervalJoin, SortMergeJoin, Zip
from ..runtime.operators.sinks import CollectSink, FileSink, ForEachSink
from ..runtime.operators.windows import TagInputs
from . import joins, sinks
from .aggregate import Wrap, combine_by_key
from .errors import PartitionFn, UnsupportedOnSpark, guarded, guarded_call, job_failure
from .flows import Flow, carry_time, exchange, records_of
from .iteration import Round, is_loop_output, run_loop
from .session import get_session
from .sources import source_rdd
from .translate import Step, refuse, step, then

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext

_MERGES = (Concat, HashJoin, SortMergeJoin, IntervalJoin, Zip, TagInputs)
_SINKS = (CollectSink, ForEachSink, FileSink)


def _instance(spec: OperatorSpec) -> Operator:
    """The operator the spec describes; its attributes are the plan's parameters."""
    op = spec.factory()
    op.name, op.location = spec.name, spec.location
    return op


def operators(graph: JobGraph) -> dict[int, list[Operator]]:
    """Every block's operators, after refusing what Spark cannot run: nothing starts
    (not even Spark) for a job that would fail half-way."""
    ops = {b.id: [_instance(spec) for spec in b.operators] for b in graph.blocks}
    for block in graph.blocks:
        for op in ops[block.id]:
            refuse(op)
        if block.scope is not None and not graph.outputs_of(block.id):
            last = ops[block.id][-1] if ops[block.id] else None
            raise UnsupportedOnSpark(last.name if last else block.label, last.location if last else "?",
                                     "every stream of an iterate/replay body must lead to the body's end",
                                     "write the loop's result or state stream after the loop")
    return ops


def _counted(counter: Any) -> PartitionFn:
    """The records, unchanged, adding their number to ``counter`` at the end (counted at
    C speed: no Python frame per record)."""
    def run(records: Iterator) -> Iterator:
        tally = count()
        return chain(map(itemgetter(0), zip(records, tally)), _add_count(counter, tally))
    return run


def _add_count(counter: Any, tally: Iterator[int]) -> Iterator:
    counter.add(next(tally))
    yield from ()


class Translation:
    """A job graph being turned into Spark flows and run."""

    def __init__(self, graph: JobGraph, ops: dict[int, list[Operator]], parallelism: int, sc: "SparkContext"):
        self.graph = graph
        self.ops = ops
        self.sc = sc
        self.plan = plan(graph, [Worker("spark", parallelism)])
        self.flows: dict[tuple[int, int], Flow] = {}
        self.loop: Round | None = None
        uses = Counter((e.src, e.port) for e in graph.edges if not e.feedback)
        self.shared = {out for out, n in uses.items() if n > 1} | {(e.src, e.port) for e in graph.edges if e.replay}
        self.read: dict[int, Any] = {}          # source block -> accumulator of records read
        self.cached: list["RDD"] = []
        self.broadcasts: list = []

    # ------------------------------------------------------------------ running
    def run(self) -> dict[int, list]:
        """Run every sink (and every dangling stream, for its side effects); returns the
        collected records per sink."""
        results: dict[int, list] = {}
        for block in self.graph.blocks:
            if self.graph.outputs_of(block.id):
                continue
            ops = self.ops[block.id]
            sink = ops[-1] if ops and isinstance(ops[-1], _SINKS) else None
            if sink is None:
                self.evaluate(block, ops).rdd.count()
                continue
            flow = self.evaluate(block, ops[:-1])
            rdd = flow.rdd.mapPartitions(records_of(flow.stamped)) if flow.stamped else flow.rdd
            if type(sink) is CollectSink:
                results[sink.sink_id] = rdd.collect()
            elif type(sink) is ForEachSink:
                sinks.for_each(rdd, sink)
            else:
                sinks.write_parts(rdd, sink)
        return results

    def records_read(self) -> dict[int, int]:
        return {block: counter.value for block, counter in self.read.items()}

    def release(self) -> None:
        for rdd in self.cached:
            rdd.unpersist()
        for broadcast in self.broadcasts:
            broadcast.unpersist()

    # ------------------------------------------------------------------- blocks
    def output(self, block_id: int, port: int = 0) -> Flow:
        """The flow leaving ``port`` of a block (evaluated once; per round in a loop body)."""
        block = self.graph.blocks[block_id]
        key = (block_id, port)
        loop = is_loop_output(self.ops[block_id], port)
        if loop is not None:
            if key not in self.flows:
                run_loop(self, loop)
            return self.flows[key]
        flows = self.flows if block.scope is None else self.loop.flows
        if key not in flows:
            flow = self.evaluate(block, self.ops[block_id])
            flows[key] = self.keep(flow, block.scope) if key in self.shared else flow
        return flows[key]

    def keep(self, flow: Flow, scope: int | None) -> Flow:
        """Cache a flow that more than one consumer reads."""
        flow.rdd.persist()
        (self.cached if scope is None else self.loop.cached).append(flow.rdd)
        return flow

    def evaluate(self, block: BlockSpec, ops: list[Operator]) -> Flow:
        """The flow after ``ops`` (a prefix of the block's chain)."""
        if block.is_source:
            flow, ops = self._source(block, ops[0]), ops[1:]
        else:
            flow, ops = self._input(block, ops)
        for op in ops:
            if type(op) in (agg.LocalCount, agg.LocalKeyedFold):
                # the local stage runs inside Spark's map-side combine, after the shuffle's input
                rdd = flow.rdd.mapPartitions(records_of(True)) if flow.stamped else flow.rdd
                flow = Flow(rdd, partial=op)
            else:
                flow = self.run_step(block, op, flow, step(op, flow.stamped))
        return flow

    def run_step(self, block: BlockSpec, op: Operator, flow: Flow, spark_step: Step) -> Flow:
        """Apply an operator's partition function; failures name the operator."""
        fn = guarded(op.name, op.location, spark_step.partition)
        if block.scope is not None:
            fn = self.loop.with_state(fn)
        return Flow(flow.rdd.mapPartitions(fn), spark_step.stamped)

    def edge_input(self, edge: Edge, n: int, source: Flow | None = None) -> Flow:
        """What one edge delivers to a block of ``n`` replicas."""
        source = source if source is not None else self.output(edge.src, edge.port)
        return exchange([(source, self.plan.strategy(edge))], n)

    def _source(self, block: BlockSpec, op: Operator) -> Flow:
        counter = self.read[block.id] = self.sc.accumulator(0)
        rdd = source_rdd(self.sc, op, self.plan.replicas[block.id])
        return Flow(rdd.mapPartitions(guarded(op.name, op.location, _counted(counter))))

    def _input(self, block: BlockSpec, ops: list[Operator]) -> tuple[Flow, list[Operator]]:
        """The flow entering the block, and the operators still to apply."""
        head = ops[0] if ops else None
        if type(head) is IterationStart:
            return self.loop.data, ops[1:]
        if isinstance(head, _MERGES):
            return self._merge(block, head), ops[1:]
        n = self.plan.replicas[block.id]
        (edge,) = [e for e in self.graph.inputs_of(block.id) if not e.feedback]
        source = self.output(edge.src, edge.port)
        if source.partial is not None:
            rdd = combine_by_key(source.rdd, source.partial, head, n, self._user_call(block))
            return Flow(rdd), ops[1:]
        return self.edge_input(edge, n, source), ops

    def _user_call(self, block: BlockSpec) -> Wrap:
        def wrap(op: Operator, fn: Callable) -> Callable:
            fn = guarded_call(op.name, op.location, fn)
            return self.loop.call_with_state(fn) if block.scope is not None else fn
        return wrap

    # ---------------------------------------------------------- multi-input heads
    def _merge(self, block: BlockSpec, head: Operator) -> Flow:
        """Concat, key joins, interval join, zip and window-join heads: the inputs meet in
        the block's partitions, each record tagged with its side where the head needs it."""
        n = self.plan.replicas[block.id]
        edges = [e for e in self.graph.inputs_of(block.id) if not e.feedback]
        sources = [self.output(e.src, e.port) for e in edges]
        strategies = [self.plan.strategy(e) for e in edges]
        kind = type(head)
        if kind is Concat:
            return exchange(list(zip(sources, strategies)), n)
        if kind in (HashJoin, SortMergeJoin) and strategies[1] is Strategy.BROADCAST:
            return self._broadcast_join(block, head, sources[0], strategies[0], sources[1])
        keyed = kind in (HashJoin, SortMergeJoin) or (kind in (TagInputs, IntervalJoin) and head.keyed)
        tagged = [self.run_step(block, head, source, self._tagging(side, keyed, source.stamped))
                  for side, source in enumerate(sources)]
        merged = exchange(list(zip(tagged, strategies)), n)
        if kind is TagInputs:
            return merged
        if kind is IntervalJoin:
            if not merged.stamped:
                raise PipelineError(f"{head.name} (defined at {head.location}) needs timestamped streams on both "
                                    "sides: call add_timestamps first")
            return self.run_step(block, head, merged, Step(joins.interval_join(head.lower, head.upper, keyed), True))
        matching = joins.zip_pairs if kind is Zip else joins.hash_join(head.kind)
        return self.run_step(block, head, merged, Step(then(records_of(merged.stamped), matching), False))

    @staticmethod
    def _tagging(side: int, keyed: bool, stamped: bool) -> Step:
        fn = joins.tag(side, keyed)
        return Step(fn if not stamped else carry_time(fn), stamped)

    def _broadcast_join(self, block: BlockSpec, head: Operator, left: Flow, strategy: Strategy,
                        right: Flow) -> Flow:
        """Ship broadcast-right: the right side goes to every worker once, the left side
        stays where it is."""
        table: dict = {}
        for k, v in right.rdd.mapPartitions(records_of(right.stamped)).collect():
            table.setdefault(k, []).append(v)
        broadcast = self.sc.broadcast(table)
        self.broadcasts.append(broadcast)
        left = exchange([(left, strategy)], self.plan.replicas[block.id])
        join = then(records_of(left.stamped), joins.broadcast_join(head.kind, broadcast))
        return self.run_step(block, head, left, Step(join, False))


def _ship_code(sc: "SparkContext", env: StreamEnvironment) -> None:
    """Let Spark's Python workers import what the driver imports, and pickle the job
    module by value (it is loaded under a private name no worker could import)."""
    paths = [os.getcwd() if p == "" else p for p in sys.path]
    sc.environment["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    if env.job_spec is not None:
        from pyspark import cloudpickle
        cloudpickle.register_pickle_by_value(sys.modules[load_job(env.job_spec).__module__])


def run_on_spark(env: StreamEnvironment, master: str | None = None) -> RunResult:
    """Run the pipeline built on ``env`` as a Spark batch job; ``collect()`` outputs are
    filled afterwards, as with ``env.execute()``. ``master`` is needed only to start the
    process's Spark session (default: the running one, else ``local[*]``); the job's
    parallelism is the number of partitions of every parallel block."""
    if env.result is not None:
        raise SegflowError("this environment has run already; build a new one to run again")
    if not env.graph.blocks:
        raise PipelineError("the pipeline is empty: add a source, e.g. env.read_text(path)")
    if env.config.checkpoint_protocol != "none":
        raise SegflowError("Spark runs bounded jobs as batches and recomputes lost partitions itself: "
                           "drop the checkpoint options with --engine spark")
    ops = operators(env.graph)
    sc = get_session(master).sparkContext
    _ship_code(sc, env)
    translation = Translation(env.graph, ops, env.config.parallelism, sc)
    started = time.monotonic()
    try:
        results = translation.run()
    except Exception as exc:
        if type(exc).__module__.startswith(("pyspark", "py4j")):
            raise job_failure(exc) from exc
        raise
    finally:
        translation.release()
    env.result = RunResult(results, time.monotonic() - started, translation.records_read())
    for output in env.outputs:
        output._value = results.get(output.sink_id, [])
    return env.result


def run_job_on_spark(target: str, params: dict[str, str] | None = None, parallelism: int = 1,
                     master: str | None = None) -> tuple[StreamEnvironment, Any]:
    """Build a job module (as ``segflow run`` does) and run it on Spark; returns the
    environment and what the job's build function returned."""
    env, returned = build_job(JobModule(target, params=dict(params or {})), Config(parallelism=parallelism))
    run_on_spark(env, master)
    return env, returned
