"""Routes in the host's own network namespace that keep a cluster's private addresses on
this machine. Pod IPs (netns mode) and Service cluster IPs exist only inside the cluster's
network namespaces; without these routes, a host process that dialled one by mistake (a
test reading a pod's page, an operator run on the host) would be sent along the host's
default route, off the machine. With them the dial fails at once, "network unreachable"."""
from __future__ import annotations

import os
import subprocess

from .layout import Layout


def private_networks(c: Layout) -> list[str]:
    """The cluster's address ranges that no host process may reach directly."""
    return [c.private_pod_network, c.service_network]


def _routed(cidr: str) -> bool:
    shown = subprocess.run(["ip", "route", "show", "type", "unreachable", cidr], capture_output=True, text=True,
                           check=True)
    return bool(shown.stdout.strip())


def guard(c: Layout) -> list[str]:
    """Add an ``unreachable`` route for each private range (needs root: a cluster started
    by another user has none, and says so). Returns the ranges guarded."""
    if os.geteuid() != 0:
        return []
    for cidr in private_networks(c):
        subprocess.run(["ip", "route", "replace", "unreachable", cidr], capture_output=True, text=True, check=True)
    return private_networks(c)


def unguard(c: Layout) -> None:
    """Remove the routes :func:`guard` added (none when they are gone already)."""
    if os.geteuid() != 0:
        return
    for cidr in private_networks(c):
        if _routed(cidr):
            subprocess.run(["ip", "route", "del", "unreachable", cidr], capture_output=True, text=True, check=True)
