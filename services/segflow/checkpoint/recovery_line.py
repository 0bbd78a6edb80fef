"""Recovery lines for uncoordinated checkpoints: checkpoint graph, rollback propagation, replay.

Pure decision logic for the ``uncoordinated`` and ``cic`` protocols (no I/O, no clocks). The
coordinator collects one :class:`CheckpointRecord` per checkpoint and, after a failure, asks
:func:`recovery_line` which checkpoint every replica restores and which logged messages are
replayed on which channel.

Model
-----
Processes are block replicas (any hashable id, e.g. ``"b1.r0"``). A channel is a
``(sender, receiver)`` pair; its messages carry a per-channel sequence number starting at 1 and
are sent, logged and processed in FIFO order. Checkpoint ``C[i,x]`` of process ``i`` records, per
outgoing channel, the last sequence number SENT and, per incoming channel, the last sequence
number PROCESSED (received and applied to the state), both as of the checkpoint. A channel
missing from a dict counts as 0. ``x = 0`` is the initial state (all counters 0). Interval
``I[i,x]`` is the execution between ``C[i,x-1]`` and ``C[i,x]`` (it ends at ``C[i,x]``), so
message ``m`` on channel ``c`` is

* sent in ``I[i,x]``       iff ``sent(C[i,x-1])[c] < m <= sent(C[i,x])[c]``,
* processed in ``I[j,y]``  iff ``processed(C[j,y-1])[c] < m <= processed(C[j,y])[c]``.

The intervals are half-open, so a message is in exactly one interval of each side. Two
consecutive checkpoints whose counters end on the same value ("same interval ends") share no
message: ``(0, 3]`` and ``(3, 5]`` do not overlap.

Checkpoint graph (Wang et al., "Checkpointing and its applications", FTCS 1995)
-------------------------------------------------------------------------------
Nodes are checkpoints ``(process, index)``. Edges:

* successor edges ``C[i,x] -> C[i,x+1]`` on the same process;
* for every message sent in ``I[i,x]`` and processed in ``I[j,y]`` (``i != j``), the edge
  ``C[i,x-1] -> C[j,y]``. Read it as "if ``i`` restarts from ``C[i,x-1]`` (or earlier), the
  message is unsent again, so ``C[j,y]`` (and everything after it) recorded an orphan".

Each process also gets Wang's virtual node for its *volatile state*: ``(i, latest_i + 1)``, the
successor of its latest checkpoint. A message sent after the sender's latest checkpoint
(``m > sent(C[i,latest])[c]``) is sent in the volatile interval ``I[i,latest+1]``, so a receiver
checkpoint that processed it gets the edge ``C[i,latest] -> C[j,y]``: such a checkpoint is an
orphan-receiver relative to the sender's latest checkpoint. Edges INTO a volatile node are not
built: a record does not say what a replica processed after its latest checkpoint, and volatile
nodes are never candidates for the line here (see below), so those edges could never matter.

The rollback-dependency graph of Bhargava & Lian (edge ``C[i,x] -> C[j,y]`` for a message sent
in ``I[i,x]``) gives the same line with a different marking rule; we use the checkpoint graph
because that is what the thesis implements and what rollback propagation is defined on.

Rollback propagation and what a failure rolls back
--------------------------------------------------
Wang's algorithm starts the root set with the latest checkpoint of every FAILED process (its
volatile state is lost) and the current volatile state of every SURVIVING process. segflow
restarts every replica of the job from a checkpoint (survivors too, exactly as the thesis's
coordinator tells *all* workers which checkpoint to restore), so a survivor's volatile state is
never part of the line: the root set is the latest checkpoint of every process, whatever
``failed`` contains. ``failed`` is still taken (and checked) so the call states which failure
the plan answers, and so a later survivor-keeps-its-state mode would not change the signature.

Algorithm: root set = latest checkpoint of each process; mark every node reachable from a root
by at least one edge; while some root is marked, replace it by its predecessor on the same
process and mark again. Marks only grow when roots move earlier (an earlier root reaches the
later one through successor edges), so the marking is done incrementally, and a marked root
jumps straight to the last unmarked checkpoint of its process: every checkpoint in between is
marked, so stepping back one at a time would end at the same place. The loop terminates because
each step moves a root strictly earlier and the earliest recorded checkpoints form a consistent
line (the initial ``x = 0`` checkpoints, or the previous recovery line after the coordinator
garbage-collects the graph); if they do not, :func:`recovery_line` raises ``ValueError``.

The result is the maximum consistent line: every checkpoint after it is reachable from it, i.e.
would need an orphan. ``useless`` is the number of marked (real, not volatile) checkpoints, the
thesis's "rollback distance" metric. As every checkpoint after a root is reachable through
successor edges, it equals ``sum(rolled_back.values())``. Because all replicas roll back, it can
be non-zero without any Z-cycle: a latest checkpoint that processed a message its sender sent
after the sender's own latest checkpoint is marked (the thesis summary notes the same effect).

Replay
------
With the line chosen, messages ``processed(C[j,line_j])[c] < m <= sent(C[i,line_i])[c]`` were
sent before the sender's recovery checkpoint and not processed before the receiver's: they are
in transit and are replayed from the sender's log (:func:`in_transit`). Later messages are not
replayed: the restarted sender produces them again (replaying them would duplicate derived
messages, thesis Fig. 3.2). On a consistent line every message is thus processed exactly once,
assuming deterministic processing, as the thesis does.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

Process = Hashable
Channel = tuple  # (sender, receiver)
Node = tuple     # (process, index); (process, latest + 1) is the process's volatile state
Edge = tuple     # (Node, Node)


@dataclass(frozen=True)
class CheckpointRecord:
    """What a replica reports after checkpoint ``index`` (0 = initial state).

    ``sent``: outgoing channel -> last sequence number sent. ``processed``: incoming channel ->
    last sequence number processed. Both as of the checkpoint; absent channels count as 0.
    """
    process: Process
    index: int
    sent: dict = field(default_factory=dict)
    processed: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RecoveryPlan:
    """``line``: process -> checkpoint index to restore. ``replay``: channel -> inclusive
    ``(first, last)`` sequence numbers to replay from the sender's log (empty ranges omitted).
    ``useless``: checkpoints discarded (marked by rollback propagation). ``rolled_back``:
    process -> how many of its checkpoints lie after its line checkpoint."""
    line: dict
    replay: dict
    useless: int
    rolled_back: dict


class _History:
    """Records indexed per process, validated."""

    def __init__(self, records: Iterable[CheckpointRecord]):
        by_process: dict = {}
        for r in records:
            if not isinstance(r.index, int) or r.index < 0:
                raise ValueError(f"checkpoint index must be an int >= 0, got {r.index!r} for {r.process!r}")
            slot = by_process.setdefault(r.process, {})
            if r.index in slot:
                raise ValueError(f"two records for checkpoint {r.index} of {r.process!r}")
            for c, v in r.sent.items():
                _check_channel(c, v)
                if c[0] != r.process:
                    raise ValueError(f"{r.process!r} reports sending on {c!r}, which it does not send on")
            for c, v in r.processed.items():
                _check_channel(c, v)
                if c[1] != r.process:
                    raise ValueError(f"{r.process!r} reports processing {c!r}, which it does not receive")
            slot[r.index] = r
        self.base: dict = {}
        self.latest: dict = {}
        self.records = by_process
        channels: set = set()
        for p, slot in by_process.items():
            lo, hi = min(slot), max(slot)
            if len(slot) != hi - lo + 1:
                missing = sorted(set(range(lo, hi + 1)) - set(slot))
                raise ValueError(f"checkpoints {missing} of {p!r} are missing")
            self.base[p], self.latest[p] = lo, hi
            for r in slot.values():
                channels.update(r.sent)
                channels.update(r.processed)
            for x in range(lo + 1, hi + 1):
                prev, cur = slot[x - 1], slot[x]
                for attr in ("sent", "processed"):
                    a, b = getattr(prev, attr), getattr(cur, attr)
                    for c in set(a) | set(b):
                        if b.get(c, 0) < a.get(c, 0):
                            raise ValueError(f"{attr} counter of {c!r} goes down between checkpoints "
                                             f"{x - 1} and {x} of {p!r}")
        for c in channels:
            for p in c:
                if p not in by_process:
                    raise ValueError(f"channel {c!r} involves {p!r}, which has no checkpoint record")
        self.channels = sorted(channels, key=repr)

    def sent(self, c, x) -> int:
        return self.records[c[0]][x].sent.get(c, 0)

    def processed(self, c, y) -> int:
        return self.records[c[1]][y].processed.get(c, 0)

    def check_line(self, line: Mapping) -> None:
        for p in self.records:
            if p not in line:
                raise ValueError(f"the line has no checkpoint for {p!r}")
            if line[p] not in self.records[p]:
                raise ValueError(f"the line names checkpoint {line[p]!r} of {p!r}, which is not recorded")
        extra = set(line) - set(self.records)
        if extra:
            raise ValueError(f"the line names unknown processes {sorted(map(repr, extra))}")

    def orphans(self, line: Mapping) -> list:
        """Channels with a message processed at the receiver's line checkpoint but sent after
        the sender's."""
        return [c for c in self.channels if self.processed(c, line[c[1]]) > self.sent(c, line[c[0]])]


