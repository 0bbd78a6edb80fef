"""What the suite's tests share across pytest-xdist's workers (``make test`` runs it on
several, with ``--dist loadgroup``).

Each worker is a test session of its own, so a session fixture starts once per worker.
That is right for the servers that take a free port (support/servers.py), and wrong for
two kinds of fixture, whose tests therefore run in one xdist group (one worker):

- the Kubernetes clusters (tests/k8s's ``cluster``, tests/disaster's ``sites``): a cluster's
  name fixes its ports, pod addresses and state directory (scripts/cluster/controlplane/
  layout.py), so two workers starting the same one would stop each other's; and they are
  the suite's heaviest servers: one worker's at a time leaves the other's core to the rest.
  The tests that need only the build (``helm``) join them: on a machine without the build,
  the group's first test waits for it with the time ``give_build_time`` gave it, where a
  test on another worker would wait on the build's lock with its ordinary timeout;
- the Spark session (tests/spark's ``spark``): about 11 s and 1 GB to start, once is enough.
"""
from __future__ import annotations

import pytest

GROUP_OF_FIXTURE = {"cluster": "kubernetes", "sites": "kubernetes", "helm": "kubernetes", "spark": "spark"}


def xdist_groups(fixturenames) -> set[str]:
    """The groups a test belongs to, from every fixture it uses (directly or not)."""
    return {GROUP_OF_FIXTURE[name] for name in fixturenames if name in GROUP_OF_FIXTURE}


@pytest.hookimpl(tryfirst=True)     # before xdist's own hook reads the marks into the node ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        for group in sorted(xdist_groups(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.xdist_group(group))
