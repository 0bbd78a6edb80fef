"""The web view's data (pure) and its HTTP server (on loopback)."""
import contextlib
import dataclasses
import json
import socket
import urllib.error
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, Counter

from segflow.checkpoint.regional import regional_recovery
from segflow.checkpoint.segment_plan import WindowSize
from segflow.checkpoint.segments import Topology
from segflow.coordinator.checkpoints import BlockDelays
from segflow.coordinator.job_view import JobView, LiveState
from segflow.coordinator.recovery_report import recovery_entry
from segflow.coordinator.state import ReplicaReport
from segflow.observability.history import CheckpointEntry, JobHistory, RecoveryEntry
from segflow.observability.http import SECURITY_HEADERS, MetricsPortInUse, ObservabilityServer
from segflow.plan.graph import JobGraph, OperatorSpec, Strategy


def _graph() -> JobGraph:
    graph = JobGraph()
    source = graph.new_block(is_source=True, operators=[OperatorSpec("generate", dict)])
    fold = graph.new_block(operators=[OperatorSpec("fold", dict), OperatorSpec("write_text", dict)])
    graph.connect(source, fold, Strategy.HASH)
    return graph


def _live(records_in: dict, loads: dict | None = None, windows: dict | None = None) -> LiveState:
    return LiveState("j1", "RUNNING", "", 3.0, 0, "", {(0, 0): "w0", (0, 1): "w1", (1, 0): "w0", (1, 1): "w1"},
                     records_in, loads or {}, windows or {},
                     [("w0", 10, False, "127.0.0.2:9400", "w0"), ("w2", 11, False, "127.0.0.3:9400", "w1")],
                     standby=[("w1", 12)])


def test_blocks_sum_their_replicas_and_rates_come_from_the_counts():
    view = JobView(_graph(), "demo", "segment", 1.0, {0}, {1: 1})
    history = JobHistory()
    first = view.render(_live({(0, 0): 100, (0, 1): 100, (1, 0): 50, (1, 1): 50}), history, now=10.0)
    assert [b["rate_in"] for b in first["blocks"]] == [0.0, 0.0]      # one sample: no rate yet
    loads = {(0, 0): ReplicaReport(records_out=700, inbox=0, blocked_seconds=0.5, barrier_seconds=0.125),
             (0, 1): ReplicaReport(records_out=900, inbox=0, blocked_seconds=0.25, barrier_seconds=0.0625),
             (1, 0): ReplicaReport(inbox=30, latency_seconds=0.02),
             (1, 1): ReplicaReport(inbox=2, latency_seconds=0.05)}
    later = view.render(_live({(0, 0): 600, (0, 1): 800, (1, 0): 450, (1, 1): 550}, loads,
                              {0: WindowSize(3, 4096, 120, 1)}), history, now=12.0)
    source, fold = later["blocks"]
    assert (source["records_in"], source["rate_in"], source["replicas"]) == (1400, 600.0, 2)
    assert (fold["records_in"], fold["rate_in"]) == (1000, 450.0)
    assert source["records_out"] == 1600 and source["blocked_seconds"] == 0.75
    assert source["barrier_seconds"] == 0.1875 and fold["barrier_seconds"] == 0
    assert fold["inbox"] == 32 and fold["latency_ms"] == 50.0 and source["latency_ms"] is None
    assert source["connector"] and source["window"] == {"versions": 3, "bytes": 4096, "records": 120,
                                                        "truncation_lag": 1}
    assert fold["window"] is None and fold["operators"] == "fold -> write_text" and fold["name"] == "fold"
    assert later["edges"] == [{"src": 0, "dst": 1, "strategy": "hash", "feedback": False}]
    assert later["workers"][1] == {"name": "w2", "pid": 11, "finished": False, "metrics": "127.0.0.3:9400",
                                   "slot": "w1"}                   # a standby that took over w1's replicas
    assert later["standby"] == [{"name": "w1", "pid": 12}]
    assert (source["segment"], fold["segment"]) == (None, 1)
    json.dumps(later)


def test_history_lists_the_newest_first_and_keeps_a_bounded_number():
    history = JobHistory(keep=3)
    for i in range(1, 6):
        history.checkpoint(CheckpointEntry(i, i != 4, 0.01, 100 * i, 0.0, 1000.0 + i, error="" if i != 4 else "x"))
    history.recovery(RecoveryEntry(2000.0, "w1", "its process exited (code -9)", "checkpoint 3"))
    assert [c["id"] for c in history.checkpoints()] == [5, 4, 3]
    assert history.checkpoints()[1]["complete"] is False
    assert history.recoveries() == [{"at": 2000.0, "lost": "w1", "reason": "its process exited (code -9)",
                                     "restored": "checkpoint 3", "scope": "global", "restarted": [], "kept": [],
                                     "damaged": ""}]


def _chain() -> tuple[JobGraph, Topology]:
    """source (connector) -> map -> connector -> sink (connector): two segments."""
    graph = JobGraph()
    blocks = [graph.new_block(is_source=i == 0, operators=[OperatorSpec(name, dict)])
              for i, name in enumerate(["generate", "map", "keep", "write_text"])]
    for a, b in zip(blocks, blocks[1:]):
        graph.connect(a, b, Strategy.FORWARD)
    return graph, Topology.of((0, 1, 2, 3), ((0, 1), (1, 2), (2, 3)), {0, 2, 3})


