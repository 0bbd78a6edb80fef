"""What a pod's containers run, and the status the agent reports for them (pure).

The node agent runs containers as local processes, so an image is only a name: it maps to
an entrypoint inside the project's virtualenv (a container's ``command`` overrides it).
"""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field

ENTRYPOINTS = {"segflow/engine": ["segflow"], "segflow/operator": ["segflow-operator"],
               "segflow/spark": ["segflow"]}


class PodSpecError(ValueError):
    """A pod the agent cannot run; the message becomes the container's waiting reason."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def repository(image: str) -> str:
    """``registry.example.com/segflow/engine:0.1.0@sha256:...`` -> ``segflow/engine``."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name.rsplit(":", 1)[0]
    return "/".join(name.split("/")[-2:])


def entrypoint(container: dict) -> list[str]:
    image = container.get("image", "")
    known = ENTRYPOINTS.get(repository(image))
    if known is None:
        raise PodSpecError("ErrImagePull", f"image {image!r} is unknown to the node agent; it runs "
                                           f"{', '.join(sorted(ENTRYPOINTS))}")
    return list(container.get("command") or known) + list(container.get("args") or [])


_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion: known names are replaced, ``$$`` is a literal
    ``$``, unknown references stay as written."""
    def replace(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return _REFERENCE.sub(replace, text)


def field_value(pod: dict, path: str, pod_ip: str, host_ip: str) -> str:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
              "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
              "status.podIP": pod_ip, "status.hostIP": host_ip}
    if path in simple:
        return simple[path] or ""
    match = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if match:
        return (meta.get(match.group(1)) or {}).get(match.group(2), "")
    raise PodSpecError("CreateContainerConfigError", f"unsupported fieldRef {path!r}")


def environment(pod: dict, container: dict, pod_ip: str, host_ip: str, lookup) -> dict[str, str]:
    """The container's ``env``, resolved in order (later entries may refer to earlier
    ones). ``lookup(kind, name, key)`` reads config maps and secrets."""
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        name = item["name"]
        if "value" in item:
            env[name] = expand(str(item.get("value") or ""), env)
            continue
        source = item.get("valueFrom") or {}
        if "fieldRef" in source:
            env[name] = field_value(pod, source["fieldRef"]["fieldPath"], pod_ip, host_ip)
        elif "configMapKeyRef" in source or "secretKeyRef" in source:
            kind = "configmap" if "configMapKeyRef" in source else "secret"
            ref = source.get("configMapKeyRef") or source.get("secretKeyRef")
            value = lookup(kind, ref["name"], ref["key"])
            if value is None:
                if ref.get("optional"):
                    continue
                raise PodSpecError("CreateContainerConfigError",
                                   f"{kind} {ref['name']!r} has no key {ref['key']!r}")
            env[name] = base64.b64decode(value).decode() if kind == "secret" else value
        elif "resourceFieldRef" in source:
            env[name] = "0"
        else:
            raise PodSpecError("CreateContainerConfigError", f"env {name}: unsupported valueFrom {sorted(source)}")
    return env


@dataclass
class ContainerRun:
    """What the agent knows of one container of a pod."""
    name: str
    image: str
    restarts: int = 0
    running_since: str = ""
    ready: bool = False
    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    started_at: str = ""
    finished_at: str = ""
    waiting: tuple[str, str] | None = None          # (reason, message)
    last: dict = field(default_factory=dict)         # lastState.terminated


def restarts_after(policy: str, exit_code: int) -> bool:
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def phase(policy: str, runs: list[ContainerRun]) -> str:
    if any(r.waiting and r.waiting[0] != "CrashLoopBackOff" for r in runs) and not any(r.running_since for r in runs):
        return "Pending"
    if any(r.running_since or (r.waiting and r.waiting[0] == "CrashLoopBackOff") for r in runs):
        return "Running"
    if all(r.exit_code is not None for r in runs):
        return "Succeeded" if all(r.exit_code == 0 for r in runs) else "Failed"
    return "Pending"


def container_status(run: ContainerRun) -> dict:
    status = {"name": run.name, "image": run.image, "imageID": f"segflow-local://{run.image}",
              "containerID": f"local://{run.name}", "ready": run.ready, "restartCount": run.restarts,
              "started": bool(run.running_since)}
    if run.running_since:
        status["state"] = {"running": {"startedAt": run.running_since}}
    elif run.exit_code is not None:
        status["state"] = {"terminated": {"exitCode": run.exit_code, "reason": run.reason,
                                          "message": run.message, "startedAt": run.started_at,
                                          "finishedAt": run.finished_at}}
    else:
        reason, message = run.waiting or ("ContainerCreating", "")
        status["state"] = {"waiting": {"reason": reason, "message": message}}
    if run.last:
        status["lastState"] = {"terminated": run.last}
    return status


def pod_status(policy: str, runs: list[ContainerRun], pod_ip: str, host_ip: str, started: str, now: str) -> dict:
    ready = bool(runs) and all(r.ready for r in runs)
    current = phase(policy, runs)

    def condition(kind: str, ok: bool) -> dict:
        return {"type": kind, "status": "True" if ok else "False", "lastProbeTime": None,
                "lastTransitionTime": now}
    status = {"phase": current, "hostIP": host_ip, "startTime": started,
              "conditions": [condition("PodScheduled", True), condition("Initialized", True),
                             condition("ContainersReady", ready), condition("Ready", ready)],
              "containerStatuses": [container_status(r) for r in runs]}
    if pod_ip:
        status["podIP"] = pod_ip
        status["podIPs"] = [{"ip": pod_ip}]
    return status
