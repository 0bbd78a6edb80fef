"""A local Kubernetes control plane for tests and demos: etcd, kube-apiserver (TLS on
loopback, token auth, RBAC) and kube-controller-manager, plus our node agent that stands
in for the kubelet and the scheduler.

    python scripts/cluster/cluster.py up [NAME]      # prints the kubeconfig path last
    python scripts/cluster/cluster.py down [NAME]

Each named cluster has its own ports, pod addresses (127.<20+index>.0.0/16) and state
directory (~/.cache/segflow/clusters/NAME), so several run side by side. Every process
started is recorded by PID and stopped by ``down``.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOME_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "segflow")
BIN = os.environ.get("SEGFLOW_K8S_BIN", os.path.join(HOME_CACHE, "k8s", "1.20.2", "bin"))
CLUSTERS = os.path.join(HOME_CACHE, "clusters")
SERVICE_RANGE = "10.0.0.0/24"
READY_TIMEOUT = 60.0


class ClusterError(RuntimeError):
    """The cluster could not start; the message says which part and where its log is."""


@dataclass(frozen=True)
class Layout:
    """Where a named cluster keeps its files and which ports it uses."""
    name: str
    index: int

    @property
    def home(self) -> str:
        return os.path.join(CLUSTERS, self.name)

    def path(self, *parts: str) -> str:
        return os.path.join(self.home, *parts)

    @property
    def base_port(self) -> int:
        return 16000 + 100 * self.index

    @property
    def etcd_port(self) -> int:
        return self.base_port + 1

    @property
    def etcd_peer_port(self) -> int:
        return self.base_port + 2

    @property
    def api_port(self) -> int:
        return self.base_port + 3

    @property
    def pod_network(self) -> str:
        return f"127.{20 + self.index}.0.0/16"

    @property
    def kubeconfig(self) -> str:
        return self.path("kubeconfig")

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"


def layout(name: str) -> Layout:
    """The cluster's index: ``local`` is 0; other names get the next free one, remembered."""
    os.makedirs(CLUSTERS, exist_ok=True)
    registry_path = os.path.join(CLUSTERS, "registry.json")
    registry = {"local": 0}
    if os.path.exists(registry_path):
        with open(registry_path) as f:
            registry.update(json.load(f))
    if name not in registry:
        registry[name] = max(registry.values()) + 1
        if registry[name] > 20:
            raise ClusterError("too many named clusters: remove ~/.cache/segflow/clusters/registry.json")
        with open(registry_path, "w") as f:
            json.dump(registry, f)
    return Layout(name, registry[name])


def say(message: str) -> None:
    print(f"cluster: {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ certificates
def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_certificates(c: Layout) -> None:
    """A CA, the API server's serving certificate and the service-account key pair."""
    pki = c.path("pki")
    if os.path.exists(os.path.join(pki, "apiserver.crt")):
        return
    os.makedirs(pki, exist_ok=True)
    ca_key, ca_crt = os.path.join(pki, "ca.key"), os.path.join(pki, "ca.crt")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca_crt,
             "-days", "3650", "-subj", f"/CN=segflow-{c.name}-ca")
    extensions = os.path.join(pki, "san.ext")
    with open(extensions, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,"
                "DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
                "extendedKeyUsage=serverAuth\n")
    key, csr, crt = (os.path.join(pki, f"apiserver.{e}") for e in ("key", "csr", "crt"))
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=kube-apiserver")
    _openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial", "-out", crt,
             "-days", "3650", "-extfile", extensions)
    _openssl("genrsa", "-out", os.path.join(pki, "sa.key"), "2048")
    _openssl("rsa", "-in", os.path.join(pki, "sa.key"), "-pubout", "-out", os.path.join(pki, "sa.pub"))


def make_tokens(c: Layout) -> dict[str, str]:
    """Static tokens: an administrator (tests, kubectl, the node agent, which stands in
    for kubelet and scheduler) and the controller manager's own identity."""
    path = c.path("pki", "tokens.csv")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(f'{secrets.token_hex(16)},admin,admin,"system:masters"\n')
            f.write(f"{secrets.token_hex(16)},system:kube-controller-manager,controller-manager\n")
    with open(path) as f:
        rows = [line.split(",") for line in f.read().splitlines()]
    return {row[1]: row[0] for row in rows}


