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


@pytest.fixture(scope="session")
def cluster():
    """The session's cluster, whose pods run as SEGFLOW_TEST_PODS says (from the images by
    default): every module's, the jobs' files reaching the pods as on a user's cluster
    (support.jobfiles)."""
    ensure_built()
    started = Cluster(TEST_CLUSTER)
    try:
        started.up()
        yield started
    finally:
        started.down()


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
