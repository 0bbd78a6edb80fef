"""``spec.standbyWorkers``: the operator keeps that many more worker pods, started with
``--standby``, beside the ``parallelism`` ones; the coordinator is told to expect them and
the revision's certificates cover them. Decisions and manifests only (no cluster)."""
import pytest

from segflow_operator.manifests import coordinator_pod, tls_secret, worker_pod
from segflow_operator.reconcile import CoordinatorView, CreateWorkers, JobStatus, Observed, PodView, decide
from segflow_operator.spec import InvalidSpec, parse

BODY = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "j", "namespace": "n",
                                                                                "uid": "u"}}
BASE = {"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount"}, "parallelism": 2,
        "checkpointing": {"protocol": "aligned", "stateUrl": "file:///state"}}


def args(pod):
    return pod["spec"]["containers"][0]["args"]


def test_standby_pods_stand_by_and_the_coordinator_expects_them():
    spec = parse({**BASE, "standbyWorkers": 1})
    assert spec.standby_workers == 1
    coordinator = args(coordinator_pod(BODY, spec, 1, ""))
    assert coordinator[coordinator.index("--standby-workers") + 1] == "1"
    assert "--standby" not in args(worker_pod(BODY, spec, 1, 1, "10.0.0.1"))
    assert "--standby" in args(worker_pod(BODY, spec, 1, 2, "10.0.0.1"))
    assert {k for k in tls_secret(BODY, spec, 1)["data"] if k.startswith("w")} == {
        f"w{i}.{kind}" for i in range(3) for kind in ("crt", "key")}
    assert "--standby-workers" not in args(coordinator_pod(BODY, parse(BASE), 1, ""))
    assert parse(BASE).deployment_hash() != spec.deployment_hash()


@pytest.mark.parametrize("value", [-1, 17, "two"])
def test_a_bad_standby_count_is_refused_by_name(value):
    with pytest.raises(InvalidSpec, match="spec.standbyWorkers"):
        parse({**BASE, "standbyWorkers": value})


def test_the_operator_creates_and_replaces_standby_pods_as_workers():
    spec = parse({**BASE, "standbyWorkers": 1})
    status = JobStatus.parse({"phase": "Running", "revision": 1, "deployed": {"hash": spec.deployment_hash()}})
    coordinator = PodView("j-1-coordinator", "coordinator", 1, phase="Running", ip="127.9.0.2")
    fresh = decide(spec, status, Observed((coordinator,), CoordinatorView("WAITING_FOR_WORKERS")))
    assert CreateWorkers(1, (0, 1, 2), "127.9.0.2") in fresh.actions
    running = tuple(PodView(f"j-1-worker-{i}", "worker", 1, index=i, phase="Running", ready=True) for i in (0, 2))
    lost = decide(spec, status, Observed((coordinator, *running), CoordinatorView("RUNNING")))
    assert CreateWorkers(1, (1,), "127.9.0.2") in lost.actions
    assert lost.status.ready == "2/3"
