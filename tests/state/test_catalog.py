"""The checkpoint catalog over a real (file) store: what counts as a checkpoint, which one
a restore resolves to, and what garbage collection keeps."""
import os
import subprocess
import sys

import pytest

from segflow.errors import SegflowError
from segflow.runtime.elements import FINAL_CHECKPOINT
from segflow.checkpoint.adoption import restore_point
from segflow.checkpoint.catalog import Catalog
from segflow.checkpoint.layout import parse_location
from segflow.checkpoint.retention import SavepointRetention
from segflow.state.local import LocalBackend, _temporary_file


@pytest.fixture
def catalog(tmp_path):
    return Catalog(LocalBackend(f"file://{tmp_path}"), "job")


def checkpoint(catalog, checkpoint_id, complete=True, savepoint=False, at=0.0):
    catalog.write(checkpoint_id, 1, 0, b"state")
    if complete:
        catalog.mark_complete(checkpoint_id, {"id": checkpoint_id, "savepoint": savepoint, "time": at})


def test_the_final_snapshot_of_a_finished_job_is_not_a_numbered_checkpoint(catalog):
    """A rerun numbers its checkpoints after the highest id: past the final one, its sinks'
    last epochs would never be committed (this lost output in CI)."""
    checkpoint(catalog, 3)
    catalog.write(FINAL_CHECKPOINT, 1, 0, b"final state")
    assert catalog.highest_id() == 3
    assert catalog.complete_ids() == [3]
    assert catalog.resolve("latest") == 3


def test_incomplete_checkpoints_count_for_numbering_but_not_for_restore(catalog):
    checkpoint(catalog, 1)
    checkpoint(catalog, 2, complete=False)
    assert catalog.highest_id() == 2
    assert catalog.resolve("latest") == 1
    with pytest.raises(SegflowError, match="checkpoint 2 .* is not complete; complete ones: 1"):
        catalog.resolve("2")


def test_garbage_collection_keeps_the_newest_and_every_savepoint(catalog):
    for checkpoint_id in range(1, 6):
        checkpoint(catalog, checkpoint_id, savepoint=checkpoint_id == 2)
    checkpoint(catalog, 6, complete=False)
    assert catalog.collect_garbage(retain=2) == [1, 3]
    assert catalog.complete_ids() == [2, 4, 5]
    assert catalog.highest_id() == 6


def test_savepoints_beyond_the_rule_are_collected_but_never_the_newest_checkpoints(catalog):
    for checkpoint_id in range(1, 9):
        checkpoint(catalog, checkpoint_id, savepoint=checkpoint_id % 2 == 0, at=1000.0 + checkpoint_id * 10)
    removed = catalog.collect_garbage(retain=2, savepoints=SavepointRetention(keep=2), now=1100.0)
    assert removed == [1, 2, 3, 4, 5]           # savepoints 6 and 8 are the newest two; 7 and 8 the newest
    assert catalog.complete_ids() == [6, 7, 8]
    expired = catalog.collect_garbage(retain=1, savepoints=SavepointRetention(max_age=25.0), now=1100.0)
    assert expired == [6, 7] and catalog.complete_ids() == [8]      # 6 was taken 40 s before


def test_auto_restores_the_latest_or_starts_afresh(catalog):
    assert catalog.resolve("auto") == 0
    checkpoint(catalog, 1)
    checkpoint(catalog, 2)
    assert catalog.resolve("auto") == 2
    with pytest.raises(SegflowError, match="'latest', 'auto' or a checkpoint's location"):
        catalog.resolve("newest")


def test_unfinished_checkpoints_are_removed_from_every_kind_of_store(backend):
    """What the coordinator does when a job ends: only complete checkpoints stay (a final
    snapshot that never completed too), and the next run numbers after what is left."""
    catalog = Catalog(backend, "job")
    checkpoint(catalog, 1)
    checkpoint(catalog, 2, complete=False)
    catalog.write(2, 1, 1, b"another replica's part")
    checkpoint(catalog, 3)
    checkpoint(catalog, 4, complete=False)
    catalog.write(FINAL_CHECKPOINT, 1, 0, b"final state, never completed")
    other = Catalog(backend, "other-job")
    checkpoint(other, 7, complete=False)

    assert catalog.remove_unfinished() == [2, 4, FINAL_CHECKPOINT]
    assert catalog.complete_ids() == [1, 3] and catalog.highest_id() == 3
    assert sorted(backend.list("jobs/job/")) == ["jobs/job/chk-00000001/_COMPLETE", "jobs/job/chk-00000001/b1.r0",
                                                 "jobs/job/chk-00000003/_COMPLETE", "jobs/job/chk-00000003/b1.r0"]
    assert other.highest_id() == 7
    assert catalog.remove_unfinished() == []


