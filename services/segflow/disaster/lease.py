"""The lease that names the one cluster allowed to run a job (pure).

Both clusters' operators read one object in the shared backup store. The holder renews it;
a cluster that does not hold it takes it over, by a conditional write of the next
*generation*, once it has seen the object unchanged for ``ttl`` seconds (or once the holder
released it for a planned switch-over). Staleness is measured on the taker's own clock from
when it first saw that version, so clocks of the two clusters need not agree.

The holder stops committing at its *deadline*, ``renewed_at + ttl - guard`` on its own
clock: a taker cannot have waited ``ttl`` since that renewal before then, so the old
holder has stopped before the new one starts (the guard covers the lag between a renewal
and a taker seeing it, and the holder's clock drift over one ``ttl``).

How short ``ttl`` (``failoverAfterSeconds``) may be is :func:`shortest_safe_ttl`: the
operators step the lease every :func:`step_seconds` on a thread of their own, so that
neither a renewal nor a takeover waits for a slow reconcile.
"""
from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass, replace

from ..errors import SegflowError

GUARD_SECONDS = 2.0
RENEW_FRACTION = 0.25        # renew by a quarter of the ttl (at the last step before it)
LONGEST_STEP = 1.0


class LeaseError(SegflowError):
    """The lease object is not a lease (written by something else, or corrupted)."""


