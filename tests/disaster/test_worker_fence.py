"""A worker writes a snapshot or pending-window part only while its cluster holds the
lease generation it runs under (moto): once another cluster holds a newer one, the part
is refused, nothing reaches the store, and the coordinator hears why."""
import time

import pytest

from segflow.checkpoint.barriers import BarrierTiming
from segflow.checkpoint.catalog import Catalog
from segflow.disaster.fence import LeaseFence
from segflow.disaster.lease import Lease
from segflow.disaster.lease_store import LeaseStore
from segflow.plan.placement import ReplicaId
from segflow.state import open_backend
from segflow.worker.agent import CheckpointAgent
from support.servers import new_bucket


class Coordinator:
    """Takes the acknowledgements the agent sends (the RPC's receiving end)."""

    def __init__(self):
        self.acks = []

    def Acknowledge(self, request, timeout):
        self.acks.extend(request.acks)


@pytest.fixture
def agent(s3_server):
    url = f"s3://{new_bucket()}/backup"
    backend = open_backend(url, s3_server.endpoint)
    leases = LeaseStore(url, "job", backend=backend)
    version = leases.write(Lease("east", 1, time.time(), 10.0), None)
    coordinator = Coordinator()
    made = CheckpointAgent("w0", 0, Catalog(backend, "job"), coordinator, {},
                           LeaseFence(leases, "east", 1))
    yield made, leases, version, coordinator, backend
    made.close()


def snapshot(agent, checkpoint_id):
    """Replica b0.r0's part of a checkpoint, with a pending window, handed to the store."""
    agent._persist(checkpoint_id, ReplicaId(0, 0), b"state", BarrierTiming(), False, b"window", 3)


def test_parts_are_written_under_the_held_lease_and_refused_after_a_takeover(agent):
    made, leases, version, coordinator, backend = agent
    snapshot(made, 1)
    first = backend.list("jobs/job/")
    assert coordinator.acks[-1].ok and len(first) == 2, first       # the part and its window
    leases.write(Lease("west", 2, time.time(), 10.0, previous="east"), version)
    snapshot(made, 2)
    refused = coordinator.acks[-1]
    assert not refused.ok and "fenced" in refused.error and "'west' holds generation 2" in refused.error
    assert backend.list("jobs/job/") == first
