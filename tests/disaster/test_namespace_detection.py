"""Issue 49's detection on two real clusters: the primary's operator stops renewing the
lease as soon as the job's namespace is being deleted (it used to renew until the
namespace controller reached the StreamJob, ~5.6 s), so the hot standby takes over about
``failoverAfterSeconds`` after the fault; the old side publishes nothing after the
takeover, and the output equals the oracle's."""
import threading
import time

from segflow.checkpoint.catalog import Catalog
from segflow.disaster.lease_store import LeaseStore
from segflow.state import open_backend
from segflow.state.sealing import Sealer

from scenario import NAMESPACE, REDIS_PASSWORD, Scenario

FAILOVER_AFTER = 2.0
NOTICED_WITHIN = 1.5          # fault -> east's last renewal: a watch event, and a renewal under way at most
TAKEN_WITHIN = FAILOVER_AFTER + 2.5     # fault -> west's takeover (was ~7.6 s)


class Publishes:
    """Every checkpoint either side publishes while it runs: a thread lists the job's
    complete markers and keeps each one's sealed metadata (who published it, and when)."""

    def __init__(self, run: Scenario, s3_endpoint: str):
        job = f"{NAMESPACE}.{run.name}"
        self.catalog = Catalog(open_backend(run.backup, s3_endpoint), job, Sealer(job, run.state_key.encode()))
        self.seen: dict[int, dict] = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.wait(0.1):
            for checkpoint in set(self.catalog.complete_ids()) - set(self.seen):
                meta = self.catalog.metadata(checkpoint)
                if meta is not None:
                    self.seen[checkpoint] = meta

    def by(self, generation: int) -> list[dict]:
        return [m for m in self.seen.values() if m.get("lease", {}).get("generation") == generation]

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()


def test_namespace_deletion_stops_renewals_at_once_and_the_standby_takes_over_a_ttl_later(sites, redis_server,
                                                                                         s3_server):
    east, west = sites["east"], sites["west"]
    run = Scenario("nsfast", redis_server.url, REDIS_PASSWORD, failover_after=FAILOVER_AFTER, standby="hot")
    publishes = Publishes(run, s3_server.endpoint)
    try:
        run.start(east, west)
        run.wait_following(west)
        fault = time.time()
        east.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        final = run.wait_phase(west, "Completed", "Failed", timeout=180)
        assert final["phase"] == "Completed", final
        assert run.output() == run.expected()
        lease, _ = LeaseStore(run.backup, f"{NAMESPACE}.{run.name}", s3_server.endpoint).read()
        assert (lease.owner, lease.generation, lease.previous) == ("west", 2, "east"), lease
        assert lease.previous_renewed_at - fault < NOTICED_WITHIN, \
            f"east renewed the lease {lease.previous_renewed_at - fault:.2f} s after its namespace was deleted"
        assert lease.taken_at - lease.previous_renewed_at >= FAILOVER_AFTER, "taken over before the lease was stale"
        assert lease.taken_at - fault < TAKEN_WITHIN, f"west took over {lease.taken_at - fault:.2f} s after the fault"
        publishes.stop()
        east_published, west_published = publishes.by(1), publishes.by(2)
        assert east_published and west_published, publishes.seen      # both sides seen publishing
        late = [m for m in east_published if m["time"] >= lease.taken_at]
        assert not late, f"east published after west took over at {lease.taken_at}: {late}"
    finally:
        publishes.stop()
        run.delete(west)
        east.restore_namespace()
