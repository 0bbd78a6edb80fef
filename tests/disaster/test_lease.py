"""The lease's decisions (pure), checked case by case and by simulating two clusters'
operators with random partitions: at no instant may both think they may run the job,
and a standby takes over soon after the holder goes silent."""
import json
import random

import pytest

from segflow.errors import SegflowError
from segflow.disaster.lease import (GUARD_SECONDS, RENEW_FRACTION, Lease, LeaseError, Move, Observation, decide,
                                    fenced_message, guard, publish_refusal, says_fenced, shortest_safe_ttl,
                                    step_seconds)

TTL = 10.0


def lease(owner="east", generation=1, renewed_at=100.0, **kw):
    return Lease(owner, generation, renewed_at, TTL, **kw)


def test_the_primary_creates_the_first_generation_and_the_standby_waits():
    first = decide("east", "primary", TTL, None, Observation(None), 100.0)
    assert first.move is Move.CREATE and first.write == Lease("east", 1, 100.0, TTL, taken_at=100.0)
    assert decide("west", "standby", TTL, None, Observation(None), 100.0).move is Move.STAND_BY


def test_the_holder_renews_at_the_last_step_before_a_quarter_of_the_ttl_and_holds_in_between():
    held = lease()       # TTL 10: a step a second, a quarter 2.5 s
    assert decide("east", "primary", TTL, held, Observation(held), 101.0).move is Move.HOLD
    assert decide("east", "primary", TTL, held, Observation(held), 101.4).move is Move.HOLD
    renew = decide("east", "primary", TTL, held, Observation(held), 101.5)
    assert renew.move is Move.RENEW and renew.write.renewed_at == 101.5 and renew.write.generation == 1
    short = Lease("east", 1, 100.0, 2.0)       # a step a quarter second, a quarter 0.5 s: renewed every step
    assert decide("east", "primary", 2.0, short, Observation(short), 100.2).move is Move.HOLD
    assert decide("east", "primary", 2.0, short, Observation(short), 100.25).move is Move.RENEW


def test_a_standby_takes_over_only_after_seeing_the_same_lease_for_the_ttl():
    held = lease()
    assert decide("west", "standby", TTL, None, Observation(held, unchanged_for=9.9), 500.0).move is Move.STAND_BY
    taken = decide("west", "standby", TTL, None, Observation(held, unchanged_for=10.0), 500.0)
    assert taken.move is Move.TAKE_OVER
    assert (taken.write.owner, taken.write.generation, taken.write.previous) == ("west", 2, "east")


def test_the_old_holder_is_fenced_once_another_cluster_holds_a_newer_generation():
    mine = lease()
    theirs = lease("west", 2, 111.0)
    decision = decide("east", "primary", TTL, mine, Observation(theirs), 112.0)
    assert decision.move is Move.FENCED and not decision.active and "west" in decision.reason


def test_a_holder_cut_off_from_the_store_holds_until_its_deadline_then_gives_up():
    held = lease(renewed_at=100.0)
    assert decide("east", "primary", TTL, held, Observation(None, readable=False), 107.9).move is Move.HOLD
    lost = decide("east", "primary", TTL, held, Observation(None, readable=False), 100.0 + TTL - GUARD_SECONDS)
    assert lost.move is Move.LOST and not lost.active


def test_a_switch_over_releases_and_only_a_primary_takes_a_released_lease():
    held = lease()
    release = decide("east", "standby", TTL, held, Observation(held), 101.0, release=True)
    assert release.move is Move.RELEASE and release.write.released
    released = release.write
    assert decide("east", "standby", TTL, held, Observation(released), 101.5).move is Move.STAND_BY
    assert decide("west", "standby", TTL, None, Observation(released), 101.5).move is Move.STAND_BY
    taken = decide("west", "primary", TTL, None, Observation(released, unchanged_for=0.0), 101.5)
    assert taken.move is Move.TAKE_OVER and taken.write.generation == 2


def test_an_operator_that_forgot_its_lease_takes_a_new_generation_of_its_own():
    """A restarted cluster must not adopt the generation its dead pods may still carry."""
    decision = decide("east", "primary", TTL, None, Observation(lease("east", 4)), 101.0)
    assert decision.move is Move.TAKE_OVER and decision.write.generation == 5


def test_publishing_is_refused_to_an_old_generation_a_released_lease_and_past_the_deadline():
    current = lease("east", 3, 100.0)
    assert publish_refusal(current, "east", 3, 101.0) == ""
    assert "west" in publish_refusal(lease("west", 4), "east", 3, 101.0)
    assert "released" in publish_refusal(lease("east", 3, released=True), "east", 3, 101.0)
    assert "deadline" in publish_refusal(current, "east", 3, current.deadline)
    assert "gone" in publish_refusal(None, "east", 3, 101.0)


