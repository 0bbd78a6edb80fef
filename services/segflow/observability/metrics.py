"""Prometheus metrics of a worker or coordinator, served over HTTP on loopback or the pod IP.

Counters are read from the executors when Prometheus scrapes (a custom collector), so
the hot path pays nothing for them; only back-pressure time and sink latency are
observed as they happen.
"""
from __future__ import annotations

from typing import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class ExecutorCollector:
    """Exports per-replica counters of the running executors at scrape time."""

    def __init__(self, snapshot: Callable[[], Iterable[dict]]):
        self.snapshot = snapshot

    def collect(self):
        records_in = CounterMetricFamily("segflow_records_in", "Records received by a block replica",
                                         labels=["block", "replica"])
        records_out = CounterMetricFamily("segflow_records_out", "Records sent by a block replica, per edge",
                                          labels=["block", "replica", "to_block"])
        batches_out = CounterMetricFamily("segflow_batches_out", "Batches sent by a block replica, per edge",
                                          labels=["block", "replica", "to_block"])
        bytes_out = CounterMetricFamily("segflow_bytes_out", "Encoded bytes sent over the network, per edge",
                                        labels=["block", "replica", "to_block"])
        queued = GaugeMetricFamily("segflow_inbox_depth", "Elements waiting in a replica's inbox",
                                   labels=["block", "replica"])
        for row in self.snapshot():
            b, r = str(row["block"]), str(row["replica"])
            records_in.add_metric([b, r], row["records_in"])
            queued.add_metric([b, r], row["inbox"])
            for edge in row["edges"]:
                labels = [b, r, str(edge["to_block"])]
                records_out.add_metric(labels, edge["records"])
                batches_out.add_metric(labels, edge["batches"])
                bytes_out.add_metric(labels, edge["bytes"])
        yield from (records_in, records_out, batches_out, bytes_out, queued)


class CheckpointMetrics:
    """The coordinator's view of checkpoints and recoveries."""

    def __init__(self, registry: CollectorRegistry):
        self.outcomes = Counter("segflow_checkpoints", "Checkpoint rounds by outcome", ["outcome"],
                                registry=registry)
        self.duration = Histogram("segflow_checkpoint_duration_seconds", "From trigger to complete",
                                  buckets=LATENCY_BUCKETS, registry=registry)
        self.alignment = Histogram("segflow_checkpoint_alignment_seconds",
                                   "Longest barrier alignment of a replica in the checkpoint",
                                   buckets=LATENCY_BUCKETS, registry=registry)
        self.size = Gauge("segflow_checkpoint_bytes", "Size of the last complete checkpoint", registry=registry)
        self.last = Gauge("segflow_last_checkpoint_id", "Id of the last complete checkpoint", registry=registry)
        self.recoveries = Counter("segflow_recoveries", "Recoveries from a lost worker", registry=registry)
        self.window_versions = Gauge("segflow_pending_window_versions",
                                     "Versions a segment-backup connector's pending window holds", ["connector"],
                                     registry=registry)
        self.window_bytes = Gauge("segflow_pending_window_bytes", "Bytes of a connector's pending window",
                                  ["connector"], registry=registry)
        self.window_records = Gauge("segflow_pending_window_records", "Records in a connector's pending window",
                                    ["connector"], registry=registry)
        self.truncation_lag = Gauge("segflow_pending_window_truncation_lag_versions",
                                    "Versions between a connector's newest window part and its truncation head",
                                    ["connector"], registry=registry)

    def windows(self, sizes: dict) -> None:
        """Segment backup: ``connector block -> checkpoint.segment_plan.WindowSize``."""
        for block, size in sizes.items():
            label = str(block)
            self.window_versions.labels(label).set(size.versions)
            self.window_bytes.labels(label).set(size.bytes)
            self.window_records.labels(label).set(size.records)
            self.truncation_lag.labels(label).set(size.truncation_lag)

    def ended(self, outcome) -> None:
        self.outcomes.labels("complete" if outcome.complete else "failed").inc()
        if outcome.complete:
            self.duration.observe(outcome.seconds)
            self.alignment.observe(outcome.alignment)
            self.size.set(outcome.bytes)
            self.last.set(outcome.checkpoint_id)


class ServiceMetrics:
    """The registry and the metrics observed as they happen."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.backpressure = Counter("segflow_backpressure_seconds",
                                    "Time senders spent blocked on full channels",
                                    registry=self.registry)
        self.latency = Histogram("segflow_end_to_end_latency_seconds",
                                 "From a record batch entering the job to reaching a final block",
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.records_received = Counter("segflow_network_records_in", "Records received over the network",
                                        ["block", "input"], registry=self.registry)
        self.bytes_received = Counter("segflow_network_bytes_in", "Bytes received over the network",
                                      ["block", "input"], registry=self.registry)

    def checkpoint_metrics(self) -> "CheckpointMetrics":
        return CheckpointMetrics(self.registry)

    def watch_executors(self, snapshot: Callable[[], Iterable[dict]]) -> None:
        self.registry.register(ExecutorCollector(snapshot))

    def serve(self, host: str) -> str:
        """Start the HTTP endpoint on a free port of ``host``; returns ``host:port``."""
        server, _thread = start_http_server(0, addr=host, registry=self.registry)
        return f"{host}:{server.server_port}"
