"""The coordinator's own worker processes in the local distributed mode.

Workers run as children of the coordinator (``segflow worker ...``, visible in ``ps``),
each on its own 127.0.0.x address; a lost worker is started again under the same name
for the recovery. On Kubernetes the operator restarts pods instead and nothing is
spawned here. Each worker gets a certificate in its own name from the run's CA.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from ..security.pki import Authority, Role
from ..security.tls import AUTHORITY_KEY_ENV, identity_env


def segflow_command() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "segflow")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "segflow.cli.main"]


def worker_host(index: int) -> str:
    return f"127.0.0.{2 + index % 250}"


class WorkerSpawner:
    def __init__(self, count: int, coordinator: str, authority: Authority):
        self.count = count
        self.coordinator = coordinator
        self.authority = authority
        self.processes: dict[str, subprocess.Popen] = {}

    @staticmethod
    def name(index: int) -> str:
        return f"w{index}"

    def start_all(self) -> None:
        for i in range(self.count):
            self.start(self.name(i))

    def start(self, name: str) -> None:
        index = int(name[1:])
        old = self.processes.get(name)
        if old is not None and old.poll() is None:
            old.kill()
            old.wait()
        env = {k: v for k, v in os.environ.items() if k != AUTHORITY_KEY_ENV}
        env.update(identity_env(self.authority.issue(Role.WORKER, name)))
        self.processes[name] = subprocess.Popen(
            segflow_command() + ["worker", "--coordinator", self.coordinator, "--name", name,
                                 "--host", worker_host(index)],
            stdin=subprocess.DEVNULL, env=env)

    def exited(self) -> list[str]:
        return [n for n, p in self.processes.items() if p.poll() is not None]

    def stop_all(self, grace: float = 3.0) -> None:
        for p in self.processes.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in self.processes.values():
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