def write_kubeconfig(c: Layout, path: str, user: str, token: str) -> None:
    with open(c.path("pki", "ca.crt"), "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": c.name,
        "clusters": [{"name": c.name, "cluster": {"server": c.server, "certificate-authority-data": ca}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": c.name, "context": {"cluster": c.name, "user": user, "namespace": "default"}}],
    }
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    os.chmod(path, 0o600)


# ------------------------------------------------------------------ processes
def start(c: Layout, name: str, command: list[str], env: dict | None = None) -> int:
    log = open(c.path("logs", f"{name}.log"), "ab")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               cwd=ROOT, env={**os.environ, **(env or {})}, start_new_session=True)
    with open(c.path("pids", name), "w") as f:
        f.write(str(process.pid))
    return process.pid


def running(c: Layout) -> dict[str, int]:
    """Recorded processes that are still alive."""
    alive = {}
    directory = c.path("pids")
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        with open(os.path.join(directory, name)) as f:
            pid = int(f.read().strip() or 0)
        try:
            os.kill(pid, 0)
            alive[name] = pid
        except (ProcessLookupError, PermissionError):
            os.remove(os.path.join(directory, name))
    return alive


def _check_alive(c: Layout, name: str) -> None:
    if name not in running(c):
        with open(c.path("logs", f"{name}.log"), "rb") as f:
            tail = f.read()[-1500:].decode(errors="replace")
        raise ClusterError(f"{name} exited while starting; the end of {c.path('logs', name + '.log')}:\n{tail}")


def _wait(c: Layout, what: str, ready, watch: str) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        _check_alive(c, watch)
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise ClusterError(f"{what} not ready after {READY_TIMEOUT:.0f} s; see {c.path('logs', watch + '.log')}")


def _api_get(c: Layout, token: str, path: str) -> tuple[int, str]:
    context = ssl.create_default_context(cafile=c.path("pki", "ca.crt"))
    request = urllib.request.Request(c.server + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, context=context, timeout=2) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def up(c: Layout) -> str:
    started = time.monotonic()
    for tool in ("kube-apiserver", "kube-controller-manager"):
        if not os.access(os.path.join(BIN, tool), os.X_OK):
            raise ClusterError(f"{tool} is not built: run scripts/cluster/build.sh (or make cluster-up)")
    if running(c):
        say(f"{c.name} is running already")
        return c.kubeconfig
    for directory in ("logs", "pids", "etcd", "pods"):
        os.makedirs(c.path(directory), exist_ok=True)
    make_certificates(c)
    tokens = make_tokens(c)
    pki = c.path("pki")
    start(c, "etcd", ["etcd", "--name", "default", "--data-dir", c.path("etcd"),
                      "--listen-client-urls", f"http://127.0.0.1:{c.etcd_port}",
                      "--advertise-client-urls", f"http://127.0.0.1:{c.etcd_port}",
                      "--listen-peer-urls", f"http://127.0.0.1:{c.etcd_peer_port}",
                      "--initial-advertise-peer-urls", f"http://127.0.0.1:{c.etcd_peer_port}",
                      "--initial-cluster", f"default=http://127.0.0.1:{c.etcd_peer_port}",
                      "--log-level", "warn"])
    _wait(c, "etcd", lambda: urllib.request.urlopen(f"http://127.0.0.1:{c.etcd_port}/health", timeout=1).status == 200,
          "etcd")
    start(c, "kube-apiserver", [
        os.path.join(BIN, "kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{c.etcd_port}",
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={c.api_port}",
        "--insecure-port=0", f"--tls-cert-file={pki}/apiserver.crt", f"--tls-private-key-file={pki}/apiserver.key",
        f"--client-ca-file={pki}/ca.crt", f"--token-auth-file={pki}/tokens.csv", "--authorization-mode=Node,RBAC",
        f"--service-account-key-file={pki}/sa.pub", f"--service-account-signing-key-file={pki}/sa.key",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-cluster-ip-range={SERVICE_RANGE}", "--allow-privileged=true", "--v=0"])
    admin = tokens["admin"]
    _wait(c, "kube-apiserver", lambda: _api_get(c, admin, "/readyz")[0] == 200, "kube-apiserver")
    write_kubeconfig(c, c.kubeconfig, "admin", admin)
    manager_config = c.path("controller-manager.kubeconfig")
    write_kubeconfig(c, manager_config, "controller-manager", tokens["system:kube-controller-manager"])
    start(c, "kube-controller-manager", [
        os.path.join(BIN, "kube-controller-manager"), f"--kubeconfig={manager_config}",
        f"--authentication-kubeconfig={manager_config}", f"--authorization-kubeconfig={manager_config}",
        f"--service-account-private-key-file={pki}/sa.key", f"--root-ca-file={pki}/ca.crt",
        "--use-service-account-credentials=true", "--leader-elect=false", "--port=0", "--secure-port=0",
        "--controllers=*,-nodeipam,-nodelifecycle,-ttl,-bootstrapsigner,-tokencleaner",
        f"--service-cluster-ip-range={SERVICE_RANGE}", "--v=0"])
    start(c, "node-agent", [sys.executable, os.path.join(ROOT, "scripts", "cluster", "nodeagent"),
                            "--cluster", c.name, "--kubeconfig", c.kubeconfig, "--server", c.server,
                            "--ca", c.path("pki", "ca.crt"), "--pod-network", c.pod_network,
                            "--state", c.path("pods")])
    _wait(c, "the default service account",
          lambda: _api_get(c, admin, "/api/v1/namespaces/default/serviceaccounts/default")[0] == 200,
          "kube-controller-manager")
    _wait(c, "the node", lambda: '"status":"True"' in _api_get(c, admin, f"/api/v1/nodes/{c.name}-node")[1]
          .replace(" ", ""), "node-agent")
    say(f"{c.name} ready in {time.monotonic() - started:.1f} s: API server {c.server}, pods on {c.pod_network}")
    return c.kubeconfig


def down(c: Layout) -> None:
    """Stop in reverse order: the agent first (it stops the pods' processes)."""
    order = ["node-agent", "kube-controller-manager", "kube-apiserver", "etcd"]
    alive = running(c)
    for name in sorted(alive, key=lambda n: order.index(n) if n in order else -1):
        pid = alive[name]
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.killpg(pid, signal.SIGKILL)
        os.remove(c.path("pids", name))
    say(f"{c.name} stopped ({len(alive)} processes)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A local Kubernetes control plane.")
    parser.add_argument("action", choices=["up", "down", "kubeconfig"])
    parser.add_argument("name", nargs="?", default=os.environ.get("CLUSTER", "local"))
    parser.add_argument("--fresh", action="store_true",
                        help="with up: start empty (stopping the cluster first if it runs)")
    args = parser.parse_args(argv)
    c = layout(args.name)
    try:
        if args.action == "up":
            if args.fresh:          # a cluster left running (an interrupted test run) is restarted empty
                if running(c):
                    down(c)
                subprocess.run(["rm", "-rf", c.path("etcd"), c.path("pods")], check=True)
            print(up(c))
        elif args.action == "down":
            down(c)
        else:
            print(c.kubeconfig)
    except ClusterError as exc:
        say(str(exc))
        down(c)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
