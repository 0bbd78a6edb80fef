"""Prometheus metrics of a worker or coordinator (served by :mod:`.http`), labelled by block
number and operator name.

Counters are read from the executors when Prometheus scrapes (a custom collector), so
the hot path pays nothing for them; only back-pressure time and sink latency are
observed as they happen.
"""
from __future__ import annotations

from typing import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class ExecutorCollector:
    """Exports per-replica counters of the running executors at scrape time."""

    def __init__(self, snapshot: Callable[[], Iterable[dict]]):
        self.snapshot = snapshot

    def collect(self):
        labels = ["block", "operator", "replica"]
        edge_labels = labels + ["to_block"]
        records_in = CounterMetricFamily("segflow_records_in", "Records received by a block replica", labels=labels)
        records_out = CounterMetricFamily("segflow_records_out", "Records sent by a block replica, per edge",
                                          labels=edge_labels)
        batches_out = CounterMetricFamily("segflow_batches_out", "Batches sent by a block replica, per edge",
                                          labels=edge_labels)
        bytes_out = CounterMetricFamily("segflow_bytes_out", "Encoded bytes sent over the network, per edge",
                                        labels=edge_labels)
        queued = GaugeMetricFamily("segflow_inbox_depth", "Elements waiting in a replica's inbox", labels=labels)
        blocked = CounterMetricFamily("segflow_backpressure_seconds",
                                      "Time a replica's sends spent blocked on full channels", labels=labels)
        barriers = CounterMetricFamily("segflow_barrier_seconds",
                                       "Time a replica spent on checkpoint barriers (snapshots, forwarding, "
                                       "window parts)", labels=labels)
        spilled = CounterMetricFamily("segflow_window_parts_spilled",
                                      "Segment backup: window parts a connector replica dropped from memory at "
                                      "--window-memory while checkpoints did not complete (a replay reads them "
                                      "from the store)", labels=labels)
        for row in self.snapshot():
            replica = [str(row["block"]), row["operator"], str(row["replica"])]
            records_in.add_metric(replica, row["records_in"])
            queued.add_metric(replica, row["inbox"])
            blocked.add_metric(replica, row["blocked_seconds"])
            barriers.add_metric(replica, row["barrier_seconds"])
            spilled.add_metric(replica, row.get("window_parts_spilled", 0))
            for edge in row["edges"]:
                edge_label = replica + [str(edge["to_block"])]
                records_out.add_metric(edge_label, edge["records"])
                batches_out.add_metric(edge_label, edge["batches"])
                bytes_out.add_metric(edge_label, edge["bytes"])
        yield from (records_in, records_out, batches_out, bytes_out, queued, blocked, barriers, spilled)


class ReplicaLoad:
    """What a replica's heartbeat and ``/metrics`` say beyond its counters: the time its
    senders spent blocked on full channels (back-pressure), and at a final block the
    latency of the batches reaching it, smoothed so the web view shows a steady figure."""

    SMOOTHING = 0.2

    def __init__(self, operator: str = "", latency: Histogram | None = None):
        self.operator = operator          # the block's name, its metrics' label
        self.blocked_seconds = 0.0
        self.latency_seconds = 0.0
        self._latency = latency

    def blocked(self, seconds: float) -> None:
        self.blocked_seconds += seconds

    def reached_sink(self, seconds: float) -> None:
        if self._latency is not None:
            self._latency.observe(seconds)
        previous = self.latency_seconds
        self.latency_seconds = seconds if previous == 0 else previous + self.SMOOTHING * (seconds - previous)


