"""The in-process runtime: every block replica of the plan runs on its own thread.

It is the embedded default for one machine and the reference the distributed runtime is
checked against. Channels are bounded in-memory inboxes; nothing is serialized.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from ..errors import JobFailed, SegflowError
from ..plan.graph import JobGraph
from ..plan.placement import ExecutionPlan, ReplicaId, Worker, plan
from .channels import Cancelled, Inbox, LocalOutlet
from .executor import InputState, ReplicaExecutor
from .operator import ReplicaContext
from .routing import EdgeSender, Router

INBOX_CAPACITY = 64


@dataclass
class RunResult:
    """What a finished job hands back: collected records per sink, and counters."""

    results: dict[int, list] = field(default_factory=dict)
    seconds: float = 0.0
    records_in: dict[int, int] = field(default_factory=dict)   # block id -> records read


class LocalRuntime:
    """Runs a job graph with ``parallelism`` replicas per parallel block, in threads."""

    def __init__(self, parallelism: int, inbox_capacity: int = INBOX_CAPACITY):
        if parallelism < 1:
            raise SegflowError(f"parallelism must be at least 1, got {parallelism}")
        self.parallelism = parallelism
        self.inbox_capacity = inbox_capacity
        self.executors: dict[ReplicaId, ReplicaExecutor] = {}
        self.plan: ExecutionPlan | None = None

    def execute(self, graph: JobGraph, on_progress: Callable[["LocalRuntime"], None] | None = None,
                progress_every: float = 1.0) -> RunResult:
        self.plan = execution = plan(graph, [Worker("local", self.parallelism)])
        cancel = threading.Event()
        results: dict[int, list] = {}
        results_lock = threading.Lock()

        def deliver(sink_id: int, items: list) -> None:
            with results_lock:
                results.setdefault(sink_id, []).extend(items)

        inboxes = {r: Inbox(self.inbox_capacity, cancel) for r in execution.all_replicas()
                   if not graph.blocks[r.block].is_source}
        for replica in execution.all_replicas():
            self.executors[replica] = self._executor(execution, replica, inboxes, deliver, cancel)

        errors: list[BaseException] = []

        def body(executor: ReplicaExecutor) -> None:
            try:
                executor.run()
            except Cancelled:
                pass
            except BaseException as exc:  # noqa: BLE001 - reported by execute()
                errors.append(exc)
                cancel.set()

        threads = [threading.Thread(target=body, args=(ex,), name=f"segflow-{rid}", daemon=True)
                   for rid, ex in self.executors.items()]
        started = time.monotonic()
        for t in threads:
            t.start()
        try:
            last = started
            for t in threads:
                while t.is_alive():
                    t.join(0.1)
                    if on_progress is not None and time.monotonic() - last >= progress_every:
                        last = time.monotonic()
                        on_progress(self)
        except KeyboardInterrupt:
            cancel.set()
            for t in threads:
                t.join(5)
            raise
        if errors:
            error = errors[0]
            if isinstance(error, SegflowError):
                raise error
            raise JobFailed(f"{type(error).__name__}: {error}") from error
        records_in: dict[int, int] = {}
        for rid, ex in self.executors.items():
            records_in[rid.block] = records_in.get(rid.block, 0) + ex.records_in
        return RunResult(results, time.monotonic() - started, records_in)

    def _executor(self, execution: ExecutionPlan, replica: ReplicaId, inboxes: dict,
                  deliver: Callable[[int, list], None], cancel: threading.Event) -> ReplicaExecutor:
        graph = execution.graph
        block = graph.blocks[replica.block]
        inputs = [InputState(len(execution.senders(e, replica.index)), e.replay, e.feedback)
                  for e in graph.inputs_of(block.id)]
        ports: dict[int, list[EdgeSender]] = {}
        for edge in graph.outputs_of(block.id):
            outlets = [LocalOutlet(inboxes[ReplicaId(edge.dst, d)], edge.dst_input, replica.index,
                                   blocking=not edge.feedback)
                       for d in execution.destinations(edge, replica.index)]
            sender = EdgeSender(execution.strategy(edge), outlets, block.batch_mode, replica.index)
            ports.setdefault(edge.port, []).append(sender)
        router = Router(ports)
        ctx = ReplicaContext(block.id, replica.index, execution.replicas[block.id],
                             execution.placement[replica], router.send_port, deliver,
                             [s.senders for s in inputs])
        return ReplicaExecutor(block, ctx, inputs, inboxes.get(replica), router, cancel)
