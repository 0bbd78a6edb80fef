"""HMNR forced-checkpoint decisions: hand-built patterns and random schedules.

The random schedules are judged by two independent checkers: a Z-cycle search on the message
log (Netzer & Xu: a checkpoint is useless iff it lies on a Z-cycle) and a search for a
consistent global checkpoint containing each checkpoint. They must agree with each other; with
HMNR forcing no checkpoint may be useless, and without forcing some schedules must produce
useless checkpoints (otherwise the test could not fail).
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings, strategies as st

from segflow.checkpoint.hmnr import HmnrState, Piggyback, decode, encode
from segflow.checkpoint.recovery_line import CheckpointRecord, recovery_line
from support.recovery_lines import is_consistent


# ---------------------------------------------------------------- simulator

@dataclass
class Run:
    n: int
    records: list = field(default_factory=list)      # CheckpointRecord, final checkpoints included
    messages: list = field(default_factory=list)     # (src, dst, send interval, recv interval | None)
    forced: int = 0
    basic: int = 0


def run(n, events, force=True):
    """Execute ``events`` on ``n`` replicas running HMNR (forced checkpoints only if ``force``).

    Events: ("ckpt", p) basic checkpoint; ("send", p, q) p sends to q; ("recv", p, q) q receives
    the next message from p, if any. Every replica takes a final checkpoint at the end (it
    stands for the volatile state, as in Netzer & Xu's model)."""
    states = [HmnrState(k, n) for k in range(n)]
    index = [0] * n                                   # current checkpoint index per replica
    sent: dict = {}
    processed: dict = {}
    queues = {(p, q): deque() for p in range(n) for q in range(n) if p != q}
    r = Run(n)

    def checkpoint(p, protocol=True):
        if protocol:
            assert states[p].on_checkpoint() == index[p] + 1
        index[p] += 1
        r.records.append(CheckpointRecord(p, index[p], {c: v for c, v in sent.items() if c[0] == p},
                                          {c: v for c, v in processed.items() if c[1] == p}))

    for p in range(n):
        r.records.append(CheckpointRecord(p, 0, {}, {}))
    for ev in events:
        kind, p = ev[0], ev[1] % n
        if kind == "ckpt":
            checkpoint(p)
            r.basic += 1
            continue
        q = ev[2] % n
        if p == q:
            continue
        if kind == "send":
            pb = states[p].on_send(q)
            wire = encode(pb)
            assert decode(wire) == pb
            sent[(p, q)] = sent.get((p, q), 0) + 1
            msg = [p, q, index[p] + 1, None]
            r.messages.append(msg)
            queues[(p, q)].append((wire, msg))
        elif queues[(p, q)]:
            wire, msg = queues[(p, q)].popleft()
            pb = decode(wire)
            if force and states[q].must_force(pb):
                checkpoint(q)
                r.forced += 1
            states[q].on_deliver(pb)
            processed[(p, q)] = processed.get((p, q), 0) + 1
            msg[3] = index[q] + 1
        for s in states:
            assert s.greater[s.i] is False and s.taken[s.i] is False
    for p in range(n):
        checkpoint(p, protocol=False)
    return r


def on_z_cycle(r):
    """Checkpoints (p, x) lying on a Z-cycle, from the message log alone."""
    latest = {p: max(rc.index for rc in r.records if rc.process == p) for p in range(r.n)}
    delivered = [m for m in r.messages if m[3] is not None]
    out = set()
    for p in range(r.n):
        for x in range(latest[p] + 1):
            # Search Z-paths from C[p,x]: (q, a) = "may continue with a message q sends in
            # interval >= a"; a message received in interval b at t lets the path go on from (t, b).
            best = {p: x + 1}
            todo = [(p, x + 1)]
            while todo and (p, x) not in out:
                q, a = todo.pop()
                for src, dst, s, b in delivered:
                    if src != q or s < a:
                        continue
                    if dst == p and b <= x:
                        out.add((p, x))
                        break
                    if b < best.get(dst, 1 << 30):
                        best[dst] = b
                        todo.append((dst, b))
    return out


def without_consistent_global_checkpoint(r):
    """Checkpoints that belong to no consistent global checkpoint (greedy receiver rollback from
    the latest checkpoints with the checkpoint's own process pinned)."""
    t = {(rc.process, rc.index): rc for rc in r.records}
    latest = {p: max(rc.index for rc in r.records if rc.process == p) for p in range(r.n)}
    chans = [(i, j) for i in range(r.n) for j in range(r.n) if i != j]
    out = set()
    for p in range(r.n):
        for x in range(latest[p] + 1):
            line = dict(latest)
            line[p] = x
            while True:
                bad = [(i, j) for (i, j) in chans
                       if t[(j, line[j])].processed.get((i, j), 0) > t[(i, line[i])].sent.get((i, j), 0)]
                if not bad:
                    break
                j = bad[0][1]
                if j == p:
                    out.add((p, x))
                    break
                line[j] -= 1
            if (p, x) not in out:
                assert is_consistent(r.records, line) and line[p] == x
    return out


def played(n, events):
    """The replicas' HMNR states after ``events`` (``run``'s grammar; nothing forced or
    recorded) and the messages sent, in order: for patterns that ask a replica about a
    message before it is delivered."""
    states = [HmnrState(k, n) for k in range(n)]
    sent, queues = [], {}
    for ev in events:
        if ev[0] == "ckpt":
            states[ev[1]].on_checkpoint()
        elif ev[0] == "send":
            sent.append(states[ev[1]].on_send(ev[2]))
            queues.setdefault(ev[1:], deque()).append(sent[-1])
        else:
            states[ev[2]].on_deliver(queues[ev[1:]].popleft())
    return states, sent


def useless(r):
    z = on_z_cycle(r)
    assert z == without_consistent_global_checkpoint(r)   # Netzer & Xu, checked both ways
    return z


# ---------------------------------------------------------------- hand-built patterns

def test_no_messages_no_force():
    s = HmnrState(0, 3)
    other = HmnrState(1, 3)
    other.on_checkpoint()
    assert not s.must_force(other.piggyback())


def test_cycle_detection_no_cycle():
    # 0 -> 1, 1 checkpoints, 1 -> 2: a causal chain, no cycle anywhere.
    s = [HmnrState(k, 3) for k in range(3)]
    m = s[0].on_send(1)
    assert not s[1].must_force(m)
    s[1].on_deliver(m)
    s[1].on_checkpoint()
    m = s[1].on_send(2)
    assert not s[2].must_force(m)


def test_cycle_detection_causal_cycle_forces():
    # 0 -> 1, 1 checkpoints, 1 -> 0 while 0 is still in the interval it sent from: delivering
    # would put C[1,1] on a Z-cycle (condition C2).
    s, (_, m2) = played(2, [("send", 0, 1), ("recv", 0, 1), ("ckpt", 1), ("send", 1, 0)])
    assert m2.ckpt[0] == s[0].ckpt[0] and m2.taken[0]
    assert s[0].must_force(m2)
    # Without 1's checkpoint there is no cycle; if 0 checkpointed meanwhile, neither.
    t, (_, t2) = played(2, [("send", 0, 1), ("recv", 0, 1), ("send", 1, 0)])
    assert not t[0].must_force(t2)
    u, (_, u2) = played(2, [("send", 0, 1), ("recv", 0, 1), ("ckpt", 1), ("ckpt", 0), ("send", 1, 0)])
    assert not u[0].must_force(u2)


NONCAUSAL = [("send", 2, 1), ("recv", 2, 1), ("ckpt", 1), ("send", 0, 2), ("send", 1, 0),
             ("recv", 1, 0), ("recv", 0, 2)]


def test_cycle_detection_noncausal_cycle_forces():
    # 2 -> 1 (m4, delivered before C[1,1]); 0 -> 2 (m1); 1 -> 0 (m2, after C[1,1]); m2 reaches 0
    # in the interval m1 was sent from, and m1 reaches 2 in the interval m4 was sent from:
    # the Z-path m2 m1 m4 goes from C[1,1] back to C[1,1] without being causal (condition C1).
    s, (_, m1, m2) = played(3, NONCAUSAL[:5])      # m4, m1, m2 sent; m4 delivered
    assert m2.lc > s[0].lc and s[0].sent_to[2] and m2.greater[2]
    assert not (m2.ckpt[0] == s[0].ckpt[0] and m2.taken[0])          # not a causal cycle
    assert s[0].must_force(m2)
    assert not s[2].must_force(m1)
    # The same schedule, judged on the whole execution:
    assert useless(run(3, NONCAUSAL, force=False)) == {(1, 1)}
    forced = run(3, NONCAUSAL, force=True)
    assert forced.forced == 1 and useless(forced) == set()


GREATER = [("send", 0, 2), ("ckpt", 2), ("send", 2, 1), ("recv", 2, 1), ("send", 1, 0),
           ("recv", 1, 0), ("recv", 0, 2)]


def test_greater_avoids_a_useless_force():
    # 0 -> 2 (m1); 2 checkpoints and sends to 1, which sends to 0 (m3). m3's clock is higher,
    # and 0 sent to 2 in this interval, but m3 says 2 already has that clock (greater[2] is
    # False): m1 can only be delivered at 2 after C[2,1], so there is no Z-cycle.
    s, (_, _, m3) = played(3, GREATER[:5])         # m1, m2, m3 sent; m2 delivered
    assert m3.lc > s[0].lc and s[0].sent_to[2] and not m3.greater[2]
    assert not s[0].must_force(m3)
    assert useless(run(3, GREATER, force=False)) == set()
    assert run(3, GREATER, force=True).forced == 0


def test_equal_clock_never_forces_on_c1():
    s, (_, m) = played(3, [("ckpt", 0), ("ckpt", 1), ("send", 0, 2), ("send", 1, 0)])
    assert m.lc == s[0].lc and m.greater[2]
    assert not s[0].must_force(m)


def test_merge_rules():
    s = HmnrState(0, 3)
    m = Piggyback(lc=4, ckpt=(0, 2, 5), taken=(True, False, True), greater=(True, True, False))
    s.on_deliver(m)
    assert s.lc == 4 and s.greater == [False, True, False]       # own entry stays False
    assert s.ckpt == [0, 2, 5] and s.taken == [False, False, True]
    # Equal clock: greater is ANDed; equal ckpt: taken is ORed; older ckpt: ignored.
    s.on_deliver(Piggyback(lc=4, ckpt=(0, 2, 4), taken=(False, True, False), greater=(False, False, True)))
    assert s.greater == [False, False, False]
    assert s.ckpt == [0, 2, 5] and s.taken == [False, True, True]
    # Smaller clock: greater untouched.
    s.on_checkpoint()
    assert s.lc == 5 and s.greater == [False, True, True] and s.taken == [False, True, True]
    s.on_deliver(Piggyback(lc=1, ckpt=(0, 3, 5), taken=(False, False, False), greater=(False, False, False)))
    assert s.greater == [False, True, True] and s.ckpt == [1, 3, 5] and s.taken == [False, False, True]


def test_snapshot_roundtrip():
    s = HmnrState(1, 4)
    s.on_send(3)
    s.on_checkpoint()
    s.on_send(0)
    t = HmnrState.from_snapshot(s.snapshot())
    assert t.snapshot() == s.snapshot()


def test_rejects_bad_arguments():
    with pytest.raises(ValueError):
        HmnrState(3, 3)
    with pytest.raises(ValueError):
        HmnrState(0, 3).on_send(5)
    with pytest.raises(ValueError):
        HmnrState(0, 3).must_force(HmnrState(0, 2).piggyback())


# ---------------------------------------------------------------- encoding

@given(n=st.integers(1, 70), data=st.data())
def test_encode_roundtrip(n, data):
    pb = Piggyback(
        lc=data.draw(st.integers(0, 2**64 - 1)),
        ckpt=tuple(data.draw(st.lists(st.integers(-1, 2**32 - 2), min_size=n, max_size=n))),
        taken=tuple(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))),
        greater=tuple(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))),
    )
    raw = encode(pb)
    assert len(raw) == 11 + 4 * n + 2 * ((n + 7) // 8)
    assert decode(raw) == pb


def test_decode_rejects_garbage():
    raw = encode(HmnrState(0, 5).piggyback())
    for bad in (b"", raw[:-1], raw + b"\0", b"\x09" + raw[1:]):
        with pytest.raises(ValueError):
            decode(bad)


# ---------------------------------------------------------------- random schedules

def random_events(rng, n, length):
    out = []
    for _ in range(length):
        x = rng.random()
        if x < 0.15:
            out.append(("ckpt", rng.randrange(n)))
        elif x < 0.55:
            out.append(("send", rng.randrange(n), rng.randrange(n)))
        else:
            out.append(("recv", rng.randrange(n), rng.randrange(n)))
    return out


event = st.one_of(st.tuples(st.just("ckpt"), st.integers(0, 4)),
                  st.tuples(st.sampled_from(["send", "recv"]), st.integers(0, 4), st.integers(0, 4)))


@settings(max_examples=250, deadline=None)
@given(n=st.integers(2, 5), events=st.lists(event, max_size=70), failed=st.integers(0, 4))
def test_hmnr_leaves_no_useless_checkpoint(n, events, failed):
    r = run(n, events, force=True)
    assert useless(r) == set()
    # The coordinator's view (real checkpoints only, volatile states lost): a consistent line.
    latest = {p: max(rc.index for rc in r.records if rc.process == p) for p in range(n)}
    real = [rc for rc in r.records if rc.index < latest[rc.process]]
    plan = recovery_line(real, {failed % n})
    assert is_consistent(real, plan.line)
    useless(run(n, events, force=False))          # the two checkers agree without forcing too


def test_same_schedules_without_forcing_do_produce_useless_checkpoints():
    rng = random.Random(20240601)
    with_useless = 0
    forced_total = 0
    for _ in range(300):
        n = rng.randint(2, 5)
        events = random_events(rng, n, rng.randint(10, 80))
        bare = run(n, events, force=False)
        assert bare.forced == 0
        if useless(bare):
            with_useless += 1
        cic = run(n, events, force=True)
        forced_total += cic.forced
        assert useless(cic) == set()
    assert with_useless >= 10          # the checker does find Z-cycles when nothing prevents them
    assert forced_total > 0


def test_domino_schedule_prevented():
    # Thesis Fig. 3.5 between two replicas. Without forcing, C[0,1], C[1,1] and C[1,2] lie on
    # Z-cycles; C[0,2] is not on one (it fits with 1's final state) but, since every replica
    # restarts from a checkpoint, it is lost too and the recovery line is the initial state.
    # HMNR forces checkpoints and no checkpoint is useless.
    events = [("send", 0, 1), ("recv", 0, 1), ("send", 1, 0), ("ckpt", 1), ("send", 1, 0),
              ("recv", 1, 0), ("recv", 1, 0), ("ckpt", 0), ("send", 0, 1), ("recv", 0, 1),
              ("ckpt", 1), ("send", 1, 0), ("recv", 1, 0), ("ckpt", 0)]
    bare = run(2, events, force=False)
    assert useless(bare) == {(0, 1), (1, 1), (1, 2)}
    assert recovery_line([rc for rc in bare.records if rc.index <= 2], {0}).line == {0: 0, 1: 0}
    cic = run(2, events, force=True)
    assert cic.forced > 0 and useless(cic) == set()
