"""Start and stop one named cluster: etcd, kube-apiserver, kube-controller-manager and the
node agent, in that order, each waited for before the next; stopped in reverse order.

Everything listens on loopback only: etcd and the API server on the cluster's own ports
(see layout.py), the controller manager on none (its serving ports are off).
"""
from __future__ import annotations

import ipaddress
import json
import os
import shutil
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable

from nodeagent.netns import delete_recorded

from . import host_routes, pki, processes
from .layout import BIN, Layout

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(SCRIPTS))
PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
ISSUER = "https://kubernetes.default.svc.cluster.local"
STARTUP_TIMEOUT = 60.0
POD_NETWORK_MODES = ("loopback", "netns")
STOP_ORDER = ("node-agent", "kube-controller-manager", "kube-apiserver", "etcd")
# nodeipam needs a cluster CIDR, nodelifecycle would taint the node whenever the agent is
# slow to heartbeat and evict its pods, and the others need a cloud provider.
DISABLED_CONTROLLERS = ("nodeipam", "nodelifecycle", "cloud-node-lifecycle", "route", "service")


class ClusterError(RuntimeError):
    """The cluster could not start or stop; the message names the component and its log."""


def say(message: str) -> None:
    print(f"cluster: {message}", file=sys.stderr, flush=True)


def _tail(path: str, size: int = 2000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - size))
            return f.read().decode(errors="replace")
    except OSError:
        return "(no log)"


class _Api:
    """Minimal HTTPS GETs against the API server with the admin token (no client library
    here: the control plane must come up before anything else is importable from it)."""

    def __init__(self, c: Layout, token: str):
        self.server = c.server
        self.token = token
        self.context = ssl.create_default_context(cafile=c.path("pki", "ca.crt"))

    def status(self, path: str) -> tuple[int, str]:
        request = urllib.request.Request(self.server + path, headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=2) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, ""
        except (OSError, ssl.SSLError):
            return 0, ""

    def node_ready(self, name: str) -> bool:
        code, body = self.status(f"/api/v1/nodes/{name}")
        conditions = json.loads(body).get("status", {}).get("conditions", []) if code == 200 else []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _wait(c: Layout, what: str, component: str, ready: Callable[[], bool], deadline: float) -> None:
    """Poll ``ready`` until it holds; fail early if ``component`` died, with its log's end."""
    while time.monotonic() < deadline:
        if component not in processes.recorded(c):
            log = c.path("logs", f"{component}.log")
            raise ClusterError(f"{component} exited while starting; the end of {log}:\n{_tail(log)}")
        if ready():
            return
        time.sleep(0.1)
    raise ClusterError(f"timed out waiting for {what}; see {c.path('logs', component + '.log')}")


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as reply:
            return reply.status == 200
    except OSError:
        return False


def _etcd(c: Layout) -> list[str]:
    peer, client = f"http://127.0.0.1:{c.etcd_peer_port}", f"http://127.0.0.1:{c.etcd_port}"
    return ["etcd", "--name", "default", "--data-dir", c.path("etcd"), "--listen-client-urls", client,
            "--advertise-client-urls", client, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"default={peer}", "--log-level", "warn"]


