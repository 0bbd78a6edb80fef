"""Leader election, so the chart can run several operator replicas: one reconciles, the
others wait to take over.

The leader holds a ``coordination.k8s.io`` Lease (``segflow-operator`` in the operator's
namespace) and renews it every third of its duration; a waiting replica takes it once it
has seen the same renewal for a whole duration on its own clock (no clock agreement
between replicas is needed), with the Lease's resourceVersion as the guard, so two
replicas never both win. A leader that cannot renew within the duration stops at once:
it may no longer be the only one reconciling. Every write of the status and of the
job's objects is idempotent (see ``loop``), so a new leader continues where the old one
stopped.
"""
from __future__ import annotations

import datetime
import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable

from kubernetes import client
from kubernetes.client.rest import ApiException

log = logging.getLogger("segflow.operator")

LEASE_NAME = "segflow-operator"
LEASE_SECONDS = 15


@dataclass(frozen=True)
class Seen:
    """A Lease as a replica last read it: holder, renewal stamp, and when it saw that
    stamp first (its own monotonic clock)."""
    holder: str
    renewed: str
    since: float


def may_take(seen: Seen | None, me: str, now: float, duration: float) -> bool:
    """Whether replica ``me`` may write itself into the Lease now (pure)."""
    if seen is None or not seen.holder or seen.holder == me:
        return True
    return now - seen.since >= duration


class Elector:
    def __init__(self, api: client.CoordinationV1Api, namespace: str, identity: str,
                 duration: float = LEASE_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.api, self.namespace, self.identity = api, namespace, identity
        self.duration, self.clock = duration, clock
        self.seen: Seen | None = None

    def _stamp(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.timezone.utc)

    def attempt(self) -> bool:
        """One try to acquire or renew; True when this replica holds the Lease now."""
        try:
            lease = self.api.read_namespaced_lease(LEASE_NAME, self.namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise
            return self._create()
        spec = lease.spec or client.V1LeaseSpec()
        renewed = str(spec.renew_time or "")
        holder = spec.holder_identity or ""
        if self.seen is None or (self.seen.holder, self.seen.renewed) != (holder, renewed):
            self.seen = Seen(holder, renewed, self.clock())
        if not may_take(self.seen, self.identity, self.clock(), self.duration):
            return False
        if holder != self.identity:
            spec.acquire_time = self._stamp()
            spec.lease_transitions = (spec.lease_transitions or 0) + 1
        spec.holder_identity, spec.renew_time = self.identity, self._stamp()
        spec.lease_duration_seconds = int(self.duration)
        lease.spec = spec
        # guarded by resourceVersion: another replica's write in between is a conflict
        return _unless_conflict(lambda: self.api.replace_namespaced_lease(LEASE_NAME, self.namespace, lease))

    def _create(self) -> bool:
        now = self._stamp()
        body = client.V1Lease(metadata=client.V1ObjectMeta(name=LEASE_NAME, namespace=self.namespace),
                              spec=client.V1LeaseSpec(holder_identity=self.identity, acquire_time=now, renew_time=now,
                                                      lease_duration_seconds=int(self.duration),
                                                      lease_transitions=0))
        return _unless_conflict(lambda: self.api.create_namespaced_lease(self.namespace, body))

    def release(self) -> None:
        """Give the Lease up (a clean shutdown), so a successor need not wait it out."""
        try:
            lease = self.api.read_namespaced_lease(LEASE_NAME, self.namespace)
            if lease.spec is None or lease.spec.holder_identity != self.identity:
                return
            lease.spec.holder_identity, lease.spec.renew_time = None, None
            self.api.replace_namespaced_lease(LEASE_NAME, self.namespace, lease)
        except ApiException as exc:        # gone, or taken meanwhile: nothing to give up
            log.warning("leader election: could not release the lease: %s", exc.reason)

    def wait_for_leadership(self) -> None:
        """Block until this replica leads."""
        announced = False
        while True:
            try:
                if self.attempt():
                    log.warning("leading as %s", self.identity)
                    return
            except ApiException as exc:
                log.warning("leader election: %s", exc.reason)
            if not announced:
                log.warning("waiting to lead: %s holds the lease", self.seen.holder if self.seen else "another")
                announced = True
            time.sleep(self.duration / 5)

    def keep(self, lost: Callable[[], None], stopped: threading.Event | None = None) -> threading.Thread:
        """Renew in the background (until ``stopped``); call ``lost`` once another replica
        leads or renewal has failed for two thirds of a duration."""
        stopped = stopped or threading.Event()

        def renew() -> None:
            last = self.clock()
            while not stopped.wait(self.duration / 3):
                try:
                    held = self.attempt()
                except ApiException:
                    held = False
                if held:
                    last = self.clock()
                elif (self.seen is not None and self.seen.holder not in ("", self.identity)) \
                        or self.clock() - last >= self.duration * 2 / 3:
                    lost()               # another replica leads, or it may by now
                    return
        thread = threading.Thread(target=renew, name="leader-election", daemon=True)
        thread.start()
        return thread


def _unless_conflict(write: Callable[[], object]) -> bool:
    """Run a Lease write; False when the API server answers 409 (another replica wrote the
    Lease first: it holds it), any other error raised."""
    try:
        write()
    except ApiException as exc:
        if exc.status == 409:
            return False
        raise
    return True
