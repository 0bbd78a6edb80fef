"""The node agent's rules that need no cluster: which images run and how, Kubernetes'
``$(VAR)`` expansion and environment sources, the kubelet's pod phase, and relisting after
an expired watch (a 410 is hard to provoke on a real API server within a test)."""
import base64
import os
import queue
import sys
import threading

import pytest

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent import podspec, watcher  # noqa: E402
from nodeagent.kube import WatchExpired  # noqa: E402
from nodeagent.status import ContainerState, phase, terminated  # noqa: E402


@pytest.mark.parametrize("image, repository", [
    ("segflow/engine", "segflow/engine"), ("segflow/engine:0.1.0", "segflow/engine"),
    ("registry.example.com:5000/acme/segflow/operator:1.2@sha256:ab12", "segflow/operator"),
    ("nginx:1.25", "nginx")])
def test_image_repository(image, repository):
    assert podspec.repository(image) == repository


def test_command_line_uses_the_image_entrypoint_unless_a_command_is_given():
    assert podspec.command_line({"image": "segflow/engine:1", "args": ["run", "x"]}) == ["segflow", "run", "x"]
    assert podspec.command_line({"image": "segflow/operator", "command": ["python"], "args": ["-V"]}) == \
        ["python", "-V"]
    with pytest.raises(podspec.UnknownImage, match="'busybox' is unknown"):
        podspec.command_line({"image": "busybox", "command": ["sh"]})


def test_expansion_follows_kubernetes():
    env = {"A": "x"}
    assert podspec.expand("$(A)-$$(A)-$(B)-$$", env) == "x-$(A)-$(B)-$"


def test_environment_sources():
    data = {("configmap", "cm"): {"k": "v", "other": "o"}, ("secret", "s"): {"pw": base64.b64encode(b"pa").decode()}}
    pod = {"metadata": {"name": "p", "namespace": "ns", "labels": {"b": "2", "a": "1"}}, "spec": {}}
    container = {"envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
                 "env": [{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "s", "key": "pw"}}},
                         {"name": "LABELS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels"}}},
                         {"name": "MAYBE", "valueFrom": {"configMapKeyRef": {"name": "none", "key": "k",
                                                                              "optional": True}}},
                         {"name": "BOTH", "value": "$(CM_k)/$(PW)/$(BASE)"}]}
    env = podspec.environment(pod, container, "127.10.0.2", "127.0.0.1", lambda kind, name: data.get((kind, name)),
                              {"BASE": "b"})
    assert env == {"BASE": "b", "CM_k": "v", "CM_other": "o", "PW": "pa", "LABELS": 'a="1"\nb="2"', "BOTH": "v/pa/b"}
    missing = {"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "absent"}}}]}
    with pytest.raises(podspec.ContainerConfigError, match="has no key 'absent'"):
        podspec.environment(pod, missing, "", "", lambda kind, name: data.get((kind, name)), {})


def state(**fields) -> ContainerState:
    return ContainerState("c", "segflow/engine", **fields)


@pytest.mark.parametrize("policy, states, expected", [
    ("Never", [state()], "Pending"),
    ("Never", [state(running_since="t")], "Running"),
    ("Never", [state(terminated=terminated(0, "t"))], "Succeeded"),
    ("Never", [state(terminated=terminated(0, "t")), state(terminated=terminated(2, "t"))], "Failed"),
    ("OnFailure", [state(terminated=terminated(0, "t"))], "Succeeded"),
    ("OnFailure", [state(last=terminated(1, "t"), waiting=("CrashLoopBackOff", ""))], "Running"),
    ("Always", [state(last=terminated(0, "t"), waiting=("CrashLoopBackOff", ""))], "Running"),
    ("Always", [state(running_since="t"), state()], "Pending"),
])
def test_pod_phase_follows_the_kubelet(policy, states, expected):
    assert phase(policy, states) == expected


class ExpiringKube:
    """Lists twice; the first watch expires (410), the second delivers one event."""

    def __init__(self, stopping: threading.Event):
        self.stopping, self.lists, self.watches = stopping, 0, []

    def list(self, kind, selector):
        assert kind == "pods"
        self.lists += 1
        return [{"metadata": {"uid": f"listed-{self.lists}", "resourceVersion": "1"}}], str(10 * self.lists)

    def watch(self, kind, selector, version):
        self.watches.append(version)
        if len(self.watches) == 1:
            raise WatchExpired("too old resource version")
        self.stopping.set()
        yield "ADDED", {"metadata": {"uid": "new", "resourceVersion": "21"}}


def test_an_expired_watch_lists_again(monkeypatch):
    stopping, events = threading.Event(), queue.Queue()
    kube = ExpiringKube(stopping)
    monkeypatch.setattr(watcher, "Kube", lambda kubeconfig: kube)
    thread = watcher.Watcher("node", "unused", "spec.nodeName=n", events, stopping)
    thread.start()
    thread.join(10)
    received = [(kind, payload if kind != "SYNC" else [p["metadata"]["uid"] for p in payload])
                for _, kind, payload in list(events.queue)]
    assert received == [("SYNC", ["listed-1"]), ("SYNC", ["listed-2"]),
                        ("ADDED", {"metadata": {"uid": "new", "resourceVersion": "21"}})]
    assert kube.watches == ["10", "20"]        # each watch starts from its own list's version
