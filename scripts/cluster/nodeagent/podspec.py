"""What a container runs and with which environment (pure functions of the pod).

There is no container runtime here: a container is a local process in the project's
virtualenv, so an image is only a name that maps to a default entrypoint. Images are
recognised by the end of their repository (``ghcr.io/acme/segflow/engine:0.1.0`` is
``segflow/engine``); the container's ``command`` replaces the entrypoint, as in Kubernetes.
"""
from __future__ import annotations

import base64
import re
from collections.abc import Callable

IMAGES = {"segflow/engine": ["segflow"], "segflow/operator": ["segflow-operator"], "segflow/spark": ["segflow"]}

# lookup(kind, name) -> the object's data, or None when it does not exist; kind is
# "configmap" or "secret" (secret values base64-encoded, as the API returns them).
Lookup = Callable[[str, str], "dict[str, str] | None"]


class UnknownImage(ValueError):
    """The image maps to no entrypoint: the pod cannot run here and fails."""


class ContainerConfigError(ValueError):
    """The container's environment cannot be resolved yet (a missing config map or key,
    an unsupported field); retried, as the kubelet does."""


def repository(image: str) -> str:
    """``registry:5000/segflow/engine:0.1.0@sha256:...`` -> ``segflow/engine``."""
    name = image.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    return "/".join(name.split("/")[-2:])


def command_line(container: dict) -> list[str]:
    """``command`` (else the image's entrypoint) followed by ``args``, unexpanded."""
    image = container.get("image") or ""
    entrypoint = IMAGES.get(repository(image))
    if entrypoint is None:
        known = ", ".join(f"*{name}" for name in sorted(IMAGES))
        raise UnknownImage(f"image {image!r} is unknown to the segflow node agent, which runs only images "
                           f"whose repository ends with {known} (as processes of the project's virtualenv)")
    return list(container.get("command") or entrypoint) + list(container.get("args") or [])


_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion: defined names are replaced, ``$$`` is ``$``,
    references to undefined names stay as written."""
    def replace(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return _REFERENCE.sub(replace, text)


def field_value(pod: dict, path: str, pod_ip: str, host_ip: str) -> str:
    """A ``fieldRef`` value (the downward API), for env variables and downward API volumes."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
              "spec.serviceAccountName": spec.get("serviceAccountName") or "default",
              "status.podIP": pod_ip, "status.podIPs": pod_ip, "status.hostIP": host_ip}
    if path in simple:
        return simple[path] or ""
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{key}="{values[key]}"' for key in sorted(values))
    match = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if match:
        return (meta.get(match.group(1)) or {}).get(match.group(2), "")
    raise ContainerConfigError(f"fieldRef {path!r} is not supported by the segflow node agent")


def _decode(kind: str, value: str) -> str:
    return base64.b64decode(value).decode() if kind == "secret" else value


def environment(pod: dict, container: dict, pod_ip: str, host_ip: str, lookup: Lookup,
                base: dict[str, str]) -> dict[str, str]:
    """``base`` overlaid with the container's ``envFrom`` then ``env``, resolved in order
    (a value may refer to names defined before it, as in Kubernetes)."""
    env = dict(base)
    for source in container.get("envFrom") or []:
        kind = "configmap" if "configMapRef" in source else "secret"
        ref = source.get("configMapRef") or source.get("secretRef") or {}
        data = lookup(kind, ref.get("name", ""))
        if data is None:
            if ref.get("optional"):
                continue
            raise ContainerConfigError(f"{kind} {ref.get('name')!r} (envFrom) not found")
        for key, value in data.items():
            env[source.get("prefix", "") + key] = _decode(kind, value)
    for item in container.get("env") or []:
        name, source = item["name"], item.get("valueFrom")
        if source is None:
            env[name] = expand(str(item.get("value") or ""), env)
        elif "fieldRef" in source:
            env[name] = field_value(pod, source["fieldRef"]["fieldPath"], pod_ip, host_ip)
        elif "configMapKeyRef" in source or "secretKeyRef" in source:
            kind = "configmap" if "configMapKeyRef" in source else "secret"
            ref = source.get("configMapKeyRef") or source.get("secretKeyRef")
            found = (lookup(kind, ref["name"]) or {}).get(ref["key"])
            if found is None:
                if ref.get("optional"):
                    continue
                raise ContainerConfigError(f"env {name}: {kind} {ref['name']!r} has no key {ref['key']!r}")
            env[name] = _decode(kind, found)
        else:
            raise ContainerConfigError(f"env {name}: valueFrom {sorted(source)} is not supported by the "
                                       f"segflow node agent")
    return env
