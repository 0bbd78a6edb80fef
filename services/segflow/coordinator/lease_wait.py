"""A warm standby's coordinator: up, serving and holding its workers' registrations
while another cluster holds the job's lease, and running the job the moment its own
cluster takes it over (``disasterRecovery.standby: warm``).

The takeover then costs no pod, process, import, certificate or registration: the
coordinator reads the lease every :func:`segflow.disaster.lease.step_seconds` and, once
the lease names its cluster, reads the backup store for what to restore (only now: the
old holder may have published until its deadline) and answers the calls it held. It runs
under the generation the lease then carries, fenced as a coordinator deployed with it.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from typing import Callable

import grpc

from ..disaster.fence import WATCH_SECONDS
from ..disaster.lease import LeaseError, held_by, step_seconds
from ..disaster.lease_store import LeaseStore
from ..errors import SegflowError
from ..observability.logs import event
from ..settings import CheckpointSettings
from ..state import StateStoreError
from ..v1 import control_pb2 as cpb
from ..v1 import control_pb2_grpc as cpb_grpc

log = logging.getLogger("segflow.coordinator")


class StoodDown(SegflowError):
    """The standby was cancelled (or its parent went) before its cluster took the lease."""


def await_lease(settings: CheckpointSettings, cancelled: threading.Event,
                clock: Callable[[], float] = time.time) -> CheckpointSettings:
    """Block until ``settings.lease_owner`` holds the job's lease; the settings to run
    under (its generation). An unreadable store is waited out: a standby must not start
    on what it cannot read."""
    store = LeaseStore(settings.state_url, settings.job_name, s3_endpoint=settings.s3_endpoint or None)
    unreadable = ""
    try:
        while True:
            lease = None
            try:
                lease, _ = store.read()
            except (StateStoreError, LeaseError) as exc:
                if str(exc) != unreadable:
                    unreadable = str(exc)
                    event(log, logging.WARNING, "standby cannot read the lease; trying again", error=unreadable)
            if held_by(lease, settings.lease_owner, clock()):
                assert lease is not None
                event(log, logging.WARNING, "lease taken over: the warm standby runs the job",
                      owner=lease.owner, generation=lease.generation)
                return replace(settings, lease_generation=lease.generation, await_lease=False, follow_interval=0.0)
            if cancelled.wait(step_seconds(lease.ttl) if lease is not None else WATCH_SECONDS):
                raise StoodDown("the standby was stopped before its cluster took the job's lease")
    finally:
        store.close()


class HeldCalls(cpb_grpc.CoordinatorServicer):
    """The coordinator's RPCs while it stands by: each call waits for the coordinator that
    runs the job (:meth:`open`), then is its call. A Cancel stops the standby itself."""

    def __init__(self) -> None:
        self.servicer: cpb_grpc.CoordinatorServicer | None = None
        self.opened = threading.Event()
        self.cancelled = threading.Event()
        self.registered: dict[str, str] = {}     # worker -> its metrics address, as its held Register says

    def open(self, servicer: cpb_grpc.CoordinatorServicer) -> None:
        self.servicer = servicer
        self.opened.set()

    def _running(self, context) -> cpb_grpc.CoordinatorServicer:
        while not self.opened.wait(0.5):
            if self.cancelled.is_set():
                context.abort(grpc.StatusCode.ABORTED, "the standby was stopped before it took over the job")
            if not context.is_active():
                context.abort(grpc.StatusCode.CANCELLED, "the caller left")
        assert self.servicer is not None
        return self.servicer

    def Register(self, request, context):
        self.registered[request.worker] = request.metrics_address
        return self._running(context).Register(request, context)

    def Heartbeat(self, request_iterator, context):
        yield from self._running(context).Heartbeat(request_iterator, context)

    def Finish(self, request, context):
        return self._running(context).Finish(request, context)

    def Watch(self, request, context):
        yield from self._running(context).Watch(request, context)

    def Acknowledge(self, request, context):
        return self._running(context).Acknowledge(request, context)

    def Savepoint(self, request, context):
        return self._running(context).Savepoint(request, context)

    def Report(self, request, context):
        return self._running(context).Report(request, context)

    def Cancel(self, request, context):
        if self.opened.is_set():
            assert self.servicer is not None
            return self.servicer.Cancel(request, context)
        self.cancelled.set()
        return cpb.Ack()
