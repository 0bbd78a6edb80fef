"""Triggers at a replica that no barrier can reach once its regular inputs end (a loop's
head after its source finished). The worker's trigger and the source's Terminate travel
different ways, so the trigger may come first; the checkpoint must still start there, or
the loop stalls behind its half-aligned barrier (seen as a hang of pagerank after its
source ended, under every coordinated protocol)."""
from types import SimpleNamespace

import pytest

from segflow.checkpoint.aligned import AlignedSnapshots
from segflow.checkpoint.unaligned import UnalignedSnapshots
from segflow.runtime.elements import Barrier

OUTER_A, OUTER_B, BACK = (0, 0), (0, 1), (1, 0)     # two senders of the loop's input; its back edge


class LoopHead:
    """What a protocol needs of an executor: channels, state, and where barriers go."""

    def __init__(self):
        self.ctx = SimpleNamespace(block=3, index=0)
        self.finished = False
        self.records = 0
        self.forwarded: list[int] = []
        self.barrier_seconds = 0.0

    def input_channels(self) -> list:
        return [OUTER_A, OUTER_B, BACK]

    def back_edge_inputs(self) -> set:
        return {BACK[0]}

    def capture(self, checkpoint_id: int) -> bytes:
        return f"{self.records} records".encode()

    def forward(self, element) -> None:
        self.forwarded.append(element.checkpoint_id)

    def replay(self, messages: list) -> None:
        assert not messages, "nothing was blocked in these cases"


class Worker:
    def __init__(self):
        self.snapshots: list[tuple[int, bytes]] = []

    def snapshot_done(self, block, replica, checkpoint_id, state, channels, timing, finished, window) -> None:
        self.snapshots.append((checkpoint_id, state))


@pytest.fixture(params=[AlignedSnapshots, UnalignedSnapshots], ids=["aligned", "unaligned"])
def head(request):
    replica, worker = LoopHead(), Worker()
    return replica, worker, request.param(replica, worker)


def barriers_everywhere(protocol, checkpoint_id: int) -> None:
    """Checkpoint ``checkpoint_id`` as barriers take it: through every input, then back."""
    for channel in (OUTER_A, OUTER_B, BACK):
        protocol.on_barrier(*channel, Barrier(checkpoint_id))


def test_a_trigger_that_outruns_the_last_terminate_starts_when_that_channel_closes(head):
    replica, worker, protocol = head
    protocol.on_channel_closed(OUTER_A)
    protocol.on_trigger(5)
    assert replica.forwarded == [], "a barrier may still come through OUTER_B"
    replica.records = 7
    protocol.on_channel_closed(OUTER_B)
    assert replica.forwarded == [5]
    protocol.on_barrier(*BACK, Barrier(5))
    assert worker.snapshots == [(5, b"7 records")]


def test_a_trigger_whose_barrier_came_by_a_channel_is_taken_once(head):
    replica, worker, protocol = head
    protocol.on_trigger(5)
    barriers_everywhere(protocol, 5)
    protocol.on_channel_closed(OUTER_A)
    protocol.on_channel_closed(OUTER_B)
    protocol.on_trigger(6)
    protocol.on_barrier(*BACK, Barrier(6))
    assert replica.forwarded == [5, 6] and [n for n, _ in worker.snapshots] == [5, 6]


def test_triggers_kept_for_a_closing_channel_run_in_order_and_skip_what_completed(head):
    replica, worker, protocol = head
    protocol.on_trigger(4)
    barriers_everywhere(protocol, 4)
    protocol.on_trigger(6)
    protocol.on_trigger(5)
    protocol.on_channel_closed(OUTER_A)
    protocol.on_channel_closed(OUTER_B)
    assert replica.forwarded == [4, 5, 6]


def test_a_replica_that_ends_with_its_inputs_leaves_a_kept_trigger_to_its_worker(head):
    """Its worker snapshots a finished replica from outside; a barrier after its
    Terminate would go nowhere."""
    replica, worker, protocol = head
    protocol.on_channel_closed(OUTER_A)
    protocol.on_trigger(5)
    replica.finished = True
    protocol.on_channel_closed(OUTER_B)
    assert replica.forwarded == [] and worker.snapshots == []
