"""The servers of the disaster tests, all on loopback, started only when a test needs them
and stopped by PID at the end: one S3 server (moto), which the lease and fence tests use
alone, and for the failover tests two Kubernetes clusters side by side (dr-east, dr-west),
each with the chart's operator, joined by a link between their node namespaces, and a
password-protected Redis outside both. The partition test cuts east off from west and from
S3 with filter rules in east's node namespace (partition.py)."""
from __future__ import annotations

import pytest

from partition import Partition, SiteLink
from scenario import REDIS_PASSWORD, Site
from support.clusters import ensure_built, give_build_time
from support.servers import server_fixture, start_redis, start_s3


def pytest_collection_modifyitems(config, items):
    give_build_time(items, {"sites", "lone_site"})


s3_server = server_fixture("s3_server", start_s3, "moto S3 server", scope="session")


redis_server = server_fixture("redis_server", lambda: start_redis(password=REDIS_PASSWORD),
                              "redis-server with a password", scope="session")


@pytest.fixture(scope="session")
def sites(s3_server):
    """Both reach S3 through relays in their node namespaces; their pods reach each other's
    over the link."""
    ensure_built()
    pair = {"east": Site("east", s3_server.endpoint), "west": Site("west", s3_server.endpoint)}
    link = SiteLink(("east", pair["east"].cluster), ("west", pair["west"].cluster))
    try:
        for site in pair.values():
            site.up()
        link.add()
        for site in pair.values():
            site.after_up.append(link.ensure)      # a rebuilt site (whole-cluster loss) is linked again
        yield pair
    finally:
        link.remove()
        for site in pair.values():
            site.down()


@pytest.fixture
def east_partition(sites):
    """Cuts east off from west and from S3 when the test says; healed (its rules deleted)
    at the end whatever happened."""
    east, west = sites["east"], sites["west"]
    partition = Partition(east.cluster, west.cluster, east.s3_endpoint)
    try:
        yield partition
    finally:
        partition.heal()


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
