"""One StreamJob's lease, kept by this cluster's operator (the I/O around
``segflow.disaster.lease.decide``): read it each step, remember since when this version
has been seen, write what the decision says with a conditional write, and remember what
this cluster holds."""
from __future__ import annotations

import logging
import time

from segflow.disaster.lease import Lease, LeaseDecision, LeaseError, Move, Observation, decide
from segflow.disaster.lease_store import LeaseStore
from segflow.state.backend import StateStoreError, WriteConflict

from .spec import DisasterRecovery

log = logging.getLogger("segflow.operator")


class LeaseKeeper:
    def __init__(self, dr: DisasterRecovery, job_name: str, store: LeaseStore | None = None):
        self.dr = dr
        self.store = store or LeaseStore(dr.backup_url, job_name, dr.s3_endpoint or None)
        self.held: Lease | None = None
        self.lease: Lease | None = None            # as last read (or written)
        self.taken: Lease | None = None            # the lease this cluster last took over, for the status
        self.version: str | None = None
        self.held_as = ""                          # the role this cluster had when it took the lease
        self.seen_since = 0.0                      # monotonic time this version was first read

    @property
    def switching_over(self) -> bool:
        """The holder took the lease as the primary and has been made the standby since: a
        planned switch-over (a standby that took over in a failover simply runs the job)."""
        return self.held is not None and self.held_as == "primary" and self.dr.role == "standby"

    def step(self, release: bool, adopt_generation: int, adopt_role: str = "") -> LeaseDecision:
        """One read, decision and write. ``adopt_generation`` and ``adopt_role``: the
        generation the status says this cluster holds and the role it took it as, taken
        back after an operator restart if the lease agrees."""
        observation = self._observe(adopt_generation, adopt_role)
        decision = decide(self.dr.cluster, self.dr.role, self.dr.failover_after, self.held, observation, time.time(),
                          release)
        if decision.write is not None:
            try:
                self.version = self.store.write(decision.write, self.version)
            except WriteConflict as exc:           # another cluster wrote first: read again next step
                log.info("lease write lost a race: %s", exc)
                return LeaseDecision(Move.STAND_BY, f"another cluster wrote the lease first ({decision.reason})")
            except StateStoreError as exc:
                log.warning("cannot write the lease: %s", exc)
                return decision if decision.move is Move.RENEW and self.held is not None else \
                    LeaseDecision(Move.STAND_BY, f"cannot write the lease: {exc}")
            self.lease, self.seen_since = decision.write, time.monotonic()
            self.held = None if decision.move is Move.RELEASE else decision.write
            if decision.move in (Move.CREATE, Move.TAKE_OVER):
                self.held_as = self.dr.role
            if decision.move is Move.TAKE_OVER:
                self.taken = decision.write
        elif not decision.active:
            self.held = None
        return decision

    def _observe(self, adopt_generation: int, adopt_role: str) -> Observation:
        try:
            lease, version = self.store.read()
        except (StateStoreError, LeaseError) as exc:
            log.warning("cannot read the lease: %s", exc)
            return Observation(None, readable=False)
        if version != self.version or self.lease is None:
            self.seen_since = time.monotonic()
        self.lease, self.version = lease, version
        if self.held is None and lease is not None and adopt_generation and lease.owner == self.dr.cluster \
                and lease.generation == adopt_generation and not lease.released:
            self.held, self.held_as = lease, adopt_role or self.dr.role
        return Observation(lease, unchanged_for=time.monotonic() - self.seen_since)

    def close(self) -> None:
        self.store.close()
