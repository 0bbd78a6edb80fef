"""A real Kubernetes control plane for the end-to-end tests (scripts/cluster): built once
(cached outside the repo), started for the session under its own name, stopped by PID at
the end. A missing build is built, never skipped."""
import json
import os
import subprocess
import sys
import time

import pytest

from support.processes import ROOT

CLUSTER_SCRIPT = os.path.join(ROOT, "scripts", "cluster", "cluster.py")
HELM = os.path.join(ROOT, ".venv", "bin", "helm")


class Cluster:
    def __init__(self, name: str):
        self.name = name
        self.kubeconfig = ""

    def up(self) -> None:
        result = subprocess.run([sys.executable, CLUSTER_SCRIPT, "up", self.name, "--fresh"], cwd=ROOT,
                                capture_output=True, text=True, timeout=180)
        if result.returncode != 0:
            raise RuntimeError(f"cluster {self.name} did not start:\n{result.stderr[-3000:]}")
        self.kubeconfig = result.stdout.strip().splitlines()[-1]

    def down(self) -> None:
        subprocess.run([sys.executable, CLUSTER_SCRIPT, "down", self.name], cwd=ROOT, capture_output=True,
                       timeout=120)

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
        return os.path.join(os.path.expanduser("~"), ".cache", "segflow", "clusters", self.name, "pods")


def ensure_built() -> None:
    binaries = os.path.join(os.path.expanduser("~"), ".cache", "segflow", "k8s", "1.20.2", "bin")
    if not (os.path.exists(os.path.join(binaries, "kube-apiserver")) and os.path.exists(HELM)):
        subprocess.run([os.path.join(ROOT, "scripts", "cluster", "build.sh")], cwd=ROOT, check=True, timeout=3600)


@pytest.fixture(scope="session")
def cluster():
    ensure_built()
    c = Cluster("pytest")
    try:
        c.up()
        yield c
    finally:
        c.down()


def wait_for(condition, timeout: float, what: str, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = condition()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")