def test_a_fenced_process_says_so_where_the_operator_looks():
    error = fenced_message(publish_refusal(lease("west", 4), "east", 3, 101.0))
    assert says_fenced(error) and says_fenced(json.dumps({"msg": "job failed", "error": error}))
    assert not says_fenced("the state store is unreachable")


def test_a_lease_round_trips_and_garbage_is_refused_clearly():
    value = lease(previous="west", taken_at=99.0, released=True)
    assert Lease.decode(value.encode()) == value
    with pytest.raises(LeaseError, match="not a segflow lease"):
        Lease.decode(b'{"owner": "east"}')


class Cluster:
    """One cluster's operator as the lease sees it: steps every ``period`` seconds."""

    def __init__(self, name, role, phase, period=1.0):
        self.name, self.role, self.period, self.next = name, role, period, phase
        self.held: Lease | None = None
        self.seen: tuple[int, float] | None = None      # (version, first seen at)
        self.cut = False

    def may_run(self, now):
        return self.held is not None and now < self.held.deadline

    def step(self, store, now):
        if self.cut:
            decision = decide(self.name, self.role, TTL, self.held, Observation(None, readable=False), now)
        else:
            value, version = store
            if self.seen is None or self.seen[0] != version:
                self.seen = (version, now)
            decision = decide(self.name, self.role, TTL, self.held,
                              Observation(value, unchanged_for=now - self.seen[1]), now)
        if decision.write is not None:
            value, version = store
            expected = self.seen[0]
            if version == expected:                     # the conditional write
                store = (decision.write, version + 1)
                self.held = None if decision.move is Move.RELEASE else decision.write
        elif not decision.active:
            self.held = None
        return store


@pytest.mark.parametrize("seed", range(40))
def test_two_clusters_never_both_run_and_the_standby_takes_over_a_silent_holder(seed):
    rng = random.Random(seed)
    east, west = Cluster("east", "primary", rng.random()), Cluster("west", "standby", rng.random())
    store = (None, 0)
    outages = []
    t = 0.0
    while t < 120:
        start = t + rng.uniform(5, 30)
        outages.append((start, start + rng.uniform(0.5, 25)))
        t = outages[-1][1]
    silent_since = None
    first_takeover = None
    now = 0.0
    while now < 150:
        east.cut = any(a <= now < b for a, b in outages)
        for cluster in (east, west):
            if now >= cluster.next:
                cluster.next += cluster.period
                before = store[0].generation if store[0] else 0
                store = cluster.step(store, now)
                if cluster is west and store[0] and store[0].generation > before and first_takeover is None:
                    first_takeover = now
        assert not (east.may_run(now) and west.may_run(now)), f"both run at {now:.2f}"
        if east.cut and silent_since is None and east.held is not None:
            silent_since = now
        now = round(now + 0.05, 2)
    long_outage = next(((a, b) for a, b in outages if b - a > TTL + 2 * east.period + 1), None)
    if long_outage is not None:
        assert first_takeover is not None and first_takeover <= long_outage[0] + TTL + 2 * west.period + 1


def test_the_shortest_safe_ttl_keeps_both_promises_and_no_shorter_one_does():
    """With the operators' own step (a quarter of a second at a 2 s lease), store writes of
    0.2 s, publishes of 0.5 s and clocks erring by 0.1 %, a 2 s lease is safe; slower
    writes or publishes, or clocks erring by 20 %, need longer leases, and the scan's answer is
    tight: a hundredth less breaks one of the two inequalities."""
    ttl = shortest_safe_ttl(store_seconds=0.2, publish_seconds=0.5, clock_rate_error=1e-3)
    assert 1.5 < ttl <= 2.0
    assert shortest_safe_ttl(0.5, 0.5, 1e-3) > ttl
    assert shortest_safe_ttl(0.2, 1.5, 1e-3) > ttl
    assert shortest_safe_ttl(0.2, 0.5, 0.2) > ttl

    def holds(t, store=0.2, publish=0.5, e=1e-3):
        held = t - guard(t)
        return held / (1 - e) + publish < t / (1 + e) and t * RENEW_FRACTION + step_seconds(t) + store < held
    assert holds(ttl) and not holds(round(ttl - 0.01, 2))
    assert step_seconds(2.0) == 0.25 and step_seconds(10.0) == 1.0
    with pytest.raises(SegflowError, match="no ttl under 1000 s is safe"):
        shortest_safe_ttl(0.2, 5.0, 0.5)
