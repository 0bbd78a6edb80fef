"""The servers of the disaster tests, all on loopback, started only when a test needs them
and stopped by PID at the end: one S3 server (moto), which the lease and fence tests use
alone, and for the failover tests two Kubernetes clusters side by side (dr-east, dr-west),
each with the chart's operator, and a password-protected Redis outside both. East reaches
S3 through a proxy the partition test cuts."""
from __future__ import annotations

import pytest

from scenario import REDIS_PASSWORD, Site
from support.clusters import ensure_built, give_build_time
from support.proxy import TcpProxy
from support.servers import server_fixture, start_redis, start_s3


def pytest_collection_modifyitems(config, items):
    give_build_time(items, {"sites", "lone_site"})


s3_server = server_fixture("s3_server", start_s3, "moto S3 server", scope="session")


redis_server = server_fixture("redis_server", lambda: start_redis(password=REDIS_PASSWORD),
                              "redis-server with a password", scope="session")


@pytest.fixture(scope="session")
def s3_proxy(s3_server):
    proxy = TcpProxy("127.0.0.1", s3_server.port)
    try:
        yield proxy
    finally:
        proxy.close()


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


@pytest.fixture(scope="module")
def lone_site(s3_server):
    """One cluster with no standby beside it: a fault in its own operator, with nobody to
    take the job over."""
    ensure_built()
    site = Site("lone", s3_server.endpoint)
    try:
        site.up()
        yield site
    finally:
        site.down()
