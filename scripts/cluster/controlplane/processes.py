"""The cluster's own processes, each in its own session, recorded by PID under
``<state>/pids/<component>`` and stopped by that PID only.

A PID file holds the PID and the process's start time (in clock ticks since boot, from
/proc); it is trusted only while a process with that PID and start time exists, so a PID
reused by an unrelated process is never signalled. (A process's command line is no proof:
right after exec it can still read empty.)
"""
from __future__ import annotations

import os
import signal
import subprocess
import time

from .layout import Layout


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat from the state field on (the command name before it may hold spaces)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def start_time(pid: int) -> str:
    fields = _stat(pid)
    return fields[19] if len(fields) > 19 else ""


def alive(pid: int, started: str = "") -> bool:
    """The process exists, has not exited (a zombie counts as exited) and, when ``started``
    is given, is the one that started then."""
    fields = _stat(pid)
    return len(fields) > 19 and fields[0] != "Z" and (not started or fields[19] == started)


def _read_pid_file(path: str) -> tuple[int, str]:
    """(pid, start time); (0, "") when unreadable."""
    try:
        with open(path) as f:
            fields = f.read().split()
        return int(fields[0]), (fields[1] if len(fields) > 1 else "")
    except (OSError, ValueError, IndexError):
        return 0, ""


def _legacy_owned(c: Layout, pid: int) -> bool:
    """PID files of clusters started before start times were recorded hold only the PID:
    trust them while the process's command line names the cluster's directory."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return alive(pid) and c.home.encode() in f.read()
    except OSError:
        return False


def start(c: Layout, name: str, command: list[str], cwd: str, env: dict[str, str] | None = None) -> int:
    """Start ``command`` detached (own session, output to ``logs/<name>.log``) and record its PID."""
    with open(c.path("logs", f"{name}.log"), "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=cwd, env={**os.environ, **(env or {})}, start_new_session=True)
    with open(c.path("pids", name), "w") as f:
        f.write(f"{process.pid} {start_time(process.pid)}\n")
    return process.pid


def recorded(c: Layout) -> dict[str, int]:
    """Components whose recorded process is still running; stale PID files are removed."""
    directory = c.path("pids")
    found = {}
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        path = os.path.join(directory, name)
        pid, started = _read_pid_file(path)
        if pid and (alive(pid, started) if started else _legacy_owned(c, pid)):
            found[name] = pid
        else:
            os.remove(path)
    return found


def stop(pid: int, grace: float) -> bool:
    """SIGTERM the process group led by ``pid``; SIGKILL it after ``grace`` seconds.
    Returns whether it had to be killed."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not alive(pid):
            return False
        time.sleep(0.05)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def kill_leftover_pods(c: Layout) -> list[int]:
    """Pod processes whose PID files the node agent left behind (it was killed, not
    stopped): SIGKILL their process groups. A PID counts only while the process still
    carries this cluster's marker in its environment."""
    killed = []
    marker = f"SEGFLOW_NODE_STATE={c.path('pods')}".encode()
    for directory, _, files in os.walk(c.path("pods")):
        for name in (f for f in files if f.endswith(".pid")):
            path = os.path.join(directory, name)
            pid, started = _read_pid_file(path)
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    environment = f.read().split(b"\0")
            except OSError:
                environment = []
            if pid and marker in environment and alive(pid, started):
                try:
                    os.killpg(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
            os.remove(path)
    return killed
