"""One job's reconcile loop against a Kubernetes API of dicts: what it writes to the status
(intent first, then only what changed) and what it creates, without a cluster."""
import copy
import json

import pytest
from kubernetes.client.rest import ApiException

from segflow_operator import loop

SPEC = {"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount", "parameters": {"input": "/in"}},
        "parallelism": 2, "checkpointing": {"protocol": "aligned", "stateUrl": "file:///state"}}
NOW = "2026-12-03T12:00:00Z"


def merge(target: dict, patch: dict) -> None:
    """A JSON merge patch, as the API server applies one."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


class DictKube:
    """The calls JobLoop makes of ``Kube``, on one StreamJob and the objects it owns."""

    def __init__(self, spec: dict, refuse: str = ""):
        self.body = {"metadata": {"name": "wc", "namespace": "jobs", "uid": "u1", "generation": 1}, "spec": spec}
        self.objects: dict[tuple[str, str], dict] = {}
        self.patches: list[dict] = []
        self.events: list[str] = []
        self.refuse = refuse                    # a kind the API server refuses to create

    def get_job(self, namespace, name):
        return copy.deepcopy(self.body)

    def pods(self, namespace, job):
        return [copy.deepcopy(o) for (kind, _), o in sorted(self.objects.items()) if kind == "Pod"]

    def create(self, manifest):
        key = (manifest["kind"], manifest["metadata"]["name"])
        if manifest["kind"] == self.refuse:
            raise ApiException(status=403, reason="Forbidden")
        new = key not in self.objects
        self.objects.setdefault(key, manifest)
        return new

    def delete_secret(self, namespace, name):
        self.objects.pop(("Secret", name), None)

    def delete_pod(self, namespace, name):
        self.objects.pop(("Pod", name), None)

    def patch_status(self, namespace, name, status):
        self.patches.append(json.loads(json.dumps(status)))
        merge(self.body.setdefault("status", {}), status)

    def event(self, body, reason, message, warning=False):
        self.events.append(reason)


@pytest.fixture
def job_loop(monkeypatch):
    monkeypatch.setattr(loop, "now", lambda: NOW)

    def make(kube):
        made = loop.JobLoop(kube, "jobs", "wc")
        made.watcher.follow = lambda address, identity=None: None
        return made
    return make


def test_a_new_job_records_its_revision_before_creating_it_and_then_writes_only_what_changed(job_loop):
    kube = DictKube(SPEC)
    job = job_loop(kube)
    job.step()
    intent, done = kube.patches
    assert intent["pendingDeploy"] == {"revision": 1, "restore": ""} and intent["revision"] == 1
    assert (intent["phase"], intent["readyReplicas"], intent["ready"], intent["observedGeneration"]) == \
        ("Deploying", 0, "0/2", 1)
    assert intent["conditions"] == [{"type": "Ready", "status": "False", "reason": "Deploying", "message": "deploying",
                                     "lastTransitionTime": NOW}]
    assert done == {"pendingDeploy": None}
    assert ("Pod", "wc-1-coordinator") in kube.objects and kube.events == ["Deploying"]
    job.step()                                         # the coordinator has no address yet: nothing changed
    assert len(kube.patches) == 2 and kube.events == ["Deploying"]


def test_an_object_the_api_server_refuses_is_reported_once_in_the_status(job_loop):
    kube = DictKube(SPEC, refuse="NetworkPolicy")
    job = job_loop(kube)
    job.step()
    intent, refused = kube.patches
    assert intent["lastError"] == "" and refused == {"lastError": "the API server refused to create NetworkPolicy "
                                                                 "wc-isolation: Forbidden"}
    assert kube.body["status"]["pendingDeploy"] == {"revision": 1, "restore": ""}     # made at the next try
    job.backoff.until = 0.0
    job.step()                                         # refused again: nothing new to say
    assert len(kube.patches) == 2 and kube.events == ["Deploying", "CreateRefused"]
    kube.refuse = ""
    job.backoff.until = 0.0
    job.step()
    assert kube.patches[2:] == [{"pendingDeploy": None}] and ("NetworkPolicy", "wc-isolation") in kube.objects


def test_an_invalid_spec_fails_the_job_with_its_reason(job_loop):
    kube = DictKube({**SPEC, "parallelism": -1})
    job_loop(kube).step()
    (failed,) = kube.patches
    assert failed["phase"] == "Failed" and failed["message"] == f"invalid spec: {failed['lastError']}"
    assert "spec.parallelism" in failed["lastError"] and kube.events == ["Failed"] and kube.objects == {}