def test_a_regional_recovery_names_the_blocks_it_restarted_and_the_view_marks_them():
    graph, topology = _chain()
    names = {b.id: b.name for b in graph.blocks}
    # w1 runs the sink's segment: only the sink restarts, at its newest complete version
    region = regional_recovery(topology, {0: {"w0"}, 1: {"w0"}, 2: {"w0"}, 3: {"w1"}}, ["w1"],
                               {0: {1, 2}, 1: {1, 2}, 2: {1, 2}, 3: {1}}, {0: {1, 2}, 2: {1, 2}}, {})
    history = JobHistory()
    history.recovery(recovery_entry(5.0, "w1", "it read missing state", "windows", None, names, "b2.r0/v2"))
    history.recovery(recovery_entry(9.0, "w1", "its process exited (code -9)", "windows", region, names))
    newest, first = history.recoveries()
    assert first["scope"] == "global" and [r["block"] for r in first["restarted"]] == [0, 1, 2, 3]
    assert first["damaged"] == "b2.r0/v2" and newest["damaged"] == ""
    assert newest["scope"] == "regional" and newest["kept"] == [0, 1, 2]
    assert newest["restarted"] == [{"block": 3, "name": names[3], "version": 1}]
    view = JobView(graph, "demo", "segment", 1.0, {0, 2, 3}, {1: 1, 2: 1, 3: 2})
    shown = view.render(_live({}), history, now=1.0)
    assert [b["restarted_last"] for b in shown["blocks"]] == [False, False, False, True]
    assert shown["recovery_log"] == [newest, first]
    json.dumps(shown)


@pytest.fixture
def web():
    registry = CollectorRegistry()
    Counter("segflow_test_things", "things", registry=registry).inc(3)
    server = ObservabilityServer(registry, lambda: {"job": "demo", "phase": "RUNNING"})
    address = f"127.0.0.1:{server.start('127.0.0.1')}"
    yield server, address
    server.stop()


def _get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_server_serves_metrics_the_page_and_the_job(web):
    _, address = web
    status, headers, body = _get(f"http://{address}/metrics")
    assert status == 200 and b"segflow_test_things_total 3.0" in body
    status, headers, body = _get(f"http://{address}/")
    assert status == 200 and b'<div id="graph"' in body and headers["Content-Type"].startswith("text/html")
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value
    status, _, body = _get(f"http://{address}/vendor/cytoscape.min.js")
    assert status == 200 and len(body) > 100_000
    status, headers, body = _get(f"http://{address}/api/job?t=1")
    assert status == 200 and json.loads(body) == {"job": "demo", "phase": "RUNNING"}


@pytest.mark.parametrize("path", ["/../../etc/passwd", "/web/index.html", "/vendor/cytoscape.LICENSE",
                                  "/%2e%2e/http.py", "/api/job/../metrics2"])
def test_nothing_outside_the_fixed_set_is_served(web, path):
    _, address = web
    status, _, body = _get(f"http://{address}{path}")
    assert status == 404 and b"root:" not in body


@contextlib.contextmanager
def _worker_server(host: str):
    """A worker's server (metrics, no web view) bound to ``host``: its port, stopped after."""
    server = ObservabilityServer(CollectorRegistry())
    port = server.start(host)
    try:
        yield port
    finally:
        server.stop()


def test_a_worker_serves_metrics_but_no_web_view():
    with _worker_server("127.0.0.1") as port:
        address = f"127.0.0.1:{port}"
        assert _get(f"http://{address}/metrics")[0] == 200
        assert _get(f"http://{address}/api/job")[0] == 404
        assert _get(f"http://{address}/")[0] == 404


def test_a_taken_metrics_port_is_refused_with_what_to_do(web):
    _, address = web
    port = int(address.rsplit(":", 1)[1])
    with pytest.raises(MetricsPortInUse, match="choose another --metrics-port"):
        ObservabilityServer(CollectorRegistry()).start("127.0.0.1", port)


def test_metrics_bound_to_every_interface_are_reached_on_loopback():
    with _worker_server("0.0.0.0") as port:
        assert _get(f"http://127.0.0.1:{port}/healthz")[0] == 200


def test_starting_a_server_asks_no_name_service(monkeypatch):
    """A worker binds its own loopback address, which /etc/hosts does not name: the
    standard library's bind would send a DNS query off this host at every start."""
    def no_lookup(*args):
        raise AssertionError(f"the server looked up a host name: getfqdn{args}")
    monkeypatch.setattr(socket, "getfqdn", no_lookup)
    with _worker_server("127.0.0.5") as port:
        assert _get(f"http://127.0.0.5:{port}/healthz")[0] == 200


def test_a_blocks_checkpoint_delays_are_shown_in_milliseconds_once_a_checkpoint_completed():
    view = JobView(_graph(), "demo", "aligned", 1.0, set())
    live = _live({(0, 0): 1, (0, 1): 1, (1, 0): 1, (1, 1): 1})
    blocks = view.render(live, JobHistory(), 1.0)["blocks"]
    assert [(b["checkpoint_start_delay_ms"], b["checkpoint_ack_delay_ms"]) for b in blocks] == [(None, None)] * 2
    timed = dataclasses.replace(live, delays=BlockDelays({0: 0.0004, 1: 0.0123}, {0: 0.0051, 1: 0.02}))
    blocks = view.render(timed, JobHistory(), 2.0)["blocks"]
    assert [(b["checkpoint_start_delay_ms"], b["checkpoint_ack_delay_ms"]) for b in blocks] == [(0.4, 5.1), (12.3,
                                                                                                             20.0)]
