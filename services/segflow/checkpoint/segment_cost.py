"""The cost model of segment backup (Shen, Segment Backup, chapter 4), for a linear topology
(one path of a topology that splits or merges: :mod:`.segment_cost_dag`): what a choice
of connectors and barrier interval costs during normal running (time, network, storage,
money) and buys at recovery (the recovery delay).

Pure arithmetic over measured inputs. Nodes are numbered 1..N along the pipeline, node 1
the spout and node N the sink; both are always connectors. Symbols follow the thesis's
tables 4.1-4.3 (``t^e`` is ``edge``, ``l_1^{ob}`` is ``block``, ...). Equation numbers
are given where each is computed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ..errors import SegflowError


class UnstableQueue(SegflowError):
    """A node receives tuples faster than it serves them: its queue, and the pending
    window before it, grow without bound (the M/M/1 model has no steady state)."""


@dataclass(frozen=True)
class Delays:
    """Table 4.1, seconds per tuple (or per event)."""

    edge: float                 # t^e: network delay to the next node
    transmit: float             # t^tr: transmit delay
    read: float                 # t^fr: read from the store
    write: float                # t^fw: write to the store
    normal: float               # t^n: processing a normal tuple
    barrier: float              # t^b: processing a barrier (snapshot, relay)
    ack: float                  # t^a: a version ack, sender and receiver
    recover_response: float     # t^rr: from a failure to the restart request
    recover_misc: float         # t^rm: adjusting states before nodes restart
    # t^ck: from a checkpoint's trigger to its completion, when it becomes what a recovery
    # restores (0: at once, as 4.2 assumes; see :func:`restore_lag`)
    checkpoint: float = 0.0
    # the restored cut's age at the failure, seconds, where the failure's moment is known
    # (a measured failure); None: a failure at a random moment (:func:`restore_lag`)
    restored_age: float | None = None
    # a node passes each tuple on from the thread that processed it (segflow's replicas
    # encode and queue every send themselves): a replayed tuple costs t^n + t^tr, where
    # 4.2 overlaps them (the larger one)
    serial_send: bool = False
    # the share of wall time the machine's other load takes from the job's processes (a
    # shared machine freezes them all for tens of milliseconds at a time; measured apart
    # from the job): a recovery's work takes 1 / (1 - share) times as long
    stall_share: float = 0.0


@dataclass(frozen=True)
class Pipeline:
    """Table 4.2 for a linear topology of ``len(service)`` nodes."""

    service: tuple[float, ...]  # t_i^t: per-tuple service time of node i (index 0 is node 1)
    ratios: tuple[float, ...]   # r^o_{k,k+1}: output of node k+1 over that of node k (N-1 values)
    connectors: frozenset       # C: node numbers (1 and N always)
    block: float                # l_1^{ob}: tuples per spout output block (one is the barrier)
    rate: float                 # f^o: normal tuples per second from the spout
    tuple_bytes: float          # s^t
    barrier_bytes: float        # s^b
    checkpoint_bytes: float     # s^c
    ack_bytes: float            # s^a
    # Tuples per second arriving at each node, barriers included, where other paths of a
    # topology that merges feed it too (``segment_cost_dag``); empty: this pipeline alone.
    arrivals: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.service)
        if n < 2 or len(self.ratios) != n - 1:
            raise SegflowError(f"a pipeline of {n} nodes needs {max(n - 1, 1)} output ratios, got {len(self.ratios)}")
        if {1, n} - set(self.connectors) or not set(self.connectors) <= set(range(1, n + 1)):
            raise SegflowError(f"connectors must be node numbers 1..{n} and include the spout (1) and the sink ({n})")
        if self.block <= 1:
            raise SegflowError(f"a block holds its barrier and at least one tuple: block must be > 1, got {self.block}")
        if self.arrivals and len(self.arrivals) != n:
            raise SegflowError(f"a pipeline of {n} nodes needs {n} arrival rates, got {len(self.arrivals)}")

    @property
    def nodes(self) -> int:
        return len(self.service)

    def ratio(self, i: int, j: int) -> float:
        """r^o_{i,j}: node j's output over node i's (1 for i == j)."""
        return math.prod(self.ratios[k - 1] for k in range(i, j))

    def output_block(self, i: int) -> float:
        """l_i^{ob} = l_1^{ob} x r^o_{1,i} (equation 4.3)."""
        return self.block * self.ratio(1, i)

    @property
    def tuple_rate(self) -> float:
        """f^t: every tuple the spout sends per second, barriers included."""
        return self.rate * self.block / (self.block - 1)

    def upstream_length(self, i: int) -> int:
        """l_i^u: hops from connector i back to the connector before it."""
        return i - max(c for c in self.connectors if c < i)

    def next_connector(self, i: int) -> int:
        return min(c for c in self.connectors if c > i)


@dataclass(frozen=True)
class Prices:
    """Table 4.3. Defaults: an on-demand general-purpose vCPU (about 0.048 $/h), data
    transfer out of a cloud region (about 0.09 $/GB) and object storage (about
    0.023 $/GB-month), as the large providers listed them in 2025; pass your own."""

    per_cpu_second: float = 0.048 / 3600
    per_network_byte: float = 0.09 / 1e9
    per_stored_byte_second: float = 0.023 / 1e9 / (30 * 24 * 3600)


def restore_lag(interval: float, checkpoint: float) -> float:
    """Mean seconds from the cut of the newest restorable checkpoint to a failure at a
    random moment. 4.2 charges half a block (``interval / 2``): a version is restorable the
    moment it is cut. In segflow a checkpoint is triggered ``interval`` seconds after the
    previous one ended and is restorable ``checkpoint`` seconds after its cut, so
    completions come every ``interval + checkpoint`` seconds and the age of the newest one
    runs from ``checkpoint`` to ``2 * checkpoint + interval`` between them."""
    if interval <= 0 or checkpoint < 0:
        raise SegflowError(f"a checkpoint interval must be > 0 and a checkpoint's duration >= 0, got {interval} "
                           f"and {checkpoint}")
    return 1.5 * checkpoint + interval / 2


def replayed_tuples(p: Pipeline, d: Delays, i: int) -> float:
    """Tuples of connector i-1's output that the nodes up to connector i process again
    after a failure: its output since the restored cut, ``d.restored_age`` seconds of it
    for a failure at a known moment, else the mean age (:func:`restore_lag`; 4.2's half
    block ``l_{i-1}^{ob} / 2`` when ``d.checkpoint`` is 0)."""
    interval = (p.block - 1) / p.rate
    age = restore_lag(interval, d.checkpoint) if d.restored_age is None else d.restored_age
    return p.output_block(i - 1) * age / interval


def recovery_delay(p: Pipeline, d: Delays) -> float:
    """t^r (equation 4.2): until the last connector processes new tuples."""
    per_tuple = max(d.read, d.transmit + d.normal) if d.serial_send else max(d.read, d.transmit, d.normal)

    def catch_up(i: int) -> float:
        return (d.edge + d.normal) * p.upstream_length(i) + per_tuple * replayed_tuples(p, d, i)
    return d.recover_response + d.recover_misc + max(catch_up(i) for i in p.connectors if i != 1)


def regional_recovery_delay(p: Pipeline, d: Delays, boundary: int) -> float:
    """Until the sink processes a new tuple after a recovery that restarts nodes
    ``boundary + 1`` to N at the versions connector ``boundary`` cut, while it keeps
    running and replays its window into them (segflow's regional recovery; ``boundary``
    1 is a global rollback, the spout catching up). Where 4.2 lets every connector replay
    its own segment at once, here every tuple the sink must see again comes through the
    one replaying connector and the whole restarted chain, so after the restart
    ``d.recover_response`` (measured: to the first replayed tuple) the first replayed
    tuple fills the chain (an edge and a service time per node) and each further one
    costs the chain's bottleneck, its slowest node's service plus the send
    (``serial_send``, else the larger). The sink must process again the connector's output
    since its cut (``d.restored_age`` seconds after the round began, less the barrier's
    way to the connector: :func:`barrier_lag`) that reached the sink before the failure
    (less the tuples' way from the connector to the sink: :func:`tuple_lag`); the next
    one is new. ``d.stall_share`` stretches that work."""
    if not 1 <= boundary < p.nodes:
        raise SegflowError(f"the replaying connector must be a node 1..{p.nodes - 1}, got {boundary}")
    if d.restored_age is None:
        raise SegflowError("a regional recovery's delay needs the restored version's age at the failure "
                           "(Delays.restored_age)")
    if not 0 <= d.stall_share < 1:
        raise SegflowError(f"a stall share is a fraction of wall time in [0, 1), got {d.stall_share}")
    restarted = range(boundary + 1, p.nodes + 1)
    pace = max(d.transmit + p.service[k - 1] if d.serial_send else max(d.transmit, p.service[k - 1])
               for k in restarted)
    seen_again = p.ratio(1, boundary) * p.rate * (d.restored_age - barrier_lag(p, d, boundary)
                                                  - tuple_lag(p, d, boundary))
    fill = sum(d.edge + p.service[k - 1] for k in restarted)
    work = fill + max(0.0, seen_again) * pace
    return d.recover_response + d.recover_misc + work / (1 - d.stall_share)


def barrier_lag(p: Pipeline, d: Delays, connector: int) -> float:
    """Seconds from a round's start to its barrier passing ``connector``: at each node
    before it, an edge, the queue ahead of the barrier (``queue_wait``) and its own t^b.
    The connector's cut, and so its replay, begins that much after the round did."""
    return sum(d.edge + queue_wait(p, k) + d.barrier for k in range(2, connector + 1))


def tuple_lag(p: Pipeline, d: Delays, connector: int) -> float:
    """Seconds a tuple takes from ``connector`` to having been processed by the sink: an
    edge and the M/M/1 sojourn (4.6) at each node after it. The tuples sent in the last
    this many seconds before a failure had not reached the sink: they are new to it."""
    return sum(d.edge + response_time(p, k) for k in range(connector + 1, p.nodes + 1))


def overhead_time(p: Pipeline, d: Delays) -> float:
    """t^oh (equation 4.4): extra processing seconds per second of running."""
    blocks = p.rate / (p.block - 1)
    return (blocks * d.barrier * p.nodes + blocks * d.ack * (len(p.connectors) - 1)
            + p.tuple_rate * sum(d.write * p.ratio(1, i) for i in p.connectors))


def overhead_communication(p: Pipeline) -> float:
    """n^oh (equation 4.5): extra bytes sent per second."""
    blocks = p.rate / (p.block - 1)
    return (blocks * (p.barrier_bytes * (p.nodes - 1) + p.checkpoint_bytes * p.nodes)
            + blocks * p.ack_bytes * (len(p.connectors) - 1)
            + p.tuple_rate * sum(p.tuple_bytes * p.ratio(1, i) for i in p.connectors))


def response_time(p: Pipeline, i: int) -> float:
    """t_i^s (equation 4.6): the M/M/1 sojourn time at node i."""
    if p.arrivals:
        arrival = p.arrivals[i - 1]
    else:
        arrival = p.ratio(1, i - 1) * p.tuple_rate if i > 1 else p.tuple_rate
    service = 1 / p.service[i - 1]
    if arrival >= service:
        raise UnstableQueue(f"node {i} receives {arrival:.1f} tuples/s but serves only {service:.1f}/s: "
                            "lower the rate or speed the node up")
    return 1 / (service - arrival)


def queue_wait(p: Pipeline, i: int) -> float:
    """W_q at node i: the M/M/1 time in the queue before service (the sojourn of 4.6 less
    the node's own service time t_i^t). A barrier waits this long for the tuples ahead of
    it, then takes its own processing delay t^b, never a tuple's service time."""
    return response_time(p, i) - p.service[i - 1]


def pending_window(p: Pipeline, d: Delays, i: int) -> float:
    """l_i^p (equation 4.7): the average tuples in connector i's pending window. The
    thesis's windows hold each tuple until the next connector has it, so each hop costs a
    tuple's sojourn."""
    return _window(p, d, i, lambda k: response_time(p, k))


def versioned_pending_window(p: Pipeline, d: Delays, i: int) -> float:
    """l_i^p for windows cut at barrier versions, as segflow keeps them: a version's part
    leaves when the next connector acknowledges that version, so it waits for the
    version's barrier, not for its tuples, to cross the segment, and at each node a
    barrier waits only for the queue ahead of it (``queue_wait``) and its own t^b.
    Little's law over the segment as in 4.7, with that hop time."""
    return _window(p, d, i, lambda k: queue_wait(p, k) + d.barrier)


def _window(p: Pipeline, d: Delays, i: int, at_node: Callable[[int], float]) -> float:
    """Little's law over connector i's segment: its output rate times the time a part
    stays, ``at_node(k)`` plus an edge per hop and the ack."""
    j = p.next_connector(i)
    arrival = p.ratio(1, i) * p.tuple_rate
    return arrival * (sum(d.edge + at_node(k) for k in range(i + 1, j + 1)) + d.ack)


def overhead_storage(p: Pipeline, d: Delays) -> float:
    """s^oh (equations 4.8-4.10): bytes held by pending windows and checkpoints."""
    windows = p.tuple_bytes * sum(pending_window(p, d, i) for i in p.connectors if i != p.nodes)
    return windows + p.checkpoint_bytes * p.nodes


def money_per_second(p: Pipeline, d: Delays, prices: Prices = Prices()) -> float:
    """c (equation 4.11): what segment backup costs per second of running."""
    return (prices.per_cpu_second * overhead_time(p, d) + prices.per_network_byte * overhead_communication(p)
            + prices.per_stored_byte_second * overhead_storage(p, d))
