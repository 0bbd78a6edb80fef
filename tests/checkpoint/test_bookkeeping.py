"""The coordinator's checkpoint bookkeeping against a real file store, without a running
job: savepoints hear how their round ended on every path, and an acknowledgement the
worker repeats (its first answer was lost) counts once."""
import os

from segflow import StreamEnvironment
from segflow.api.environment import Config
from segflow.checkpoint.layout import checkpoint_prefix
from segflow.coordinator.bookkeeping import CheckpointBookkeeping
from segflow.observability.history import JobHistory
from segflow.settings import CheckpointSettings
from segflow.v1 import control_pb2 as cpb

JOB = "book"


def _graph():
    env = StreamEnvironment(Config(parallelism=1))
    env.generate(lambda i: i, count=10).map(lambda x: x + 1).collect()
    return env.graph


class Recorder:
    def __init__(self):
        self.commands, self.fenced, self.final_failures = [], [], 0

    def broadcast(self, command):
        self.commands.append((command.kind, command.checkpoint_id))

    def fence(self, reason):
        self.fenced.append(reason)

    def final_failed(self):
        self.final_failures += 1


def _book(tmp_path, **settings):
    recorder = Recorder()
    options = {"protocol": "aligned", "interval": 1.0, "state_url": f"file://{tmp_path}", "job_name": JOB,
               **settings}
    book = CheckpointBookkeeping(_graph(), CheckpointSettings(**options), JobHistory(), recorder.broadcast,
                                 recorder.fence, recorder.final_failed)
    book.reset({(0, 0)}, 0.0, attempt=0)
    return book, recorder


def _ack(ok=True, size=10, error=""):
    return cpb.ReplicaAck(block=0, replica=0, ok=ok, bytes=size, error=error)


def test_a_savepoint_is_answered_once_its_round_is_recorded(tmp_path):
    book, recorder = _book(tmp_path)
    waiter = book.start_savepoint()
    assert not book.idle and (cpb.Command.CHECKPOINT, waiter.checkpoint_id) in recorder.commands
    book.acknowledge(waiter.checkpoint_id, [_ack()])
    assert waiter.ended.is_set() and waiter.error == ""
    assert book.catalog.metadata(waiter.checkpoint_id)["savepoint"] is True
    assert book.last_savepoint == waiter.checkpoint_id and book.idle
    assert str(tmp_path) in book.location(waiter.checkpoint_id)


def test_a_savepoint_hears_a_failed_snapshot(tmp_path):
    book, _ = _book(tmp_path)
    waiter = book.start_savepoint()
    book.acknowledge(waiter.checkpoint_id, [_ack(ok=False, error="redis down")])
    assert waiter.ended.is_set() and waiter.error == "redis down"
    assert book.catalog.metadata(waiter.checkpoint_id) is None and book.last_savepoint == 0


def test_a_savepoint_hears_that_its_checkpoint_could_not_be_recorded(tmp_path):
    book, _ = _book(tmp_path)
    waiter = book.start_savepoint()
    # the checkpoint's directory is a file: its completion marker cannot be written
    blocked = os.path.join(tmp_path, checkpoint_prefix(JOB, waiter.checkpoint_id).rstrip("/"))
    os.makedirs(os.path.dirname(blocked), exist_ok=True)
    with open(blocked, "w") as f:
        f.write("in the way")
    book.acknowledge(waiter.checkpoint_id, [_ack()])
    assert waiter.ended.is_set() and "could not be recorded" in waiter.error, waiter.error
    assert book.tracker.last_complete is None and book.last_savepoint == 0
    assert book.idle, "the next round may start"


def test_a_savepoint_hears_that_its_round_timed_out(tmp_path):
    book, _ = _book(tmp_path)
    waiter = book.start_savepoint()
    started = book.tracker.current.started
    book.tick(started + book.tracker.timeout + 1, trigger=False)
    assert waiter.ended.is_set() and "timed out" in waiter.error
    assert waiter.error.endswith("waiting for 1 of 1 replicas: b0.r0"), waiter.error


def test_a_repeated_acknowledgement_counts_once(tmp_path):
    book, _ = _book(tmp_path)
    book.reset({(0, 0), (0, 1)}, 0.0, attempt=1)
    waiter = book.start_savepoint()
    book.acknowledge(waiter.checkpoint_id, [_ack(size=10)])
    book.acknowledge(waiter.checkpoint_id, [_ack(size=10)])
    assert not waiter.ended.is_set(), "one replica's ack, twice, completed a round of two"
    book.acknowledge(waiter.checkpoint_id, [cpb.ReplicaAck(block=0, replica=1, ok=True, bytes=5)])
    assert waiter.ended.is_set() and waiter.error == ""
    meta = book.catalog.metadata(waiter.checkpoint_id)
    assert meta["bytes"] == 15 and meta["attempt"] == 1
