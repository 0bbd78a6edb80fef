"""The operator SIGKILLed again and again while a job deploys, recovers, suspends, resumes
and rescales (from outside at random moments, and from its own failpoints right after an
API call): each restart continues from the status (intent is recorded before it is
acted on), so no pod is ever doubled, no recovery is counted that did not happen, and
the output is exact.

The chart's operator is scaled to zero; the test runs the same operator as a local
process against the cluster, so it can kill and restart it at once (a crash-looping pod
would wait out the node agent's back-off). It runs where the pods are reachable (the node's
network namespace when pods have their own, see Cluster.node_prefix), as a pod would."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
import urllib.request

import pytest

from support.clusters import installed_operator, wait_for
from support.jobfiles import pod_path, pod_template, publish, s3_lines
from support.processes import ROOT
from support.servers import TEST_S3_CREDENTIALS, free_port, new_bucket, server_fixture, start_s3
from test_streamjobs import WINDOWED, windowed_oracle

NAMESPACE = "restarts-e2e"
JOB_FILES = "restarts-jobs"
SEGFLOW_OPERATOR = os.path.join(ROOT, ".venv", "bin", "segflow-operator")
MIN_KILLS = 20
# Besides kills from outside at random moments, the operator kills itself now and then
# right after creating an object or writing the status (see segflow_operator.failpoints).
FAILPOINTS = "after-create=0.4,after-status=0.05"


class KilledOperator:
    """The operator as a local process, SIGKILLed at random moments once it is up, and started again."""

    def __init__(self, cluster, log_path, seed: int, s3_endpoint: str):
        self.cluster, self.log_path, self.s3_endpoint = cluster, log_path, s3_endpoint
        self.rng = random.Random(seed)
        self.kills = 0
        self.stopped = threading.Event()
        self.process: subprocess.Popen | None = None
        self.thread = threading.Thread(target=self._kill_repeatedly, daemon=True)

    def start(self) -> None:
        self.health_port = free_port()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [*self.cluster.node_prefix(), SEGFLOW_OPERATOR, "--namespace", NAMESPACE, "--host", "127.0.0.1",
                 "--health-port", str(self.health_port), "--metrics-port", str(free_port()), "--verbose"],
                env={**self.cluster.node_env(), "SEGFLOW_OPERATOR_FAILPOINTS": FAILPOINTS,
                     "SEGFLOW_ALLOWED_S3_ENDPOINTS": self.s3_endpoint}, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)

    def _serving(self) -> bool:
        """Whether this operator process is up (its /healthz answers): a kill before that
        would test Python's imports, and on a slow machine (imports and kopf's start-up
        take 1.5-2 s there) most kills would land before the operator did anything."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/healthz", timeout=1) as reply:
                return reply.status == 200
        except OSError:
            return False

    def _restart(self) -> None:
        self.kills += 1
        self.start()

    def restart_if_dead(self) -> bool:
        """A failpoint killed it: start it again (as its Deployment would)."""
        if self.process.poll() is None:
            return False
        self._restart()
        return True

    def _kill_repeatedly(self) -> None:
        """SIGKILL each operator process a random 0.8-3 s after it is up (this thread asks
        its /healthz from the operator's network namespace)."""
        self.cluster.enter_node()
        due = None
        while not self.stopped.wait(0.05):
            if self.restart_if_dead():
                due = None
            if due is None:
                if self._serving():
                    due = time.monotonic() + self.rng.uniform(0.8, 3.0)
            elif time.monotonic() >= due:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
                self._restart()
                due = None

    def __enter__(self) -> KilledOperator:
        self.start()
        self.thread.start()
        return self

    def __exit__(self, *_) -> None:
        self.stopped.set()
        self.thread.join()
        self.process.kill()
        self.process.wait()


