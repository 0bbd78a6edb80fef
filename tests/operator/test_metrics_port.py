"""Every job pod serves /metrics on a fixed, configurable port that Prometheus can find."""
import pytest

from segflow_operator.manifests import coordinator_pod, services, web_url, worker_pod
from segflow_operator.spec import DEFAULT_METRICS_PORT, InvalidSpec, parse

BODY = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob",
        "metadata": {"name": "j", "namespace": "n", "uid": "u1"}}
BASE = {"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount"},
        "checkpointing": {"protocol": "none"}}


def _container(pod: dict) -> dict:
    return pod["spec"]["containers"][0]


@pytest.mark.parametrize("port", [None, 9500])
def test_pods_declare_the_port_and_serve_on_it(port):
    spec = parse({**BASE, **({"metricsPort": port} if port else {})})
    expected = port or DEFAULT_METRICS_PORT
    for pod in (coordinator_pod(BODY, spec, 1, ""), worker_pod(BODY, spec, 1, 0, "10.0.0.1")):
        container = _container(pod)
        assert {"name": "metrics", "containerPort": expected, "protocol": "TCP"} in container["ports"]
        args = container["args"]
        assert args[args.index("--metrics-port") + 1] == str(expected)
    coordinator, workers = services(BODY, spec)
    assert {"name": "metrics", "port": expected, "targetPort": "metrics"} in coordinator["spec"]["ports"]
    assert web_url("n", "j", spec) == f"http://j-coordinator.n.svc:{expected}/"


def test_changing_the_port_redeploys_and_the_default_keeps_older_hashes():
    default = parse(BASE)
    assert parse({**BASE, "metricsPort": DEFAULT_METRICS_PORT}).deployment_hash() == default.deployment_hash()
    assert parse({**BASE, "metricsPort": 9500}).deployment_hash() != default.deployment_hash()


@pytest.mark.parametrize("port", [80, 7070, 70000, "x"])
def test_a_port_that_cannot_work_is_refused(port):
    with pytest.raises(InvalidSpec, match="metricsPort"):
        parse({**BASE, "metricsPort": port})


def test_the_metrics_bind_address_is_passed_when_the_operator_is_told_one():
    spec = parse(BASE)
    for pod in (coordinator_pod(BODY, spec, 1, "", metrics_host="0.0.0.0"),
                worker_pod(BODY, spec, 1, 0, "10.0.0.1", metrics_host="0.0.0.0")):
        args = _container(pod)["args"]
        assert args[args.index("--metrics-host") + 1] == "0.0.0.0"
    assert "--metrics-host" not in _container(worker_pod(BODY, spec, 1, 0, "10.0.0.1"))["args"]
