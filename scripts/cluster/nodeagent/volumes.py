"""A pod's volumes as a kubelet lays them out, and where each container mounts them (pure
functions of the pod spec and the config maps and secrets it names, tested without a cluster;
volumedirs.py writes them to disk).

Supported: ``emptyDir`` (``medium: Memory`` too, as a plain directory of the node: no tmpfs,
so its size counts against the disk, not the pod's memory), ``configMap``, ``secret``,
``downwardAPI`` (``fieldRef``), ``projected`` (config maps, secrets, downward API) and
``hostPath`` (the node's own file or directory, checked and made per its ``type`` as a
kubelet does: :func:`host_path_step`). Files
are written once per container start, not refreshed while it runs (a kubelet refreshes them
about every minute), and there is no ``..data`` symbolic link: each key is a plain file.
"""
from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass
from typing import Any

from sandbox.runner import Volume

from .podspec import ContainerConfigError, Lookup, expand, field_value

DEFAULT_MODE = 0o644
# Directory names under a pod's volumes directory, as the kubelet names its volume plugins.
KIND_DIRECTORIES = {"emptyDir": "kubernetes.io~empty-dir", "configMap": "kubernetes.io~configmap",
                    "secret": "kubernetes.io~secret", "downwardAPI": "kubernetes.io~downward-api",
                    "projected": "kubernetes.io~projected", "hostPath": "kubernetes.io~host-path"}
# hostPath ``type``s whose check a kubelet runs against what the path is (pkg/volume/hostpath,
# checkTypeInternal), each with the word its "is not a ..." message uses.
HOST_PATH_KINDS = {"Directory": "directory", "File": "file", "Socket": "socket file",
                   "CharDevice": "character device", "BlockDevice": "block device"}
CREATED_BY_TYPE = {"DirectoryOrCreate": "Directory", "FileOrCreate": "File"}
DOWNWARD_PATHS = re.compile(r"metadata\.(name|namespace|uid|labels|annotations)(\['.+'\])?")


class VolumeConfigError(ContainerConfigError):
    """A volume cannot be prepared yet (a missing config map, secret or key) or is not
    supported here; the container waits in CreateContainerConfigError and is retried."""


class MountFailed(VolumeConfigError):
    """A volume the node cannot set up for the pod (a hostPath that is not what its ``type``
    says): reported as a kubelet does, a ``FailedMount`` event on the pod while its
    containers wait in ``ContainerCreating``, and tried again."""

    def __init__(self, volume: str, reason: str):
        super().__init__(f"MountVolume.SetUp failed for volume {volume!r} : {reason}")


@dataclass(frozen=True)
class VolumeFile:
    """One file of a volume: its path inside the volume, its bytes and its mode."""
    path: str
    content: bytes
    mode: int


@dataclass(frozen=True)
class PodVolume:
    """A volume of the pod: an empty directory, or a directory of files the node writes."""
    name: str
    kind: str                          # a key of KIND_DIRECTORIES
    files: tuple[VolumeFile, ...] = ()
    host_path: str = ""                # a hostPath volume's path on the node
    host_type: str = ""                # and its ``type`` ("" checks nothing)

    @property
    def writable(self) -> bool:
        """An emptyDir and a hostPath are the containers' to write (unless a mount says
        readOnly); the others are read-only, as the kubelet mounts them."""
        return self.kind in ("emptyDir", "hostPath")

    def directory(self, root: str) -> str:
        """Where the volume lives: under a pod's volumes directory ``root``, or for a
        hostPath its path on the node."""
        if self.kind == "hostPath":
            return self.host_path
        return os.path.join(root, KIND_DIRECTORIES[self.kind], self.name)


