"""Two Kubernetes clusters side by side (dr-east, dr-west), each with the chart's operator,
and one S3 server (moto) and one password-protected Redis outside both, all on loopback
and started here; every process is stopped by PID at the end. East reaches S3 through a
proxy the partition test cuts."""
from __future__ import annotations

import glob
import os
import signal

import pytest

from support.clusters import Cluster, ensure_built, give_build_time
from support.proxy import TcpProxy
from support.servers import serving, start_redis, start_s3

PREFIX = os.environ.get("SEGFLOW_TEST_CLUSTER", "test")
NAMESPACE = "dr"
REDIS_PASSWORD = "redis-pw-7f3a9c51"        # values a test searches for everywhere the operator writes
S3_SECRET = "s3-secret-2b8e1d44"


def pytest_collection_modifyitems(config, items):
    give_build_time(items, {"sites"})


@pytest.fixture(scope="session")
def s3_server():
    yield from serving(start_s3, "moto S3 server")


@pytest.fixture(scope="session")
def redis_server():
    yield from serving(lambda: start_redis(password=REDIS_PASSWORD), "redis-server with a password")


@pytest.fixture(scope="session")
def s3_proxy(s3_server):
    proxy = TcpProxy("127.0.0.1", s3_server.port)
    try:
        yield proxy
    finally:
        proxy.close()


class Site:
    """One cluster of the pair, with the operator installed and the job namespace ready."""

    def __init__(self, name: str, s3_endpoint: str):
        self.name = name
        self.cluster = Cluster(f"{PREFIX}-dr-{name}")
        self.s3_endpoint = s3_endpoint

    def up(self) -> None:
        self.cluster.up()
        self.cluster.helm("install", "segflow", os.path.join(os.path.dirname(__file__), "..", "..", "charts",
                                                             "segflow"),
                          "--namespace", "segflow-system", "--create-namespace", "--wait", "--timeout", "90s")
        self.namespace()

    def namespace(self) -> None:
        """The job namespace and its Secrets (what a namespace deletion takes away)."""
        c = self.cluster
        c.kubectl("create", "namespace", NAMESPACE)
        c.kubectl("create", "secret", "generic", "segflow-s3", "-n", NAMESPACE,
                  "--from-literal=AWS_ACCESS_KEY_ID=segflow-dr", f"--from-literal=AWS_SECRET_ACCESS_KEY={S3_SECRET}")
        c.kubectl("create", "secret", "generic", "segflow-redis", "-n", NAMESPACE,
                  f"--from-literal=SEGFLOW_REDIS_PASSWORD={REDIS_PASSWORD}")

    def down(self) -> None:
        self.cluster.down()

    def kill(self) -> list[int]:
        """The datacenter is lost: SIGKILL every process of the cluster at once (control
        plane, node agent, and every pod's process group), with no chance to clean up."""
        pids = list(self.cluster.pids().values())
        groups = []
        for path in glob.glob(os.path.join(self.cluster.pods_dir(), "*", "*.pid")):
            with open(path) as f:
                groups.append(int(f.read().split()[0]))
        for pid in pids:
            _kill(lambda: os.kill(pid, signal.SIGKILL))
        for pid in groups:
            _kill(lambda: os.killpg(pid, signal.SIGKILL))
        return pids + groups

    def rebuild(self) -> None:
        """A new cluster where the lost one was (its processes' leftovers stopped first)."""
        self.down()
        self.up()


def _kill(send) -> None:
    try:
        send()
    except ProcessLookupError:
        pass


@pytest.fixture(scope="session")
def sites(s3_server, s3_proxy):
    """East reaches S3 through the proxy, west directly."""
    ensure_built()
    pair = {"east": Site("east", s3_proxy.endpoint), "west": Site("west", s3_server.endpoint)}
    try:
        for site in pair.values():
            site.up()
        yield pair
    finally:
        for site in pair.values():
            site.down()
