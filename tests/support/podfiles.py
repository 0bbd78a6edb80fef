"""A running container's processes and files as the host sees them, the same way whether the
pod runs from its image (its own root filesystem and pid namespace) or as host processes
(loopback mode): the node agent starts each container in a process group of its own and
records the group's leader in ``<pod directory>/<container>.pid``; the container's files are
under ``/proc/<pid>/root`` of its innermost process (``/`` in loopback mode). Tests hand a
pod a path *inside* the container and read or write it from the host through that root."""
from __future__ import annotations

import glob
import os

import psutil

from support.clusters import Cluster, wait_for


def group_leader(cluster: Cluster, pod: str, container: str = "main", namespace: str = "default") -> int:
    """The host PID of the running ``container``'s process group leader (0 if none runs)."""
    for path in glob.glob(os.path.join(cluster.pods_dir(), f"{namespace}_{pod}_*", f"{container}.pid")):
        with open(path) as f:
            pid = int(f.read().split()[0])
        if psutil.pid_exists(pid):
            return pid
    return 0


def container_processes(cluster: Cluster, pod: str, container: str = "main", namespace: str = "default") -> list[int]:
    """The host PIDs of the container's processes, its group leader first."""
    leader = group_leader(cluster, pod, container, namespace)
    if not leader:
        return []
    members = []
    for process in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(process.pid) == leader:
                members.append(process.pid)
        except ProcessLookupError:
            continue
    return sorted(members, key=lambda pid: (pid != leader, pid))


def _root(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/root")
    except OSError:
        return ""


def innermost(cluster: Cluster, pod: str, container: str = "main", namespace: str = "default") -> int:
    """The host PID of the container's own first process: in a pod from an image the first
    one whose root is the image's (the setup around it runs in the host's root, so until
    it has entered the image's there is none), else the group leader. 0 while the
    container is not (yet) running."""
    processes = container_processes(cluster, pod, container, namespace)
    if not cluster.info()["images"]:
        return (processes or [0])[0]
    return next((pid for pid in processes if _root(pid) not in ("", "/")), 0)


def container_path(cluster: Cluster, pod: str, path: str, container: str = "main", namespace: str = "default") -> str:
    """The host's path to ``path`` inside the running container (waits for it to run)."""
    pid = wait_for(lambda: innermost(cluster, pod, container, namespace), 30, f"{pod}'s container {container} to run")
    return f"/proc/{pid}/root{path}"


def container_log(cluster: Cluster, pod: str, container: str = "main", namespace: str = "default") -> str:
    """Everything the container wrote to its stdout and stderr (all its runs)."""
    found = glob.glob(os.path.join(cluster.pods_dir(), f"{namespace}_{pod}_*", f"{container}.log"))
    if not found:
        return ""
    with open(found[0], errors="replace") as f:
        return f.read()
