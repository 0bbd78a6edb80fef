"""One StreamJob's lease, stepped on a thread of its own.

The reconcile loop steps once a second and a step may take longer (pods created, a status
written, a savepoint asked for, an API server under load). A renewal that waited for it
would lapse on a short ``failoverAfterSeconds``, and the holder's processes, fenced at the
lease's deadline, would stop with nothing wrong; a standby would notice staleness late. So
the lease is read and decided every :func:`segflow.disaster.lease.step_seconds` here, and
the loop only reads the latest decision (and says what it wants: a release, a generation
to take back), and is woken when the decision changes whether this cluster runs the job.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

from segflow.disaster.lease import LeaseDecision, Move, step_seconds

from .lease_keeper import LeaseKeeper

log = logging.getLogger("segflow.operator")


class LeaseThread:
    def __init__(self, keeper: LeaseKeeper, changed: Callable[[], None], on_move: Callable[[LeaseDecision], None]):
        """``changed``: called when a step turns this cluster active or inactive; ``on_move``:
        with every decision that wrote a new generation (a takeover), once."""
        self.keeper = keeper
        self.changed = changed
        self.on_move = on_move
        self.lock = threading.Lock()
        self.wanted: tuple[bool, int, str] = (False, 0, "")
        self.latest: LeaseDecision | None = None
        self.abandoned = ""                  # why this cluster can no longer run the job ("" while it can)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"lease {keeper.store.key}", daemon=True)
        self.thread.start()

    def decision(self, release: bool, adopt_generation: int, adopt_role: str) -> LeaseDecision:
        """The latest decision, stepped now if there is none yet or the loop wants
        something else (a release is written at once, not a step later)."""
        with self.lock:
            if self.abandoned:
                return LeaseDecision(Move.LOST, self.abandoned)
            wanted = (release, adopt_generation, adopt_role)
            if self.latest is None or wanted != self.wanted:
                self.wanted = wanted
                self._step()
            assert self.latest is not None, "a step always decides"
            return self.latest

    def _step(self) -> None:
        """Lock held."""
        before = self.latest
        self.latest = self.keeper.step(*self.wanted)
        if self.latest.move is Move.TAKE_OVER:
            self.on_move(self.latest)
        if before is not None and before.active != self.latest.active:
            self.changed()

    def _run(self) -> None:
        while not self.stopped.wait(step_seconds(self.keeper.dr.failover_after)):
            with self.lock:
                if self.latest is None or self.abandoned:    # nothing wanted yet, or never again
                    continue
                try:
                    self._step()
                except Exception:                  # noqa: BLE001 - one failed step must not end the lease's thread
                    log.exception("lease step of %s failed; trying again", self.keeper.store.key)

    def abandon(self, reason: str) -> None:
        """The job can no longer run in this cluster (``reason``: its namespace is being
        deleted): no step writes the lease again, so it goes stale now rather than when the
        operator lets the StreamJob go. A step writing now finishes first (the lock); the
        job's processes are fenced at the deadline of the last renewal, as if this operator
        had died."""
        with self.lock:
            self.abandoned = reason
            self.stopped.set()

    def stop(self) -> None:
        """No more steps (this operator lets the job go): the lease is no longer renewed."""
        self.stopped.set()
        self.thread.join(timeout=10)

    def close(self) -> None:
        self.stop()
        self.keeper.close()
