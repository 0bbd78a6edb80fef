"""How the node's pods are networked, chosen at cluster start (SEGFLOW_POD_NETWORK):

- ``loopback``: every pod is a process of the host's network namespace on an address of its
  own from 127/8; there are no Services beyond what the API server stores.
- ``netns`` (opt-in, and always for pods from images: controlplane/cluster.py): every pod
  has a network namespace of its own, with a pod IP on the node's bridge (netns.py,
  netplan.py); the containers of pods from images run there too (sandboxed.py); Services
  resolve by name from each pod's /etc/hosts and cluster IPs are forwarded to ready
  endpoints by the node namespace's nat table (services.py); pods reach the API server
  through a relay (relay.py).

Both have the same face, so the agent does not care which it runs.
"""
from __future__ import annotations

import logging
import os

from . import probes, services
from .netns import Namespaces, NetworkSetupError, write_in_place
from .netplan import PodNetwork, hosts_file, resolv_conf
from .pod import hostname
from .relay import Relay
from .sandbox import Sandbox

log = logging.getLogger("nodeagent")
MODES = ("loopback", "netns")
API_SERVICE_PORT = 443


class LoopbackNetwork:
    """Pods share the host's network namespace: nothing to set up or tear down."""
    watched: tuple[str, ...] = ()

    def start(self) -> None:
        pass

    def admit(self, body: dict, ip: str) -> Sandbox:
        return Sandbox()

    def release(self, uid: str) -> None:
        pass

    def observe(self, kind: str, event: str, payload) -> None:
        pass

    def tick(self) -> None:
        pass

    def stop(self) -> None:
        pass


class NamespaceNetwork:
    """Pods in network namespaces of their own on the node namespace's bridge."""
    watched = ("services", "endpoints")

    def __init__(self, plan: PodNetwork, records: str, service_ip: str, api_port: int):
        self.plan, self.service_ip, self.api_port = plan, service_ip, api_port
        self.namespaces = Namespaces(plan, records)
        self.relay: Relay | None = None
        self.pods: dict[str, tuple[str, str, str, str]] = {}   # uid -> (netns, ip, hostname, k8s namespace)
        self.objects: dict[str, dict[tuple[str, str], dict]] = {"services": {}, "endpoints": {}}
        self.dirty = True

    def start(self) -> None:
        left = self.namespaces.delete_recorded()
        if left:
            log.info("deleted network namespaces an earlier agent left", extra={"fields": {"netns": left}})
        self.namespaces.create_node(self.service_ip)
        self.relay = Relay(self.plan.node_namespace, (self.service_ip, API_SERVICE_PORT),
                           ("127.0.0.1", self.api_port))
        self.relay.start()
        probes.use_namespace(self.plan.node_namespace)
        log.info("node network ready", extra={"fields": {"netns": self.plan.node_namespace,
                                                         "gateway": self.plan.gateway,
                                                         "api": f"{self.service_ip}:{API_SERVICE_PORT}"}})

    def _hosts(self, ip: str, name: str, namespace: str) -> str:
        entries = services.host_entries(list(self.objects["services"].values()),
                                        list(self.objects["endpoints"].values()), namespace)
        return hosts_file(ip, name, entries)

    def admit(self, body: dict, ip: str) -> Sandbox:
        meta = body["metadata"]
        name = hostname(body)
        files = {"hosts": self._hosts(ip, name, meta["namespace"]), "resolv.conf": resolv_conf(meta["namespace"]),
                 "hostname": name + "\n"}
        try:
            netns = self.namespaces.create_pod(meta["uid"], ip, files)
        except NetworkSetupError:
            self.namespaces.delete(self.plan.pod_namespace(meta["uid"]))      # what was made of it
            raise
        self.pods[meta["uid"]] = (netns, ip, name, meta["namespace"])
        return Sandbox(netns=netns, hostname=name)

    def release(self, uid: str) -> None:
        entry = self.pods.pop(uid, None)
        if entry is not None:
            self.namespaces.delete(entry[0])

    def observe(self, kind: str, event: str, payload) -> None:
        """A watcher's event about Services or Endpoints."""
        known = self.objects[kind]
        if event == "SYNC":
            known.clear()
            known.update({(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in payload})
        elif event == "DELETED":
            known.pop((payload["metadata"]["namespace"], payload["metadata"]["name"]), None)
        else:
            known[(payload["metadata"]["namespace"], payload["metadata"]["name"])] = payload
        self.dirty = True

    def tick(self) -> None:
        """After Services or Endpoints changed: reload the forwarding rules and rewrite
        every pod's /etc/hosts."""
        if not self.dirty:
            return
        self.dirty = False
        rules = services.forwards(list(self.objects["services"].values()), list(self.objects["endpoints"].values()))
        self.namespaces.load_nat(services.nat_table(rules, self.plan.network))
        for netns, ip, name, namespace in self.pods.values():
            write_in_place(os.path.join("/etc/netns", netns, "hosts"), self._hosts(ip, name, namespace))

    def stop(self) -> None:
        if self.relay is not None:
            self.relay.stop()
        self.pods.clear()
        self.namespaces.delete_recorded()
