"""Two clusters' operators keeping one job's lease on a real S3 server: the primary
creates and renews it, the standby waits, takes over once the primary goes silent, and
the old primary, back again, finds itself fenced; a planned switch-over hands over at
once; an operator that restarts takes back the generation its status names."""
import threading
import time

import pytest

from segflow.disaster.lease import Move, step_seconds
from segflow_operator.lease_keeper import LeaseKeeper
from segflow_operator.lease_thread import LeaseThread
from segflow_operator.reconcile.disaster import dr_status
from segflow_operator.reconcile.status import Phase
from segflow_operator.spec import DisasterRecovery
from support.processes import wait_for
from support.servers import new_bucket

TTL = 2.0


@pytest.fixture
def clusters(s3_server):
    url = f"s3://{new_bucket()}/backup"
    made = []

    def keeper(name, role):
        made.append(LeaseKeeper(DisasterRecovery(url, name, role, TTL, s3_server.endpoint), "ns.job"))
        return made[-1]

    yield keeper
    for k in made:
        k.close()


def test_the_standby_takes_over_a_silent_primary_which_is_then_fenced(clusters):
    east, west = clusters("east", "primary"), clusters("west", "standby")
    assert west.step(False, 0).move is Move.STAND_BY
    assert east.step(False, 0).move is Move.CREATE and east.held.generation == 1
    started = time.monotonic()
    for _ in range(6):                              # a live primary keeps the standby waiting
        assert east.step(False, 0).active and west.step(False, 0).move is Move.STAND_BY
        time.sleep(TTL / 4)
    assert time.monotonic() - started > TTL
    taken = wait_for(lambda: (d := west.step(False, 0)).move is Move.TAKE_OVER and d, timeout=3 * TTL, every=0.2)
    assert taken.write.generation == 2 and taken.write.previous == "east"
    assert taken.write.taken_at - taken.write.previous_renewed_at >= TTL, "taken over before the lease went stale"
    fenced = east.step(False, 0)
    assert fenced.move is Move.FENCED and east.held is None and "west" in fenced.reason
    assert east.step(False, 0).move is Move.STAND_BY
    status = dr_status("west", "standby", None, west.lease, west.taken, Phase.RUNNING, time.time())
    assert status.active_cluster == "west" and status.generation == 2
    assert status.last_failover.from_ == "east" and status.last_failover.rto_seconds >= TTL - 0.5


def test_a_switch_over_releases_and_the_new_primary_takes_the_next_generation_at_once(clusters):
    east, west = clusters("east", "primary"), clusters("west", "standby")
    east.step(False, 0)
    assert not east.switching_over
    east.dr = DisasterRecovery(east.dr.backup_url, "east", "standby", TTL, east.dr.s3_endpoint)
    assert east.switching_over
    west.dr = DisasterRecovery(west.dr.backup_url, "west", "primary", TTL, west.dr.s3_endpoint)
    assert west.step(False, 0).move is Move.STAND_BY          # east still holds it (its savepoint runs)
    assert east.step(True, 0).move is Move.RELEASE and east.held is None
    taken = west.step(False, 0)
    assert taken.move is Move.TAKE_OVER and taken.write.generation == 2
    assert east.step(False, 0).move is Move.STAND_BY


def test_a_standby_that_took_over_in_a_failover_runs_the_job_rather_than_handing_it_back(clusters):
    west = clusters("west", "standby")
    clusters("east", "primary").step(False, 0)
    wait_for(lambda: west.step(False, 0).move is Move.TAKE_OVER, timeout=3 * TTL, every=0.2)
    assert west.held is not None and not west.switching_over


def test_a_restarted_operator_takes_back_the_generation_its_status_names_and_no_other(clusters):
    east = clusters("east", "primary")
    east.step(False, 0)
    again = clusters("east", "primary")
    assert again.step(False, adopt_generation=1).move in (Move.HOLD, Move.RENEW) and again.held.generation == 1
    forgotten = clusters("east", "primary")
    decision = forgotten.step(False, adopt_generation=0)
    assert decision.move is Move.TAKE_OVER and decision.write.generation == 2
    assert again.step(False, 1).move is Move.FENCED


def test_the_lease_is_kept_on_a_thread_of_its_own_however_long_a_reconcile_takes(clusters):
    """The holder's reconcile asks once, then stalls for three TTLs (a slow API server): its
    lease's thread renews meanwhile, so the standby, stepping on its own thread, never takes
    over. Once the holder's operator is gone (its thread stops), the standby takes over
    within a TTL and a few steps, once, and its reconcile loop is woken."""
    east, west = clusters("east", "primary"), clusters("west", "standby")
    woken, takeovers = threading.Event(), []
    east_lease = LeaseThread(east, lambda: None, takeovers.append)
    west_lease = LeaseThread(west, woken.set, takeovers.append)
    try:
        assert east_lease.decision(False, 0, "").move is Move.CREATE
        assert west_lease.decision(False, 0, "").move is Move.STAND_BY
        first = east.lease.renewed_at
        time.sleep(3 * TTL)
        assert west_lease.latest.move is Move.STAND_BY and not takeovers and not woken.is_set()
        assert east.lease.renewed_at - first >= 2 * TTL, "the holder's thread did not renew while the loop stalled"
        east_lease.stop()
        gone = time.monotonic()
        assert woken.wait(TTL + 4 * step_seconds(TTL) + 2), "the standby did not take over"
        assert time.monotonic() - gone >= TTL * 0.9
        assert west.held is not None and west.held.generation == 2 and west_lease.latest.active
        assert [d.write.generation for d in takeovers] == [2]
    finally:
        east_lease.stop()
        west_lease.stop()


def test_an_abandoned_lease_is_never_written_again_whatever_the_loop_asks(clusters):
    """Once the job's namespace goes, the holder abandons the lease: its thread writes no
    renewal, a loop still asking (even for a release or another generation) gets LOST and
    writes nothing either, and the standby takes over a TTL after the last renewal."""
    east, west = clusters("east", "primary"), clusters("west", "standby")
    east_lease = LeaseThread(east, lambda: None, lambda _: None)
    west_lease = LeaseThread(west, lambda: None, lambda _: None)
    try:
        assert east_lease.decision(False, 0, "").move is Move.CREATE
        assert west_lease.decision(False, 0, "").move is Move.STAND_BY
        time.sleep(TTL)
        east_lease.abandon("namespace dr is being deleted")
        last, _ = east.store.read()
        for wanted in [(False, 0, ""), (True, 0, ""), (False, 1, "primary")]:
            refused = east_lease.decision(*wanted)
            assert refused.move is Move.LOST and not refused.active and "namespace dr" in refused.reason
        time.sleep(TTL / 2)
        assert east.store.read()[0] == last, "the lease was written after it was abandoned"
        wait_for(lambda: west.held is not None, timeout=TTL + 4 * step_seconds(TTL) + 2, every=0.1)
        assert west.held.generation == 2 and west.held.previous_renewed_at == last.renewed_at
    finally:
        east_lease.stop()
        west_lease.stop()
