"""Running a job's graph on Spark.

The graph is walked from its sinks back to its sources: each block becomes a flow (an
RDD with one partition per replica of the block), built from the flows of its inputs and
the Spark steps of its operators, looked up by the name each operator declares
(segflow.spark.steps): the runner knows no operator class. Flows used more than once
(splits, side inputs of loops) are cached so that sources and user functions run once, as
in the engine.
"""
from __future__ import annotations

import os
import sys
import time
from collections import Counter
from itertools import chain, count
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..api.environment import Config, StreamEnvironment
from ..errors import PipelineError, SegflowError
from ..jobs.loader import JobModule, build_job, load_job
from ..plan.graph import BlockSpec, Edge, JobGraph, OperatorSpec, Strategy
from ..plan.placement import Worker, plan
from ..runtime.local import RunResult
from ..runtime.operator import Operator
from . import joins, sinks, sources, steps   # noqa: F401 - joins, sinks and sources register their steps
from .aggregate import Wrap, combine_by_key
from .errors import PartitionFn, UnsupportedOnSpark, guarded, guarded_call, job_failure
from .flows import Flow, exchange, records_of
from .iteration import Round, is_loop_output, run_loop
from .session import get_session
from .translate import Step, refuse

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext


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
    def run(records: Iterable) -> Iterator:
        tally = count()
        return chain(map(itemgetter(0), zip(records, tally)), _add_count(counter, tally))
    return run


def _add_count(counter: Any, tally: Iterable[int]) -> Iterator:
    counter.add(next(iter(tally)))
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

    @property
    def round(self) -> Round:
        """The loop round being evaluated: only the blocks of a loop body ask for it."""
        if self.loop is None:
            raise RuntimeError("a block outside any loop asked for the loop's round")
        return self.loop

    # ------------------------------------------------------------------ running
    def run(self) -> dict[int, list]:
        """Run every sink (and every dangling stream, for its side effects); returns the
        collected records per sink."""
        results: dict[int, list] = {}
        for block in self.graph.blocks:
            if self.graph.outputs_of(block.id):
                continue
            ops = self.ops[block.id]
            sink = steps.step_of(ops[-1]) if ops else None
            if not isinstance(sink, steps.Sink):
                self.evaluate(block, ops).rdd.count()
                continue
            flow = self.evaluate(block, ops[:-1])
            rdd = flow.rdd.mapPartitions(records_of(flow.stamped)) if flow.stamped else flow.rdd
            sink.write(rdd, ops[-1], results)
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
        flows = self.flows if block.scope is None else self.round.flows
        if key not in flows:
            flow = self.evaluate(block, self.ops[block_id])
            flows[key] = self.keep(flow, block.scope) if key in self.shared else flow
        return flows[key]

    def keep(self, flow: Flow, scope: int | None) -> Flow:
        """Cache a flow that more than one consumer reads."""
        flow.rdd.persist()
        (self.cached if scope is None else self.round.cached).append(flow.rdd)
        return flow

    def evaluate(self, block: BlockSpec, ops: list[Operator]) -> Flow:
        """The flow after ``ops`` (a prefix of the block's chain)."""
        if block.is_source:
            flow, ops = self._source(block, ops[0]), ops[1:]
        else:
            flow, ops = self._input(block, ops)
        for op in ops:
            spark_step = steps.step_of(op)
            if isinstance(spark_step, steps.PreAggregate):
                # the local stage runs inside Spark's map-side combine, after the shuffle's input
                rdd = flow.rdd.mapPartitions(records_of(True)) if flow.stamped else flow.rdd
                flow = Flow(rdd, partial=op)
            elif isinstance(spark_step, steps.Chain):
                flow = self.run_step(block, op, flow, spark_step.step(op, flow.stamped))
            else:
                raise TypeError(f"{op.name}: its Spark step {op.spark_step!r} cannot follow another operator")
        return flow

    def run_step(self, block: BlockSpec, op: Operator, flow: Flow, spark_step: Step) -> Flow:
        """Apply an operator's partition function; failures name the operator."""
        fn = guarded(op.name, op.location, spark_step.partition)
        if block.scope is not None:
            fn = self.round.with_state(fn)
        return Flow(flow.rdd.mapPartitions(fn), spark_step.stamped)

    def replicas(self, block: BlockSpec) -> int:
        return self.plan.replicas[block.id]

    def inputs(self, block: BlockSpec) -> tuple[list[Flow], list[Strategy]]:
        """The flows leaving the block's (forward) inputs, and the strategies of the edges."""
        edges = [e for e in self.graph.inputs_of(block.id) if not e.feedback]
        return [self.output(e.src, e.port) for e in edges], [self.plan.strategy(e) for e in edges]

    def edge_input(self, edge: Edge, n: int, source: Flow | None = None) -> Flow:
        """What one edge delivers to a block of ``n`` replicas."""
        source = source if source is not None else self.output(edge.src, edge.port)
        return exchange([(source, self.plan.strategy(edge))], n)

    def _source(self, block: BlockSpec, op: Operator) -> Flow:
        counter = self.read[block.id] = self.sc.accumulator(0)
        source = steps.step_of(op)
        if not isinstance(source, steps.Source):
            raise TypeError(f"{op.name} ({type(op).__name__}) is not a source")
        rdd = source.rdd(self.sc, op, self.plan.replicas[block.id])
        return Flow(rdd.mapPartitions(guarded(op.name, op.location, _counted(counter))))

    def _input(self, block: BlockSpec, ops: list[Operator]) -> tuple[Flow, list[Operator]]:
        """The flow entering the block, and the operators still to apply."""
        head = ops[0] if ops else None
        head_step = steps.step_of(head) if head is not None else None
        if isinstance(head_step, steps.Head):
            return head_step.flow(self, block, head), ops[1:]
        n = self.plan.replicas[block.id]
        (edge,) = [e for e in self.graph.inputs_of(block.id) if not e.feedback]
        source = self.output(edge.src, edge.port)
        if source.partial is not None:
            if head is None:
                raise TypeError(f"block {block.id} takes a pre-aggregated stream without its combining stage")
            rdd = combine_by_key(source.rdd, source.partial, head, n, self._user_call(block))
            return Flow(rdd), ops[1:]
        return self.edge_input(edge, n, source), ops

    def _user_call(self, block: BlockSpec) -> Wrap:
        def wrap(op: Operator, fn: Callable) -> Callable:
            fn = guarded_call(op.name, op.location, fn)
            return self.round.call_with_state(fn) if block.scope is not None else fn
        return wrap


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
