"""Every protocol segflow accepts has both sides registered, the StreamJob CRD offers exactly
the protocols the engine knows, the kill and restore tests run every one, and every kind of
restore plan has its restore on the worker; a registry with a gap is refused by name."""
from pathlib import Path
from typing import get_args

import pytest
import yaml

from recovery.test_kills import PROTOCOLS as KILLED
from restore.test_runtime_restore import RESTORED_PROTOCOLS
from segflow.checkpoint.protocols import CheckpointProtocol
from segflow.checkpoint.restore_plan import RestorePlan
from segflow.protocols.complete import AlignedReplicas, CompleteCheckpoints
from segflow.protocols.coordinator_side import CoordinatorSide
from segflow.protocols.registry import (PROTOCOLS, ProtocolFamily, UnregisteredProtocol, check_registry, family,
                                        registration_gaps)
from segflow.worker.restore import RESTORES

CRD = Path(__file__).resolve().parents[2] / "charts" / "segflow" / "crds" / "streamjobs.segflow.io.yaml"


def _crd_protocols() -> list[str]:
    crd = yaml.safe_load(CRD.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema["properties"]["spec"]["properties"]["checkpointing"]["properties"]["protocol"]["enum"]


def test_every_protocol_that_checkpoints_has_both_sides():
    assert registration_gaps(PROTOCOLS) == []
    assert set(PROTOCOLS) == {p for p in CheckpointProtocol if p.enabled}


def test_the_crd_offers_exactly_the_engines_protocols():
    offered = _crd_protocols()
    assert len(offered) == len(set(offered))
    assert set(offered) == {p.value for p in CheckpointProtocol}


def test_a_protocol_without_a_family_is_named():
    partial = {p: f for p, f in PROTOCOLS.items() if p is not CheckpointProtocol.CIC}
    assert registration_gaps(partial) == ["cic: no family registered"]
    with pytest.raises(UnregisteredProtocol, match="cic: no family registered"):
        check_registry(partial)


def test_a_side_that_misses_a_method_is_named():
    class Forgetful(CoordinatorSide):          # no _choose_restore, recover or restoring
        pass

    broken = {**PROTOCOLS, CheckpointProtocol.ALIGNED: ProtocolFamily(AlignedReplicas, Forgetful)}
    gaps = registration_gaps(broken)
    assert gaps == ["aligned: Forgetful does not implement _choose_restore, recover, restoring"]


def test_a_side_of_the_wrong_kind_is_named():
    swapped = {**PROTOCOLS, CheckpointProtocol.UNALIGNED: ProtocolFamily(CompleteCheckpoints, AlignedReplicas)}
    assert registration_gaps(swapped) == ["unaligned: CompleteCheckpoints is not a ReplicaSide",
                                          "unaligned: AlignedReplicas is not a CoordinatorSide"]


def test_none_checkpoints_nothing_and_has_no_family():
    with pytest.raises(UnregisteredProtocol, match="aligned, unaligned, segment, uncoordinated, cic"):
        family(CheckpointProtocol.NONE)


def test_every_protocol_is_exercised_by_the_kill_and_restore_tests():
    registered = {p.value for p in PROTOCOLS}
    assert set(KILLED) == registered
    assert RESTORED_PROTOCOLS == registered


def test_every_kind_of_restore_plan_has_its_restore_on_the_worker():
    assert set(RESTORES) == set(get_args(RestorePlan))
