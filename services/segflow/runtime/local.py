"""The in-process runtime: every block replica of the plan runs on its own thread.

It is the embedded default for one machine and the reference the distributed runtime is
checked against. Channels are bounded in-memory inboxes; nothing is serialized.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from ..errors import SegflowError
from ..plan.graph import JobGraph
from ..plan.placement import ExecutionPlan, ReplicaId, Worker, plan
from .affinity import in_process_core
from .channels import Inbox, LocalOutlet
from .collection import collecting_less_often
from .executor import ReplicaExecutor
from .pool import ExecutorPool
from .wiring import build_executor

# Messages (batches and control elements), and records, an inbox holds before its senders
# wait (see runtime/channels.py for why records are bounded).
INBOX_CAPACITY = 64
INBOX_RECORDS = 4096


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

    def execute(self, graph: JobGraph, on_progress: Callable[[dict, dict], None] | None = None,
                progress_every: float = 1.0, run_for: float | None = None) -> RunResult:
        """Run to the end, or stop after ``run_for`` seconds (a calibration run: its
        executors keep their counters)."""
        self.plan = execution = plan(graph, [Worker("local", self.parallelism)])
        cancel = threading.Event()
        results: dict[int, list] = {}
        results_lock = threading.Lock()

        def deliver(sink_id: int, items: list) -> None:
            with results_lock:
                results.setdefault(sink_id, []).extend(items)

        inboxes = {r: Inbox(self.inbox_capacity, cancel, INBOX_RECORDS) for r in execution.all_replicas()
                   if not graph.blocks[r.block].is_source}
        for replica in execution.all_replicas():
            self.executors[replica] = self._executor(execution, replica, inboxes, deliver, cancel)

        pool = ExecutorPool(self.executors, cancel, core=in_process_core())
        started = time.monotonic()
        names = {b.id: b.name for b in graph.blocks}

        def tick() -> None:
            if on_progress is not None:
                on_progress(pool.records_in(), names)
            if run_for is not None and time.monotonic() - started >= run_for:
                cancel.set()
        with collecting_less_often():
            pool.start()
            pool.wait(tick=tick if on_progress or run_for is not None else None,
                      every=progress_every if run_for is None else min(progress_every, 0.1))
        return RunResult(results, time.monotonic() - started, pool.records_in())

    def _executor(self, execution: ExecutionPlan, replica: ReplicaId, inboxes: dict,
                  deliver: Callable[[int, list], None], cancel: threading.Event) -> ReplicaExecutor:
        def outlet_for(edge, destination: int) -> LocalOutlet:
            return LocalOutlet(inboxes[ReplicaId(edge.dst, destination)], edge.dst_input,
                               replica.index, blocking=not edge.feedback)
        return build_executor(execution, replica, inboxes.get(replica), outlet_for, deliver, cancel)
