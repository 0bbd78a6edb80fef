"""A hot standby's worker's follower against a real S3 server (moto): what it GETs, what
it holds, and that a takeover's restore takes from it only the exact bytes the store
holds now."""
import pickle

from segflow.checkpoint import layout
from segflow.checkpoint.catalog import Catalog
from segflow.settings import CheckpointSettings
from segflow.state import open_backend
from segflow.worker.follower import Follower
from support.servers import new_bucket

JOB = "followed"


def store(s3_server):
    url = f"s3://{new_bucket()}/backup"
    backend = open_backend(url, s3_server.endpoint)
    settings = CheckpointSettings("aligned", 1.0, url, s3_server.endpoint, 3, JOB, lease_owner="west",
                                  await_lease=True, follow_interval=0.2)
    return backend, Catalog(backend, JOB), settings


def checkpoint(catalog, checkpoint_id, states):
    for (block, replica), state in states.items():
        catalog.write(checkpoint_id, block, replica, pickle.dumps(state))
    catalog.mark_complete(checkpoint_id, {"time": 0})


def test_a_follower_gets_each_new_version_once_and_never_writes(s3_server):
    backend, catalog, settings = store(s3_server)
    checkpoint(catalog, 1, {(1, 0): {"n": 1}, (1, 1): {"n": 2}})
    follower = Follower(settings)
    follower.step()
    assert (follower.version, follower.gets, follower.lag_versions) == (1, 2, 0)
    follower.step()
    assert follower.gets == 2 and follower.lists == 2, "nothing new: a LIST and no GET"
    checkpoint(catalog, 2, {(1, 0): {"n": 3}, (1, 1): {"n": 4}})
    listed = backend.list_tagged(layout.job_prefix(JOB))
    follower.step()
    assert (follower.version, follower.gets) == (2, 4)
    assert sorted(follower.snapshots) == [layout.snapshot_key(JOB, 2, 1, 0), layout.snapshot_key(JOB, 2, 1, 1)]
    assert backend.list_tagged(layout.job_prefix(JOB)) == listed, "the follower wrote to the store"


def test_a_takeover_restores_followed_state_only_for_the_exact_bytes_the_store_holds_now(s3_server):
    backend, catalog, settings = store(s3_server)
    checkpoint(catalog, 4, {(1, 0): {"n": 1}, (1, 1): {"n": 2}})
    follower = Follower(settings)
    follower.step()
    catalog.write(4, 1, 1, pickle.dumps({"n": 20}))         # taken again with other bytes after the follow
    followed = follower.take(settings)
    assert followed is not None
    assert followed.read_state(4, 1, 0) == {"n": 1} and followed.followed == 1 and followed.reads == 0
    assert followed.read_state(4, 1, 1) == {"n": 20}, "the takeover restored bytes the store no longer holds"
    assert followed.read_state(4, 1, 0) == {"n": 1} and followed.reads == 1, "a second restore reads the store"
    assert followed.read_state(3, 1, 0) is None                 # a version the plan chose that was not followed


def test_a_part_that_fails_its_check_is_not_held_and_the_rest_is(s3_server):
    backend, catalog, settings = store(s3_server)
    checkpoint(catalog, 1, {(1, 0): {"n": 1}, (1, 1): {"n": 2}})
    backend.put(layout.snapshot_key(JOB, 1, 1, 1), b"not sealed by this job")
    follower = Follower(settings)
    follower.step()
    assert sorted(follower.snapshots) == [layout.snapshot_key(JOB, 1, 1, 0)]


def test_another_jobs_store_is_not_taken_from_what_was_followed(s3_server):
    _, catalog, settings = store(s3_server)
    checkpoint(catalog, 1, {(1, 0): {"n": 1}})
    follower = Follower(settings)
    follower.step()
    other = CheckpointSettings("aligned", 1.0, settings.state_url, settings.s3_endpoint, 3, "another")
    assert follower.take(other) is None


def test_a_worker_assigned_before_any_follow_completed_restores_from_the_store(s3_server):
    """A worker replaced while the job runs registers at once: it reads its own replicas
    from the store, not the job's whole state through a last follow."""
    _, catalog, settings = store(s3_server)
    checkpoint(catalog, 1, {(1, 0): {"n": 1}, (1, 1): {"n": 2}})
    follower = Follower(settings)
    assert follower.take(settings) is None and follower.gets == 0