class CheckpointMetrics:
    """The coordinator's view of checkpoints and recoveries."""

    def __init__(self, registry: CollectorRegistry, names: dict[int, str]):
        self.names = names
        self.outcomes = Counter("segflow_checkpoints", "Checkpoint rounds by outcome", ["outcome"],
                                registry=registry)
        self.duration = Histogram("segflow_checkpoint_duration_seconds", "From trigger to complete",
                                  buckets=LATENCY_BUCKETS, registry=registry)
        self.alignment = Histogram("segflow_checkpoint_alignment_seconds",
                                   "Longest barrier alignment of a replica in the checkpoint",
                                   buckets=LATENCY_BUCKETS, registry=registry)
        self.start_delay = Gauge("segflow_checkpoint_start_delay_seconds",
                                 "From the coordinator's ask to the checkpoint's first barrier at the block's slowest "
                                 "replica, in the last complete checkpoint", ["block", "operator"], registry=registry)
        self.ack_delay = Gauge("segflow_checkpoint_ack_delay_seconds",
                               "From the coordinator's ask to the acknowledgement of the block's slowest replica "
                               "(its snapshot durable), in the last complete checkpoint", ["block", "operator"],
                               registry=registry)
        self.size = Gauge("segflow_checkpoint_bytes", "Size of the last complete checkpoint", registry=registry)
        self.last = Gauge("segflow_last_checkpoint_id", "Id of the last complete checkpoint", registry=registry)
        self.recoveries = Counter("segflow_recoveries", "Recoveries from a lost worker", registry=registry)
        self.block_records = Counter("segflow_block_records_in",
                                     "Records a block's replicas received over every attempt of the job, from the "
                                     "workers' heartbeats: a run without failures' count plus the records that "
                                     "recoveries processed again (a lost worker's records since its last heartbeat "
                                     "are missing)", ["block", "operator"], registry=registry)
        self.window_versions = Gauge("segflow_pending_window_versions",
                                     "Versions a segment-backup connector's pending window holds",
                                     ["connector", "operator"],
                                     registry=registry)
        self.window_bytes = Gauge("segflow_pending_window_bytes", "Bytes of a connector's pending window",
                                  ["connector", "operator"], registry=registry)
        self.window_records = Gauge("segflow_pending_window_records", "Records in a connector's pending window",
                                    ["connector", "operator"], registry=registry)
        self.truncation_lag = Gauge("segflow_pending_window_truncation_lag_versions",
                                    "Versions between a connector's newest window part and its truncation head",
                                    ["connector", "operator"], registry=registry)

    def windows(self, sizes: dict) -> None:
        """Segment backup: ``connector block -> checkpoint.segment_plan.WindowSize``."""
        for block, size in sizes.items():
            labels = (str(block), self.names.get(block, ""))
            self.window_versions.labels(*labels).set(size.versions)
            self.window_bytes.labels(*labels).set(size.bytes)
            self.window_records.labels(*labels).set(size.records)
            self.truncation_lag.labels(*labels).set(size.truncation_lag)

    def records_received(self, grown: dict[int, int]) -> None:
        """Block -> records its replicas received since their worker last reported."""
        for block, records in grown.items():
            if records:
                self.block_records.labels(str(block), self.names.get(block, "")).inc(records)

    def block_delays(self, delays) -> None:
        """A complete checkpoint's start and acknowledgement delays per block (seconds)."""
        for gauge, blocks in ((self.start_delay, delays.start), (self.ack_delay, delays.ack)):
            for block, seconds in blocks.items():
                gauge.labels(str(block), self.names.get(block, "")).set(seconds)

    def ended(self, outcome) -> None:
        self.outcomes.labels("complete" if outcome.complete else "failed").inc()
        if outcome.complete:
            self.duration.observe(outcome.seconds)
            self.alignment.observe(outcome.alignment)
            self.size.set(outcome.bytes)
            self.last.set(outcome.checkpoint_id)


class ServiceMetrics:
    """The registry, and the metrics observed as they happen."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.latency = Histogram("segflow_end_to_end_latency_seconds",
                                 "From a record batch entering the job to reaching a final block",
                                 ["block", "operator"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.records_received = Counter("segflow_network_records_in", "Records received over the network",
                                        ["block", "input"], registry=self.registry)
        self.bytes_received = Counter("segflow_network_bytes_in", "Bytes received over the network",
                                      ["block", "input"], registry=self.registry)

    def checkpoint_metrics(self, names: dict[int, str]) -> "CheckpointMetrics":
        """``names``: operator name per block, for the pending windows' labels."""
        return CheckpointMetrics(self.registry, names)

    def watch_executors(self, snapshot: Callable[[], Iterable[dict]]) -> None:
        self.registry.register(ExecutorCollector(snapshot))

    def replica_load(self, block: int, operator: str, final: bool) -> ReplicaLoad:
        """A replica's load; a final block's feeds the latency histogram."""
        return ReplicaLoad(operator, self.latency.labels(str(block), operator) if final else None)
