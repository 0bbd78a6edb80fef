"""A worker's acknowledgement that the coordinator did not answer is sent again (a lost
one would hold its checkpoint, and a savepoint waiting on it, until the round times out);
an answer that refuses it is not."""
import grpc
import pytest

from segflow.worker.agent import deliver


class Refusal(grpc.RpcError):
    def __init__(self, code):
        self._code = code

    def code(self):
        return self._code

    def details(self):
        return self._code.name


class Coordinator:
    """Answers after ``failures`` calls that fail with ``code``."""

    def __init__(self, failures, code):
        self.failures, self.code, self.calls = failures, code, []

    def __call__(self, request, timeout):
        self.calls.append((request, timeout))
        if len(self.calls) <= self.failures:
            raise Refusal(self.code)
        return "ack"


@pytest.mark.parametrize("code", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED])
def test_an_unanswered_acknowledgement_is_sent_again(code):
    coordinator = Coordinator(2, code)
    assert deliver(coordinator, "acks", pause=0.01) == "ack"
    assert [r for r, _ in coordinator.calls] == ["acks"] * 3


def test_it_gives_up_after_its_attempts():
    coordinator = Coordinator(5, grpc.StatusCode.UNAVAILABLE)
    with pytest.raises(grpc.RpcError):
        deliver(coordinator, "acks", attempts=3, pause=0.01)
    assert len(coordinator.calls) == 3


def test_a_refusal_is_not_sent_again():
    coordinator = Coordinator(1, grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(grpc.RpcError):
        deliver(coordinator, "acks", pause=0.01)
    assert len(coordinator.calls) == 1