def host_path_step(volume: str, path: str, host_type: str, found: str) -> str:
    """What the node does for a hostPath volume whose ``path`` is ``found`` (``missing``
    or a value of HOST_PATH_KINDS), by its ``type``, as a kubelet and its runtime do:
    ``mount`` it as it is, or first make it (``directory``: mode 0755 with its parents;
    ``file``: an empty 0644 file, whose directory must exist). Raises MountFailed with the
    kubelet's message when the path is not what its type says."""
    if host_type == "":
        return "directory" if found == "missing" else "mount"     # no check; the runtime makes a missing one
    wanted = CREATED_BY_TYPE.get(host_type, host_type)
    if wanted not in HOST_PATH_KINDS:
        raise MountFailed(volume, f"{host_type} is an invalid volume type")
    if found == "missing" and host_type in CREATED_BY_TYPE:
        return HOST_PATH_KINDS[wanted]
    if found != HOST_PATH_KINDS[wanted]:
        raise MountFailed(volume, f"hostPath type check failed: {path} is not a {HOST_PATH_KINDS[wanted]}")
    return "mount"


def _host_path(name: str, source: dict[str, Any]) -> PodVolume:
    path = source.get("path") or ""
    if not path.startswith("/") or ".." in path.split("/"):
        raise VolumeConfigError(f"volume {name!r}: hostPath path {path!r} must be an absolute path without '..'")
    return PodVolume(name, "hostPath", host_path=os.path.normpath(path), host_type=source.get("type") or "")


def _relative(path: str, what: str) -> str:
    """A path inside a volume: relative, without '..' (the API server checks this too)."""
    if not path or path.startswith("/") or ".." in path.split("/"):
        raise VolumeConfigError(f"{what} {path!r} must be a relative path without '..'")
    return path


def _mode(value: Any, what: str) -> int:
    if value is None:
        return DEFAULT_MODE
    if not isinstance(value, int) or not 0 <= value <= 0o777:
        raise VolumeConfigError(f"{what}: mode {value!r} must be an integer from 0 to 0777 (511)")
    return value


def _keyed_files(kind: str, source: dict[str, Any], lookup: Lookup, default_mode: int,
                 volume: str) -> tuple[VolumeFile, ...]:
    """A config map's or secret's keys as files: all keys, or only ``items`` (key -> path,
    mode); a missing object or item key fails unless the source is ``optional``."""
    name = source.get("name") or source.get("secretName") or ""
    what = f"volume {volume!r}: {kind} {name!r}"
    data = lookup("secret" if kind == "secret" else "configmap", name)
    if data is None:
        if source.get("optional"):
            return ()
        raise VolumeConfigError(f"{what} not found: create it, or mark the volume source optional")
    mode = _mode(source.get("defaultMode"), what) if "defaultMode" in source else default_mode

    def content(value: str) -> bytes:
        return base64.b64decode(value) if kind == "secret" else value.encode()
    items = source.get("items")
    if not items:
        return tuple(VolumeFile(_relative(key, f"{what} key"), content(value), mode)
                     for key, value in sorted(data.items()))
    files = []
    for item in items:
        if item["key"] not in data:
            if source.get("optional"):
                continue
            raise VolumeConfigError(f"{what} has no key {item['key']!r} (named in the volume's items)")
        files.append(VolumeFile(_relative(item["path"], f"{what} item path"), content(data[item["key"]]),
                                _mode(item.get("mode"), what) if "mode" in item else mode))
    return tuple(files)


def _downward_files(source: dict[str, Any], pod: dict[str, Any], default_mode: int,
                    volume: str) -> tuple[VolumeFile, ...]:
    """``downwardAPI`` items: the pod's metadata by ``fieldRef`` (resourceFieldRef is not supported)."""
    mode = _mode(source.get("defaultMode"), f"volume {volume!r}") if "defaultMode" in source else default_mode
    files = []
    for item in source.get("items") or []:
        what = f"volume {volume!r}: downward API item {item.get('path')!r}"
        if "fieldRef" not in item:
            raise VolumeConfigError(f"{what}: only fieldRef is supported by the segflow node agent "
                                    f"(not {sorted(set(item) - {'path', 'mode'})})")
        path = item["fieldRef"]["fieldPath"]
        if not DOWNWARD_PATHS.fullmatch(path):
            raise VolumeConfigError(f"{what}: fieldRef {path!r} is not allowed in a downward API volume "
                                    f"(metadata.name, namespace, uid, labels, annotations)")
        files.append(VolumeFile(_relative(item["path"], what), field_value(pod, path, "", "").encode(),
                                _mode(item.get("mode"), what) if "mode" in item else mode))
    return tuple(files)


