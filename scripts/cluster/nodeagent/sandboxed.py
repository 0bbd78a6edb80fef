"""A pod's sandbox when the node agent runs pods from their images (``--images``): a
network namespace of the pod's own on the node's bridge with the pod IP, ``/etc/hosts``
and the hostname of the pod, and each container run by scripts/cluster/sandbox from its
image's bundle, as the image's user, with nothing of the host inside."""
from __future__ import annotations

import os
import shutil
from typing import Any

from sandbox import runner
from sandbox.bundle import Bundle
from sandbox.netns import NetworkNamespace
from sandbox.network import NodeNetwork
from sandbox.process import process_of


def bundles(manifest: dict[str, Any]) -> dict[str, Bundle]:
    """``make images``' manifest (``{"engine": {"bundle": DIR}, ...}``) by the repository a
    pod's image names (``segflow/engine``)."""
    return {f"segflow/{name}": Bundle(entry["bundle"]) for name, entry in manifest.items()}


def hosts_file(pod_ip: str, hostname: str) -> str:
    """The pod's /etc/hosts, as the kubelet writes it."""
    return (f"# Kubernetes-managed hosts file (segflow node agent).\n127.0.0.1\tlocalhost\n"
            f"::1\tlocalhost ip6-localhost ip6-loopback\n{pod_ip}\t{hostname}\n")


class PodSandbox:
    """Made when the pod is admitted; :meth:`close` deletes its namespace once its
    containers are gone."""

    def __init__(self, network: NodeNetwork, cluster: str, body: dict[str, Any], ip: str, directory: str):
        meta = body["metadata"]
        self.body, self.ip, self.directory = body, ip, directory
        self.hostname = (body["spec"].get("hostname") or meta["name"])[:63]
        self.hosts = os.path.join(directory, "etc-hosts")
        with open(self.hosts, "w") as f:
            f.write(hosts_file(ip, self.hostname))
        self.netns = NetworkNamespace(f"segflow-cluster-{cluster}.{meta['uid'][:8]}")
        self.netns.__enter__()
        try:
            network.attach(self.netns.name, ip)
        except BaseException:
            self.close()
            raise

    def command(self, bundle: Bundle, container: dict[str, Any], env: dict[str, str],
                volumes: tuple[runner.Volume, ...] = ()) -> tuple[list[str], dict[str, str]]:
        """The host command and environment that run ``container`` in this pod, with the
        pod's /etc/hosts and ``volumes`` mounted."""
        process = process_of(bundle.image(), container, env, bundle.read("/etc/passwd"), bundle.read("/etc/group"),
                             self.body["spec"].get("securityContext") or {})
        volumes = (runner.Volume(self.hosts, "/etc/hosts", read_only=True), *volumes)
        layer = os.path.join(self.directory, "containers", container["name"])
        shutil.rmtree(layer, ignore_errors=True)        # a restarted container starts from its image again
        layout = runner.prepare(bundle, layer, volumes)
        return runner.command_line(bundle.rootfs, process, self.netns.name, layout, self.hostname, volumes), \
            process.env

    def close(self) -> None:
        self.netns.__exit__(None, None, None)
