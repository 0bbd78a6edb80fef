"""Regional recovery under segment backup: after a loss, restart only what must restart.

A global restore (:func:`.segment_plan.plan_restore`) puts every block back at its adjusted
version. Most of that work is unnecessary: a connector keeps its pending window (durable
parts in the store, the part after its newest durable version in memory), so a connector
that keeps running can replay its output to a restarted consumer exactly as it sent it,
and nothing upstream of it has to move. The restart *region* is what cannot be served
that way, the rule of Flink's failover regions with connectors as the region boundaries:

1. every block with a replica on a lost worker restarts;
2. a restarted block's consumers restart: it sends its output again from its restored
   version, and a consumer that went on past that version cannot drop what it already
   took (barriers delimit versions, not the records inside one). Unless the restarted
   block *replays exactly* (below) and the consumer is known to have passed that version:
   then the consumer keeps running and skips, on each channel from the block, as many
   elements as it took since the block's version (a :class:`Skip`; seeds/004 §3.5.1,
   step 4, a connector ignoring input older than its version, made exact per element);
3. a restarted block's *plain* producers restart: a plain block keeps no window, so what
   it sent after the consumer's version exists nowhere any more. A connector producer
   that keeps running is a boundary: it replays instead.

Every block of the region restarts at its adjusted version (plain blocks of one segment
share one: Theorem 2 of Shen, Segment Backup), connectors in it drop replayed input up
to their version, and each boundary connector replays its window into each restarted
consumer from the consumer's version on, from the store up to its newest durable part
and from memory after it, then goes on live. A connector inside the region replays from
the store only what its consumer needs below its own version: from its version on, it
sends anew. Blocks outside the region keep their processes, state and position.

A restarted block replays exactly when it sends, on each output channel, the same
elements in the same order as before from its version on: the job declared its functions
deterministic (no clock, no randomness, no unordered iteration feeding the output), the
block is not a source (a source's barriers fall where the coordinator's rounds found it),
each of its replicas reads one input channel (several interleave as they arrive, and a
count of what was taken no longer names the same elements), and each of its producers in
the region replays exactly too (one outside the region is a connector replaying its window
in order, then going on live on the same channel). ``replayable``: the blocks meeting the
first three conditions; the fourth is this module's to check.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Hashable, Iterable, Mapping, TypeVar

from .segment_plan import Versions, plan_restore
from .segments import N, Topology

W = TypeVar("W", bound=Hashable)      # a worker: its name in the engine


@dataclass(frozen=True)
class Replay(Generic[N]):
    """What ``connector`` sends ``consumer`` before its new output: its window's versions
    ``first`` through ``through`` from the store, and, when ``live``, every later version
    it has produced (from memory), then its live output."""

    connector: N
    consumer: N
    first: int
    through: int
    live: bool


@dataclass(frozen=True)
class Skip(Generic[N]):
    """``producer`` restarts at ``version`` and replays exactly; ``consumer`` keeps running:
    on each channel from ``producer`` it drops the elements it took after ``producer``'s
    barrier ``version`` (the restarted block sends them again), then takes the rest."""

    producer: N
    consumer: N
    version: int


@dataclass(frozen=True)
class RegionalRecovery(Generic[N]):
    """The recovery of one loss: which blocks restart at which versions, and the replays."""

    restart: dict[N, int]                 # restarting block -> the version its state is restored from
    drop_through: dict[N, int]            # restarting connector -> replayed input up to here is dropped
    replays: tuple[Replay[N], ...]
    kept: frozenset[N]                    # blocks that keep running, untouched
    skips: tuple[Skip[N], ...] = ()       # kept consumers of restarted blocks, and what they skip

    @property
    def region(self) -> frozenset[N]:
        return frozenset(self.restart)

    def describe(self, names: Mapping[N, str] | None = None) -> str:
        """One line for the log and the web view."""
        def name(n: N) -> str:
            return (names or {}).get(n, str(n))
        if not self.restart:
            return "nothing to restart"
        restarts = ", ".join(f"{name(n)}@{v}" for n, v in sorted(self.restart.items(), key=lambda i: str(i[0])))
        replays = ", ".join(f"{name(r.connector)}>{name(r.consumer)} from {r.first}{'+live' if r.live else ''}"
                            for r in self.replays)
        skips = "".join(f"; {name(k.consumer)} skips {name(k.producer)}'s resent output after {k.version}"
                        for k in self.skips)
        return f"restart {restarts}; replay {replays or 'nothing'}; keep {len(self.kept)} block(s) running{skips}"


@dataclass(frozen=True)
class KeepRule(Generic[N]):
    """When a restarted block's consumer may keep running (rule 2's exception): the blocks
    that could replay exactly (see the module's doc), each block's restart version, and the
    newest version each block is known to have passed (every replica's snapshot of it is
    durable). The default keeps no consumer: rule 2 as before."""

    replayable: frozenset[N] = frozenset()
    versions: Mapping[N, int] = field(default_factory=dict)
    reached: Mapping[N, int] = field(default_factory=dict)

    def exact(self, topology: Topology[N], region: frozenset[N]) -> frozenset[N]:
        """The blocks of ``region`` that replay exactly."""
        exact: dict[N, bool] = {}

        def replays_exactly(node: N) -> bool:
            if node not in exact:
                exact[node] = node in self.replayable and all(
                    replays_exactly(p) for p in topology.predecessors(node) if p in region)
            return exact[node]
        return frozenset(n for n in region if replays_exactly(n))

    def keeps(self, producer: N, consumer: N, exact: frozenset[N]) -> bool:
        """Whether ``consumer`` may skip what restarted ``producer`` sends again."""
        return producer in exact and self.reached.get(consumer, 0) >= self.versions[producer]


def restart_region(topology: Topology[N], touched: Iterable[N], rule: KeepRule[N] | None = None) -> frozenset[N]:
    """The blocks that must restart when the blocks ``touched`` lost a replica (rules 1-3
    of the module's doc, to their fixpoint; ``rule``: when rule 2 keeps a consumer). As the
    region grows a block may stop replaying exactly (a producer that does not joins), so
    the kept consumers are decided anew until nothing changes."""
    keep = rule or KeepRule()
    region: set[N] = set()
    pending = list(touched)
    while pending:
        while pending:
            node = pending.pop()
            if node in region:
                continue
            region.add(node)
            pending.extend(p for p in topology.predecessors(node) if not topology.is_connector(p))
        exact = keep.exact(topology, frozenset(region))
        pending = [c for b in region for c in topology.successors(b)
                   if c not in region and not keep.keeps(b, c, exact)]
    return frozenset(region)


def touched_blocks(placement: Mapping[N, Iterable[W]], lost: Iterable[W]) -> frozenset[N]:
    """The blocks with a replica on a lost worker (``placement``: block -> its workers)."""
    gone = set(lost)
    return frozenset(block for block, workers in placement.items() if gone & set(workers))


def _stored_through(parts: Iterable[int], first: int) -> int:
    """The last version of the unbroken run of stored parts from ``first`` (``first - 1``:
    none); the rest of a live connector's window comes from its memory."""
    stored, through = set(parts), first - 1
    while through + 1 in stored:
        through += 1
    return through


def regional_recovery(topology: Topology[N], placement: Mapping[N, Iterable[W]], lost: Iterable[W],
                      snapshots: Versions[N], windows: Versions[N], heads: Mapping[N, int],
                      replayable: Iterable[N] = (), reached: Mapping[N, int] | None = None) -> RegionalRecovery[N]:
    """The recovery of losing the workers ``lost``; ``snapshots``/``windows``: per block,
    the versions of which the store holds every replica's snapshot / window part, as for
    :func:`.segment_plan.plan_restore`, whose versions the region restarts at (the store
    can serve them; a block outside the region is never moved); ``heads``: each
    connector's truncation head (the ledger deleted its parts up to it).

    A running connector holds in memory what it produced after its newest stored part.
    One that cannot replay from a consumer's version on restarts too: the versions were
    truncated (the global plan went below the head, lowered by another block's gap), or
    its stored parts have a gap before the newest (a part whose write failed).

    ``replayable``: the blocks that could replay exactly (empty: no consumer of a restarted
    block keeps running). A consumer kept must be known to have passed the restarted
    block's version: ``reached``, per block, the newest version it passed (default: its
    newest in ``snapshots``)."""
    adjusted = plan_restore(topology, snapshots, windows)
    passed = reached if reached is not None else {n: max(snapshots.get(n, ()), default=0) for n in topology.nodes}
    rule = KeepRule(frozenset(replayable), adjusted.versions, passed)
    touched = set(touched_blocks(placement, lost))
    while True:
        region = restart_region(topology, touched, rule)
        recovery = recovery_of_region(topology, region, adjusted.versions, windows)
        broken = {r.connector for r in recovery.replays if r.live and (
            r.first <= heads.get(r.connector, 0) or r.through < max(windows.get(r.connector, ()), default=0))}
        if not broken:
            return recovery
        touched |= broken


def recovery_of_region(topology: Topology[N], region: frozenset[N], versions: Mapping[N, int],
                       windows: Versions[N]) -> RegionalRecovery[N]:
    """The restarts and replays when exactly ``region`` restarts, each block of it at its
    adjusted version in ``versions``."""
    restart = {n: versions[n] for n in topology.nodes if n in region}
    replays = []
    for producer, consumer in topology.edges:
        if consumer not in region or not topology.is_connector(producer):
            continue
        first = restart[consumer] + 1
        if producer in region:
            if first <= restart[producer]:
                replays.append(Replay(producer, consumer, first, restart[producer], live=False))
        else:
            replays.append(Replay(producer, consumer, first, _stored_through(windows.get(producer, ()), first),
                                  live=True))
    skips = tuple(Skip(producer, consumer, restart[producer]) for producer, consumer in topology.edges
                  if producer in region and consumer not in region)
    return RegionalRecovery(restart, {c: v for c, v in restart.items() if topology.is_connector(c)},
                            tuple(replays), frozenset(topology.nodes) - region, skips)
