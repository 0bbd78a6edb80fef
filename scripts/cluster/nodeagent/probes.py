"""Readiness and liveness probes (exec, tcpSocket, httpGet) with the kubelet's thresholds.

Probes run on a small thread pool so that a slow endpoint never stalls the agent's loop;
the container asks ``due()`` each tick and collects a finished result with ``collect()``.
On a ``netns`` node the pool's threads live in the node's network namespace (see
``use_namespace``), where pod IPs are reachable, and exec probes run in the pod's sandbox.
"""
from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor

from . import netns
from .sandbox import Sandbox, sandboxed

WORKERS = 4
_POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="probe")


def use_namespace(namespace: str) -> None:
    """Run every later probe from network namespace ``namespace`` (the node's)."""
    global _POOL
    _POOL.shutdown(wait=False)
    _POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="probe", initializer=netns.enter,
                               initargs=(namespace,))


def _port(value: int | str, ports: dict[str, int]) -> int:
    return int(ports.get(value, value)) if isinstance(value, str) else int(value)


def check(probe: dict, host: str, ports: dict[str, int], env: dict[str, str], cwd: str, sandbox: Sandbox,
          pid: int) -> bool:
    """Run one probe against the pod's address; True when it passes."""
    timeout = float(probe.get("timeoutSeconds") or 1)
    try:
        if "tcpSocket" in probe:
            with socket.create_connection((host, _port(probe["tcpSocket"]["port"], ports)), timeout=timeout):
                return True
        if "httpGet" in probe:
            get = probe["httpGet"]
            url = (f"{get.get('scheme', 'HTTP').lower()}://{host}:{_port(get['port'], ports)}"
                   f"{get.get('path') or '/'}")
            headers = {h["name"]: h["value"] for h in get.get("httpHeaders") or []}
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as reply:
                return 200 <= reply.status < 400
        if "exec" in probe:
            return subprocess.run(sandboxed(probe["exec"]["command"], sandbox, pid), env=env, cwd=cwd, timeout=timeout,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode == 0
    except (OSError, ValueError, subprocess.TimeoutExpired, urllib.error.URLError):     # ValueError: UnsupportedSandbox
        return False
    return False


class Prober:
    """One probe of one running container: when to run it and what it concluded."""

    def __init__(self, probe: dict, host: str, ports: dict[str, int], env: dict[str, str], cwd: str,
                 sandbox: Sandbox, pid: int):
        self.probe, self.host, self.ports, self.env, self.cwd = probe, host, ports, dict(env), cwd
        self.sandbox, self.pid = sandbox, pid        # pid: the container's main process (exec probes)
        self.period = float(probe.get("periodSeconds") or 10)
        self.success_threshold = int(probe.get("successThreshold") or 1)
        self.failure_threshold = int(probe.get("failureThreshold") or 3)
        self.next_run = time.monotonic() + float(probe.get("initialDelaySeconds") or 0)
        self.successes = self.failures = 0
        self.pending: Future | None = None

    def tick(self) -> bool | None:
        """Start a due probe, or take a finished one's result. Returns True once the
        success threshold is reached, False once the failure threshold is, else None."""
        if self.pending is None:
            if time.monotonic() >= self.next_run:
                self.next_run = time.monotonic() + self.period
                self.pending = _POOL.submit(check, self.probe, self.host, self.ports, self.env, self.cwd,
                                           self.sandbox, self.pid)
            return None
        if not self.pending.done():
            return None
        passed, self.pending = self.pending.result(), None
        self.successes, self.failures = (self.successes + 1, 0) if passed else (0, self.failures + 1)
        if self.successes >= self.success_threshold:
            return True
        if self.failures >= self.failure_threshold:
            return False
        return None


def shutdown() -> None:
    """Stop accepting probes (on agent exit); running ones finish within their timeout."""
    _POOL.shutdown(wait=False, cancel_futures=True)
