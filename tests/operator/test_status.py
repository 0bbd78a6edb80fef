"""The typed status against the CRD's status schema, and its JSON both ways: what the
operator reads is what it wrote, and a patch holds what changed and nothing else."""
import dataclasses
import re
import types
import typing
from pathlib import Path

import pytest
import yaml

from segflow.v1 import control_pb2 as cpb
from segflow_operator.reconcile import CoordinatorPhase, JobStatus, Phase
from segflow_operator.reconcile.status import DisasterRecoveryStatus, StandbyStatus
from segflow_operator.reconcile.status_json import InvalidStatus, json_key

CRD = Path(__file__).resolve().parents[2] / "charts" / "segflow" / "crds" / "streamjobs.segflow.io.yaml"
KOPFS_OWN = {"kopf"}
JSON_TYPES = {int: "integer", float: "number", str: "string", Phase: "string"}


def status_schema() -> dict:
    (version,) = yaml.safe_load(CRD.read_text())["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]["properties"]["status"]


def differences(cls, schema: dict, where: str) -> list[str]:
    """Where the dataclass ``cls`` and the object ``schema`` disagree: a field in one but
    not the other, or of another JSON type."""
    hints = typing.get_type_hints(cls)
    ours = {json_key(f): hints[f.name] for f in dataclasses.fields(cls)}
    theirs = {k: v for k, v in schema.get("properties", {}).items() if not (where == "status" and k in KOPFS_OWN)}
    found = [f"{where}.{k}: in the CRD, not in {cls.__name__}" for k in theirs.keys() - ours.keys()]
    found += [f"{where}.{k}: in {cls.__name__}, not in the CRD" for k in ours.keys() - theirs.keys()]
    for key in ours.keys() & theirs.keys():
        found += _field_differences(ours[key], theirs[key], f"{where}.{key}")
    return found


def _field_differences(hint, schema: dict, where: str) -> list[str]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (hint,) = (a for a in typing.get_args(hint) if a is not type(None))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple:
        return _typed(schema, "array", where) + _field_differences(args[0], schema["items"], f"{where}[]")
    if origin is dict:
        return _typed(schema, "object", where) + differences(args[1], schema["additionalProperties"], f"{where}.*")
    if dataclasses.is_dataclass(hint):
        return _typed(schema, "object", where) + differences(hint, schema, where)
    if hint is dict:              # another module's JSON: the CRD must keep what it does not list
        return [] if schema.get("x-kubernetes-preserve-unknown-fields") else \
            [f"{where}: kept as JSON, but the CRD prunes unlisted fields"]
    return _typed(schema, JSON_TYPES[hint], where)


def _typed(schema: dict, json_type: str, where: str) -> list[str]:
    return [] if schema.get("type") == json_type else [f"{where}: {schema.get('type')} in the CRD, {json_type} here"]


def test_the_status_dataclasses_have_the_fields_of_the_crds_status_schema():
    assert differences(JobStatus, status_schema(), "status") == []


def test_the_comparison_fails_for_a_field_on_either_side_only():
    schema = status_schema()
    schema["properties"]["savepoint"]["properties"] = {**schema["properties"]["savepoint"]["properties"],
                                                       "extra": {"type": "string"}}
    del schema["properties"]["ready"]
    schema["properties"]["recoveries"]["type"] = "string"
    assert sorted(differences(JobStatus, schema, "status")) == [
        "status.ready: in JobStatus, not in the CRD", "status.recoveries: string in the CRD, integer here",
        "status.savepoint.extra: in the CRD, not in SavepointRecord"]


def test_the_crd_names_every_phase():
    described = status_schema()["properties"]["phase"]["description"]
    assert [p for p in Phase if p.value not in described] == []


def test_the_coordinator_phases_are_the_contracts():
    names = {v.name for v in cpb.JobUpdate.Phase.DESCRIPTOR.values} - {"PHASE_UNSPECIFIED"}
    assert {p.value for p in CoordinatorPhase} == names


WRITTEN = {
    "phase": "Running", "message": "running", "lastError": "", "upgradeRefused": "", "observedGeneration": 3,
    "conditions": [{"type": "Ready", "status": "True", "reason": "Running", "message": "running",
                    "lastTransitionTime": "2026-12-01T10:00:00Z"}],
    "revision": 2, "readyReplicas": 2, "ready": "2/2", "selector": "segflow.io/job=wc,segflow.io/role=worker",
    "coordinatorIP": "10.0.0.7", "webUrl": "http://wc-coordinator.default:8081", "recoveries": 1,
    "recoveriesBase": 1, "restored": "checkpoint 4", "resumeFrom": "auto", "lastSavepointNonce": 2,
    "lastCheckpoint": {"id": 9, "time": "2026-12-01T10:01:00Z"},
    "savepoint": {"id": 8, "time": "t8", "nonce": 2, "location": "s3://b/chk-8"},
    "savepoints": [{"id": 8, "time": "t8", "nonce": 2, "location": "s3://b/chk-8"}],
    "finalSavepoint": {"id": 10, "time": "t10", "location": "s3://b/chk-10"},
    "savepointInProgress": {"then": "record", "nonce": 3, "revision": 2, "since": "t9"},
    "pendingDeploy": {"revision": 2, "restore": "auto"},
    "deployed": {"hash": "abc", "parallelism": 2, "protocol": "aligned", "stateUrl": "s3://b", "restoredFrom": "",
                 "spec": "{}"},
    "pendingWindows": {"0": {"versions": 2, "bytes": 4096, "records": 300, "truncationLag": 1}},
    "batchStage": {"lastEpoch": "4", "lastRun": {"epochs": 1, "rows": 10}},
    "disasterRecovery": {"clusterName": "west", "role": "standby", "activeCluster": "west", "generation": 2,
                         "lastRenewal": "t1", "heldAs": "standby",
                         "lastFailover": {"time": "t0", "from": "east", "to": "west", "generation": 2,
                                          "previousRenewal": "t-1", "rtoSeconds": 15.5, "restored": "b0:v7"}},
}


def test_a_status_reads_back_as_it_was_written():
    status = JobStatus.parse({**WRITTEN, "kopf": {"progress": {}}})
    assert status.phase is Phase.RUNNING and status.coordinator_ip == "10.0.0.7"
    assert status.disaster_recovery.last_failover.from_ == "east" and status.pending_windows["0"].bytes == 4096
    assert status.patch(JobStatus()) == WRITTEN                  # kopf's part is neither read nor written


def test_a_patch_holds_what_changed_and_null_for_what_is_gone():
    before = JobStatus.parse(WRITTEN)
    after = JobStatus.parse(WRITTEN)
    assert after.patch(before) == {}
    after.phase, after.savepoint_in_progress, after.recoveries = Phase.SUSPENDED, None, 1
    assert after.patch(before) == {"phase": "Suspended", "savepointInProgress": None}


def test_a_job_not_reconciled_yet_has_an_empty_status():
    assert JobStatus.parse(None) == JobStatus.parse({}) == JobStatus()


@pytest.mark.parametrize("raw,where", [({"phase": "Sleeping"}, "status.phase"),
                                       ({"savepoints": [{"id": "eight"}]}, "status.savepoints[0].id")])
def test_a_status_the_operator_cannot_have_written_is_refused_saying_where(raw, where):
    with pytest.raises(InvalidStatus, match=rf"{re.escape(where)} is .*remove the field"):
        JobStatus.parse(raw)


def test_a_nested_field_that_is_gone_is_patched_to_null_not_left_behind():
    """A merge patch of a whole nested object would keep its old keys: the standby's
    status outlived the takeover until the patch named it null."""
    standing = JobStatus(disaster_recovery=DisasterRecoveryStatus(cluster_name="west", generation=1,
                                                                  standby=StandbyStatus("warm", "2/2")))
    running = JobStatus(disaster_recovery=DisasterRecoveryStatus(cluster_name="west", generation=2))
    assert running.patch(standing) == {"disasterRecovery": {"generation": 2, "standby": None}}
    assert standing.patch(JobStatus())["disasterRecovery"]["standby"] == {"mode": "warm", "readyWorkers": "2/2"}
