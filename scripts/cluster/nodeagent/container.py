"""One container as a local process: started in its own process group, restarted per the
pod's restart policy with a short back-off, probed, and stopped like a container runtime
would (the whole group goes when the main process ends or the pod is deleted).

Where the process runs is the pod's sandbox (sandbox.py).
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import time

from controlplane.processes import start_time

from . import events
from .probes import Prober
from .sandbox import Sandbox, sandboxed
from .status import ContainerState, now, restarts, terminated

log = logging.getLogger("nodeagent")
MAX_BACKOFF = 10.0
STABLE_SECONDS = 10.0          # a run this long resets the back-off


class ContainerNotRunning(LookupError):
    """A command cannot enter a container that is not running."""


def signal_group(pid: int, sig: int) -> None:
    """Signal process group ``pid``; one already gone is no error."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def _exited(pid: int) -> bool:
    """Whether the child exited, without reaping it: its process group can still be killed
    by id before the id is freed for reuse."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


class Container:
    """A container's process, restart back-off and probes."""

    def __init__(self, spec: dict, directory: str, policy: str, grace: float, pod: str):
        self.spec, self.policy, self.grace, self.pod = spec, policy, grace, pod
        self.state = ContainerState(spec["name"], spec.get("image") or "")
        self.log_path = os.path.join(directory, f"{spec['name']}.log")
        self.pid_path = os.path.join(directory, f"{spec['name']}.pid")
        self.process: subprocess.Popen | None = None
        self.started = 0.0
        self.next_start = 0.0
        self.crashes = 0
        self.kill_at: float | None = None
        self.readiness: Prober | None = None
        self.liveness: Prober | None = None
        self.events: list[events.ContainerEvent] = []     # for the pod to record, oldest first
        self.runs: list[int] = []       # where each run's output begins in the log (containerlogs.py)
        self._entry: tuple[dict[str, str], str, Sandbox] | None = None    # env, cwd, sandbox of the running process

    @property
    def ports(self) -> dict[str, int]:
        return {p["name"]: p["containerPort"] for p in self.spec.get("ports") or [] if p.get("name")}

    def due(self) -> bool:
        """Waiting to (re)start and its back-off has passed."""
        return self.process is None and self.state.terminated is None and time.monotonic() >= self.next_start

    def start(self, command: list[str], env: dict[str, str], cwd: str, host: str, sandbox: Sandbox) -> None:
        """Run ``command``, already made to run in ``sandbox`` (the pod's: sandbox.sandboxed,
        or sandboxed.py's image runner), whose exec probes run there too; a command that cannot
        be executed ends the container with exit code 128 (StartError), as a runtime reports it."""
        if self.state.last is not None:
            self.state.restarts += 1
        with open(self.log_path, "ab") as out:
            self.runs.append(out.tell())
            try:
                self.process = subprocess.Popen(command, env=env, cwd=cwd, stdout=out,
                                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                start_new_session=True)
            except OSError as exc:
                message = f"cannot run {command[0]!r}: {exc.strerror}"
                out.write(f"segflow node agent: {message}\n".encode())
                self.events.append(events.failed(self.state.name, message))
                self._ended(terminated(128, now(), message, "StartError"), restarts(self.policy, 128))
                return
        with open(self.pid_path, "w") as f:        # for down.sh, should this agent die without stopping it
            f.write(f"{self.process.pid} {start_time(self.process.pid)}\n")
        self.started = time.monotonic()
        self._entry = (dict(env), cwd, sandbox)
        self.state.pid, self.state.running_since, self.state.waiting = self.process.pid, now(), ("", "")
        pid = self.process.pid
        self.readiness = Prober(self.spec["readinessProbe"], host, self.ports, env, cwd, sandbox, pid) \
            if self.spec.get("readinessProbe") else None
        self.liveness = Prober(self.spec["livenessProbe"], host, self.ports, env, cwd, sandbox, pid) \
            if self.spec.get("livenessProbe") else None
        self.state.ready = self.readiness is None
        self.events += [events.created(self.state.name), events.started(self.state.name)]
        log.info("container started", extra={"fields": {"pod": self.pod, "container": self.state.name,
                                                        "pid": self.process.pid}})

    def entered(self, argv: list[str]) -> tuple[list[str], dict[str, str], str]:
        """The command line, environment and working directory that run ``argv`` inside
        the running container, as its exec probes run (``kubectl exec``)."""
        if self.process is None or self._entry is None or self.kill_at is not None:
            raise ContainerNotRunning(f"container {self.state.name!r} of pod {self.pod} is not running")
        env, cwd, sandbox = self._entry
        try:
            return sandboxed(argv, sandbox, self.process.pid), env, cwd
        except (OSError, ValueError) as exc:      # its pid 1 is gone (ending), or UnsupportedSandbox
            raise ContainerNotRunning(f"container {self.state.name!r} of pod {self.pod} cannot be entered: "
                                      f"{exc}") from exc

    def config_error(self, reason: str, message: str) -> None:
        """The process cannot be started yet: wait and retry (the kubelet's behaviour)."""
        self._retry_later((reason, message), events.failed(self.state.name, message))

    def mount_failed(self, message: str) -> None:
        """A volume of the pod cannot be set up: the container stays in ContainerCreating,
        the pod gets a FailedMount event, and the mount is tried again (as by a kubelet)."""
        self._retry_later(("ContainerCreating", ""), events.failed_mount(message))

    def _retry_later(self, waiting: tuple[str, str], event: events.ContainerEvent) -> None:
        self.state.waiting = waiting
        self.next_start = time.monotonic() + 2.0
        self.events.append(event)

    def tick(self, terminating: bool) -> None:
        """Notice an exit, apply the restart policy, and advance the probes."""
        if self.process is None:
            return
        if _exited(self.process.pid):
            signal_group(self.process.pid, signal.SIGKILL)      # the rest of the container goes with it
            code = self.process.wait()
            code = 128 - code if code < 0 else code                # killed by signal N -> 128 + N
            self.process, self.kill_at = None, None
            self._remove_pid_file()
            self._ended(terminated(code, self.state.running_since, self._termination_message(code)),
                        not terminating and restarts(self.policy, code))
            log.info("container exited", extra={"fields": {"pod": self.pod, "container": self.state.name,
                                                           "exit_code": code}})
            return
        if self.kill_at is not None:
            if time.monotonic() >= self.kill_at:
                signal_group(self.process.pid, signal.SIGKILL)
            return
        if self.readiness is not None:
            verdict = self.readiness.tick()
            if verdict is not None:
                self.state.ready = verdict
        if self.liveness is not None and self.liveness.tick() is False:
            log.info("liveness probe failed: restarting", extra={"fields": {"pod": self.pod,
                                                                            "container": self.state.name}})
            self.stop(self.grace)

    def _termination_message(self, exit_code: int) -> str:
        """With ``terminationMessagePolicy: FallbackToLogsOnError`` a failed container's
        message is the end of this run's log (at most 2048 bytes and 80 lines), as the
        kubelet does; controllers show it as the failure's cause. (The default policy, File,
        reads a file inside the container: there is no such private file here, so it stays
        empty.)"""
        if exit_code == 0 or self.spec.get("terminationMessagePolicy") != "FallbackToLogsOnError":
            return ""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(self.runs[-1] if self.runs else 0, os.path.getsize(self.log_path) - 2048))
                tail = f.read().decode(errors="replace")
        except OSError:
            return ""
        return "\n".join(tail.rstrip("\n").splitlines()[-80:])

    def _ended(self, state: dict, policy_restarts: bool) -> None:
        self.state.running_since, self.state.ready = "", False
        if not policy_restarts:
            self.state.terminated = state
            return
        ran = time.monotonic() - self.started if self.started else 0.0
        self.crashes = 1 if ran >= STABLE_SECONDS else self.crashes + 1
        backoff = min(MAX_BACKOFF, 0.5 * 2 ** (self.crashes - 1))
        self.next_start = time.monotonic() + backoff
        self.state.last = state
        self.state.waiting = ("CrashLoopBackOff",
                              f"back-off {backoff:g}s restarting failed container={self.state.name}")
        self.events.append(events.back_off(self.state.name))

    def stop(self, grace: float) -> None:
        """SIGTERM the process group now, SIGKILL it after ``grace`` seconds (see ``tick``)."""
        if self.process is not None and self.kill_at is None:
            self.events.append(events.killing(self.state.name))
            signal_group(self.process.pid, signal.SIGTERM if grace > 0 else signal.SIGKILL)
            self.kill_at = time.monotonic() + grace

    def kill_now(self) -> None:
        """SIGKILL the process group and reap it (pod force-deleted, or agent exit)."""
        if self.process is not None:
            signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.process = None
        self._remove_pid_file()

    @property
    def running(self) -> bool:
        return self.process is not None

    def _remove_pid_file(self) -> None:
        try:
            os.remove(self.pid_path)
        except FileNotFoundError:
            pass
