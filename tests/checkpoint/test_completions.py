"""A completed checkpoint reaches a replica's operators on the replica's own thread, never
beside its other calls: a transactional sink publishes its pending epochs there, and
publishing while the same sink stages a new epoch or closes (a sink chained into its
source's block, or a replica that is ending) races over the pending epochs."""
import threading

from segflow.plan.graph import BlockSpec, OperatorSpec
from segflow.runtime.elements import Batch
from segflow.runtime.executor import ReplicaExecutor, SourceOperator
from segflow.runtime.operator import Operator, ReplicaContext
from segflow.runtime.routing import Router

WAIT = 10.0


class Gate(SourceOperator):
    """One batch, then nothing until ``release`` is set, then the end."""

    def __init__(self):
        self.sent = False
        self.release = threading.Event()

    def poll(self, max_items: int):
        if not self.sent:
            self.sent = True
            return Batch([1, 2, 3])
        if self.release.wait(0.01):
            return None
        return Batch([])


class Witness(Operator):
    """A sink that records which thread makes each call, and whether calls overlap."""

    def __init__(self, hold_close: threading.Event | None = None):
        self.calls: list[tuple[str, int, int]] = []       # (call, checkpoint or records, thread)
        self.inside = 0
        self.overlaps: list[str] = []
        self.processed = threading.Event()
        self.completed = threading.Event()
        self.closing = threading.Event()
        self.hold_close = hold_close

    def _call(self, name: str, value: int) -> None:
        self.inside += 1
        if self.inside > 1:
            self.overlaps.append(name)
        self.calls.append((name, value, threading.get_ident()))

    def _leave(self) -> None:
        self.inside -= 1

    def process(self, batch):
        self._call("process", len(batch.items))
        self._leave()
        self.processed.set()

    def on_checkpoint_complete(self, checkpoint_id: int) -> None:
        self._call("complete", checkpoint_id)
        self._leave()
        self.completed.set()

    def close(self) -> None:
        self._call("close", 0)
        self.closing.set()
        if self.hold_close is not None:
            assert self.hold_close.wait(WAIT)
        self._leave()


def source_block_with(sink: Witness) -> tuple[ReplicaExecutor, Gate]:
    source = Gate()
    block = BlockSpec(0, [OperatorSpec("gate", lambda: source), OperatorSpec("witness", lambda: sink)], is_source=True)
    ctx = ReplicaContext(0, 0, 1, "w0", lambda port, item: None, lambda sink_id, items: None)
    return ReplicaExecutor(block, ctx, [], None, Router({})), source


def started(executor: ReplicaExecutor) -> threading.Thread:
    thread = threading.Thread(target=executor.run, daemon=True)
    thread.start()
    return thread


def test_a_source_blocks_sink_hears_of_a_completed_checkpoint_on_the_replicas_thread():
    sink = Witness()
    executor, source = source_block_with(sink)
    thread = started(executor)
    assert sink.processed.wait(WAIT)
    executor.notify_complete(1)
    assert sink.completed.wait(WAIT)
    source.release.set()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert [(call, value) for call, value, _ in sink.calls] == [("process", 3), ("complete", 1), ("close", 0)]
    assert {ident for _, _, ident in sink.calls} == {thread.ident}, "a call came from the notifying thread"


def test_a_completion_that_comes_while_the_replica_closes_waits_until_it_has_closed():
    hold = threading.Event()
    sink = Witness(hold_close=hold)
    executor, source = source_block_with(sink)
    source.release.set()
    thread = started(executor)
    assert sink.closing.wait(WAIT)
    notifier = threading.Thread(target=executor.notify_complete, args=(2,), daemon=True)
    notifier.start()
    assert not sink.completed.wait(0.3), "the sink published while it was closing"
    hold.set()
    notifier.join(WAIT)
    thread.join(WAIT)
    assert sink.completed.is_set(), "the completion was lost"
    assert [call for call, _, _ in sink.calls] == ["process", "close", "complete"]
    assert not sink.overlaps


def test_a_completion_after_the_replica_has_ended_is_heard_at_once():
    sink = Witness()
    executor, source = source_block_with(sink)
    source.release.set()
    started(executor).join(WAIT)
    executor.notify_complete(3)
    assert sink.calls[-1][:2] == ("complete", 3)
    assert sink.calls[-1][2] == threading.get_ident()