@dataclass(frozen=True)
class Lease:
    owner: str                 # the cluster that may run the job
    generation: int            # rises by one at every takeover; commits carry it
    renewed_at: float          # the owner's clock (Unix seconds) at its last renewal
    ttl: float                 # seconds a renewal holds: failoverAfterSeconds
    released: bool = False     # the owner handed the job over (planned switch-over)
    previous: str = ""         # the owner before this generation
    taken_at: float = 0.0      # when this generation began (the taker's clock)
    previous_renewed_at: float = 0.0   # the previous owner's last renewal: the fault came after it

    @property
    def deadline(self) -> float:
        """After this instant (the owner's clock) the owner must not commit anything."""
        return self.renewed_at + self.ttl - guard(self.ttl)

    def encode(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> "Lease":
        try:
            raw = json.loads(data)
            return cls(owner=str(raw["owner"]), generation=int(raw["generation"]),
                       renewed_at=float(raw["renewed_at"]), ttl=float(raw["ttl"]),
                       released=bool(raw.get("released", False)), previous=str(raw.get("previous", "")),
                       taken_at=float(raw.get("taken_at", 0.0)),
                       previous_renewed_at=float(raw.get("previous_renewed_at", 0.0)))
        except (ValueError, KeyError, TypeError) as exc:
            raise LeaseError(f"the lease object is not a segflow lease ({type(exc).__name__}: {exc}); delete it "
                             "only if no cluster runs the job, then let the primary create it again") from None


def guard(ttl: float) -> float:
    """Seconds before ``ttl`` runs out at which a holder stops publishing (see the module)."""
    return min(GUARD_SECONDS, ttl / 2)


def step_seconds(ttl: float) -> float:
    """How often an operator reads and decides a lease of ``ttl``: half a renewal period,
    at most a second (a standby notices staleness, a holder renews, this much late)."""
    return min(LONGEST_STEP, ttl * RENEW_FRACTION / 2)


def renewal_due(elapsed: float, ttl: float) -> bool:
    """Whether a holder that renewed ``elapsed`` seconds ago renews at this step: at the
    last step before ``ttl * RENEW_FRACTION`` has passed, not the first one after it, so
    the write starts by then even when steps come on time (every step at a 2 s ttl). The
    step that :func:`shortest_safe_ttl` still counts is then margin for an operator
    thread or a store write that comes late, which fences the holder's job if it is late
    past the deadline."""
    return elapsed + step_seconds(ttl) >= ttl * RENEW_FRACTION


def shortest_safe_ttl(store_seconds: float, publish_seconds: float, clock_rate_error: float,
                      step: float | None = None) -> float:
    """The shortest ``ttl`` that keeps both promises of the lease, to 0.01 s:

    - *safety*: the old holder's last publish ends before a taker can take over. The holder
      stamps a renewal at real time R and publishes only after a fresh read before its
      deadline, ``ttl - guard`` later on its clock, each publish done within
      ``publish_seconds`` of that read; a taker sees the renewal no earlier than R and
      waits ``ttl`` on its own clock. With clocks whose rates err by at most
      ``clock_rate_error`` (0.001 is 86 s a day): ``(ttl - guard) / (1 - e) +
      publish_seconds < ttl / (1 + e)``;
    - *liveness*: a holder that can reach the store renews before its deadline, or its
      job stops though nothing failed: it renews by ``ttl * RENEW_FRACTION``
      (:func:`renewal_due`), counted here one step (``step``, default
      :func:`step_seconds`) later as margin for a late thread, and the write takes up
      to ``store_seconds``: ``ttl * RENEW_FRACTION + step + store_seconds < ttl - guard``.

    Both sides grow with ``ttl`` between the guard's bends, so the least ``ttl`` meeting
    them is found by a scan over hundredths."""
    e = clock_rate_error

    def safe(ttl: float) -> bool:
        wait = step if step is not None else step_seconds(ttl)
        held = ttl - guard(ttl)
        return held / (1 - e) + publish_seconds < ttl / (1 + e) and \
            ttl * RENEW_FRACTION + wait + store_seconds < held
    for hundredths in range(1, 100_000):
        if safe(hundredths / 100):
            return hundredths / 100
    raise SegflowError(f"no ttl under 1000 s is safe with store writes of {store_seconds} s, publishes of "
                       f"{publish_seconds} s and clocks erring by {e}")


@dataclass(frozen=True)
class Observation:
    """What a cluster read of the lease: ``readable`` False when the store did not answer;
    ``unchanged_for``: seconds this cluster has seen this very version of the object."""
    lease: Lease | None
    readable: bool = True
    unchanged_for: float = 0.0


class Move(enum.Enum):
    HOLD = "hold"              # I hold it and need not write now
    RENEW = "renew"            # I hold it: write it again (conditional on the version read)
    CREATE = "create"          # no lease yet and I am the primary: create generation 1
    TAKE_OVER = "take-over"    # the holder is gone or released it: write generation + 1
    RELEASE = "release"        # hand over (planned switch-over, after a savepoint)
    STAND_BY = "stand-by"      # another cluster holds it, or nobody yet: run nothing
    FENCED = "fenced"          # I held it, and another cluster took it: stop everything
    LOST = "lost"              # I held it, but could not renew before my deadline: stop everything


@dataclass(frozen=True)
class LeaseDecision:
    move: Move
    reason: str
    write: Lease | None = None     # the lease to write, for CREATE, RENEW, TAKE_OVER and RELEASE

    @property
    def active(self) -> bool:
        """The cluster may run the job's pods after this move (once the write succeeded)."""
        return self.move in (Move.HOLD, Move.RENEW, Move.CREATE, Move.TAKE_OVER)


def decide(me: str, role: str, ttl: float, held: Lease | None, seen: Observation, now: float,
           release: bool = False) -> LeaseDecision:
    """The next move of cluster ``me`` (role ``primary`` or ``standby``). ``held``: the
    lease as this cluster last wrote it, if it believes it holds the job; ``release``:
    the holder is ready to hand over (its job is saved and stopped)."""
    lease = seen.lease
    if not seen.readable:
        if held is None:
            return LeaseDecision(Move.STAND_BY, "the backup store does not answer; waiting to read the lease")
        if now < held.deadline:
            return LeaseDecision(Move.HOLD, "the backup store does not answer; holding the lease until its deadline")
        return LeaseDecision(Move.LOST, f"could not renew the lease for {now - held.renewed_at:.0f} s (the backup "
                                        "store does not answer): stopping so that the standby can take over")
    if held is not None and lease is not None and lease.owner == me and lease.generation == held.generation:   # holding
        if lease.released:
            return LeaseDecision(Move.STAND_BY, "released the lease; waiting for the primary to take it")
        if release:
            return LeaseDecision(Move.RELEASE, "handing the job over to the primary",
                                 replace(lease, renewed_at=now, released=True))
        if renewal_due(now - lease.renewed_at, ttl) or lease.ttl != ttl:
            return LeaseDecision(Move.RENEW, "renewing the lease", replace(lease, renewed_at=now, ttl=ttl))
        return LeaseDecision(Move.HOLD, "holding the lease")
    if held is not None:
        if lease is None:
            return LeaseDecision(Move.FENCED, "the lease object was deleted while this cluster held it")
        return LeaseDecision(Move.FENCED, f"cluster {lease.owner!r} took the job over (generation "
                                          f"{lease.generation})")
    if lease is None:
        if role == "primary":
            return LeaseDecision(Move.CREATE, "taking the lease as the primary",
                                 Lease(me, 1, now, ttl, taken_at=now))
        return LeaseDecision(Move.STAND_BY, "no cluster holds the lease yet; waiting for the primary")
    taking = Lease(me, lease.generation + 1, now, ttl, previous=lease.owner, taken_at=now,
                   previous_renewed_at=lease.renewed_at)
    if lease.owner == me and not lease.released:
        return LeaseDecision(Move.TAKE_OVER, f"the lease names this cluster (generation {lease.generation}) but "
                                             "this operator does not hold it: taking the next generation", taking)
    if lease.released:
        if role == "primary":
            return LeaseDecision(Move.TAKE_OVER, f"cluster {lease.owner!r} handed the job over", taking)
        return LeaseDecision(Move.STAND_BY, f"cluster {lease.owner!r} released the lease for a primary to take")
    if seen.unchanged_for >= ttl:
        return LeaseDecision(Move.TAKE_OVER, f"cluster {lease.owner!r} has not renewed the lease for "
                                             f"{seen.unchanged_for:.0f} s", taking)
    return LeaseDecision(Move.STAND_BY, f"cluster {lease.owner!r} holds the lease (generation {lease.generation})")


def publish_refusal(lease: Lease | None, owner: str, generation: int, now: float) -> str:
    """Why a holder of ``generation`` must not commit now ("" when it may): checked
    before every checkpoint is published, so no commit follows a takeover."""
    if lease is None:
        return "the lease object is gone"
    if lease.owner != owner or lease.generation != generation:
        return (f"cluster {lease.owner!r} holds generation {lease.generation} of the lease; this is "
                f"{owner!r}'s generation {generation}")
    if lease.released:
        return "the lease was released for a switch-over"
    if now >= lease.deadline:
        return f"the lease has not been renewed for {now - lease.renewed_at:.1f} s (past its deadline)"
    return ""


def held_by(lease: Lease | None, owner: str, now: float) -> bool:
    """Whether ``owner`` holds ``lease`` now, with whatever generation: a warm standby's
    coordinator, deployed before its cluster took the lease, starts once this is true, under
    the lease's generation, and from then on is fenced like any holder of it."""
    return lease is not None and lease.owner == owner and not publish_refusal(lease, owner, lease.generation, now)


FENCED_PREFIX = "fenced: "


def fenced_message(refusal: str) -> str:
    """The error of a process stopped by the lease (``refusal``: why, as
    :func:`publish_refusal` says it): the operator reads it in the coordinator's last
    message (:func:`says_fenced`) and stands the job by instead of failing it."""
    return FENCED_PREFIX + refusal


def says_fenced(message: str) -> bool:
    """Whether ``message`` (a bare error, or a JSON log line holding one) is a :func:`fenced_message`."""
    return FENCED_PREFIX in message
