"""Watches the namespace a disaster-recovery job runs in, so that its lease stops being
renewed the moment the namespace starts to go.

A namespace deletion (the datacenter-loss drill, or a real mistake) reaches the job's
StreamJob only after the namespace controller has discovered every resource type and
worked down to it: about 5 s on a local cluster, all of it time in which this cluster kept
renewing a lease for a job that can no longer run, and the standby waited. The namespace
itself carries a ``deletionTimestamp`` at once, and nothing in it can be created from then
on, so the job's coordinator cannot come back: this cluster should let the lease go stale
now. Stopping renewals is as safe as an operator that died: the old coordinator is fenced
at the lease's deadline, before any standby can take over.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

from kubernetes import watch
from kubernetes.client import CoreV1Api

log = logging.getLogger("segflow.operator")
WATCH_SECONDS = 30         # one watch request's length; a new one follows at once
RETRY_SECONDS = 1.0        # after an error (the API server restarting, say)


def terminating_reason(event_type: str, namespace: dict[str, Any]) -> str:
    """Why the jobs of ``namespace`` can no longer run, from one watch event ("" if they can)."""
    name = (namespace.get("metadata") or {}).get("name", "")
    if event_type == "DELETED":
        return f"namespace {name} was deleted"
    deleting = (namespace.get("metadata") or {}).get("deletionTimestamp")
    if deleting:
        return f"namespace {name} is being deleted (since {deleting})"
    return ""


class NamespaceWatch:
    """Calls ``terminating`` once, from a thread of its own, when ``namespace`` starts to be
    deleted (or is found already deleting)."""

    def __init__(self, core: CoreV1Api, namespace: str, terminating: Callable[[str], None]):
        self.core = core
        self.namespace = namespace
        self.terminating = terminating
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"namespace {namespace}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                reason = self._watch_once()
            except Exception as exc:                # noqa: BLE001 - the API server may be away a while: retry
                log.warning("watching namespace %s failed (%s); retrying", self.namespace, exc)
                self.stopped.wait(RETRY_SECONDS)
                continue
            if reason:
                log.warning("%s: the lease of its jobs is no longer renewed (at %.3f)", reason, time.time())
                self.terminating(reason)
                return

    def _watch_once(self) -> str:
        """One watch request: the reason the namespace is going, or "" when the request ended."""
        stream = watch.Watch()
        try:
            for event in stream.stream(self.core.list_namespace, field_selector=f"metadata.name={self.namespace}",
                                       timeout_seconds=WATCH_SECONDS, _request_timeout=WATCH_SECONDS + 5):
                if self.stopped.is_set():
                    return ""
                reason = terminating_reason(event["type"], self.core.api_client.sanitize_for_serialization(
                    event["object"]))
                if reason:
                    return reason
            return ""
        finally:
            stream.stop()

    def stop(self) -> None:
        """No more callbacks (the thread itself ends with its current watch request)."""
        self.stopped.set()
