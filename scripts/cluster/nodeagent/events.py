"""The Events a kubelet records about a pod's containers (``kubectl describe pod`` and
``kubectl get events`` show them; users look there first when a pod crash-loops).

Reasons and messages are the kubelet's (1.20, pkg/kubelet/events): ``Created``, ``Started``,
``Killing``, ``BackOff`` ("Back-off restarting failed container"), ``Failed`` ("Error:
..." when a container cannot be made or started) and ``FailedMount`` (a volume the node
cannot set up: an event of the pod, naming no container). The same event again only counts up, as
client-go's event correlator does. The bodies are pure; the Recorder writes them.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from kubernetes.client.rest import ApiException
from urllib3.exceptions import HTTPError

from .status import now

log = logging.getLogger("nodeagent")
COMPONENT = "kubelet"


@dataclass(frozen=True)
class ContainerEvent:
    """One thing that happened to a container: ``kind`` is Normal or Warning."""
    container: str
    kind: str
    reason: str
    message: str


def created(container: str) -> ContainerEvent:
    return ContainerEvent(container, "Normal", "Created", f"Created container {container}")


def started(container: str) -> ContainerEvent:
    return ContainerEvent(container, "Normal", "Started", f"Started container {container}")


def killing(container: str) -> ContainerEvent:
    return ContainerEvent(container, "Normal", "Killing", f"Stopping container {container}")


def back_off(container: str) -> ContainerEvent:
    return ContainerEvent(container, "Warning", "BackOff", "Back-off restarting failed container")


def failed(container: str, error: str) -> ContainerEvent:
    return ContainerEvent(container, "Warning", "Failed", f"Error: {error}")


def failed_mount(message: str) -> ContainerEvent:
    return ContainerEvent("", "Warning", "FailedMount", message)


def event_body(pod: dict[str, Any], index: int, event: ContainerEvent, node: str, name: str,
               stamp: str) -> dict[str, Any]:
    """The core/v1 Event about container ``index`` of ``pod`` (the kubelet's fieldPath
    ``spec.containers{NAME}``), first seen at ``stamp``."""
    meta = pod["metadata"]
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": meta["namespace"]},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": meta["namespace"],
                               "name": meta["name"], "uid": meta["uid"],
                               "resourceVersion": meta.get("resourceVersion", ""),
                               "fieldPath": f"spec.containers{{{event.container}}}" if index >= 0 else ""},
            "reason": event.reason, "message": event.message, "type": event.kind,
            "source": {"component": COMPONENT, "host": node}, "reportingComponent": COMPONENT,
            "reportingInstance": node, "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1}


class Recorder:
    """Writes a pod's events; the same event again is a count on the first one. An API
    error is logged and the event dropped: events are best effort, as a kubelet's are."""

    def __init__(self, node: str):
        self.node = node
        self.seen: dict[tuple[str, ContainerEvent], tuple[str, int]] = {}   # (pod uid, event) -> (name, count)

    def record(self, kube: Any, pod: dict[str, Any], event: ContainerEvent) -> None:
        meta = pod["metadata"]
        key = (meta["uid"], event)
        names = [c["name"] for c in pod["spec"]["containers"]]
        index = names.index(event.container) if event.container in names else -1
        try:
            if key in self.seen:
                name, count = self.seen[key]
                kube.patch_event(meta["namespace"], name, {"count": count + 1, "lastTimestamp": now()})
                self.seen[key] = (name, count + 1)
            else:
                name = f"{meta['name']}.{time.time_ns():x}"
                kube.create_event(meta["namespace"], event_body(pod, index, event, self.node, name, now()))
                self.seen[key] = (name, 1)
        except (ApiException, HTTPError, OSError) as exc:
            log.warning("event not recorded", extra={"fields": {"pod": meta["name"], "reason": event.reason,
                                                                "error": str(exc)[:200]}})

    def forget(self, uid: str) -> None:
        """The pod is gone: drop its counts."""
        self.seen = {key: value for key, value in self.seen.items() if key[0] != uid}
