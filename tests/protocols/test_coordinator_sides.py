"""Each family's coordinator side decides on its own, against a real file store and no
running job: what a lost worker makes the next attempt restore, and what the status says."""
import pytest

from segflow import StreamEnvironment
from segflow.api.environment import Config
from segflow.checkpoint.catalog import Catalog
from segflow.checkpoint.protocols import CheckpointProtocol
from segflow.checkpoint.recovery_line import CheckpointRecord
from segflow.checkpoint.restore_plan import LineRestore
from segflow.errors import SegflowError
from segflow.plan.signature import layout
from segflow.protocols.cleanup import StoreCleanup
from segflow.protocols.complete import CompleteCheckpoints, NoIntactCheckpoint
from segflow.protocols.coordinator_side import ProtocolContext
from segflow.protocols.local import LocalCheckpointLines
from segflow.protocols.registry import family
from segflow.protocols.restore_checks import RestoreChecks
from segflow.settings import CheckpointSettings
from segflow.state import open_backend
from segflow.v1 import control_pb2 as cpb

JOB = "sides"


def _graph():
    env = StreamEnvironment(Config(parallelism=1))
    env.generate(lambda i: i, count=10).map(lambda x: x + 1).collect()
    return env.graph


def _side(tmp_path, protocol: str, commands: list):
    settings = CheckpointSettings(protocol=protocol, interval=1.0, state_url=f"file://{tmp_path}", job_name=JOB)
    catalog = Catalog(open_backend(settings.state_url), JOB)
    graph = _graph()
    context = ProtocolContext(graph, settings, catalog, StoreCleanup(catalog),
                              RestoreChecks(catalog, settings, layout(graph)), layout(graph), commands.append)
    side = family(CheckpointProtocol.parse(protocol)).coordinator(context)
    side.choose_restore()
    return side


@pytest.mark.parametrize("protocol", ["aligned", "unaligned"])
def test_a_complete_checkpoint_family_restores_the_newest_complete_checkpoint(tmp_path, protocol):
    side = _side(tmp_path, protocol, [])
    assert isinstance(side, CompleteCheckpoints)
    assert side.restoring() == "the start (no checkpoint yet)"
    side.recover("w0", ["w0", "w1"], last_complete=None)
    assert (side.restore_id, side.restored()) == (0, "")
    side.recover("w0", ["w0", "w1"], last_complete=7)
    assert (side.restore_id, side.restoring(), side.restored()) == (7, "checkpoint 7", "checkpoint 7")
    assert side.plan is None


def test_with_every_checkpoint_damaged_nothing_is_restored_from_scratch(tmp_path):
    side = _side(tmp_path, "aligned", [])
    side.context.catalog.exclude("jobs/sides/chk-7/b0.r0")
    with pytest.raises(NoIntactCheckpoint, match="no intact checkpoint"):
        side.recover("w0", ["w0"], last_complete=7)


@pytest.mark.parametrize("protocol", ["uncoordinated", "cic"])
def test_a_local_checkpoint_family_rolls_back_along_a_recovery_line(tmp_path, protocol):
    commands: list = []
    side = _side(tmp_path, protocol, commands)
    assert isinstance(side, LocalCheckpointLines) and not side.periodic_rounds
    workers = ["w0"]
    source, mapped, sink = side.processes(workers)
    into_map, into_sink = (source, mapped), (mapped, sink)
    # the source checkpointed after sending 5 elements, then after 9; the map and the sink
    # once each, after the first 5
    side.local_checkpoint(CheckpointRecord(source, 1, sent={into_map: 5}), workers)
    side.local_checkpoint(CheckpointRecord(mapped, 1, sent={into_sink: 5}, processed={into_map: 5}), workers)
    side.local_checkpoint(CheckpointRecord(sink, 1, processed={into_sink: 5}), workers)
    side.local_checkpoint(CheckpointRecord(source, 2, sent={into_map: 9}), workers)
    committed = {}
    for command in commands:
        assert command.kind == cpb.Command.CHECKPOINT_COMPLETE
        committed[command.process] = command.checkpoint_id
    assert committed == {source: 2, mapped: 1, sink: 1}
    side.recover("w0", workers, last_complete=None)      # every process was on w0
    assert side.plan == LineRestore({source: 2, mapped: 1, sink: 1}, {into_map: (6, 9)})
    assert side.restored() == f"recovery line {source}:2 {mapped}:1 {sink}:1"


def test_a_complete_checkpoint_family_refuses_a_local_checkpoint(tmp_path):
    side = _side(tmp_path, "aligned", [])
    with pytest.raises(SegflowError, match="the aligned protocol takes no local checkpoints"):
        side.local_checkpoint(CheckpointRecord("b0.r0", 1), ["w0"])
