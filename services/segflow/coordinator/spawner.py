"""The coordinator's own worker processes in the local distributed mode.

Workers run as children of the coordinator (``segflow worker ...``, visible in ``ps``),
each on its own 127.0.0.x address; a lost worker is started again under the same name
for the recovery. On Kubernetes the operator restarts pods instead and nothing is
spawned here. Each worker gets a certificate in its own name, which ``segflow run``
issued from the run's CA (the same one when it is started again); the coordinator never
holds the CA's key, so it cannot mint a certificate, and never loads ``cryptography``
(about 35 ms of every local run's start-up, before the workers could be forked).

The first workers are forked from the coordinator before it listens (and before it has
a thread or a gRPC object): they start with the modules it imported, instead of an
interpreter start and imports of their own (a third of a second each, on the way of
every local run), and read the coordinator's address from a pipe once it knows it
(:meth:`WorkerSpawner.announce`). Each takes the title ``segflow worker --name wN ...``,
so ``ps`` tells them apart. A worker started again after a loss is a new process
(``segflow worker ...``): by then the coordinator runs threads and gRPC, which a fork
would copy mid-flight. A forked worker's memory is a copy of the coordinator's, the other
workers' keys included (an exec'd one gets only its own certificate); nobody but the same
user can read either.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
import traceback
from typing import IO, Callable, NoReturn

from setproctitle import setproctitle

from ..errors import SegflowError
from ..observability.logs import event
from ..runtime.affinity import REPLICA_CPU_ENV, local_worker_cores
from ..security.identities import Identity
from ..security.identity_env import identity_env, workers_from_line
from . import ADDRESS_FROM_STDIN
from .child_exit import wait_exit

log = logging.getLogger("segflow.coordinator")


def segflow_command() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "segflow")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "segflow.cli.main"]


def worker_host(index: int) -> str:
    return f"127.0.0.{2 + index % 250}"


def local_identities(count: int, ca: bytes, line: str) -> dict[str, Identity]:
    """The certificates of a local run's ``count`` workers, which ``segflow run`` issued
    and wrote to the coordinator's stdin as ``line`` (:func:`.identity_env.workers_line`)."""
    identities = workers_from_line(ca, line)
    missing = [name for name in map(WorkerSpawner.name, range(count)) if name not in identities]
    if missing:
        raise SegflowError(f"--spawn-workers --workers {count}: no certificate for {', '.join(missing)} on stdin; "
                           "segflow run issues one per worker")
    return identities


def read_stdin_line() -> str:
    """The first line on this process's stdin, read past ``sys.stdin``: the workers forked
    next put their own pipe at descriptor 0 and read the coordinator's address through
    ``sys.stdin``, which must not hold anything read before."""
    with os.fdopen(os.dup(0), encoding="utf-8") as stdin:
        return stdin.readline()


def worker_command(name: str, index: int, coordinator: str, standby: bool = False, follow: str = "") -> list[str]:
    """``follow``: a hot standby's checkpoint settings (JSON), whose store the worker follows."""
    return ["worker", "--coordinator", coordinator, "--name", name, "--host", worker_host(index),
            *(["--standby"] if standby else []), *(["--follow", follow] if follow else [])]


