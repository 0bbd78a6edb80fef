"""Local Kubernetes clusters for the end-to-end tests (scripts/cluster): built once (cached
outside the repo; a missing build is built here, never skipped), each started fresh under
its own name by scripts/cluster/up.sh and stopped by PID by scripts/cluster/down.sh; the
chart's operator installed into one. Used by tests/k8s and tests/disaster.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator

from kubernetes import client, config

from support.containers import BUILD_TIMEOUT as IMAGES_BUILD_TIMEOUT
from support.containers import build_images
from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent.netns import enter  # noqa: E402
from nodeagent.relay import Relay  # noqa: E402

CLUSTER_SCRIPTS = os.path.join(ROOT, "scripts", "cluster")
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "segflow")
BINARIES = os.path.join(CACHE, "k8s", "1.20.2", "bin")
HELM = os.path.join(ROOT, ".venv", "bin", "helm")
TEST_CLUSTER = os.environ.get("SEGFLOW_TEST_CLUSTER", "test")   # another name: a second checkout's own cluster
# Where the test clusters' pods come from: ``images`` (the default, and CI's) runs them from
# the images of images/ in network namespaces of their own, as a user's cluster would;
# ``loopback`` (a fast mode for local development) runs their commands as host processes
# with the host's virtualenv, each on a 127.x address. tests/README.md says when to use which.
POD_SOURCES = ("images", "loopback")
TEST_PODS = os.environ.get("SEGFLOW_TEST_PODS", "images")
BUILD_TIMEOUT = 3600          # the first build compiles Kubernetes: about 10 minutes on 2 cores
UP_TIMEOUT = 180


def give_build_time(items, fixtures: set[str]) -> None:
    """The first test that needs the build (one of ``fixtures``) may have to wait for it,
    and, with pods from images, for the images' (rebuilt whenever their inputs changed, and
    behind the build lock of another checkout's build): give it the time (a
    pytest_collection_modifyitems hook's body)."""
    import pytest
    needed = (0 if built() else BUILD_TIMEOUT) + (IMAGES_BUILD_TIMEOUT if pods_from_images() else 0)
    if not needed:
        return
    for item in items:
        if fixtures & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.timeout(needed + UP_TIMEOUT + 300))
            return


class ClusterFailed(RuntimeError):
    """up.sh or down.sh failed; the message carries their output."""


class UnknownPodSource(ValueError):
    """SEGFLOW_TEST_PODS names neither of POD_SOURCES."""


def pods_from_images() -> bool:
    """Whether the test clusters run their pods from the images (SEGFLOW_TEST_PODS)."""
    if TEST_PODS not in POD_SOURCES:
        raise UnknownPodSource(f"SEGFLOW_TEST_PODS={TEST_PODS!r}: use one of {', '.join(POD_SOURCES)} "
                               f"(images: pods from images/, as CI runs them; loopback: host processes, faster)")
    return TEST_PODS == "images"


