"""Leader election among operator replicas, against the real API server: one leads, the
other waits; when the leader stops renewing, the other takes over within the lease's
duration and the old leader learns it lost; and the chart's two replicas keep serving
StreamJobs when the leading one hangs (and it stops once it runs again)."""
from __future__ import annotations

import json
import threading
import time

import psutil
import pytest
from kubernetes import client

from segflow_operator.election import LEASE_NAME, Elector, Seen, may_take
from support.clusters import installed_operator, wait_for
from support.jobfiles import pod_path, pod_template, publish, s3_lines
from support.podfiles import innermost
from support.servers import TEST_S3_CREDENTIALS, new_bucket, server_fixture, start_s3
from test_streamjobs import WINDOWED, windowed_oracle

NAMESPACE = "default"
JOB_FILES = "ha-jobs"
EVENTS = 3000

s3_server = server_fixture("s3_server", start_s3, "moto S3 server")


def test_only_an_unrenewed_lease_may_be_taken():
    assert may_take(None, "a", 0.0, 15)
    assert may_take(Seen("a", "t1", 0.0), "a", 1.0, 15)
    assert not may_take(Seen("b", "t1", 0.0), "a", 14.9, 15)
    assert may_take(Seen("b", "t1", 0.0), "a", 15.0, 15)
    assert may_take(Seen("", "", 0.0), "a", 0.0, 15)


def test_one_leads_and_the_other_takes_over_when_it_stops(api_client):
    api = client.CoordinationV1Api(api_client)
    _no_lease(api)
    first, second = Elector(api, NAMESPACE, "first", duration=3), Elector(api, NAMESPACE, "second", duration=3)
    assert first.attempt() is True
    assert second.attempt() is False and second.seen.holder == "first"
    lost, stopped = threading.Event(), threading.Event()
    keeper = first.keep(lost.set, stopped)
    time.sleep(4)
    assert second.attempt() is False, "a renewed lease was taken"
    stopped.set()                                # the leader stops renewing (a hung or dead process)
    keeper.join(5)
    started = time.monotonic()
    second.wait_for_leadership()
    took = time.monotonic() - started
    assert 2.0 <= took <= 6.0, took
    first.keep(lost.set)                         # the old leader, back: it must learn it lost
    assert lost.wait(5), "the old leader did not learn it lost the lease"
    assert not lost.is_set() or first.seen.holder == "second"
    lease = api.read_namespaced_lease(LEASE_NAME, NAMESPACE)
    assert lease.spec.holder_identity == "second" and lease.spec.lease_transitions >= 1


JOB_NAMESPACE = "ha-e2e"


@pytest.fixture(scope="module")
def two_operators(cluster):
    with installed_operator(cluster, JOB_NAMESPACE, extra=("--set", "replicaCount=2")):
        cluster.kubectl("create", "secret", "generic", "s3", "-n", JOB_NAMESPACE,
                        *(f"--from-literal={name}={value}" for name, value in TEST_S3_CREDENTIALS.items()))
        publish(cluster, JOB_NAMESPACE, JOB_FILES, WINDOWED)
        wait_for(lambda: len([p for p in cluster.get("pods", "-n", "segflow-system")["items"]
                              if p["status"].get("phase") == "Running"]) == 2, 90, "two operator pods")
        yield cluster


def _holder(cluster) -> str:
    found = cluster.kubectl("get", "lease", LEASE_NAME, "-n", "segflow-system", "-o", "json", check=False)
    return json.loads(found.stdout)["spec"].get("holderIdentity", "") if found.returncode == 0 else ""


def _runs_to_completion(cluster, name: str, s3_endpoint: str, pod_s3_endpoint: str) -> None:
    output = f"s3://{new_bucket()}/{name}"
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": name},
            "spec": {"image": "segflow/engine:0.1.0", "parallelism": 1, "checkpointing": {"protocol": "none"},
                     "podTemplate": pod_template(JOB_FILES, "s3", pod_s3_endpoint),
                     "job": {"module": pod_path(cluster, WINDOWED),
                             "parameters": {"output": output, "events": str(EVENTS), "rate": "10000"}}}}
    cluster.kubectl("apply", "-n", JOB_NAMESPACE, "-f", "-", input=json.dumps(body))
    final = wait_for(lambda: (s := cluster.get("sj", name, "-n", JOB_NAMESPACE).get("status") or {})
                     .get("phase") in ("Completed", "Failed") and s, 120, f"{name} to end")
    assert final["phase"] == "Completed", final
    assert s3_lines(output, s3_endpoint) == windowed_oracle(EVENTS)


def test_the_charts_two_replicas_keep_serving_when_the_leader_hangs(two_operators, s3_server, pod_s3_endpoint):
    cluster = two_operators
    pods = {p["metadata"]["name"] for p in cluster.get("pods", "-n", "segflow-system")["items"]}
    leader = wait_for(lambda: _holder(cluster) in pods and _holder(cluster), 60, "a leader")
    _runs_to_completion(cluster, "before", s3_server.endpoint, pod_s3_endpoint)
    pid = innermost(cluster, leader, "operator", "segflow-system")      # its process, not the sandbox's around it
    assert pid, "the leader's process was not found"
    victim = psutil.Process(pid)
    victim.suspend()                     # hung: it renews nothing (killed, its pod would restart as itself)
    try:
        successor = wait_for(lambda: _holder(cluster) not in ("", leader) and _holder(cluster), 60, "a new leader")
        assert successor in pods
    finally:
        victim.resume()
    try:
        victim.wait(30)                  # not its child: the exit code is the node agent's to see
    except psutil.TimeoutExpired:
        pytest.fail("the old leader went on after losing the lease")
    _runs_to_completion(cluster, "after", s3_server.endpoint, pod_s3_endpoint)


def test_a_released_lease_is_taken_at_once(api_client):
    api = client.CoordinationV1Api(api_client)
    _no_lease(api)
    leader, successor = Elector(api, NAMESPACE, "leaving", duration=30), Elector(api, NAMESPACE, "next", duration=30)
    assert leader.attempt() is True and successor.attempt() is False
    leader.release()
    assert successor.attempt() is True, "a released lease had to be waited out"


def _no_lease(api) -> None:
    try:
        api.delete_namespaced_lease(LEASE_NAME, NAMESPACE)
    except client.ApiException as exc:
        assert exc.status == 404
