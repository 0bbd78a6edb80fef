"""``segflow run --parallelism N``: a coordinator and N worker processes on loopback.

The launcher starts the coordinator (``segflow coordinator --spawn-workers``), which starts
the workers as its children (each ``segflow worker`` on its own 127.0.0.x address) so it
can start a lost one again for a recovery. Every channel is mutual TLS under a CA made
for this run alone; its key never leaves this process, which issues every certificate of
the run (the workers' go to the coordinator, which hands each its own). Whatever happens
(success, failure, Ctrl-C), the whole process group is stopped before returning. While the
job runs, its coordinator's address is recorded so ``segflow savepoint`` can find it.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Callable

from ..coordinator.child_exit import wait_exit
from ..coordinator.spawner import WorkerSpawner, segflow_command
from ..datagen.corpus import cache_dir
from ..errors import JobFailed, SegflowError
from ..jobs.loader import JobModule
from ..redaction import redact_url
from ..runtime.affinity import pinning_wanted
from ..security.identities import Identity, Role
from ..security.pki import Authority
from ..security.identity_env import identity_env, identity_from_env, workers_line
from ..settings import CheckpointSettings

if TYPE_CHECKING:
    from ..coordinator.client import Savepoint
    from .watch import DistributedResult

STARTUP_TIMEOUT = 60.0
EXIT_TIMEOUT = 15.0       # seconds a coordinator may take to tidy up after the job is over
ORPHAN_EXIT_TIMEOUT = 20.0    # seconds a coordinator whose segflow run is gone may take to end


def registry_path(job_name: str) -> str:
    return os.path.join(cache_dir(), "run", f"{job_name}.json")


def _read_address(process: subprocess.Popen) -> tuple[str, str]:
    """The coordinator prints where it listens as its first line: (its control address,
    its web view's URL). A coordinator that refuses the job (a restore it cannot make, a
    store it cannot use) prints why instead, which is said as it is: the reason, not a
    start-up failure."""
    stdout = process.stdout
    assert stdout is not None, "the coordinator is started with stdout=PIPE"
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(STARTUP_TIMEOUT)
    line = box[0] if box else ""
    if line.startswith("coordinator failed: "):
        raise JobFailed(line.removeprefix("coordinator failed: ").strip())
    if not line.startswith("coordinator listening on "):
        detail = line.strip() or (f"exit code {process.poll()}" if process.poll() is not None else "no answer")
        raise JobFailed(f"the coordinator did not start: {detail}")
    threading.Thread(target=stdout.read, daemon=True).start()
    words = line.split()
    return words[3], words[words.index("web") + 1] if "web" in words else ""


def stop_group(process: subprocess.Popen, grace: float = 5.0) -> None:
    """Stop a child started with ``start_new_session=True`` and everything it started
    (workers, a Spark JVM): SIGTERM to its process group, SIGKILL after ``grace`` seconds."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            wait_exit(process, grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


def run_processes(spec: JobModule, workers: int, settings: CheckpointSettings | None = None,
                  on_progress: Callable[[dict, dict], None] | None = None,
                  on_event: Callable[[str], None] | None = None, standby_workers: int = 0) -> DistributedResult:
    """Run the job on ``workers`` worker processes (and ``standby_workers`` idle ones, ready
    to take over a lost worker's replicas) under a coordinator process."""
    if workers < 1:
        raise SegflowError(f"parallelism must be at least 1, got {workers}")
    pinning_wanted(os.environ)       # a bad value fails here, not in the coordinator's process
    settings = (settings or CheckpointSettings()).named(spec.default_name())
    _not_running_already(settings)
    params = [arg for key, value in spec.params.items() for arg in ("-p", f"{key}={value}")]
    authority = Authority.create(settings.job_name)
    client = authority.issue(Role.CLIENT, "client")
    env = {**os.environ, **identity_env(authority.issue(Role.COORDINATOR, "coordinator"))}
    coordinator = subprocess.Popen(
        segflow_command() + ["coordinator", spec.target, *params, "--function", spec.function,
                             "--workers", str(workers), "--standby-workers", str(standby_workers),
                             "--listen", "127.0.0.1:0", "--spawn-workers",
                             "--parent", str(os.getpid()),
                             "--settings", settings.to_json()],
        stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True, start_new_session=True, env=env)
    _give_worker_certificates(coordinator, authority, workers + standby_workers)   # while the coordinator starts
    from .watch import watch                # gRPC and the stubs: imported while the coordinator starts
    registry = registry_path(settings.job_name)
    try:
        address, web = _read_address(coordinator)
        _register(registry, {"coordinator": address, "pid": coordinator.pid, "job": settings.job_name,
                             "parent": os.getpid(), "state": redact_url(settings.state_url),
                             "tls": identity_env(client)})
        if web and on_event is not None:
            on_event(f"web view at {web}")
        try:
            return watch(address, client, coordinator, on_progress, on_event)
        finally:
            _let_exit(coordinator)
    finally:
        stop_group(coordinator)
        if os.path.exists(registry):
            os.remove(registry)