def images_manifest() -> str:
    """The images' manifest for ``up.sh --images``, built or found in scripts/images/build.sh's
    cache (about a second when nothing changed)."""
    path = os.path.join(CACHE, "clusters", f"{TEST_CLUSTER}-images.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    build_images(path)
    return path


def built() -> bool:
    return all(os.access(os.path.join(BINARIES, tool), os.X_OK)
               for tool in ("kube-apiserver", "kube-controller-manager")) and os.access(HELM, os.X_OK)


def ensure_built() -> None:
    """Build kube-apiserver, kube-controller-manager and helm if they are missing (slow once)."""
    if not built():
        subprocess.run([os.path.join(CLUSTER_SCRIPTS, "build.sh")], cwd=ROOT, check=True, timeout=BUILD_TIMEOUT)


class Cluster:
    """One named cluster started by scripts/cluster/up.sh; ``pod_network`` ("loopback" or
    "netns") overrides SEGFLOW_POD_NETWORK for it. Unless told ``pod_network``, its pods run
    from the images when SEGFLOW_TEST_PODS says so (``pods_from_images``)."""

    def __init__(self, name: str, pod_network: str = ""):
        self.name, self.pod_network = name, pod_network
        self.kubeconfig = ""
        self.api: client.ApiClient | None = None

    @property
    def home(self) -> str:
        return os.path.join(CACHE, "clusters", self.name)

    def _script(self, script: str, *args: str, timeout: float) -> subprocess.CompletedProcess:
        result = subprocess.run([os.path.join(CLUSTER_SCRIPTS, script), *args], cwd=ROOT, capture_output=True,
                                text=True, timeout=timeout, env={**os.environ, "CLUSTER": self.name,
                                                                 **self._network_env()})
        if result.returncode != 0:
            raise ClusterFailed(f"{script} {self.name} failed ({result.returncode}):\n{result.stderr[-4000:]}")
        return result

    def up(self, *options: str) -> None:
        """Start the cluster with a clean state (stopping first what an interrupted session
        left); ``options`` go to up.sh (``--images MANIFEST``)."""
        self.down()
        if not self.pod_network and "--images" not in options and pods_from_images():
            options = (*options, "--images", images_manifest())
        result = self._script("up.sh", "--fresh", *options, timeout=BUILD_TIMEOUT + UP_TIMEOUT)
        self.kubeconfig = result.stdout.strip().splitlines()[-1]
        self.api = config.new_client_from_config(self.kubeconfig)

    def _network_env(self) -> dict[str, str]:
        return {"SEGFLOW_POD_NETWORK": self.pod_network} if self.pod_network else {}

    def down(self) -> None:
        if self.api is not None:
            self.api.close()
            self.api = None
        self._script("down.sh", timeout=120)

    def info(self) -> dict:
        """The cluster's description written by up.sh (server, podNetwork, serviceNetwork, ...)."""
        with open(os.path.join(self.home, "cluster.json")) as f:
            return json.load(f)

    def node_prefix(self) -> list[str]:
        """The command prefix that runs a command where pod IPs are reachable: in the node's
        network namespace (``netns`` mode), else nothing (on the host)."""
        namespace = self.info().get("nodeNamespace")
        return ["ip", "netns", "exec", namespace] if namespace else []

    def node_env(self) -> dict:
        """The environment of a client run with ``node_prefix``: its KUBECONFIG (admin)
        reaches the API server from there (netns mode: the relay at the kubernetes Service's
        cluster IP, as the pods do)."""
        with open(self.kubeconfig) as f:
            config_ = json.load(f)
        config_["clusters"][0]["cluster"]["server"] = self.info()["podApiServer"]
        path = os.path.join(self.home, "node.kubeconfig")
        with open(path + ".tmp", "w") as f:
            json.dump(config_, f)
        os.chmod(path + ".tmp", 0o600)
        os.replace(path + ".tmp", path)
        return {**os.environ, "KUBECONFIG": path}

    def enter_node(self) -> None:
        """Move the calling thread (for good) to where pod IPs are reachable: for threads
        that only talk to pods or to processes started with ``node_prefix``."""
        namespace = self.info().get("nodeNamespace")
        if namespace:
            enter(namespace)

    def in_node(self, *command: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """Run ``command`` where pod IPs are reachable (see ``node_prefix``)."""
        return subprocess.run([*self.node_prefix(), *command], capture_output=True, text=True, timeout=timeout)

    def http_get(self, url: str, timeout: float = 5) -> tuple[int, str]:
        """(status, body) of a GET from where pod IPs are reachable (see ``in_node``); status
        0 when nothing answered."""
        script = ("import sys, urllib.request\n"
                  "try:\n    r = urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2]))\n"
                  "    print(r.status); sys.stdout.write(r.read().decode())\n"
                  "except OSError as e:\n    print(getattr(e, 'code', 0) or 0)\n")
        result = self.in_node(sys.executable, "-c", script, url, str(timeout), timeout=timeout + 10)
        status, _, body = result.stdout.partition("\n")
        return int(status or 0), body

    def pids(self) -> dict[str, int]:
        """The control plane's processes, as recorded by up.sh."""
        directory = os.path.join(self.home, "pids")
        found = {}
        for name in os.listdir(directory) if os.path.isdir(directory) else []:
            with open(os.path.join(directory, name)) as f:
                found[name] = int(f.read().split()[0])
        return found

    def env(self) -> dict:
        return {**os.environ, "KUBECONFIG": self.kubeconfig}

    def kubectl(self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60):
        result = subprocess.run(["kubectl", *args], env=self.env(), capture_output=True, text=True,
                                input=input, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result

    def get(self, *args: str) -> dict:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def helm(self, *args: str, check: bool = True):
        result = subprocess.run([HELM, *args], env=self.env(), capture_output=True, text=True, timeout=120)
        if check and result.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed: {result.stderr}")
        return result

    def pods_dir(self) -> str:
        """Where the node agent keeps each pod's container logs and kubeconfig."""
        return os.path.join(self.home, "pods")


def wait_for(condition, timeout: float, what: str, interval: float = 0.2):
    """Poll ``condition`` until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = condition()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


@contextlib.contextmanager
def reachable_from_pods(cluster: Cluster, url: str) -> Iterator[str]:
    """``url`` of a server on the host's loopback as the cluster's pods reach it: the same in
    ``loopback`` mode; in ``netns`` mode (where a pod's 127.0.0.1 is its own) the node's
    gateway address, where a relay in the node namespace forwards to the host's loopback
    port for as long as the block runs."""
    gateway = cluster.info().get("podGateway")
    if not gateway:
        yield url
        return
    parts = urllib.parse.urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}[parts.scheme]
    relay = Relay(cluster.info()["nodeNamespace"], (gateway, port), (parts.hostname or "127.0.0.1", port))
    relay.start()
    try:
        yield urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.replace(parts.hostname or "", gateway, 1)))
    finally:
        relay.stop()


def local_chart_values(s3_endpoints) -> list[str]:
    """helm arguments for the local clusters: job pods bind their metrics to their pod IP
    (in a loopback-mode cluster every pod is in the machine's network namespace, each on its
    own loopback address, so 0.0.0.0:9400 would be one port for all), and StreamJobs may
    name these S3 endpoints."""
    allowed = ["--set", f"allowedS3Endpoints={{{','.join(s3_endpoints)}}}"] if s3_endpoints else []
    return ["--set", "jobMetricsHost=", *allowed]


@contextlib.contextmanager
def installed_operator(cluster: Cluster, namespace: str, s3_endpoints: tuple[str, ...] = (),
                       extra: tuple[str, ...] = ()):
    """The chart's operator installed in segflow-system (allowing StreamJobs to name
    ``s3_endpoints``; ``extra`` helm arguments) and ``namespace`` created for a module's
    StreamJobs; both removed at the end (each module its own namespace, so that one
    module's namespace, still terminating, never stops the next one's creation)."""
    root = os.path.dirname(os.path.dirname(CLUSTER_SCRIPTS))
    cluster.helm("install", "segflow", os.path.join(root, "charts", "segflow"), "--namespace", "segflow-system",
                 "--create-namespace", "--wait", "--timeout", "90s", *local_chart_values(s3_endpoints), *extra)
    cluster.kubectl("create", "namespace", namespace)
    try:
        yield cluster
    finally:
        cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
        cluster.helm("uninstall", "segflow", "--namespace", "segflow-system", "--wait", check=False)
