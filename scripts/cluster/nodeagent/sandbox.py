"""Where a pod's containers run: the seam between the node agent and a container runner.

``sandboxed`` turns a container's command into the command that runs it in the pod's
sandbox: "run this argv (with the env and cwd the caller passes) in root filesystem R inside
network namespace N". Today R is always the host's /; a sandbox with a network namespace runs
the command through ``ip netns exec`` (which also bind-mounts the pod's /etc/hosts and
/etc/resolv.conf from /etc/netns/<N>/ in a mount namespace of its own) and ``unshare --uts``
(the pod's host name). A runner for image root filesystems plugs in here.
"""
from __future__ import annotations

from dataclasses import dataclass


class UnsupportedSandbox(ValueError):
    """The sandbox asks for something this node agent cannot do yet."""


@dataclass(frozen=True)
class Sandbox:
    """Where a pod's containers run: inside network namespace ``netns`` ("" = the host's,
    as in ``loopback`` mode), with host name ``hostname``, in root filesystem ``rootfs``."""
    netns: str = ""
    hostname: str = ""
    rootfs: str = "/"


def sandboxed(command: list[str], sandbox: Sandbox) -> list[str]:
    """The command line that runs ``command`` in ``sandbox``; exec all the way down, so the
    process started is the container's main process (its PID, exit code and signals)."""
    if sandbox.rootfs != "/":
        raise UnsupportedSandbox(f"root filesystem {sandbox.rootfs!r}: this node agent runs containers in the "
                                 "host's root filesystem only (an image runner is yet to plug in here)")
    if not sandbox.netns:
        return list(command)
    return ["ip", "netns", "exec", sandbox.netns, "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
            sandbox.hostname, *command]
