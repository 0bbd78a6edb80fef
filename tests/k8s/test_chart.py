"""The chart and the objects the operator creates, checked offline against Kubernetes'
schemas (kubernetes-validate: 1.25 and the newest it knows); the e2e tests check them on
the 1.20 API server (server-side dry-run)."""
import json
import os
import re
import subprocess

import kubernetes_validate
import pytest
import yaml

from segflow_operator import manifests
from segflow_operator.spec import parse
from support.clusters import HELM, ensure_built
from support.processes import ROOT

VERSIONS = ["1.25.0", kubernetes_validate.latest_version()]
CHART = os.path.join(ROOT, "charts", "segflow")


@pytest.fixture(scope="module")
def helm():
    ensure_built()
    return HELM


def render(helm, *values):
    result = subprocess.run([helm, "template", "segflow", CHART, "--namespace", "segflow-system", *values],
                            capture_output=True, text=True, check=True)
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def test_helm_lint_is_clean(helm):
    result = subprocess.run([helm, "lint", "--strict", CHART], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("values", [[], ["--set", "watchNamespaces={a,b}", "--set", "metrics.enabled=false"]],
                         ids=["cluster-wide", "namespaced"])
def test_rendered_chart_is_valid(helm, version, values):
    documents = render(helm, *values)
    kinds = sorted(d["kind"] for d in documents)
    assert "Deployment" in kinds and "ServiceAccount" in kinds
    job_roles = [d for d in documents if d["kind"] == "Role" and not d["metadata"]["name"].endswith("-leader-election")]
    assert bool(job_roles) == bool(values)                # a Role per watched namespace, else a ClusterRole
    assert any(d["kind"] == "Role" and d["metadata"]["name"].endswith("-leader-election") for d in documents)
    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_crd_is_valid(version):
    with open(os.path.join(CHART, "crds", "streamjobs.segflow.io.yaml")) as f:
        kubernetes_validate.validate(yaml.safe_load(f), version, strict=True)


@pytest.mark.parametrize("version", VERSIONS)
def test_objects_the_operator_creates_are_valid(version):
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob",
            "metadata": {"name": "wc", "namespace": "jobs", "uid": "0d7a-uid"}}
    spec = parse({"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount"}, "parallelism": 2,
                  "resources": {"limits": {"memory": "512Mi"}},
                  "checkpointing": {"stateUrl": "s3://bucket/jobs", "s3Endpoint": "http://s3:9000"},
                  "batchStage": {"module": "examples/lambda/daily.py", "function": "daily",
                                 "input": "s3://bucket/bids", "output": "s3://bucket/daily"}})
    objects = [manifests.config_map(body, spec), *manifests.services(body, spec),
               manifests.coordinator_pod(body, spec, 3, "auto"), manifests.worker_pod(body, spec, 3, 1, "10.1.2.3")]
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_chart_ships_the_dashboard_and_a_pod_monitor_when_asked(helm):
    assert not any(d["kind"] in ("PodMonitor", "ConfigMap") for d in render(helm))
    documents = render(helm, "--set", "podMonitor.enabled=true", "--set", "podMonitor.labels.release=prom",
                       "--set", "grafanaDashboard.enabled=true")
    dashboard = next(d for d in documents if d["kind"] == "ConfigMap")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    with open(os.path.join(CHART, "dashboards", "segflow.json")) as f:
        assert json.loads(dashboard["data"]["segflow.json"]) == json.load(f)
    monitor = next(d for d in documents if d["kind"] == "PodMonitor")
    assert monitor["metadata"]["labels"]["release"] == "prom"
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
    body = {"metadata": {"name": "wc", "namespace": "jobs", "uid": "u"}}
    pod = manifests.worker_pod(body, parse({"image": "i", "job": {"module": "m"},
                                            "checkpointing": {"protocol": "none"}}),
                               1, 0, "10.0.0.1")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert any(p["name"] == "metrics" for p in pod["spec"]["containers"][0]["ports"])


@pytest.mark.parametrize("value, valid", [("", True), ("12", True), ("s3://b/p/latest", True),
                                          ("s3://b/p/jobs/wc/chk-00000012/", True),
                                          ("file:///state/jobs/default-wc/chk-7", True),
                                          ("s3://b/p/jobs/wc", False), ("newest", False)])
def test_the_crd_accepts_a_savepoint_location_in_restore_from(value, valid):
    with open(os.path.join(CHART, "crds", "streamjobs.segflow.io.yaml")) as f:
        crd = yaml.safe_load(f)
    pattern = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "restoreFrom"]["pattern"]
    assert bool(re.search(pattern, value)) is valid


def test_every_status_field_takes_what_the_operator_writes_empty():
    """The 1.20 API server refuses an empty string in a typed, non-nullable field (it
    reports it as null), and the operator writes empty strings to clear fields."""
    with open(os.path.join(CHART, "crds", "streamjobs.segflow.io.yaml")) as f:
        crd = yaml.safe_load(f)
    status = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]

    def fields(schema, path):
        for name, sub in (schema.get("properties") or {}).items():
            yield f"{path}.{name}", sub
            yield from fields(sub, f"{path}.{name}")
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                yield f"{path}[{key}]", schema[key]
                yield from fields(schema[key], f"{path}[{key}]")
    assert [path for path, sub in fields(status, "status") if not sub.get("nullable")] == []
