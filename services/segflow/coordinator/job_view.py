"""The web view's ``/api/job``: the job graph from the plan and, on each poll, its live state.

Pure: the coordinator passes what its heartbeats, checkpoint rounds and recoveries told
it; rates come from the cumulative counts over a window of polls (see
:class:`~segflow.observability.rates.RateMeter`), so they are steady however often the
page polls and however the workers' reports fall between polls.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..observability.history import JobHistory
from ..observability.rates import RateMeter
from ..plan.graph import JobGraph
from .checkpoints import BlockDelays


@dataclass(frozen=True)
class LiveState:
    """One poll's inputs, read under the coordinator's lock."""

    job_id: str
    phase: str
    error: str
    seconds: float
    recoveries: int
    restored: str
    owners: dict            # (block, replica) -> worker name, in this attempt
    records_in: dict        # (block, replica) -> records in
    loads: dict             # (block, replica) -> state.ReplicaReport
    windows: dict           # connector block -> WindowSize (segment backup)
    workers: list           # [(name, pid, finished, metrics address, slot)]
    delays: BlockDelays = field(default_factory=BlockDelays)     # the last complete checkpoint's, per block
    standby: list = field(default_factory=list)       # [(name, pid)]: standby workers, idle


def milliseconds(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


class JobView:
    def __init__(self, graph: JobGraph, job_name: str, protocol: str, interval: float, connectors: set[int],
                 segments: dict[int, int] | None = None):
        """``segments``: each plain block's segment (segment backup), which the page colours."""
        self.job_name = job_name
        self.protocol = protocol
        self.interval = interval
        final = {b.id for b in graph.blocks if not graph.outputs_of(b.id)}
        self.blocks: list[dict[str, Any]] = [
            {"id": b.id, "name": b.name, "operators": b.label, "source": b.is_source, "final": b.id in final,
             "connector": b.id in connectors, "segment": (segments or {}).get(b.id)} for b in graph.blocks]
        self.edges = [{"src": e.src, "dst": e.dst, "strategy": e.strategy.value, "feedback": e.feedback}
                      for e in graph.edges]
        self.rates_in = RateMeter()
        self.rates_out = RateMeter()

    def render(self, live: LiveState, history: JobHistory, now: float) -> dict:
        """The JSON the page polls; ``now``: a monotonic time, for the rates."""
        replicas = Counter(block for block, _ in live.owners)
        records_in: Counter[int] = Counter()
        records_out: Counter[int] = Counter()
        inbox: Counter[int] = Counter()
        blocked: dict[int, float] = {}
        barriers: dict[int, float] = {}
        latency: dict[int, float] = {}
        for (block, replica), n in live.records_in.items():
            records_in[block] += n
        for (block, _replica), load in live.loads.items():
            records_out[block] += load.records_out
            inbox[block] += load.inbox
            blocked[block] = blocked.get(block, 0) + load.blocked_seconds
            barriers[block] = barriers.get(block, 0) + load.barrier_seconds
            latency[block] = max(latency.get(block, 0.0), load.latency_seconds)
        ids = [b["id"] for b in self.blocks]
        rates_in = self.rates_in.add(now, {b: records_in[b] for b in ids})
        rates_out = self.rates_out.add(now, {b: records_out[b] for b in ids})
        recoveries = history.recoveries()
        restarted = {r["block"] for r in recoveries[0]["restarted"]} if recoveries else set()
        blocks = []
        for block in self.blocks:
            b = block["id"]
            window = live.windows.get(b)
            blocks.append({**block, "replicas": replicas[b], "restarted_last": b in restarted,
                           "records_in": records_in[b],
                           "records_out": records_out[b], "rate_in": round(rates_in[b], 1),
                           "rate_out": round(rates_out[b], 1), "inbox": inbox[b],
                           "blocked_seconds": round(blocked.get(b, 0), 3),
                           "barrier_seconds": round(barriers.get(b, 0), 4),
                           "checkpoint_start_delay_ms": milliseconds(live.delays.start.get(b)),
                           "checkpoint_ack_delay_ms": milliseconds(live.delays.ack.get(b)),
                           "latency_ms": round(latency.get(b, 0.0) * 1000, 2) if block["final"] else None,
                           "window": None if window is None else {
                               "versions": window.versions, "bytes": window.bytes, "records": window.records,
                               "truncation_lag": window.truncation_lag}})
        return {"job": self.job_name, "id": live.job_id, "phase": live.phase, "error": live.error,
                "protocol": self.protocol, "interval_seconds": self.interval, "seconds": round(live.seconds, 2),
                "recoveries": live.recoveries, "restored": live.restored,
                "workers": [{"name": n, "pid": pid, "finished": done, "metrics": metrics, "slot": slot}
                            for n, pid, done, metrics, slot in live.workers],
                "standby": [{"name": n, "pid": pid} for n, pid in live.standby],
                "blocks": blocks, "edges": self.edges,
                "checkpoints": history.checkpoints(), "recovery_log": recoveries}