class PodWatch:
    """Samples the job's pods: at no moment two live coordinators, or two live workers
    with one index."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.violations: list[str] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self.stopped.wait(0.3):
            found = self.cluster.kubectl("get", "pods", "-n", NAMESPACE, "-o", "json", check=False, timeout=20)
            if found.returncode != 0:
                continue
            live = [p for p in json.loads(found.stdout)["items"] if not p["metadata"].get("deletionTimestamp")
                    and p["status"].get("phase") in ("Pending", "Running")]
            seen: dict[tuple, list[str]] = {}
            for pod in live:
                labels = pod["metadata"]["labels"]
                key = (labels.get("segflow.io/role"), labels.get("segflow.io/index", ""))
                seen.setdefault(key, []).append(pod["metadata"]["name"])
            self.violations += [f"{key}: {names}" for key, names in seen.items() if len(names) > 1]

    def __enter__(self) -> PodWatch:
        self.thread.start()
        return self

    def __exit__(self, *_) -> None:
        self.stopped.set()
        self.thread.join()


s3_server = server_fixture("s3_server", start_s3, "moto S3 server")


@pytest.fixture(scope="module")
def cluster_without_operator(cluster):
    with installed_operator(cluster, NAMESPACE):
        cluster.kubectl("create", "secret", "generic", "s3", "-n", NAMESPACE,
                        *(f"--from-literal={name}={value}" for name, value in TEST_S3_CREDENTIALS.items()))
        publish(cluster, NAMESPACE, JOB_FILES, WINDOWED)
        cluster.kubectl("scale", "deployment", "-n", "segflow-system", "--all", "--replicas=0")
        wait_for(lambda: not cluster.get("pods", "-n", "segflow-system")["items"], 60, "the chart's operator to stop")
        yield cluster


def _status(cluster, name: str) -> dict:
    found = cluster.kubectl("get", "sj", name, "-n", NAMESPACE, "-o", "json", check=False, timeout=20)
    return (json.loads(found.stdout).get("status") or {}) if found.returncode == 0 else {}


def _phase(cluster, name: str, *phases: str, timeout: float = 120.0) -> dict:
    return wait_for(lambda: (s := _status(cluster, name)).get("phase") in phases and s, timeout, f"{name} in {phases}",
                    interval=0.5)


def _patch(cluster, name: str, spec: dict) -> None:
    cluster.kubectl("patch", "sj", name, "-n", NAMESPACE, "--type", "merge", "-p", json.dumps({"spec": spec}))


def test_operator_kills_during_deploy_recovery_suspend_and_rescale(cluster_without_operator, tmp_path, s3_server,
                                                                   pod_s3_endpoint):
    cluster, name, events = cluster_without_operator, "restarted", 70000
    bucket = new_bucket()
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": name},
            "spec": {"image": "segflow/engine:0.1.0", "parallelism": 2,
                     "job": {"module": pod_path(cluster, WINDOWED),
                             "parameters": {"output": f"s3://{bucket}/out", "events": str(events), "rate": "2500"}},
                     "podTemplate": pod_template(JOB_FILES, "s3", pod_s3_endpoint),
                     "checkpointing": {"protocol": "aligned", "intervalSeconds": 0.5,
                                       "stateUrl": f"s3://{bucket}/state", "s3Endpoint": pod_s3_endpoint}}}
    with KilledOperator(cluster, tmp_path / "operator.log", seed=14, s3_endpoint=pod_s3_endpoint) as operator, \
            PodWatch(cluster) as pods:
        cluster.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(body))
        _phase(cluster, name, "Running")
        wait_for(lambda: _status(cluster, name).get("lastCheckpoint"), 60, "a checkpoint", interval=0.5)
        worker = cluster.get("pods", "-n", NAMESPACE, "-l", f"segflow.io/job={name},segflow.io/role=worker")
        cluster.kubectl("delete", "pod", "-n", NAMESPACE, worker["items"][0]["metadata"]["name"], "--wait=false")
        wait_for(lambda: _status(cluster, name).get("recoveries", 0) >= 1, 90, "the recovery", interval=0.5)
        _phase(cluster, name, "Running")
        _patch(cluster, name, {"state": "suspended"})
        _phase(cluster, name, "Suspended")
        _patch(cluster, name, {"state": "running"})
        _phase(cluster, name, "Running")
        _patch(cluster, name, {"parallelism": 3})
        wait_for(lambda: (_status(cluster, name).get("deployed") or {}).get("parallelism") == 3, 120,
                 "the rescale", interval=0.5)
        final = _phase(cluster, name, "Completed", "Failed", timeout=240)
        while operator.kills < MIN_KILLS:          # a fast run: keep killing a settled operator
            time.sleep(0.5)
    log = (tmp_path / "operator.log").read_text(errors="replace")
    assert final["phase"] == "Completed", (final, log[-3000:])
    assert operator.kills >= MIN_KILLS
    assert pods.violations == []
    # The one recovery was the worker's (counted by that revision's coordinator); a false
    # one, a live coordinator taken for lost, would have raised recoveriesBase.
    assert final.get("recoveriesBase", 0) == 0, (final, log[-6000:])
    assert s3_lines(f"s3://{bucket}/out", s3_server.endpoint) == windowed_oracle(events)
