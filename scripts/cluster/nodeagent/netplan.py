"""The names and addresses of a cluster's pod network in ``netns`` mode (pure functions).

Each cluster gets a *node* network namespace holding a bridge whose address is the pods'
gateway; each pod gets a namespace of its own, joined to the bridge by a veth pair. The
addresses come from a private range that exists only inside those namespaces: the host's
own namespace never gets a route into it, so nothing can leave the machine.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

BRIDGE = "segbr0"
BRIDGE_MAC = "02:53:46:00:00:01"  # locally administered; each node namespace has its own bridge
POD_INTERFACE = "eth0"
MAX_NAME = 15                     # IFNAMSIZ - 1: the kernel's limit on interface names


@dataclass(frozen=True)
class PodNetwork:
    """A cluster's pod range: the bridge (gateway) takes the range's first address, pods the
    rest (see addresses.AddressPool, which starts at the second)."""
    cluster: str
    network: str

    @property
    def prefix(self) -> int:
        return ipaddress.ip_network(self.network).prefixlen

    @property
    def gateway(self) -> str:
        return str(ipaddress.ip_network(self.network).network_address + 1)

    @property
    def node_namespace(self) -> str:
        return f"{self.cluster}-node"

    def pod_namespace(self, uid: str) -> str:
        """``<cluster>-<first 8 characters of the pod's uid>``: unique on the node while the pod lives."""
        return f"{self.cluster}-{uid[:8]}"

    @staticmethod
    def node_side_interface(uid: str) -> str:
        """The veth end left in the node namespace (the pod's end is always eth0)."""
        return f"veth{uid.replace('-', '')[:8]}"[:MAX_NAME]


def hosts_file(pod_ip: str, hostname: str, entries: list[tuple[str, str]]) -> str:
    """A pod's /etc/hosts: loopback, the pod's own name at its IP, then ``entries``
    ((address, names) lines, e.g. from services.host_entries) in the given order."""
    lines = ["# written by the segflow node agent; rewritten when Services change",
             "127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback", f"{pod_ip}\t{hostname}"]
    lines += [f"{address}\t{names}" for address, names in entries]
    return "\n".join(lines) + "\n"


def resolv_conf(namespace: str) -> str:
    """A pod's /etc/resolv.conf. Names resolve from /etc/hosts; the search path is the one
    a pod of a real cluster gets, and the only name server is the pod's own loopback, where
    nothing listens: an unknown name fails at once instead of asking a server off the machine."""
    return (f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local\n"
            "nameserver 127.0.0.1\noptions ndots:5 timeout:1 attempts:1\n")
