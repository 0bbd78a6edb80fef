"""The store's key layout: every key it builds reads back to what built it, and its parsers
take no other job's or kind's key for theirs."""
from segflow.checkpoint import layout

JOB = "wc"


def test_a_snapshot_key_reads_back():
    key = layout.snapshot_key(JOB, 12, 3, 1)
    assert key == "jobs/wc/chk-00000012/b3.r1"
    assert (layout.checkpoint_of(key), layout.snapshot_of(key), layout.job_of(key)) == (12, (3, 1), JOB)
    assert not layout.is_complete_marker(key)


def test_a_complete_marker_is_no_snapshot():
    key = layout.complete_key(JOB, 12)
    assert layout.checkpoint_of(key) == 12 and layout.is_complete_marker(key)
    assert layout.snapshot_of(key) is None


def test_a_window_key_reads_back_and_is_no_checkpoints():
    key = layout.window_key(JOB, 2, 0, 7)
    assert key.startswith(layout.window_prefix(JOB))
    assert layout.window_of(key) == (2, 0, 7) and layout.checkpoint_of(key) is None
    assert layout.window_of(layout.snapshot_key(JOB, 7, 2, 0)) is None


def test_local_checkpoints_and_their_logs_read_back_for_their_job_only():
    blob, log = layout.local_key(JOB, "b1.r0", 4), layout.log_key(JOB, "b1.r0", 4)
    assert layout.local_of(JOB, blob) == layout.local_of(JOB, log) == ("b1.r0", 4)
    assert (layout.is_log(blob), layout.is_log(log)) == (False, True)
    assert layout.local_of("w", blob) is None
    assert layout.local_of(JOB, layout.stable_line_key(JOB)) is None


def test_keys_outside_any_job_belong_to_none():
    assert layout.job_of("jobs/wc") is None and layout.job_of("other/wc/x") is None


def test_a_location_reads_back():
    location = layout.checkpoint_location("s3://bucket/prefix/", JOB, 12)
    assert location == "s3://bucket/prefix/jobs/wc/chk-00000012/"
    assert layout.parse_location(location) == ("s3://bucket/prefix", JOB, 12)