def _check_channel(c, v) -> None:
    if not (isinstance(c, tuple) and len(c) == 2):
        raise ValueError(f"a channel is a (sender, receiver) pair, got {c!r}")
    if not isinstance(v, int) or v < 0:
        raise ValueError(f"sequence number for {c!r} must be an int >= 0, got {v!r}")


def _graph(h: _History) -> set:
    """Wang's checkpoint graph as a set of ``((process, index), (process, index))`` edges.

    ``(p, latest_p + 1)`` is ``p``'s volatile state (the target of its last successor edge);
    messages sent after a sender's latest checkpoint give edges from that checkpoint.
    """
    edges: set = set()
    for p in h.records:
        for x in range(h.base[p], h.latest[p] + 1):
            edges.add(((p, x), (p, x + 1)))      # the last one leads to the volatile node
    for c in h.channels:
        i, j = c
        if i == j:
            # A replica's channel to itself (a feedback loop) only gives edges C[i,x-1] -> C[i,y]
            # with y >= x, already implied by successor edges; it still has replay ranges.
            continue
        # Sender intervals I[i,x] for x in base+1 .. latest+1 (the last is volatile, unbounded);
        # receiver intervals I[j,y] for y in base+1 .. latest. Empty intervals carry no message.
        sends = []
        for x in range(h.base[i] + 1, h.latest[i] + 2):
            lo = h.sent(c, x - 1)
            hi = h.sent(c, x) if x <= h.latest[i] else math.inf
            if lo < hi:
                sends.append((lo, hi, x))
        recvs = []
        for y in range(h.base[j] + 1, h.latest[j] + 1):
            lo, hi = h.processed(c, y - 1), h.processed(c, y)
            if lo < hi:
                recvs.append((lo, hi, y))
        # Both lists partition the sequence numbers into consecutive half-open ranges: merge.
        a = b = 0
        while a < len(sends) and b < len(recvs):
            slo, shi, x = sends[a]
            rlo, rhi, y = recvs[b]
            if max(slo, rlo) < min(shi, rhi):
                edges.add(((i, x - 1), (j, y)))
            if shi <= rhi:
                a += 1
            if rhi <= shi:
                b += 1
    return edges


