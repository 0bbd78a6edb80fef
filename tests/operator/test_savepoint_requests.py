"""Savepoint requests run beside the reconcile loop: starting one returns at once, its
outcome is read later, and the same request is never sent twice while in flight."""
import threading
from dataclasses import replace

from segflow.coordinator.client import Savepoint
from segflow.errors import SegflowError
from segflow_operator.reconcile.status import SavepointInProgress
from segflow_operator.savepoint_requests import SavepointRequests

WANTED = SavepointInProgress(then="record", nonce=3, revision=2)


def wait_until(condition, timeout=5.0):
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("condition not reached")


def test_a_request_is_started_without_waiting_and_its_outcome_read_later():
    release, calls = threading.Event(), []

    def ask(address, revision, timeout):
        calls.append(address)
        release.wait(5)
        return Savepoint(17, "file:///state/jobs/wc/chk-17")

    requests = SavepointRequests(ask)
    requests.start("10.0.0.1:6123", "record", 3, 2)
    requests.start("10.0.0.1:6123", "record", 3, 2)
    assert requests.view(WANTED).pending
    release.set()
    wait_until(lambda: not requests.view(WANTED).pending)
    assert requests.view(WANTED).savepoint_id == 17 and calls == ["10.0.0.1:6123"]
    assert requests.view(WANTED).location == "file:///state/jobs/wc/chk-17"


def test_a_failure_is_kept_as_the_outcome_and_other_requests_are_not_confused_with_it():
    def ask(address, revision, timeout):
        raise SegflowError("the coordinator at 10.0.0.1:6123 did not answer")

    requests = SavepointRequests(ask)
    assert requests.view(WANTED) is None
    requests.start("10.0.0.1:6123", "record", 3, 2)
    wait_until(lambda: not requests.view(WANTED).pending)
    assert "did not answer" in requests.view(WANTED).error
    assert requests.view(replace(WANTED, nonce=4)) is None and requests.view(None) is None