def _projected_files(source: dict[str, Any], pod: dict[str, Any], lookup: Lookup,
                     volume: str) -> tuple[VolumeFile, ...]:
    mode = _mode(source.get("defaultMode"), f"volume {volume!r}")
    files: list[VolumeFile] = []
    for part in source.get("sources") or []:
        if "configMap" in part or "secret" in part:
            kind = "configMap" if "configMap" in part else "secret"
            files += _keyed_files(kind, part[kind], lookup, mode, volume)
        elif "downwardAPI" in part:
            files += _downward_files(part["downwardAPI"], pod, mode, volume)
        else:
            raise VolumeConfigError(f"volume {volume!r}: projected source {sorted(part)} is not supported by the "
                                    f"segflow node agent (configMap, secret, downwardAPI are)")
    return tuple(files)


def pod_volumes(pod: dict[str, Any], lookup: Lookup) -> dict[str, PodVolume]:
    """The pod's volumes by name, with the files each holds."""
    volumes = {}
    for spec in pod["spec"].get("volumes") or []:
        name = spec["name"]
        kind = next((k for k in KIND_DIRECTORIES if k in spec), None)
        if kind is None:
            raise VolumeConfigError(f"volume {name!r}: {sorted(set(spec) - {'name'})} is not supported by the "
                                    f"segflow node agent (only {', '.join(KIND_DIRECTORIES)})")
        source = spec[kind] or {}
        if kind == "hostPath":
            volumes[name] = _host_path(name, source)
            continue
        if kind == "emptyDir":
            files: tuple[VolumeFile, ...] = ()
        elif kind in ("configMap", "secret"):
            files = _keyed_files(kind, source, lookup, DEFAULT_MODE, name)
        elif kind == "downwardAPI":
            files = _downward_files(source, pod, DEFAULT_MODE, name)
        else:
            files = _projected_files(source, pod, lookup, name)
        volumes[name] = PodVolume(name, kind, files)
    return volumes


@dataclass(frozen=True)
class Mount:
    """One of a container's ``volumeMounts``: ``sub_path`` of ``volume`` at ``target``."""
    volume: PodVolume
    sub_path: str
    target: str
    read_only: bool

    def source(self, root: str) -> str:
        """The host path mounted, under the pod's volumes directory ``root``."""
        directory = self.volume.directory(root)
        return os.path.join(directory, self.sub_path) if self.sub_path else directory

    def bind(self, root: str) -> Volume:
        return Volume(self.source(root), self.target, read_only=self.read_only)


def container_mounts(container: dict[str, Any], volumes: dict[str, PodVolume], env: dict[str, str]) -> list[Mount]:
    """The container's ``volumeMounts``: ``subPath`` (or ``subPathExpr``, expanded with the
    container's environment) picks a file or directory inside the volume; read-only unless
    both the mount and the volume allow writing."""
    mounts = []
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount["name"])
        if volume is None:
            raise VolumeConfigError(f"container {container['name']!r}: volumeMount {mount['name']!r} names no volume "
                                    f"of the pod")
        sub_path = mount.get("subPath") or expand(mount.get("subPathExpr") or "", env)
        if sub_path:
            _relative(sub_path, f"volumeMount {mount['name']!r} subPath")
        mounts.append(Mount(volume, sub_path, mount["mountPath"], bool(mount.get("readOnly")) or not volume.writable))
    return mounts
