"""Containers from their images (``--images``): each container of a pod runs by
scripts/cluster/sandbox/runner.py in its image's root filesystem, as the image's user, in the
pod's network namespace (made by podnetwork.NamespaceNetwork, the same one host-rootfs pods
get in ``netns`` mode), with the pod's /etc/hosts, /etc/resolv.conf and /etc/hostname (as a
kubelet mounts them; the image's own /etc/hostname is the build machine's) from
/etc/netns/<pod namespace>/ mounted read-only (rewritten in place when Services change, so the mount follows)
and nothing else of the host inside but the volumes the node agent passes."""
from __future__ import annotations

import os
import shutil
from typing import Any

from sandbox import runner
from sandbox.bundle import Bundle
from sandbox.process import process_of

from .sandbox import Entry, Sandbox

POD_FILES = ("hosts", "resolv.conf", "hostname")


def bundles(manifest: dict[str, Any]) -> dict[str, Bundle]:
    """``make images``' manifest (``{"engine": {"bundle": DIR}, ...}``) by the repository a
    pod's image names (``segflow/engine``)."""
    return {f"segflow/{name}": Bundle(entry["bundle"]) for name, entry in manifest.items()}


def image_command(bundle: Bundle, pod: dict[str, Any], container: dict[str, Any], env: dict[str, str],
                  sandbox: Sandbox, directory: str,
                  volumes: tuple[runner.Volume, ...] = ()) -> tuple[list[str], dict[str, str], Entry]:
    """The host command and environment that run ``container`` of ``pod`` from ``bundle`` in
    the pod's ``sandbox``, its writable layer under ``directory`` (the pod's own), made anew
    so a restarted container starts from its image again; and how to enter it once it runs
    (exec probes)."""
    process = process_of(bundle.image(), container, env, bundle.read("/etc/passwd"), bundle.read("/etc/group"),
                         pod["spec"].get("securityContext") or {})
    files = tuple(runner.Volume(os.path.join("/etc/netns", sandbox.netns, name), f"/etc/{name}", read_only=True)
                  for name in POD_FILES)
    volumes = (*files, *volumes)
    layer = os.path.join(directory, "containers", container["name"])
    shutil.rmtree(layer, ignore_errors=True)
    layout, resolved = runner.prepare(bundle, layer, volumes)
    command = runner.command_line(bundle.rootfs, process, sandbox.netns, layout, sandbox.hostname, resolved)
    return command, process.env, Entry(layout.merged, process)
