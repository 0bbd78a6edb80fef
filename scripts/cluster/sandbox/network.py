"""Pod networking on one node: a network namespace of the node's own holds a bridge with
the pod network's gateway address; each pod's namespace gets a veth pair to that bridge and
its pod IP. Pod addresses live only in namespaces created here: the host's own namespace
has no address, route or interface in the pod network, and the node's namespace has no
uplink, so nothing sent to a pod address leaves these namespaces or the machine.

The ``ip`` commands are planned by pure functions (tested without root) and run by
:class:`NodeNetwork`.
"""
from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass

from .netns import NamespaceError, ip

BRIDGE = "br0"
MAX_PODS = 65000            # veth names are "veth" + a number: 15 characters at most


class PodNetworkError(ValueError):
    """A pod address or the pod network cannot be used."""


@dataclass(frozen=True)
class PodNetwork:
    """The node's pod network: the gateway (the bridge's address) is its first host."""
    cidr: str

    @property
    def network(self) -> ipaddress.IPv4Network:
        network = ipaddress.ip_network(self.cidr)
        if not isinstance(network, ipaddress.IPv4Network) or network.is_loopback or network.prefixlen > 29:
            raise PodNetworkError(f"pod network {self.cidr!r} must be an IPv4 range of /29 or more outside "
                                  f"127.0.0.0/8 (a loopback address cannot leave the lo interface)")
        return network

    @property
    def gateway(self) -> str:
        return str(self.network.network_address + 1)

    def pod_ip(self, index: int) -> str:
        """The address of pod number ``index`` (from 0): after the gateway."""
        address = self.network.network_address + 2 + index
        if index < 0 or index >= MAX_PODS or address >= self.network.broadcast_address:
            raise PodNetworkError(f"pod number {index} has no address in {self.cidr}")
        return str(address)

    def index_of(self, pod_ip: str) -> int:
        return int(ipaddress.ip_address(pod_ip)) - int(self.network.network_address) - 2


def node_commands(node: str, network: PodNetwork) -> list[list[str]]:
    """``ip`` commands that make the node's namespace and its bridge (the namespace itself is
    added first)."""
    return [["ip", "netns", "add", node],
            ["ip", "-n", node, "link", "set", "lo", "up"],
            ["ip", "-n", node, "link", "add", BRIDGE, "type", "bridge"],
            ["ip", "-n", node, "addr", "add", f"{network.gateway}/{network.network.prefixlen}", "dev", BRIDGE],
            ["ip", "-n", node, "link", "set", BRIDGE, "up"]]


def attach_commands(node: str, network: PodNetwork, pod_netns: str, pod_ip: str) -> list[list[str]]:
    """``ip`` commands that connect the pod's namespace to the node's bridge with ``pod_ip``
    on its ``eth0``. The pod gets only its subnet's route: no default route, so an address
    outside the pod network is unreachable from the pod without a packet being sent."""
    veth = f"veth{network.index_of(pod_ip)}"
    return [["ip", "-n", node, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", pod_netns],
            ["ip", "-n", node, "link", "set", veth, "master", BRIDGE, "up"],
            ["ip", "-n", pod_netns, "addr", "add", f"{pod_ip}/{network.network.prefixlen}", "dev", "eth0"],
            ["ip", "-n", pod_netns, "link", "set", "eth0", "up"]]


def _run(commands: list[list[str]]) -> None:
    for command in commands:
        ip(*command[1:])


class NodeNetwork:
    """``with NodeNetwork(node, network):`` makes the node's namespace and bridge, and
    deletes them (with every pod's veth end) on exit. Pods' namespaces are their owners'."""

    def __init__(self, node: str, network: PodNetwork) -> None:
        self.node, self.network = node, network

    def __enter__(self) -> NodeNetwork:
        try:
            _run(node_commands(self.node, self.network))
        except NamespaceError:
            subprocess.run(["ip", "netns", "delete", self.node], capture_output=True)
            raise
        return self

    def attach(self, pod_netns: str, pod_ip: str) -> None:
        """Give the pod's namespace its address on the bridge."""
        _run(attach_commands(self.node, self.network, pod_netns, pod_ip))

    def __exit__(self, *exc: object) -> None:
        ip("netns", "delete", self.node)
