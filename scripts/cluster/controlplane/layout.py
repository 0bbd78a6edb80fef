"""Where a named cluster keeps its files and which loopback ports and addresses it uses.

Several clusters run side by side (a developer's ``local`` one and the tests' own), so
everything that could collide is derived from a small per-name index: ``local`` is 0 and
other names get the next free index, remembered in ``registry.json`` so that a cluster
keeps its ports and pod addresses across restarts.
"""
from __future__ import annotations

import fcntl
import ipaddress
import json
import os
import re
from dataclasses import dataclass

CACHE = os.environ.get("SEGFLOW_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "segflow"))
BIN = os.path.join(CACHE, "k8s", "1.20.2", "bin")
CLUSTERS = os.path.join(CACHE, "clusters")
MAX_INDEX = 99                       # ports 16000 + 100 * index stay below the ephemeral range
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?")


class ClusterNameError(ValueError):
    """The cluster name cannot be used (it names the Node, so it must be a DNS label)."""


@dataclass(frozen=True)
class Layout:
    """One named cluster's state directory, ports and address ranges."""
    name: str
    index: int

    @property
    def home(self) -> str:
        return os.path.join(CLUSTERS, self.name)

    def path(self, *parts: str) -> str:
        return os.path.join(self.home, *parts)

    @property
    def etcd_port(self) -> int:
        return 16001 + 100 * self.index

    @property
    def etcd_peer_port(self) -> int:
        return 16002 + 100 * self.index

    @property
    def api_port(self) -> int:
        return 16003 + 100 * self.index

    @property
    def kubelet_port(self) -> int:
        """The node agent's kubelet API (logs), on loopback, which the API server proxies to."""
        return 16004 + 100 * self.index

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    @property
    def pod_network(self) -> str:
        """Each pod gets its own loopback address from here (all of 127/8 is local on Linux)."""
        return f"127.{10 + self.index}.0.0/16"

    @property
    def private_pod_network(self) -> str:
        """In ``netns`` mode pods get addresses from here instead: a private range that
        exists only inside the cluster's own network namespaces (never routed from the host)."""
        return f"10.{128 + self.index}.0.0/16"

    @property
    def service_network(self) -> str:
        """Virtual service addresses: in ``netns`` mode the node agent forwards them to
        endpoints, as kube-proxy does; in ``loopback`` mode only the API server uses them."""
        return f"10.96.{self.index}.0/24"

    @property
    def first_service_ip(self) -> str:
        """The API server's own service address (kubernetes.default)."""
        return str(next(ipaddress.ip_network(self.service_network).hosts()))

    @property
    def kubeconfig(self) -> str:
        return self.path("kubeconfig")


def layout_for(name: str) -> Layout:
    """The layout of cluster ``name``, registering a new index for a name seen first."""
    if not _NAME.fullmatch(name):
        raise ClusterNameError(f"cluster name {name!r} must be a DNS label: lowercase letters, digits and '-', "
                               f"at most 40 characters")
    os.makedirs(CLUSTERS, exist_ok=True)
    registry_path = os.path.join(CLUSTERS, "registry.json")
    with open(os.path.join(CLUSTERS, ".registry.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        registry = {"local": 0}
        if os.path.exists(registry_path):
            with open(registry_path) as f:
                registry.update(json.load(f))
        if name not in registry:
            free = sorted(set(range(MAX_INDEX + 1)) - set(registry.values()))
            if not free:
                raise ClusterNameError(f"all {MAX_INDEX + 1} cluster indexes are taken: remove unused names "
                                       f"from {registry_path} (and their directories)")
            registry[name] = free[0]
            with open(registry_path + ".tmp", "w") as f:
                json.dump(registry, f, indent=1, sort_keys=True)
            os.replace(registry_path + ".tmp", registry_path)
    return Layout(name, registry[name])
