"""What a restore finds of the pending windows is truncated like what the job writes,
including a version that a disaster left with some replicas' parts only (it struck in
the middle of a truncation): no restore reads it, and nothing else would delete it."""
import segflow
from segflow.checkpoint.catalog import Catalog
from segflow.protocols.cleanup import StoreCleanup
from segflow.protocols.segment_backup import SegmentBackup
from segflow.state import open_backend


def _graph():
    env = segflow.StreamEnvironment(planning_only=True)
    env.generate(lambda i: i, count=100).shuffle().map(str).write_text("/unused")
    return env.graph


def test_a_window_version_left_with_one_replica_s_part_is_truncated_after_a_restore(tmp_path):
    graph = _graph()
    replicas = {b.id: 2 for b in graph.blocks}
    catalog = Catalog(open_backend(f"file://{tmp_path}"), "partial")
    for version in (1, 2, 3):
        for block in replicas:
            for replica in range(2):
                catalog.write(version, block, replica, b"state")
    for version in (2, 3):
        for replica in range(2):
            catalog.write_window(0, replica, version, b"positions")
    catalog.write_window(0, 1, 1, b"positions")        # replica 0's part of version 1 is gone already
    cleanup = StoreCleanup(catalog)
    backup = SegmentBackup(graph, "none", catalog, cleanup)
    backup.plan(0, replicas, "latest")
    for block in replicas:
        for replica in range(2):
            catalog.write(4, block, replica, b"state")
            if block == 0:
                catalog.write_window(0, replica, 4, b"positions")
            backup.acknowledged(block, replica, 4, 9, 1)
    cleanup.worker.shutdown(wait=True)
    assert catalog.backend.list("jobs/partial/windows/") == []      # every part up to version 4
