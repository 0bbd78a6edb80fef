"""Network namespaces, veth pairs and the bridge of a ``netns`` node, made with iproute2.

Every namespace this module creates is recorded as a file under ``<state>/netns/`` before it
is created, and only recorded names are ever deleted: scripts/cluster/down.sh removes what a
killed node agent left, and no other namespace of the machine is touched.

Threads enter a namespace with setns(2) through ctypes (os.setns needs Python 3.12); setns
moves only the calling thread, and a socket stays in the namespace it was created in.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
from collections.abc import Iterator

from .netplan import BRIDGE, BRIDGE_MAC, POD_INTERFACE, PodNetwork

CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(None, use_errno=True)


class NetworkSetupError(RuntimeError):
    """An ``ip`` or ``iptables-restore`` command failed; the message has the command and its error."""


def run(*command: str, stdin: str | None = None) -> None:
    result = subprocess.run(command, input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise NetworkSetupError(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")


def setns(fd: int) -> None:
    if _LIBC.setns(fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns: {os.strerror(errno)}")


def enter(namespace: str) -> None:
    """Move the calling thread into ``namespace`` for good (probe threads: they only ever
    talk to pods)."""
    fd = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
    try:
        setns(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def inside(namespace: str) -> Iterator[None]:
    """Run the block's socket creation in ``namespace``, then return the thread to where it was."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        enter(namespace)
        try:
            yield
        finally:
            setns(home)
    finally:
        os.close(home)


def delete(directory: str, name: str) -> None:
    """Delete namespace ``name`` recorded in ``directory`` (its veth pairs go with it) and the
    per-namespace files that ``ip netns exec`` mounts over /etc."""
    if os.path.exists(f"/run/netns/{name}"):
        run("ip", "netns", "delete", name)
    etc = os.path.join("/etc/netns", name)
    for entry in os.listdir(etc) if os.path.isdir(etc) else []:
        os.remove(os.path.join(etc, entry))
    if os.path.isdir(etc):
        os.rmdir(etc)
    with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(directory, name))


def delete_recorded(directory: str) -> list[str]:
    """Delete every namespace recorded in ``directory``; returns their names."""
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    for name in names:
        delete(directory, name)
    return names


class Namespaces:
    """The namespaces of one node's pods, recorded under ``directory``."""

    def __init__(self, plan: PodNetwork, directory: str):
        self.plan, self.directory = plan, directory
        os.makedirs(directory, exist_ok=True)

    def _record(self, name: str) -> None:
        with open(os.path.join(self.directory, name), "w"):
            pass

    def delete(self, name: str) -> None:
        delete(self.directory, name)

    def delete_recorded(self) -> list[str]:
        return delete_recorded(self.directory)

    def create_node(self, service_ip: str) -> None:
        """The node namespace: the bridge at the gateway address, forwarding on (for the
        cluster IPs' DNAT), and ``service_ip`` (the API server's cluster IP) on its loopback,
        where the node agent's relay to the API server listens."""
        node = self.plan.node_namespace
        self._record(node)
        run("ip", "netns", "add", node)
        run("ip", "-n", node, "link", "set", "lo", "up")
        run("ip", "-n", node, "addr", "add", f"{service_ip}/32", "dev", "lo")
        # A bridge takes the lowest MAC of its ports unless given one: every pod added or
        # removed would change the gateway's MAC under the other pods' ARP caches, and their
        # traffic to the gateway (the API relay, the tests' relays) would stall for seconds.
        run("ip", "-n", node, "link", "add", BRIDGE, "address", BRIDGE_MAC, "type", "bridge")
        run("ip", "-n", node, "addr", "add", f"{self.plan.gateway}/{self.plan.prefix}", "dev", BRIDGE)
        run("ip", "-n", node, "link", "set", BRIDGE, "up")
        run("ip", "netns", "exec", node, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward")

    def create_pod(self, uid: str, ip: str, files: dict[str, str]) -> str:
        """A pod's namespace: eth0 at ``ip`` on the node's bridge, the gateway as its
        default route, ``lo`` up; ``files`` (hosts, resolv.conf, hostname) go to
        /etc/netns/<name>/, which ``ip netns exec`` bind-mounts over /etc. Returns its name."""
        name, node = self.plan.pod_namespace(uid), self.plan.node_namespace
        outer = self.plan.node_side_interface(uid)
        self._record(name)
        run("ip", "netns", "add", name)
        run("ip", "-n", node, "link", "add", outer, "type", "veth", "peer", "name", POD_INTERFACE, "netns", name)
        run("ip", "-n", node, "link", "set", outer, "master", BRIDGE, "up")
        run("ip", "-n", name, "addr", "add", f"{ip}/{self.plan.prefix}", "dev", POD_INTERFACE)
        run("ip", "-n", name, "link", "set", POD_INTERFACE, "up")
        run("ip", "-n", name, "link", "set", "lo", "up")
        run("ip", "-n", name, "route", "add", "default", "via", self.plan.gateway)
        for file, text in files.items():
            write_in_place(os.path.join("/etc/netns", name, file), text)
        return name

    def load_nat(self, table: str) -> None:
        """Replace the node namespace's ``nat`` table (services.nat_table) atomically."""
        run("ip", "netns", "exec", self.plan.node_namespace, "iptables-restore", "-w", stdin=table)


def write_in_place(path: str, text: str) -> None:
    """Rewrite a file keeping its inode: a running pod sees /etc/hosts through a bind mount
    of this very file, which a rename would leave pointing at the old one."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a+") as f:
        f.seek(0)
        if f.read() == text:
            return
        f.seek(0)
        f.truncate()
        f.write(text)