def _reach(adj: Mapping, starts: Iterable, marked: set) -> None:
    """Add to ``marked`` every node reachable from ``starts`` by at least one edge."""
    stack = [n for s in starts for n in adj.get(s, ())]
    while stack:
        n = stack.pop()
        if n in marked:
            continue
        marked.add(n)
        stack.extend(adj.get(n, ()))


def recovery_line(records: Iterable[CheckpointRecord], failed: Iterable) -> RecoveryPlan:
    """The maximum consistent set of checkpoints every replica restarts from after ``failed``
    fail, by rollback propagation on the checkpoint graph, with the replay ranges.

    Every replica (failed or not) restarts from a checkpoint; see the module docstring.
    """
    h = _History(records)
    failed = set(failed)
    unknown = failed - set(h.records)
    if unknown:
        raise ValueError(f"failed processes {sorted(map(repr, unknown))} have no checkpoint record")
    base = {p: h.base[p] for p in h.records}
    bad = h.orphans(base)
    if bad:
        raise ValueError(f"the earliest recorded checkpoints are not a consistent line (orphans on "
                         f"{bad}); rollback propagation has nowhere to stop")

    adj: dict = {}
    for src, dst in _graph(h):
        adj.setdefault(src, []).append(dst)

    roots = {p: h.latest[p] for p in h.records}
    marked: set = set()
    new_roots = [(p, x) for p, x in roots.items()]
    while new_roots:
        _reach(adj, new_roots, marked)
        new_roots = []
        for p, x in roots.items():
            if (p, x) in marked:
                while (p, x) in marked:
                    x -= 1
                if x < h.base[p]:   # cannot happen when the base line is consistent
                    raise ValueError(f"rollback propagation went below the first checkpoint of {p!r}")
                roots[p] = x
                new_roots.append((p, x))

    useless = sum(1 for (p, x) in marked if x <= h.latest[p])
    rolled_back = {p: h.latest[p] - roots[p] for p in roots}
    assert useless == sum(rolled_back.values())
    return RecoveryPlan(line=dict(roots), replay=_in_transit(h, roots), useless=useless,
                        rolled_back=rolled_back)


def _in_transit(h: _History, line: Mapping) -> dict:
    out = {}
    for c in h.channels:
        first = h.processed(c, line[c[1]]) + 1
        last = h.sent(c, line[c[0]])
        if first <= last:
            out[c] = (first, last)
    return out


def in_transit(records: Iterable[CheckpointRecord], line: Mapping) -> dict:
    """Channel -> inclusive ``(first, last)`` sequence numbers sent before the sender's line
    checkpoint and not processed before the receiver's (to replay from the log); channels with
    nothing in transit are omitted. ``line`` must be consistent (``ValueError`` otherwise)."""
    h = _History(records)
    h.check_line(line)
    bad = h.orphans(line)
    if bad:
        raise ValueError(f"the line is not consistent (orphan messages on {bad})")
    return _in_transit(h, line)
