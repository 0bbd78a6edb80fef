"""What a hot standby's follower holds of a listing (checkpoint.follow): pure rules."""
from segflow.checkpoint import layout
from segflow.checkpoint.follow import plan_follow, wanted
from segflow.runtime.elements import FINAL_CHECKPOINT

JOB = "j"


def snap(version, block, replica):
    return layout.snapshot_key(JOB, version, block, replica)


def done(version):
    return layout.complete_key(JOB, version)


def window(block, replica, version):
    return layout.window_key(JOB, block, replica, version)


def listed(*keys, etag="e"):
    return {k: etag for k in keys}


def test_complete_protocols_follow_the_newest_complete_checkpoint_only():
    listing = listed(snap(3, 1, 0), snap(3, 1, 1), done(3), snap(4, 1, 0), snap(4, 1, 1), done(4),
                     snap(5, 1, 0))                       # 5 is being taken: no marker yet
    assert wanted(listing, JOB, segment=False) == {snap(4, 1, 0), snap(4, 1, 1)}


def test_segment_backup_follows_each_replicas_newest_version_and_every_window_part():
    listing = listed(snap(3, 1, 0), snap(5, 1, 0), snap(4, 2, 0), window(1, 0, 4), window(1, 0, 5),
                     snap(FINAL_CHECKPOINT, 1, 0), window(1, 0, FINAL_CHECKPOINT), layout.protocol_key(JOB))
    assert wanted(listing, JOB, segment=True) == {snap(5, 1, 0), snap(4, 2, 0), window(1, 0, 4), window(1, 0, 5)}


def test_a_step_gets_only_new_or_rewritten_keys_and_drops_what_is_no_longer_wanted():
    before = listed(snap(3, 1, 0), snap(3, 1, 1), done(3))
    first = plan_follow(before, {}, JOB, segment=False)
    assert (first.fetch, first.drop, first.version) == ([snap(3, 1, 0), snap(3, 1, 1)], [], 3)
    held = {k: before[k] for k in first.fetch}
    assert plan_follow(before, held, JOB, segment=False).fetch == []          # nothing new: no GET
    after = {**listed(snap(4, 1, 0), snap(4, 1, 1), done(4)), snap(3, 1, 0): "e", done(3): "e"}
    step = plan_follow(after, held, JOB, segment=False)
    assert step.fetch == [snap(4, 1, 0), snap(4, 1, 1)] and step.version == 4
    assert step.drop == [snap(3, 1, 0), snap(3, 1, 1)]


def test_a_key_taken_again_with_other_bytes_is_read_again():
    held = {snap(5, 1, 0): "old"}
    step = plan_follow({snap(5, 1, 0): "new"}, held, JOB, segment=True)
    assert step.fetch == [snap(5, 1, 0)] and step.drop == [snap(5, 1, 0)]


def test_nothing_restorable_follows_nothing():
    step = plan_follow(listed(snap(2, 1, 0)), {}, JOB, segment=False)
    assert (step.fetch, step.drop, step.version) == ([], [], 0)
