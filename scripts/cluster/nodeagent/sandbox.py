"""Where a pod's containers run: the seam between the node agent and a container runner.

``sandboxed`` turns a container's command into the command that runs it in the pod's
sandbox when its root filesystem R is the host's /: a sandbox with a network namespace N runs
the command through ``ip netns exec`` (which also bind-mounts the pod's /etc/hosts and
/etc/resolv.conf from /etc/netns/<N>/ in a mount namespace of its own) and ``unshare --uts``
(the pod's host name). Containers from images (R = an image's root) are started by
sandboxed.py through scripts/cluster/sandbox/runner.py in the same namespace N instead.
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
        raise UnsupportedSandbox(f"root filesystem {sandbox.rootfs!r}: only containers from images run there "
                                 "(sandboxed.image_command); exec probes in them are not supported yet")
    if not sandbox.netns:
        return list(command)
    return ["ip", "netns", "exec", sandbox.netns, "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
            sandbox.hostname, *command]
