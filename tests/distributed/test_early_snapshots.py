"""A barrier travels the data plane, the coordinator's ask to checkpoint travels the
control plane: a replica downstream of another worker may snapshot before its own worker
has been asked. Its snapshot waits for the ask and is acknowledged with the others; it
used to be dropped, which left the round open until it timed out (a minute without
checkpoints, seen as a job whose first commit came at its end)."""
from segflow.checkpoint.barriers import BarrierTiming
from segflow.checkpoint.catalog import Catalog
from segflow.plan.placement import ReplicaId
from segflow.state import open_backend
from segflow.worker.agent import CheckpointAgent

SOURCE, SINK = ReplicaId(0, 0), ReplicaId(1, 0)


class Replica:
    def __init__(self):
        self.triggered, self.finished = [], []

    def trigger(self, checkpoint_id):
        self.triggered.append(checkpoint_id)

    def snapshot_finished(self, checkpoint_id):
        self.finished.append(checkpoint_id)


class Coordinator:
    def __init__(self):
        self.acks = []

    def Acknowledge(self, request, timeout):
        self.acks.extend((request.checkpoint_id, ack.block, ack.replica) for ack in request.acks)


def agent_for(tmp_path):
    replicas = {SOURCE: Replica(), SINK: Replica()}
    coordinator = Coordinator()
    agent = CheckpointAgent("w0", 0, Catalog(open_backend(f"file://{tmp_path}/state"), "job"), coordinator, replicas)
    return agent, replicas, coordinator


def snapshot(agent, rid, checkpoint_id):
    agent.snapshot_done(rid.block, rid.index, checkpoint_id, b"state", {}, BarrierTiming(), False)


def test_a_snapshot_before_the_ask_is_acknowledged_once_asked(tmp_path):
    agent, replicas, coordinator = agent_for(tmp_path)
    snapshot(agent, SINK, 1)                      # the barrier came first
    agent.checkpoint(1)
    assert replicas[SOURCE].triggered == [1] and replicas[SINK].triggered == [], "the sink was asked twice"
    snapshot(agent, SOURCE, 1)
    agent.close()
    assert sorted(coordinator.acks) == [(1, 0, 0), (1, 1, 0)]
    catalog = Catalog(open_backend(f"file://{tmp_path}/state"), "job")
    assert catalog.read(1, 0, 0) and catalog.read(1, 1, 0)


def test_a_snapshot_of_a_round_already_asked_and_done_is_not_taken_twice(tmp_path):
    agent, _, coordinator = agent_for(tmp_path)
    agent.checkpoint(1)
    snapshot(agent, SOURCE, 1)
    snapshot(agent, SINK, 1)
    snapshot(agent, SINK, 1)
    agent.close()
    assert sorted(coordinator.acks) == [(1, 0, 0), (1, 1, 0)]


def test_early_snapshots_of_a_round_never_asked_are_let_go_when_a_later_one_is(tmp_path):
    agent, _, coordinator = agent_for(tmp_path)
    snapshot(agent, SINK, 3)
    agent.checkpoint(4)
    assert agent.early == {}
    snapshot(agent, SINK, 3)                       # older than the newest ask: not kept
    assert agent.early == {}
    agent.close()
    assert coordinator.acks == []
