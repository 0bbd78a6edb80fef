"""What the suite's tests share across pytest-xdist's workers (``make test`` runs it on
several, with ``--dist loadgroup``).

Each worker is a test session of its own, so a session fixture starts once per worker.
That is right for the servers that take a free port (support/servers.py), and wrong for
two kinds of fixture, whose tests therefore run in one group (on one worker):

- the Kubernetes clusters (tests/k8s's ``cluster``, tests/disaster's ``sites``): a cluster's
  name fixes its ports, pod addresses and state directory (scripts/cluster/controlplane/
  layout.py), so two workers starting the same one would stop each other's; and they are
  the suite's heaviest servers: one worker's at a time leaves the other's core to the rest.
  The tests that need only the build (``helm``) join them: on a machine without the build,
  the group's first test waits for it with the time ``give_build_time`` gave it, where a
  test on another worker would wait on the build's lock with its ordinary timeout;
- the Spark session (tests/spark's ``spark``): about 11 s and 1 GB to start, once is enough;
- the images (tests/images's ``images``): built once through scripts/images/build.sh's cache,
  which takes a lock: a second worker would only wait for the first.

xdist's own ``xdist_group`` marks do not group under pytest 9 (xdist 3.8 renames the node
ids through an attribute pytest 9 no longer reads), and the scheduler sees node ids only,
not fixtures: so the groups are named by path, and collection fails if a test uses one of
these fixtures outside its group's paths.
"""
from __future__ import annotations

import pytest

from support.worker_groups import group_of, misplaced


def pytest_collection_modifyitems(config, items):
    problems = [problem for item in items for problem in misplaced(item.nodeid, getattr(item, "fixturenames", ()))]
    if problems:
        raise pytest.UsageError("\n".join(problems))


@pytest.hookimpl(optionalhook=True)     # a hook of pytest-xdist's: unknown without it
def pytest_xdist_make_scheduler(config, log):
    """For ``--dist loadgroup``: xdist's scheduling by scope, each group one scope and every
    other test a scope of its own (the largest scopes are handed out first)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedServerScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid) or nodeid

    return SharedServerScheduling(config, log)
