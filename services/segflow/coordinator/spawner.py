"""The coordinator's own worker processes in the local distributed mode.

Workers run as children of the coordinator (``segflow worker ...``, visible in ``ps``),
each on its own 127.0.0.x address; a lost worker is started again under the same name
for the recovery. On Kubernetes the operator restarts pods instead and nothing is
spawned here. Each worker gets a certificate in its own name from the run's CA.

The first workers start before the coordinator listens, with ``--coordinator -``: a
worker's interpreter start and imports (a quarter of a second) then overlap the
coordinator's own, and it reads the coordinator's address from its stdin once the
coordinator knows it (:meth:`WorkerSpawner.announce`).
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from typing import IO

from ..errors import SegflowError
from ..observability.logs import event
from ..runtime.affinity import REPLICA_CPU_ENV, local_worker_cores
from ..security.identities import Role
from ..security.pki import Authority
from ..security.identity_env import AUTHORITY_KEY_ENV, identity_env
from . import ADDRESS_FROM_STDIN

log = logging.getLogger("segflow.coordinator")


def segflow_command() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "segflow")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "segflow.cli.main"]


def worker_host(index: int) -> str:
    return f"127.0.0.{2 + index % 250}"


def local_authority(ca: bytes) -> Authority:
    """A local run's coordinator issues its workers' certificates from the run's CA."""
    key = os.environ.get(AUTHORITY_KEY_ENV)
    if not key:
        raise SegflowError(f"--spawn-workers needs the run's CA key in {AUTHORITY_KEY_ENV} (segflow run sets it)")
    return Authority.load(ca, key.encode())


class WorkerSpawner:
    def __init__(self, count: int, authority: Authority, coordinator: str | None = None):
        self.count = count
        self.coordinator = coordinator       # None until announce()
        self.authority = authority
        self.cores = local_worker_cores(count)
        self.processes: dict[str, subprocess.Popen] = {}
        self._waiting: dict[str, IO[bytes]] = {}   # stdin of workers started before announce()

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
        env = {k: v for k, v in os.environ.items() if k not in (AUTHORITY_KEY_ENV, REPLICA_CPU_ENV)}
        core = self.cores[index] if index < len(self.cores) else None
        if core is not None:
            env[REPLICA_CPU_ENV] = str(core)
        env.update(identity_env(self.authority.issue(Role.WORKER, name)))
        early = self.coordinator is None
        self.processes[name] = process = subprocess.Popen(
            segflow_command() + ["worker", "--coordinator", ADDRESS_FROM_STDIN if early else self.coordinator,
                                 "--name", name, "--host", worker_host(index)],
            stdin=subprocess.PIPE if early else subprocess.DEVNULL, env=env)
        if early:
            self._waiting[name] = process.stdin

    def announce(self, coordinator: str) -> None:
        """The coordinator listens: tell the workers started before (a worker that died
        meanwhile is started again by the coordinator's monitor, as any lost worker)."""
        self.coordinator = coordinator
        for name, stdin in self._waiting.items():
            try:
                stdin.write(f"{coordinator}\n".encode())
                stdin.close()
            except BrokenPipeError:
                event(log, logging.WARNING, "worker exited before the coordinator listened", worker=name,
                      exit_code=self.processes[name].poll())
        self._waiting.clear()

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
