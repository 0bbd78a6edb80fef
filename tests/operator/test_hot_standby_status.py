"""A hot standby in the operator's pure reconcile: it deploys as a warm one, and its
status and metric say what its workers follow, read from their /metrics."""
import threading

from prometheus_client import CollectorRegistry, generate_latest

from segflow.disaster.lease import LeaseDecision, Move
from segflow.observability.http import ObservabilityServer
from segflow.worker.follower import _FollowCollector
from segflow_operator.follow_probe import probe
from segflow_operator.reconcile import Deploy, JobStatus, Observed, Phase, PodView
from segflow_operator.reconcile.disaster import standby_status, warm_standby
from segflow.observability.follow_metrics import FollowSample, parse_follow
from segflow_operator.reconcile.follow import summarize
from segflow_operator.reconcile.status_json import dump
from segflow_operator.spec import parse

SPEC = {"image": "segflow/engine:0.1.0", "job": {"module": "m"}, "parallelism": 1,
        "checkpointing": {"protocol": "segment"},
        "disasterRecovery": {"backupUrl": "s3://b/p", "clusterName": "west", "role": "standby"}}
HOT = {**SPEC, "disasterRecovery": {**SPEC["disasterRecovery"], "standby": "hot"}}
WARM = {**SPEC, "disasterRecovery": {**SPEC["disasterRecovery"], "standby": "warm"}}
WAITING = LeaseDecision(Move.STAND_BY, "east holds the job's lease")


class Following:
    """A worker's follow as its collector reads it."""

    def __init__(self, version, lag_versions, lag_seconds):
        self.version, self.lag_versions, self.seconds = version, lag_versions, lag_seconds
        self.stopped = threading.Event()

    def lag_seconds(self):
        return self.seconds


def page(follower) -> str:
    registry = CollectorRegistry()
    registry.register(_FollowCollector(follower))
    return generate_latest(registry).decode()


def test_a_hot_standby_takes_the_same_steps_as_a_warm_one_and_says_it_is_hot():
    hot, warm = parse(HOT), parse(WARM)
    status = JobStatus(phase=Phase.STANDBY, revision=1)
    hot_step, warm_step = (warm_standby(s, status, Observed(()), WAITING) for s in (hot, warm))
    assert hot_step.actions == warm_step.actions == [Deploy(2, "auto")]
    assert "hot standby" in hot_step.status.message and "warm standby" in warm_step.status.message


def test_the_status_of_a_hot_standby_shows_its_least_followed_worker_and_a_warm_one_shows_none():
    follow = summarize([FollowSample(12, 0, 0.4), FollowSample(11, 1, 1.26)])
    assert follow == FollowSample(11, 1, 1.26)
    standing = JobStatus(phase=Phase.STANDBY, revision=2, ready="2/2")
    shown = dump(standby_status(parse(HOT), standing, follow))
    assert shown == {"mode": "hot", "readyWorkers": "2/2", "followedVersion": 11, "followLagVersions": 1,
                     "followLagSeconds": 1.3}
    assert dump(standby_status(parse(HOT), standing, None)) == {"mode": "hot", "readyWorkers": "2/2"}
    assert dump(standby_status(parse(WARM), standing, follow)) == {"mode": "warm", "readyWorkers": "2/2"}
    assert standby_status(parse(HOT), JobStatus(phase=Phase.RUNNING, revision=2), follow) is None
    assert summarize([]) is None


def test_a_workers_follow_is_read_from_the_metrics_page_it_serves():
    follower = Following(7, 2, 0.75)
    assert parse_follow(page(follower)) == FollowSample(7, 2, 0.75)
    follower.stopped.set()                           # it took over: it follows nothing
    assert parse_follow(page(follower)) is None
    assert parse_follow("# a page without them\nsegflow_records_in_total 3\n") is None


def test_the_operator_asks_each_ready_worker_pod_over_http_and_leaves_out_those_it_cannot_ask():
    registry = CollectorRegistry()
    registry.register(_FollowCollector(Following(9, 0, 0.2)))
    server = ObservabilityServer(registry)
    port = server.start("127.0.0.1", 0)
    try:
        pods = [PodView("j-2-worker-0", "worker", 2, phase="Running", ready=True, ip="127.0.0.1"),
                PodView("j-2-worker-1", "worker", 2, phase="Running", ready=True),              # no address yet
                PodView("j-2-worker-2", "worker", 2, phase="Running", ready=False, ip="127.0.0.1"),
                PodView("j-2-coordinator", "coordinator", 2, phase="Running", ready=True, ip="127.0.0.1")]
        assert probe(pods, port) == [FollowSample(9, 0, 0.2)]
    finally:
        server.stop()
    assert probe(pods[:1], port, timeout=0.2) == []          # stopped: it no longer answers
