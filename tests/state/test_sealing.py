"""Sealed state: any change to a stored blob, its truncation, its move under another key
or another job, or another state key is found before the blob is decoded; the catalog
then restores nothing that needs it."""
import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.checkpoint.catalog import Catalog
from segflow.checkpoint.local_records import LocalCheckpointRecords
from segflow.checkpoint.recovery_line import CheckpointRecord
from segflow.state.backend import StateStoreError
from segflow.state.local import LocalBackend
from segflow.state.sealing import Sealer, TamperedState, state_key

KEY = b"k" * 32
SEALER = Sealer("job", KEY)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=1, max_size=300), where=st.integers(min_value=0), bit=st.integers(0, 7))
def test_any_flipped_bit_is_found(data, where, bit):
    sealed = bytearray(SEALER.seal("jobs/job/chk-00000001/b0.r0", data))
    assert SEALER.open("jobs/job/chk-00000001/b0.r0", bytes(sealed)) == data
    sealed[where % len(sealed)] ^= 1 << bit
    with pytest.raises(TamperedState):
        SEALER.open("jobs/job/chk-00000001/b0.r0", bytes(sealed))


@given(data=st.binary(max_size=300), keep=st.integers(min_value=0))
def test_any_truncation_is_found(data, keep):
    sealed = SEALER.seal("a", data)
    cut = keep % len(sealed)
    with pytest.raises(TamperedState):
        SEALER.open("a", sealed[:cut])


def test_a_blob_moved_to_another_key_job_or_state_key_is_found():
    sealed = SEALER.seal("jobs/job/chk-00000003/b0.r0", b"state")
    with pytest.raises(TamperedState, match="chk-00000004"):
        SEALER.open("jobs/job/chk-00000004/b0.r0", sealed)
    with pytest.raises(TamperedState):
        Sealer("other-job", KEY).open("jobs/job/chk-00000003/b0.r0", sealed)
    with pytest.raises(TamperedState):
        Sealer("job", b"x" * 32).open("jobs/job/chk-00000003/b0.r0", sealed)


def test_a_short_state_key_is_refused_and_the_local_key_file_is_private(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGFLOW_STATE_KEY", "short")
    with pytest.raises(StateStoreError, match="at least 16"):
        state_key()
    monkeypatch.delenv("SEGFLOW_STATE_KEY")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    first = state_key()
    assert first == state_key() and len(first) == 64
    assert stat.S_IMODE(os.stat(tmp_path / "segflow" / "state.key").st_mode) == 0o600


@pytest.fixture
def stored(tmp_path):
    backend = LocalBackend(f"file://{tmp_path}")
    catalog = Catalog(backend, "job", Sealer("job", KEY))
    for checkpoint_id in (1, 2):
        catalog.write(checkpoint_id, 0, 0, b"snapshot")
        catalog.write_window(0, 0, checkpoint_id, b"window")
        catalog.mark_complete(checkpoint_id, {"id": checkpoint_id})
    catalog.write_local("b0.r0", 1, b"local", b"log")
    return backend, catalog


@pytest.mark.parametrize("read,key", [
    (lambda c: c.read(2, 0, 0), "jobs/job/chk-00000002/b0.r0"),
    (lambda c: c.read_window(0, 0, 2), "jobs/job/windows/b0.r0/v" + "2".zfill(20)),
    (lambda c: c.read_local("b0.r0", 1), "jobs/job/unc/b0.r0/00000001"),
    (lambda c: c.read_log("b0.r0", 1), "jobs/job/unc/b0.r0/00000001.log"),
    (lambda c: c.metadata(2), "jobs/job/chk-00000002/_COMPLETE"),
])
def test_every_kind_of_stored_blob_is_checked_on_read(stored, read, key):
    backend, catalog = stored
    assert key in backend.list("jobs/job/"), backend.list("jobs/job/")
    read(catalog)
    blob = backend.get(key)
    backend.put(key, blob[:-1] + bytes([blob[-1] ^ 0xFF]))
    with pytest.raises(TamperedState) as found:
        read(catalog)
    assert found.value.key == key


def test_excluded_keys_drop_their_checkpoint_and_their_segment_versions(stored):
    backend, catalog = stored
    assert catalog.complete_ids() == [1, 2] and catalog.resolve("latest") == 2
    catalog.exclude("jobs/job/chk-00000002/b0.r0")
    catalog.exclude("jobs/job/windows/b0.r0/v" + "1".zfill(20))
    assert catalog.complete_ids() == [1] and catalog.resolve("latest") == 1
    held = catalog.holdings()
    assert held.snapshots[(0, 0)] == {1} and held.windows[(0, 0)] == {2}


def test_a_damaged_marker_makes_latest_fall_back(stored):
    backend, catalog = stored
    backend.put("jobs/job/chk-00000002/_COMPLETE", b"{}")
    assert catalog.resolve("latest") == 1 and "jobs/job/chk-00000002/_COMPLETE" in catalog.excluded


def test_a_damaged_local_checkpoint_or_log_segment_takes_its_process_back():
    """Forgetting checkpoint 2 of b0.r0 (its blob or its log segment failed) forgets the
    later ones too; the recovery line then stops before it."""
    records = LocalCheckpointRecords()
    processes = ["b0.r0", "b1.r0"]
    for index in (1, 2, 3):
        records.add(CheckpointRecord("b0.r0", index, {("b0.r0", "b1.r0"): index * 10}, {}), processes)
        records.add(CheckpointRecord("b1.r0", index, {}, {("b0.r0", "b1.r0"): index * 10}), processes)
    records.forget("b0.r0", 2)
    assert sorted(records.records["b0.r0"]) == [1]
    plan = records.recover(processes, {"b1.r0"})
    assert plan.line["b0.r0"] <= 1 and plan.line["b1.r0"] <= 1
    assert Catalog(LocalBackend("file:///nonexistent"), "job", SEALER).local_of(
        "jobs/job/unc/b0.r0/00000002.log") == ("b0.r0", 2)
