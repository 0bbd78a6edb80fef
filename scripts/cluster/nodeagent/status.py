"""The pod status the agent reports, computed like the kubelet does (pure functions).

Controllers (Deployments, the segflow operator) read phase, conditions and container
statuses, so these follow the kubelet's rules: a container is waiting, running or
terminated; a pod is Pending while a container has never run, Running while any runs or
will be restarted, and Succeeded or Failed once all have ended for good.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass

CONDITIONS = ("PodScheduled", "Initialized", "ContainersReady", "Ready")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ContainerState:
    """What is known of one container: exactly one of running / terminated / waiting."""
    name: str
    image: str
    restarts: int = 0
    ready: bool = False
    pid: int = 0
    running_since: str = ""                               # set while running
    terminated: dict | None = None                        # ended for good (no restart pending)
    waiting: tuple[str, str] = ("ContainerCreating", "")  # (reason, message) otherwise
    last: dict | None = None                              # the previous run's termination

    def to_status(self) -> dict:
        status = {"name": self.name, "image": self.image, "imageID": f"segflow-local://{self.image}",
                  "ready": self.ready, "restartCount": self.restarts, "started": bool(self.running_since)}
        if self.pid:
            status["containerID"] = f"segflow://{self.pid}"      # the process id: useful when debugging
        if self.running_since:
            status["state"] = {"running": {"startedAt": self.running_since}}
        elif self.terminated is not None:
            status["state"] = {"terminated": self.terminated}
        else:
            reason, message = self.waiting
            status["state"] = {"waiting": {"reason": reason, "message": message} if message else {"reason": reason}}
        if self.last is not None:
            status["lastState"] = {"terminated": self.last}
        return status


def terminated(exit_code: int, started: str, message: str = "", reason: str = "") -> dict:
    """A terminated state; a process killed by signal N exits 128 + N, as in a container."""
    return {"exitCode": exit_code, "reason": reason or ("Completed" if exit_code == 0 else "Error"),
            "message": message, "startedAt": started or None, "finishedAt": now()}


def restarts(policy: str, exit_code: int) -> bool:
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def phase(policy: str, states: list[ContainerState]) -> str:
    """The kubelet's getPhase for a pod's regular containers."""
    waiting = sum(1 for s in states if not s.running_since and s.terminated is None and s.last is None)
    running = sum(1 for s in states if s.running_since)
    ended = [s for s in states if not s.running_since and (s.terminated is not None or s.last is not None)]
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if policy == "Always":
        return "Running"
    if all(s.terminated is not None and s.terminated["exitCode"] == 0 for s in ended):
        return "Succeeded"
    return "Failed" if policy == "Never" else "Running"


def conditions(current_phase: str, states: list[ContainerState], previous: dict[str, dict]) -> list[dict]:
    """The four pod conditions; a condition keeps its lastTransitionTime until its status changes."""
    ready = current_phase == "Running" and all(s.ready for s in states)
    if current_phase in ("Succeeded", "Failed"):
        reason, message = "PodCompleted", ""
    else:
        not_ready = [s.name for s in states if not s.ready]
        reason, message = "ContainersNotReady", f"containers with unready status: [{' '.join(not_ready)}]"
    result = []
    for kind in CONDITIONS:
        ok = kind in ("PodScheduled", "Initialized") or ready
        status = "True" if ok else "False"
        before = previous.get(kind)
        since = before["lastTransitionTime"] if before and before["status"] == status else now()
        result.append({"type": kind, "status": status, "lastProbeTime": None, "lastTransitionTime": since,
                       "reason": None if ok else reason, "message": None if ok else message})
    return result


def pod_status(policy: str, states: list[ContainerState], pod_ip: str, host_ip: str, start_time: str,
               previous: dict[str, dict], failure: tuple[str, str] | None = None) -> dict:
    """The status to patch. ``failure`` (reason, message) fails the pod outright (an
    unknown image); ``previous`` holds the last reported conditions by type."""
    current = "Failed" if failure else phase(policy, states)
    status = {"phase": current, "hostIP": host_ip, "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
              "startTime": start_time, "conditions": conditions(current, states, previous),
              "containerStatuses": [s.to_status() for s in states],
              "reason": failure[0] if failure else None, "message": failure[1] if failure else None}
    return status
