"""The node agent: the kubelet and the scheduler of the local cluster, in one process.

It registers the Node ``<cluster>-node`` and heartbeats it, binds every unscheduled pod to
it, and runs the pods bound to it as local processes. All state lives in one thread (the
loop below); watcher threads only feed it events, so nothing here needs a lock.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
import time
from dataclasses import dataclass

from kubernetes.client.rest import ApiException
from urllib3.exceptions import HTTPError

from . import probes
from .addresses import AddressPool, AddressesExhausted
from .events import Recorder
from .kubeletapi import KubeletServer
from .kube import Kube
from .netns import NetworkSetupError
from .pod import Node, Pod
from .podnetwork import LoopbackNetwork, NamespaceNetwork
from .status import now
from .watcher import Watcher

log = logging.getLogger("nodeagent")
TICK_SECONDS = 0.2
HEARTBEAT_SECONDS = 10.0
BIND_RETRY_SECONDS = 1.0
SHUTDOWN_GRACE = 5.0
MAX_GRACE = 60.0
DEFAULT_SCHEDULERS = (None, "", "default-scheduler")


@dataclass(frozen=True)
class KubeletEndpoint:
    """Where the kubelet API (kubeletapi.py) listens on loopback, and its certificate."""
    port: int
    cert: str
    key: str


class NodeAgent:
    def __init__(self, cluster: str, kubeconfig: str, node: Node, pod_network: str,
                 network: LoopbackNetwork | NamespaceNetwork, kubelet: KubeletEndpoint | None = None):
        self.cluster, self.kubeconfig, self.node, self.network = cluster, kubeconfig, node, network
        self.kubelet = KubeletServer(kubelet.port, kubelet.cert, kubelet.key, node.ca,
                                     lambda: list(self.pods.values())) if kubelet else None
        self.kube = Kube(kubeconfig)
        self.addresses = AddressPool(pod_network)
        self.pods: dict[str, Pod] = {}                    # uid -> runtime, for pods bound here
        self.unscheduled: dict[str, tuple[dict, float]] = {}  # uid -> (pod, when to try binding)
        self.unstarted: dict[str, tuple[str, str]] = {}     # uid -> (namespace, name): deleted before running
        self.events: queue.Queue = queue.Queue()
        self.stopping = threading.Event()
        self.next_heartbeat = 0.0
        self.ready_since = now()
        self.recorder = Recorder(node.name)

    # ------------------------------------------------------------------ node
    def _node_status(self) -> dict:
        stamp = now()
        capacity = {"cpu": str(os.cpu_count() or 1), "memory": "16Gi", "pods": "1000"}
        return {"conditions": [{"type": "Ready", "status": "True", "reason": "SegflowNodeAgentReady",
                                "message": "the segflow node agent runs this node's pods as local processes",
                                "lastHeartbeatTime": stamp, "lastTransitionTime": self.ready_since}],
                "addresses": [{"type": "InternalIP", "address": self.node.host_ip},
                              {"type": "Hostname", "address": self.node.name}],
                "capacity": capacity, "allocatable": capacity,
                "daemonEndpoints": {"kubeletEndpoint": {"Port": self.kubelet.server_address[1] if self.kubelet else 0}},
                "nodeInfo": {"kubeletVersion": "v1.20.2-segflow", "kubeProxyVersion": "v1.20.2-segflow",
                             "operatingSystem": "linux", "architecture": "amd64",
                             "containerRuntimeVersion": "segflow-local://1", "kernelVersion": os.uname().release,
                             "osImage": "segflow node agent", "machineID": "", "systemUUID": "", "bootID": ""}}

    def _heartbeat(self) -> None:
        if time.monotonic() >= self.next_heartbeat:
            self.kube.patch_node_status(self.node.name, self._node_status())
            self.next_heartbeat = time.monotonic() + HEARTBEAT_SECONDS

    # ------------------------------------------------------------------ loop
    def run(self) -> None:
        self.kube.register_node(self.node.name, {"kubernetes.io/hostname": self.node.name, "kubernetes.io/os": "linux",
                                                 "kubernetes.io/arch": "amd64", "segflow.dev/cluster": self.cluster})
        self.network.start()
        if self.kubelet:
            self.kubelet.start()
        self._heartbeat()
        for source, selector in (("node", f"spec.nodeName={self.node.name}"), ("unscheduled", "spec.nodeName=")):
            Watcher(source, self.kubeconfig, selector, self.events, self.stopping).start()
        for kind in self.network.watched:
            Watcher(kind, self.kubeconfig, "", self.events, self.stopping, kind=kind).start()
        log.info("node agent ready", extra={"fields": {"node": self.node.name}})
        while not self.stopping.is_set():
            try:
                self._drain()
                self._schedule()
                self._tend()
                self.network.tick()
                self._heartbeat()
            except (ApiException, HTTPError, OSError, NetworkSetupError) as exc:
                log.warning("API, I/O or network setup error; retrying", extra={"fields": {"error": str(exc)[:300]}})
                self.stopping.wait(1.0)
        self._shutdown()

    def _drain(self) -> None:
        """Apply the watchers' events (waiting at most one tick for the first)."""
        try:
            event = self.events.get(timeout=TICK_SECONDS)
        except queue.Empty:
            return
        while True:
            source, kind, payload = event
            if source == "unscheduled":
                self._unscheduled(kind, payload)
            elif source in self.network.watched:
                self.network.observe(source, kind, payload)
            elif kind == "SYNC":
                self._sync(payload)
            elif kind == "DELETED":
                self._gone(payload["metadata"]["uid"])
            else:
                self._seen(payload)
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return

    # ------------------------------------------------------------ scheduler
    def _unscheduled(self, kind: str, payload) -> None:
        if kind == "SYNC":
            self.unscheduled = {p["metadata"]["uid"]: (p, 0.0) for p in payload}
        elif kind == "DELETED":
            self.unscheduled.pop(payload["metadata"]["uid"], None)
        else:
            self.unscheduled[payload["metadata"]["uid"]] = (payload, 0.0)

    def _schedule(self) -> None:
        """Bind every pending pod that asks for the default scheduler to this node."""
        moment = time.monotonic()
        for uid, (body, not_before) in list(self.unscheduled.items()):
            meta, spec = body["metadata"], body["spec"]
            if meta.get("deletionTimestamp") or spec.get("schedulerName") not in DEFAULT_SCHEDULERS:
                del self.unscheduled[uid]
                continue
            if moment < not_before:
                continue
            try:
                self.kube.bind(meta["namespace"], meta["name"], self.node.name)
                del self.unscheduled[uid]
            except ApiException as exc:
                if exc.status in (404, 409):          # deleted, or bound already
                    del self.unscheduled[uid]
                else:
                    log.warning("binding failed; retrying", extra={"fields": {
                        "pod": f"{meta['namespace']}/{meta['name']}", "status": exc.status}})
                    self.unscheduled[uid] = (body, moment + BIND_RETRY_SECONDS)

    # ---------------------------------------------------------------- kubelet
    def _sync(self, items: list[dict]) -> None:
        """A fresh list of this node's pods: forget the ones that vanished meanwhile."""
        listed = {p["metadata"]["uid"] for p in items}
        for uid in [u for u in self.pods if u not in listed]:
            self._gone(uid)
        for body in items:
            self._seen(body)

    def _seen(self, body: dict) -> None:
        meta = body["metadata"]
        pod = self.pods.get(meta["uid"])
        if pod is None:
            if meta.get("deletionTimestamp"):
                self.unstarted[meta["uid"]] = (meta["namespace"], meta["name"])   # nothing to stop
                return
            if (body.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return                                   # ended before this agent started
            try:
                ip = self.addresses.allocate()
            except AddressesExhausted as exc:
                log.error("cannot run pod", extra={"fields": {"pod": meta["name"], "error": str(exc)}})
                return
            try:
                sandbox = self.network.admit(body, ip)
            except NetworkSetupError as exc:
                self.addresses.release(ip)
                log.error("cannot network pod", extra={"fields": {"pod": meta["name"], "error": str(exc)}})
                return
            pod = self.pods[meta["uid"]] = Pod(body, ip, self.node, sandbox)
            log.info("pod admitted", extra={"fields": {"pod": pod.key, "ip": ip}})
        pod.body = body
        if meta.get("deletionTimestamp"):
            pod.delete(min(MAX_GRACE, float(meta.get("deletionGracePeriodSeconds") or 0)))

    def _gone(self, uid: str) -> None:
        """The API object is gone (force-deleted, or we finished deleting it)."""
        self.unstarted.pop(uid, None)
        pod = self.pods.pop(uid, None)
        if pod is not None:
            pod.kill_now()
            self.recorder.forget(uid)
            self.network.release(uid)
            self.addresses.release(pod.ip)
            log.info("pod removed", extra={"fields": {"pod": pod.key}})

    def _tend(self) -> None:
        """Advance every pod. An API server that refuses one pod's update (say, a status it
        finds invalid) must not stall the others: that error is logged once per change."""
        for uid, (namespace, name) in list(self.unstarted.items()):
            self.kube.delete_pod_now(namespace, name, uid)
            del self.unstarted[uid]
        for uid, pod in list(self.pods.items()):
            try:
                pod.tick(self.kube, self.recorder)
                if pod.stopped:
                    self.network.release(uid)        # the sandbox goes before the API object, as with a kubelet
                    self.kube.delete_pod_now(pod.namespace, pod.name, uid)
                    self._gone(uid)
                pod.error = ""
            except ApiException as exc:
                if str(exc) != pod.error:
                    pod.error = str(exc)
                    log.warning("pod update refused", extra={"fields": {"pod": pod.key, "status": exc.status,
                                                                        "error": exc.body or exc.reason}})

    # ------------------------------------------------------------- shutdown
    def _shutdown(self) -> None:
        """SIGTERM every pod's processes, SIGKILL what is left after a short grace."""
        probes.shutdown()
        for pod in self.pods.values():
            pod.delete(SHUTDOWN_GRACE)
        deadline = time.monotonic() + SHUTDOWN_GRACE + 1
        while time.monotonic() < deadline and not all(p.stopped for p in self.pods.values()):
            for pod in self.pods.values():
                for c in pod.containers:
                    c.tick(terminating=True)
            time.sleep(0.05)
        for pod in self.pods.values():
            pod.kill_now()
        self.network.stop()
        if self.kubelet:
            self.kubelet.stop()
        log.info("node agent stopped", extra={"fields": {"pods": len(self.pods)}})
