"""The network between the disaster tests' two sites, and a real partition of it.

Each site is a cluster whose pods sit on the bridge of its node network namespace
(scripts/cluster/nodeagent/netplan.py). ``SiteLink`` joins the two node namespaces by a
veth pair, each side routing the other's pod range through it, as two datacenters are
joined by their network: a pod of one site reaches a pod of the other by its pod IP.

``Partition`` cuts one site off the way a datacenter is cut off: filter rules in its node
namespace reject what its pods send to the other site's pods (and what comes back), and
what they send to the shared store (the S3 server's relay in that node namespace, which the
site's operator, keeping the lease, and its job pods use). Rejected with a TCP reset, as the
proxy this replaces closed its connections: a cut-off client fails at once instead of
waiting out a timeout. Redis, the job's source and sink outside both sites, stays reachable
(the tests model a store partition, not the loss of the job's input). Every rule goes into
one chain of the filter table named after the partition, jumped to from INPUT and FORWARD;
healing deletes those jumps and the chain by name. Nothing here touches the host's own
namespace: the node namespaces are the clusters' own.
"""
from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse

from support.clusters import Cluster

LINK_NETWORK = ("169.254.53.1", "169.254.53.2")     # the link's two ends, only inside the two node namespaces
CHAIN = "SEGFLOW-PARTITION"


class NetworkCommandFailed(RuntimeError):
    """An ``ip`` or ``iptables`` command in a node namespace failed; the message has both."""


def _run(*command: str) -> str:
    result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise NetworkCommandFailed(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


def _node(cluster: Cluster) -> str:
    namespace = cluster.info().get("nodeNamespace")
    if not namespace:
        raise NetworkCommandFailed(f"cluster {cluster.name} has no node namespace: start it with pod_network='netns'")
    return namespace


class SiteLink:
    """A veth pair between the two clusters' node namespaces, named after the peer on each
    side (``to-<peer site>``), with a route to the peer's pod range; ``remove`` deletes it
    (deleting one end deletes both, and the routes with them)."""

    def __init__(self, left: tuple[str, Cluster], right: tuple[str, Cluster]):
        (self.left_name, self.left), (self.right_name, self.right) = left, right

    def interface(self, towards: str) -> str:
        return f"to-{towards}"[:15]

    def add(self) -> None:
        left, right = _node(self.left), _node(self.right)
        _run("ip", "-n", left, "link", "add", self.interface(self.right_name), "type", "veth",
             "peer", "name", self.interface(self.left_name), "netns", right)
        for namespace, interface, own, peer, peer_cluster in (
                (left, self.interface(self.right_name), LINK_NETWORK[0], LINK_NETWORK[1], self.right),
                (right, self.interface(self.left_name), LINK_NETWORK[1], LINK_NETWORK[0], self.left)):
            _run("ip", "-n", namespace, "addr", "add", f"{own}/30", "dev", interface)
            _run("ip", "-n", namespace, "link", "set", interface, "up")
            _run("ip", "-n", namespace, "route", "add", peer_cluster.info()["podNetwork"], "via", peer)

    def ensure(self) -> None:
        """The link again if it is gone: a site rebuilt after a whole-cluster loss has a new
        node namespace, and the old one took its end of the pair (and so both) with it."""
        present = subprocess.run(["ip", "-n", _node(self.left), "link", "show", "dev", self.interface(self.right_name)],
                                 capture_output=True, timeout=30)
        if present.returncode != 0:
            self.add()

    def remove(self) -> None:
        subprocess.run(["ip", "-n", _node(self.left), "link", "delete", self.interface(self.right_name)],
                       capture_output=True, timeout=30)


def cut_rules(peer_pods: str, gateway: str, store_port: int) -> list[list[str]]:
    """The jumps into the partition's chain (iptables arguments after the table's
    ``-I``/``-D``): traffic forwarded to or from the peer site's pods, and the pods'
    connections to the store's relay on the node's gateway address."""
    return [["FORWARD", "-d", peer_pods, "-j", CHAIN], ["FORWARD", "-s", peer_pods, "-j", CHAIN],
            ["INPUT", "-d", gateway, "-p", "tcp", "--dport", str(store_port), "-j", CHAIN]]


class Partition:
    """Cuts ``site`` (a Cluster) off from ``peer`` and from the store at ``store_url`` (as the
    site's pods reach it: its relay on the site's gateway)."""

    def __init__(self, site: Cluster, peer: Cluster, store_url: str):
        self.site, self.peer = site, peer
        self.store_port = urllib.parse.urlsplit(store_url).port or 80
        self.is_cut = False

    def _iptables(self, *args: str) -> str:
        return _run("ip", "netns", "exec", _node(self.site), "iptables", "-w", *args)

    def _rules(self) -> list[list[str]]:
        return cut_rules(self.peer.info()["podNetwork"], self.site.info()["podGateway"], self.store_port)

    def cut(self) -> None:
        self._iptables("-N", CHAIN)
        self._iptables("-A", CHAIN, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset")
        self._iptables("-A", CHAIN, "-j", "REJECT", "--reject-with", "icmp-net-unreachable")
        for rule in self._rules():
            self._iptables("-I", *rule)
        self.is_cut = True

    def heal(self) -> None:
        """Delete the jumps and the chain (by name); safe to call when not cut."""
        if not self.is_cut:
            return
        for rule in self._rules():
            self._iptables("-D", *rule)
        self._iptables("-F", CHAIN)
        self._iptables("-X", CHAIN)
        self.is_cut = False

    def rules_left(self) -> str:
        """The node namespace's filter rules that mention the partition's chain (none once healed)."""
        return "\n".join(line for line in self._iptables("-S").splitlines() if CHAIN in line)


CONNECT = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3])).close()
except OSError as exc:
    sys.exit(f"{type(exc).__name__}: {exc}")
"""


def operator_endpoint(cluster: Cluster) -> tuple[str, str, int]:
    """The site's operator pod: its network namespace, its pod IP and its health port (what
    one site's pod dials on the other's to prove the link and the cut)."""
    [pod] = json.loads(subprocess.run(["kubectl", "get", "pods", "-n", "segflow-system", "-o", "json"],
                                      env=cluster.env(), capture_output=True, text=True, check=True,
                                      timeout=30).stdout)["items"]
    ports = {p["name"]: p["containerPort"] for p in pod["spec"]["containers"][0]["ports"]}
    namespace = f"{cluster.name}-{pod['metadata']['uid'][:8]}"       # nodeagent.netplan.PodNetwork.pod_namespace
    return namespace, pod["status"]["podIP"], ports["health"]


def connection_error(namespace: str, address: str, port: int, timeout: float = 3.0) -> str:
    """Why a TCP connection from network namespace ``namespace`` (a pod's) to ``address``
    and ``port`` failed, or "" when it was accepted."""
    result = subprocess.run(["ip", "netns", "exec", namespace, sys.executable, "-c", CONNECT, address, str(port),
                             str(timeout)], capture_output=True, text=True, timeout=timeout + 20)
    return "" if result.returncode == 0 else (result.stderr.strip() or f"exit {result.returncode}")