def worker_identities(authority: Authority, workers: int) -> dict[str, Identity]:
    """The certificates of a local run's workers, by the names its coordinator gives them."""
    names = [WorkerSpawner.name(i) for i in range(workers)]
    return {name: authority.issue(Role.WORKER, name) for name in names}


def _give_worker_certificates(coordinator: subprocess.Popen, authority: Authority, workers: int) -> None:
    """Write the workers' certificates to the coordinator's stdin. A coordinator that ended
    before it read them has said why on stdout, which the caller reads next."""
    line = workers_line(worker_identities(authority, workers))
    stdin = coordinator.stdin
    assert stdin is not None, "the coordinator is started with stdin=PIPE"
    try:
        stdin.write(line)
        stdin.flush()
    except BrokenPipeError:
        pass
    finally:
        with contextlib.suppress(BrokenPipeError):
            stdin.close()


def _not_running_already(settings: CheckpointSettings) -> None:
    """Refuse a second run of a job against the store where it runs now: each would take
    the other's checkpoints for its own (retention and the cleanup at its end delete
    them, a restore mixes them). A coordinator whose ``segflow run`` is gone is ending
    (``coordinator.parent``): wait for it, as a restore right after a kill does. Local
    runs only; on Kubernetes the operator runs one revision at a time."""
    if not settings.protocol.enabled:
        return
    entry = running_jobs().get(settings.job_name)
    if entry is None or entry.get("state") != redact_url(settings.state_url):
        return
    pid, parent = int(entry["pid"]), int(entry.get("parent") or 0)
    deadline = time.monotonic() + ORPHAN_EXIT_TIMEOUT
    while parent and not _alive(parent) and _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        raise SegflowError(f"job {settings.job_name!r} already runs against {redact_url(settings.state_url)} "
                           f"(coordinator pid {pid}): two runs would take each other's checkpoints. Stop it or "
                           "wait for its end, or give this run another --job-name")


def _register(path: str, entry: dict) -> None:
    """Record a running job for ``segflow savepoint``: readable by this user only, since it
    holds the job's client key."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"        # renamed when whole: a reader never sees half
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(entry, f)
    os.replace(partial, path)


def _let_exit(coordinator: subprocess.Popen, timeout: float = EXIT_TIMEOUT) -> None:
    """Once the job is over, the coordinator stops its workers and removes unfinished
    checkpoints from the state store before it exits: give it the time to, rather than
    stopping it at once."""
    try:
        wait_exit(coordinator, timeout)
    except subprocess.TimeoutExpired:
        pass


def running_jobs() -> dict[str, dict]:
    """The local jobs whose coordinator still runs, with their entries (by job name). A
    ``segflow run`` killed outright
    leaves its entry behind (its coordinator ends soon after): such entries are removed
    here. An entry that cannot be read (not one of ours: they are written whole) is
    skipped and left alone."""
    directory = os.path.join(cache_dir(), "run")
    names = sorted(n[:-5] for n in os.listdir(directory) if n.endswith(".json")) if os.path.isdir(directory) else []
    running = {}
    for name in names:
        path = registry_path(name)
        try:
            with open(path) as f:
                entry = json.load(f)
            pid = int(entry["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(pid):
            running[name] = entry
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
    return running


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:          # another user's process has the pid: something runs
        pass
    return True


def savepoint(job_name: str | None = None, coordinator: str | None = None) -> Savepoint:
    """Ask a running job's coordinator for a savepoint (its id and location). Given
    an address, the client certificate comes from the environment (see ``security.tls``)."""
    from ..coordinator.client import request_savepoint
    if coordinator is not None:
        return request_savepoint(coordinator, identity_from_env())
    running = running_jobs()
    if job_name is None:
        if len(running) != 1:
            raise SegflowError("name the job: running jobs are " + (", ".join(running) or "none"))
        job_name = next(iter(running))
    entry = running.get(job_name)
    if entry is None:
        raise SegflowError(f"no running job named {job_name!r} (running: {', '.join(running) or 'none'})")
    return request_savepoint(entry["coordinator"], identity_from_env(entry["tls"]))
