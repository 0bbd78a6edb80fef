"""A real Kubernetes control plane for the end-to-end tests (tests/support/clusters.py).

Fixtures: ``cluster`` (a :class:`Cluster`: kubeconfig path, ``api`` client, kubectl/helm
helpers), ``kubeconfig`` (its path) and ``api_client`` (a ``kubernetes.client.ApiClient``
authenticated as the cluster's administrator); ``pod_s3_endpoint`` and ``pod_redis_url``: the
module's ``s3_server`` and ``redis_server`` as the cluster's pods reach them.
"""
from __future__ import annotations

import pytest
from kubernetes import client

from support.clusters import TEST_CLUSTER, Cluster, ensure_built, give_build_time, reachable_from_pods


def pytest_collection_modifyitems(config, items):
    give_build_time(items, {"cluster", "helm"})


def _started(cluster: Cluster):
    ensure_built()
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()


@pytest.fixture(scope="session")
def image_cluster():
    """The session's cluster whose pods run as SEGFLOW_TEST_PODS says (from the images by default)."""
    yield from _started(Cluster(TEST_CLUSTER))


@pytest.fixture(scope="session")
def host_files_cluster():
    """A cluster whose pods run from the host's filesystem (loopback mode), for the modules
    whose jobs are files of this checkout and write their output to the test's directories:
    pods from images would need volumes the node agent does not mount yet."""
    yield from _started(Cluster(f"{TEST_CLUSTER}-host", pod_network="loopback"))


@pytest.fixture(scope="module")
def cluster(request) -> Cluster:
    """``host_files_cluster`` for a module that sets ``JOBS_FROM_HOST_FILES = True``, else
    ``image_cluster``."""
    host_files = getattr(request.module, "JOBS_FROM_HOST_FILES", False)
    return request.getfixturevalue("host_files_cluster" if host_files else "image_cluster")


@pytest.fixture(scope="module")
def kubeconfig(cluster) -> str:
    return cluster.kubeconfig


@pytest.fixture(scope="module")
def api_client(cluster) -> client.ApiClient:
    return cluster.api


@pytest.fixture(scope="module")
def pod_s3_endpoint(cluster, s3_server):
    """The S3 server's endpoint as the pods reach it (support.clusters.reachable_from_pods)."""
    with reachable_from_pods(cluster, s3_server.endpoint) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def pod_redis_url(cluster, redis_server):
    with reachable_from_pods(cluster, redis_server.url) as url:
        yield url