def _apiserver(c: Layout) -> list[str]:
    pki_dir = c.path("pki")
    return [os.path.join(BIN, "kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{c.etcd_port}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={c.api_port}",
            "--insecure-port=0", f"--tls-cert-file={pki_dir}/apiserver.crt",
            f"--tls-private-key-file={pki_dir}/apiserver.key", f"--client-ca-file={pki_dir}/ca.crt",
            f"--token-auth-file={pki_dir}/tokens.csv", "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction,ServiceAccount",
            f"--service-account-key-file={pki_dir}/sa.pub", f"--service-account-signing-key-file={pki_dir}/sa.key",
            f"--service-account-issuer={ISSUER}", f"--service-cluster-ip-range={c.service_network}",
            "--allow-privileged=true", "--profiling=false", "--v=0",
            # kubectl logs: proxied to the node agent's kubelet API at the node's InternalIP
            # (its Hostname does not resolve), both sides with certificates of the cluster CA.
            f"--kubelet-client-certificate={pki_dir}/apiserver-kubelet-client.crt",
            f"--kubelet-client-key={pki_dir}/apiserver-kubelet-client.key",
            f"--kubelet-certificate-authority={pki_dir}/ca.crt", "--kubelet-preferred-address-types=InternalIP",
            # The `kubernetes` service cannot have loopback endpoints; pods reach the API
            # server through KUBERNETES_SERVICE_HOST=127.0.0.1 instead.
            "--endpoint-reconciler-type=none"]


def _controller_manager(c: Layout, kubeconfig: str) -> list[str]:
    pki_dir = c.path("pki")
    return [os.path.join(BIN, "kube-controller-manager"), f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
            f"--service-account-private-key-file={pki_dir}/sa.key", f"--root-ca-file={pki_dir}/ca.crt",
            f"--cluster-signing-cert-file={pki_dir}/ca.crt", f"--cluster-signing-key-file={pki_dir}/ca.key",
            "--use-service-account-credentials=true", "--leader-elect=false", "--port=0", "--secure-port=0",
            "--controllers=" + ",".join(["*"] + [f"-{name}" for name in DISABLED_CONTROLLERS]),
            f"--service-cluster-ip-range={c.service_network}", "--profiling=false", "--v=0"]


def pod_network_mode(images: str) -> str:
    """SEGFLOW_POD_NETWORK: ``loopback`` (default) or ``netns`` (nodeagent/podnetwork.py).
    Pods from images (``images``, a `make images` manifest) always get the netns network."""
    mode = "netns" if images else os.environ.get("SEGFLOW_POD_NETWORK") or "loopback"
    if mode not in POD_NETWORK_MODES:
        raise ClusterError(f"SEGFLOW_POD_NETWORK={mode!r}: use one of {', '.join(POD_NETWORK_MODES)}")
    if mode == "netns" and os.geteuid() != 0:
        raise ClusterError("the netns pod network (and pods from images) creates network namespaces, which needs "
                           "root: run as root, or use SEGFLOW_POD_NETWORK=loopback without images")
    return mode


def pod_network(c: Layout, mode: str) -> str:
    return c.private_pod_network if mode == "netns" else c.pod_network


def _node_agent(c: Layout, kubeconfig: str, mode: str, images: str) -> list[str]:
    command = [PYTHON, "-m", "nodeagent", "--cluster", c.name, "--kubeconfig", kubeconfig, "--server", c.server,
               "--ca", c.path("pki", "ca.crt"), "--pod-network", pod_network(c, mode), "--state", c.path("pods"),
               "--workdir", ROOT, "--pod-network-mode", mode, "--kubelet-port", str(c.kubelet_port),
               "--kubelet-cert", c.path("pki", "kubelet.crt"), "--kubelet-key", c.path("pki", "kubelet.key")]
    if mode == "netns":
        command += ["--service-ip", c.first_service_ip, "--netns-records", c.path("netns")]
    if images:
        command += ["--images", images]
    return command


def _gateway(c: Layout) -> str:
    """The node bridge's address in netns mode (nodeagent/netplan.py): pods route through it."""
    return str(ipaddress.ip_network(c.private_pod_network).network_address + 1)


def _describe(c: Layout, mode: str, images: str) -> None:
    """cluster.json: where the cluster listens and which addresses its pods get, for
    tools and tests that need more than the kubeconfig."""
    with open(c.path("cluster.json"), "w") as f:
        json.dump({"name": c.name, "server": c.server, "kubeconfig": c.kubeconfig, "node": f"{c.name}-node",
                   "podNetworkMode": mode, "podNetwork": pod_network(c, mode), "serviceNetwork": c.service_network,
                   "images": images, "nodeNamespace": f"{c.name}-node" if mode == "netns" else "",
                   "podApiServer": f"https://{c.first_service_ip}:443" if mode == "netns" else c.server,
                   "podGateway": _gateway(c) if mode == "netns" else "",
                   "etcd": f"http://127.0.0.1:{c.etcd_port}", "logs": c.path("logs"), "pods": c.path("pods")},
                  f, indent=1)


def up(c: Layout, fresh: bool = False, images: str = "") -> str:
    """Start the cluster (or find it running) and return its admin kubeconfig's path.
    ``fresh`` forgets the stored objects and pod files of a stopped cluster first;
    ``images``, a `make images` manifest, has the node agent run pods from those images."""
    for tool in ("kube-apiserver", "kube-controller-manager"):
        if not os.access(os.path.join(BIN, tool), os.X_OK):
            raise ClusterError(f"{os.path.join(BIN, tool)} is missing: run scripts/cluster/build.sh")
    if not os.access(PYTHON, os.X_OK):
        raise ClusterError(f"{PYTHON} is missing: run `make setup` first")
    running = processes.recorded(c)
    if running:
        if set(running) != set(STOP_ORDER):
            raise ClusterError(f"{c.name} is partly running ({', '.join(sorted(running))}): "
                               f"run scripts/cluster/down.sh first")
        say(f"{c.name} is already running (API server {c.server})" + (": --fresh ignored" if fresh else ""))
        return c.kubeconfig
    mode = pod_network_mode(images)
    guarded = host_routes.guard(c)
    say(f"host routes: {', '.join(guarded)} unreachable from the host" if guarded else
        "host routes: not root, so the cluster's private ranges are not guarded from host processes")
    started = time.monotonic()
    deadline = started + STARTUP_TIMEOUT
    leftovers = processes.kill_leftover_pods(c)
    if leftovers:
        say(f"killed {len(leftovers)} pod processes left behind by an earlier node agent: {leftovers}")
    if fresh:
        for directory in ("etcd", "pods"):
            shutil.rmtree(c.path(directory), ignore_errors=True)
    for directory in ("logs", "pids", "etcd", "pods"):
        os.makedirs(c.path(directory), mode=0o700, exist_ok=True)
    pki.make_certificates(c)
    tokens = pki.make_tokens(c)
    ca = c.path("pki", "ca.crt")

    say(f"starting etcd on 127.0.0.1:{c.etcd_port}")
    processes.start(c, "etcd", _etcd(c), cwd=c.home)
    _wait(c, "etcd", "etcd", lambda: _http_ok(f"http://127.0.0.1:{c.etcd_port}/health"), deadline)

    say(f"starting kube-apiserver on {c.server}")
    processes.start(c, "kube-apiserver", _apiserver(c), cwd=c.home)
    api = _Api(c, tokens["admin"])
    _wait(c, "the API server's /readyz", "kube-apiserver", lambda: api.status("/readyz")[0] == 200, deadline)
    pki.write_kubeconfig(c.kubeconfig, c.server, ca, "admin", tokens["admin"], context=c.name)
    _describe(c, mode, images)

    say("starting kube-controller-manager")
    manager = pki.write_kubeconfig(c.path("controller-manager.kubeconfig"), c.server, ca,
                                   "system:kube-controller-manager", tokens["system:kube-controller-manager"])
    processes.start(c, "kube-controller-manager", _controller_manager(c, manager), cwd=c.home)

    pods_from = " from images" if images else ""
    say(f"starting the node agent (node {c.name}-node, pod network {mode}: {pod_network(c, mode)}{pods_from})")
    agent = pki.write_kubeconfig(c.path("node-agent.kubeconfig"), c.server, ca, "segflow-node-agent",
                                 tokens["segflow-node-agent"])
    processes.start(c, "node-agent", _node_agent(c, agent, mode, images), cwd=ROOT, env={"PYTHONPATH": SCRIPTS})

    _wait(c, "the default service account", "kube-controller-manager",
          lambda: api.status("/api/v1/namespaces/default/serviceaccounts/default")[0] == 200, deadline)
    _wait(c, "the node to be Ready", "node-agent", lambda: api.node_ready(f"{c.name}-node"), deadline)
    say(f"{c.name} is ready in {time.monotonic() - started:.1f} s: API server {c.server}, node {c.name}-node "
        f"(InternalIP 127.0.0.1), pods{pods_from} on {pod_network(c, mode)}"
        + (f" in network namespaces behind node namespace {c.name}-node (gateway {_gateway(c)}), "
           f"API server for pods at "
           f"https://{c.first_service_ip}:443" if mode == "netns" else " (loopback)")
        + f", services on {c.service_network}")
    return c.kubeconfig


def down(c: Layout) -> int:
    """Stop every recorded process, the node agent first (it stops the pods' processes).
    Returns how many processes were stopped."""
    running = processes.recorded(c)
    for name in sorted(running, key=lambda n: STOP_ORDER.index(n) if n in STOP_ORDER else -1):
        if processes.stop(running[name], grace=20.0 if name == "node-agent" else 10.0):
            say(f"{name} (pid {running[name]}) did not stop on SIGTERM: killed")
        os.remove(c.path("pids", name))
    leftovers = processes.kill_leftover_pods(c)
    if leftovers:
        say(f"killed {len(leftovers)} pod processes the node agent left behind: {leftovers}")
    namespaces = delete_recorded(c.path("netns"))
    if namespaces:
        say(f"deleted {len(namespaces)} network namespaces the node agent left behind: {namespaces}")
    host_routes.unguard(c)
    say(f"{c.name} stopped ({len(running)} processes)" if running else f"{c.name} was not running")
    return len(running)
