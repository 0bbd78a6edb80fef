"""List-then-watch of one selection of pods (or Services, or Endpoints), feeding events to the agent's single loop.

A watch can end (server timeout, lost connection) or expire (410 Gone: the resource
version was compacted away). Either way the watcher resumes, and after an expiry it lists
again and hands the agent the complete list (a SYNC event), so that nothing deleted while
it was not watching is missed.
"""
from __future__ import annotations

import logging
import queue
import threading

from kubernetes.client.rest import ApiException
from urllib3.exceptions import HTTPError

from .kube import Kube, WatchExpired

log = logging.getLogger("nodeagent")


class Watcher(threading.Thread):
    """Puts (source, type, payload) on ``events``: type SYNC with the full list of ``kind``
    objects, or ADDED / MODIFIED / DELETED with one."""

    def __init__(self, source: str, kubeconfig: str, field_selector: str, events: queue.Queue,
                 stopping: threading.Event, kind: str = "pods"):
        super().__init__(name=f"watch-{source}", daemon=True)
        self.source, self.kubeconfig, self.selector, self.kind = source, kubeconfig, field_selector, kind
        self.events, self.stopping = events, stopping

    def run(self) -> None:
        kube = Kube(self.kubeconfig)
        while not self.stopping.is_set():
            try:
                items, version = kube.list(self.kind, self.selector)
                self.events.put((self.source, "SYNC", items))
                while not self.stopping.is_set():
                    for kind, obj in kube.watch(self.kind, self.selector, version):
                        version = obj.get("metadata", {}).get("resourceVersion") or version
                        if kind != "BOOKMARK":
                            self.events.put((self.source, kind, obj))
            except WatchExpired:
                log.debug("watch expired: listing again", extra={"fields": {"watch": self.source}})
            except (ApiException, HTTPError, OSError) as exc:
                log.warning("watch failed: retrying", extra={"fields": {"watch": self.source, "error": str(exc)}})
                self.stopping.wait(1.0)