class ForkedWorker:
    """A worker forked from the coordinator, behind the part of :class:`subprocess.Popen`'s
    interface the spawner and the coordinator use."""

    def __init__(self, pid: int, stdin: IO[bytes]):
        self.pid = pid
        self.stdin = stdin
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Polls (:func:`.child_exit.wait_exit` wakes at the exit instead)."""
        start = time.monotonic()
        while (code := self.poll()) is None:
            if timeout is not None and time.monotonic() - start >= timeout:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            time.sleep(0.01)
        return code

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _become_worker(name: str, index: int, standby: bool, follow: str, stdin: int, env: dict[str, str],
                   run_command: Callable[[list[str]], int]) -> NoReturn:
    """In a forked child: run ``segflow worker`` (``run_command`` is the CLI's entry) with the
    coordinator's address to come on ``stdin``, then end the process (never return into
    the coordinator's code)."""
    code = 1
    try:
        os.dup2(stdin, 0)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))         # as Popen's close_fds
        command = worker_command(name, index, ADDRESS_FROM_STDIN, standby, follow)
        shown = [c for c in command if c != follow]       # not a hot standby's settings: ps shows a worker
        setproctitle(" ".join(["segflow", *shown]))        # (before the environment changes: the title needs
        os.environ.clear()                                 # the original)
        os.environ.update(env)
        code = run_command(command)
    except SystemExit as exc:           # argparse's exit, as the command's own process would end
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class WorkerSpawner:
    """``count`` workers and ``standby`` more (named after them) that register as standbys;
    ``follow``: a hot standby's settings (JSON), whose store the first workers follow."""

    def __init__(self, count: int, identities: dict[str, Identity], standby: int = 0, follow: str = ""):
        self.count = count
        self.standby = standby
        self.follow = follow
        self.coordinator: str | None = None     # until announce()
        self.identities = identities
        self.cores = local_worker_cores(count + standby)
        self.processes: dict[str, subprocess.Popen | ForkedWorker] = {}
        self._waiting: dict[str, IO[bytes]] = {}   # stdin of workers started before announce()
        self.started_standby: set[str] = set()     # names whose current process was started as a standby
        self.deferred: set[str] = set()            # lost workers to start again as standbys later

    @staticmethod
    def name(index: int) -> str:
        return f"w{index}"

    def fork_all(self, run_command: Callable[[list[str]], int]) -> None:
        """The first workers, forked from this process before it starts any thread or gRPC
        object: they begin with the modules it has imported instead of importing them
        again (about a third of a second of interpreter start and imports each). Each runs
        ``run_command(["worker", ...])``: the CLI's entry, passed in because the CLI imports
        this package, not the other way round."""
        for i in range(self.count + self.standby):
            name = self.name(i)
            env = self._environment(name)
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(write)
                for earlier in self.processes.values():    # its end of the others' address pipes
                    if earlier.stdin is not None:
                        earlier.stdin.close()
                standby = i >= self.count          # it may wait for a slot as long as the job runs: no follow
                _become_worker(name, i, standby, "" if standby else self.follow, read, env, run_command)
            os.close(read)
            if i >= self.count:
                self.started_standby.add(name)
            self.processes[name] = worker = ForkedWorker(pid, os.fdopen(write, "wb"))
            self._waiting[name] = worker.stdin

    def _environment(self, name: str) -> dict[str, str]:
        """A worker's environment: this one's, with its own certificate and core."""
        index = int(name[1:])
        env = {k: v for k, v in os.environ.items() if k != REPLICA_CPU_ENV}
        core = self.cores[index] if index < len(self.cores) else None
        if core is not None:
            env[REPLICA_CPU_ENV] = str(core)
        env.update(identity_env(self.identities[name]))
        return env

    def start(self, name: str, standby: bool = False) -> None:
        """Start a lost worker again, as a new ``segflow worker`` process (not forked: by now
        this process runs threads and gRPC); ``standby``: it registers as one (a standby
        took over its replicas)."""
        self.deferred.discard(name)
        index = int(name[1:])
        self._end(name)
        if self.coordinator is None:
            raise SegflowError(f"worker {name} cannot be started again before the coordinator listens")
        self.processes[name] = subprocess.Popen(
            segflow_command() + worker_command(name, index, self.coordinator, standby),
            stdin=subprocess.DEVNULL, env=self._environment(name))
        if standby:
            self.started_standby.add(name)
        else:
            self.started_standby.discard(name)

    def _end(self, name: str) -> None:
        old = self.processes.get(name)
        if old is not None and old.poll() is None:
            old.kill()
            old.wait()

    def start_later(self, name: str) -> None:
        """Lost worker ``name`` is started again as a standby by :meth:`start_deferred`
        (``coordinator.replacement``): until then its exit is no news (:meth:`exited`). Its
        process, if it still runs (silent, not gone), ends now, as :meth:`start` would end it."""
        self._end(name)
        self.deferred.add(name)

    def start_deferred(self) -> None:
        for name in sorted(self.deferred):
            self.start(name, standby=True)

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
        """Workers whose process ended, but for those to be started later."""
        return [n for n, p in self.processes.items() if n not in self.deferred and p.poll() is not None]

    def stop_all(self, grace: float = 3.0) -> None:
        for p in self.processes.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in self.processes.values():
            try:
                wait_exit(p, max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
