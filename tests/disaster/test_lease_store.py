"""The lease object on a real S3 server (moto): conditional writes decide races."""
import threading

import pytest

from segflow.disaster.lease import Lease
from segflow.disaster.lease_store import LeaseStore, lease_key
from segflow.errors import SegflowError
from segflow.state.backend import WriteConflict
from support.servers import new_bucket


@pytest.fixture
def url():
    return f"s3://{new_bucket()}/backup"


def test_create_once_renew_on_the_version_read_and_refuse_a_stale_version(s3_server, url):
    store = LeaseStore(url, "ns.job", s3_server.endpoint)
    assert store.read() == (None, None)
    first = store.write(Lease("east", 1, 100.0, 10.0), None)
    with pytest.raises(WriteConflict):
        store.write(Lease("west", 1, 100.0, 10.0), None)
    assert store.read() == (Lease("east", 1, 100.0, 10.0), first)
    second = store.write(Lease("east", 1, 103.0, 10.0), first)
    with pytest.raises(WriteConflict, match="changed since it was read"):
        store.write(Lease("east", 1, 106.0, 10.0), first)
    assert store.read()[1] == second
    assert store.backend.list("") == [lease_key("ns.job")]


def test_of_two_clusters_taking_over_at_once_exactly_one_wins(s3_server, url):
    LeaseStore(url, "job", s3_server.endpoint).write(Lease("east", 1, 100.0, 10.0), None)
    results = {}
    barrier = threading.Barrier(8)

    def take(name):
        store = LeaseStore(url, "job", s3_server.endpoint)
        _, version = store.read()
        barrier.wait()
        try:
            store.write(Lease(name, 2, 200.0, 10.0, previous="east"), version)
            results[name] = "won"
        except WriteConflict:
            results[name] = "lost"

    threads = [threading.Thread(target=take, args=(f"c{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [n for n, r in results.items() if r == "won"]
    assert len(results) == 8 and len(winners) == 1
    assert LeaseStore(url, "job", s3_server.endpoint).read()[0].owner == winners[0]


def test_a_backup_store_that_is_not_s3_is_refused():
    with pytest.raises(SegflowError, match="must be S3"):
        LeaseStore("file:///tmp/x", "job")
