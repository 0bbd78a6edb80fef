"""Waiting for a child process to exit, woken the moment it does.

``subprocess.Popen.wait(timeout)`` polls, with sleeps that double up to 50 ms: a local run
waited that way for its coordinator to end (and the coordinator for its workers), which
put 10-40 ms of nothing on the end of every run. A pidfd (Linux 5.3+) becomes readable
when its process exits, so a ``select`` on it wakes at once; where there is none, the
caller falls back to polling.
"""
from __future__ import annotations

import os
import select
import subprocess
from typing import Protocol


class Child(Protocol):
    """A child process: a :class:`subprocess.Popen` or a forked worker."""
    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def exited_within(pid: int, timeout: float | None) -> bool | None:
    """Whether the child ``pid`` (not yet reaped) has exited within ``timeout`` seconds
    (None: however long it takes); None where this platform cannot watch a process."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):    # not Linux; a kernel without pidfds; a sandbox refusing them
        return None
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    return bool(readable)


def wait_exit(process: Child, timeout: float | None = None) -> int:
    """``process.wait(timeout)`` (the exit code, or ``TimeoutExpired``), returning as soon
    as the process has exited."""
    code = process.poll()
    if code is not None:
        return code
    exited = exited_within(process.pid, timeout)
    if exited is None:
        return process.wait(timeout)
    if not exited and timeout is not None:     # without a timeout, the wait ends only at the exit
        raise subprocess.TimeoutExpired(f"process {process.pid}", timeout)
    return process.wait()
