"""Where a pod's containers run: the seam between the node agent and a container runner.

``sandboxed`` turns a container's command into the command that runs it in the pod's
sandbox when its root filesystem R is the host's /: a sandbox with a network namespace N runs
the command through ``ip netns exec`` (which also bind-mounts the pod's /etc/hosts and
/etc/resolv.conf from /etc/netns/<N>/ in a mount namespace of its own) and ``unshare --uts``
(the pod's host name). Containers from images (R = an image's root) are started by
sandboxed.py through scripts/cluster/sandbox/runner.py in the same namespace N instead, and
their exec probes enter them (runner.enter_command).
"""
from __future__ import annotations

from dataclasses import dataclass

from sandbox import runner
from sandbox.process import Process


class UnsupportedSandbox(ValueError):
    """The sandbox asks for something this node agent cannot do yet."""


@dataclass(frozen=True)
class Entry:
    """How to run a command inside a container from an image: its root (the overlay's
    mount point in its mount namespace) and its process (user, groups, working directory)."""
    merged: str
    process: Process


@dataclass(frozen=True)
class Sandbox:
    """Where a pod's containers run: inside network namespace ``netns`` ("" = the host's,
    as in ``loopback`` mode), with host name ``hostname``; for a container from an image,
    ``entry`` into its own root."""
    netns: str = ""
    hostname: str = ""
    entry: Entry | None = None


def sandboxed(command: list[str], sandbox: Sandbox, pid: int = 0) -> list[str]:
    """The command line that runs ``command`` in ``sandbox``; exec all the way down, so the
    process started is the container's main process (its PID, exit code and signals). In a
    container from an image (an exec probe), it enters the running container whose outer
    process is ``pid``."""
    if sandbox.entry is not None:
        if not pid:
            raise UnsupportedSandbox("a command in a container from an image needs the container running")
        return runner.enter_command(runner.container_init(pid), sandbox.entry.merged, sandbox.entry.process, command)
    if not sandbox.netns:
        return list(command)
    return ["ip", "netns", "exec", sandbox.netns, "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
            sandbox.hostname, *command]
