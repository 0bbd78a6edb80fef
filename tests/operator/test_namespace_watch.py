"""When a namespace's watch event means its jobs can no longer run (pure)."""
from segflow_operator.namespace_watch import terminating_reason


def test_a_namespace_being_deleted_or_gone_ends_its_jobs_and_a_live_one_does_not():
    live = {"metadata": {"name": "dr"}, "status": {"phase": "Active"}}
    deleting = {"metadata": {"name": "dr", "deletionTimestamp": "2026-12-06T02:00:00Z"},
                "status": {"phase": "Terminating"}}
    assert terminating_reason("ADDED", live) == ""
    assert terminating_reason("MODIFIED", live) == ""
    assert terminating_reason("MODIFIED", deleting) == "namespace dr is being deleted (since 2026-12-06T02:00:00Z)"
    assert terminating_reason("ADDED", deleting).startswith("namespace dr is being deleted")
    assert terminating_reason("DELETED", live) == "namespace dr was deleted"
    assert terminating_reason("ERROR", {"kind": "Status", "code": 410}) == ""
