"""Network namespaces created and deleted by their caller (``ip netns``): a container's
network is its own, with only a loopback interface until the caller adds more."""
from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
from collections.abc import Iterator
from types import TracebackType

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class NamespaceBusy(RuntimeError):
    """Processes still run in a namespace that is about to be deleted."""


class NamespaceError(RuntimeError):
    """An ``ip`` command failed; the message has the command and its error."""


def ip(*args: str) -> str:
    """Run ``ip ARGS``; its output."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise NamespaceError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def pids(name: str) -> list[int]:
    """The processes whose network namespace is ``name``."""
    return [int(pid) for pid in ip("netns", "pids", name).split()]


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"setns: {os.strerror(error)}")


@contextlib.contextmanager
def entered(name: str) -> Iterator[None]:
    """Run the block's socket calls in the namespace ``name``: Linux keeps the network
    namespace per thread, so only the calling thread moves, and moves back after. Sockets
    opened inside stay in it (how the node agent probes a pod at its pod IP)."""
    with open("/proc/thread-self/ns/net") as home, open(f"/run/netns/{name}") as target:
        _setns(target.fileno())
        try:
            yield
        finally:
            _setns(home.fileno())


class NetworkNamespace:
    """``with NetworkNamespace(name):`` adds the namespace with its loopback up, and deletes
    it on exit; deleting one that still holds processes is refused (their owner stops them
    first), so no container outlives its test or pod."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> NetworkNamespace:
        ip("netns", "add", self.name)
        try:
            ip("-n", self.name, "link", "set", "lo", "up")
        except NamespaceError:
            ip("netns", "delete", self.name)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        left = pids(self.name)
        if left:
            raise NamespaceBusy(f"network namespace {self.name} still holds processes {left}: stop them before "
                                f"deleting it (`ip netns pids {self.name}`)")
        ip("netns", "delete", self.name)