def test_another_jobs_checkpoint_is_adopted_once_resealed_and_never_over_existing_ones(tmp_path):
    source = Catalog(LocalBackend(f"file://{tmp_path}/a"), "origin")
    checkpoint(source, 5, savepoint=True)
    location = f"file://{tmp_path}/a/jobs/origin/chk-00000005/"
    target = Catalog(LocalBackend(f"file://{tmp_path}/b"), "copy")
    checked = []
    assert restore_point(target, location, lambda *seen: checked.append(seen)) == "5"
    assert target.read(5, 1, 0) == b"state" and checked == [(None, "checkpoint 5 of job 'origin'")]
    assert target.metadata(5)["adopted_from"] == {"job": "origin", "id": 5}
    assert restore_point(target, location, refuse) == "5"           # again (a restart): nothing copied twice
    assert restore_point(target, "latest", refuse) == "latest"
    assert restore_point(source, location, refuse) == "5"           # its own checkpoint: nothing to copy
    busy = Catalog(LocalBackend(f"file://{tmp_path}/b"), "busy")
    checkpoint(busy, 9)
    with pytest.raises(SegflowError, match="already has checkpoints up to 9"):
        restore_point(busy, location, refuse)
    with pytest.raises(SegflowError, match="checkpoint 6 of job 'origin'"):
        restore_point(target, location.replace("00000005", "00000006"), refuse)


def refuse(layout, what):
    raise SegflowError(f"refused {what}")


def test_another_jobs_checkpoint_refused_by_the_check_is_not_copied(tmp_path):
    """The layout check sees the other job's checkpoint before anything is copied."""
    source = Catalog(LocalBackend(f"file://{tmp_path}/a"), "origin")
    source.write(5, 1, 0, b"state")
    source.mark_complete(5, {"id": 5, "savepoint": True, "time": 0.0, "layout": {"blocks": [["generate"]]}})
    target = Catalog(LocalBackend(f"file://{tmp_path}/b"), "copy")
    seen = []

    def check(layout, what):
        seen.append(layout)
        raise SegflowError(f"refused {what}")
    with pytest.raises(SegflowError, match="refused checkpoint 5 of job 'origin'"):
        restore_point(target, f"file://{tmp_path}/a/jobs/origin/chk-00000005/", check)
    assert seen == [{"blocks": [["generate"]]}] and target.backend.list("jobs/") == []


@pytest.mark.parametrize("text, parsed", [
    ("s3://bucket/pre/fix/jobs/wc/chk-00000012/", ("s3://bucket/pre/fix", "wc", 12)),
    ("file:///var/state/jobs/default-wc/chk-4", ("file:///var/state", "default-wc", 4)),
    ("12", None), ("latest", None), ("s3://bucket/latest", None)])
def test_checkpoint_locations_are_read_back(text, parsed):
    assert parse_location(text) == parsed


def test_a_writer_killed_mid_write_leaves_no_unfinished_checkpoint_behind(tmp_path):
    """A worker SIGTERMed or SIGKILLed when its job ends can die between creating a part's
    temporary file and renaming it: removing the unfinished checkpoint then removes that
    orphan too (it left ``chk-00000004`` holding only a temporary, in a fresh-clone run).
    A temporary whose writer still lives stays: its rename is yet to come."""
    backend = LocalBackend(f"file://{tmp_path}")
    catalog = Catalog(backend, "job")
    checkpoint(catalog, 3)
    checkpoint(catalog, 4, complete=False)
    checkpoint(catalog, 5, complete=False)
    directory = tmp_path / "jobs" / "job"
    writing = ("import sys, time; from segflow.state.local import _temporary_file; "
               "_temporary_file(sys.argv[1]); print('open', flush=True); time.sleep(60)")
    writer = subprocess.Popen([sys.executable, "-c", writing, str(directory / "chk-00000004")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "open\n"
    finally:
        writer.kill()
        writer.wait()
    live, _ = _temporary_file(str(directory / "chk-00000005"))
    os.close(live)

    assert catalog.remove_unfinished() == [4, 5]
    assert sorted(os.listdir(directory)) == ["chk-00000003", "chk-00000005"]
    assert [name.startswith(".tmp-") for name in os.listdir(directory / "chk-00000005")] == [True]
