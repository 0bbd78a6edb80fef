"""The kopf handlers reach Kubernetes through the client in their ``memo``: a test hands
them its own and sees what they would write."""
import kopf
import pytest

from segflow.coordinator.client import Savepoint
from segflow_operator import handlers

BODY = {"metadata": {"name": "wc", "namespace": "jobs", "uid": "u1"}}
RUNNING = {"phase": "Running", "coordinatorIP": "10.0.0.7", "revision": 2, "kopf": {}}


class RecordingKube:
    def __init__(self):
        self.patches, self.events = [], []

    def patch_status(self, namespace, name, status):
        self.patches.append((namespace, name, status))

    def event(self, body, reason, message, warning=False):
        self.events.append(reason)


@pytest.fixture
def coordinator(monkeypatch):
    asked = []
    monkeypatch.setattr(handlers, "client_identity", lambda kube, namespace, name, revision: (kube, revision))
    monkeypatch.setattr(handlers, "request_savepoint",
                        lambda address, identity, timeout: asked.append((address, identity)) or
                        Savepoint(12, "s3://b/chk-12"))
    monkeypatch.setattr(handlers, "now", lambda: "2026-12-03T12:00:00Z")
    return asked


def test_the_final_savepoint_is_taken_and_recorded_through_the_memos_client(coordinator):
    kube = RecordingKube()
    handlers.final_savepoint(status=RUNNING, body=BODY, namespace="jobs", name="wc", memo=kopf.Memo(kube=kube))
    assert coordinator == [(f"10.0.0.7:{handlers.COORDINATOR_PORT}", (kube, 2))]
    assert kube.patches == [("jobs", "wc", {"finalSavepoint": {"id": 12, "time": "2026-12-03T12:00:00Z",
                                                               "location": "s3://b/chk-12"}})]
    assert kube.events == ["Savepoint"]


@pytest.mark.parametrize("status", [{**RUNNING, "phase": "Suspended"}, {**RUNNING, "coordinatorIP": ""},
                                    {**RUNNING, "finalSavepoint": {"id": 3, "time": "t", "location": "l"}}])
def test_no_final_savepoint_of_a_job_not_running_or_already_saved(coordinator, status):
    kube = RecordingKube()
    handlers.final_savepoint(status=status, body=BODY, namespace="jobs", name="wc", memo=kopf.Memo(kube=kube))
    assert coordinator == [] and kube.patches == [] and kube.events == []
