"""Which tests share a server that only one pytest-xdist worker may start (the reasons are
in tests/conftest.py): their groups, by fixture and by path."""
from __future__ import annotations

GROUP_OF_FIXTURE = {"cluster": "kubernetes", "sites": "kubernetes", "helm": "kubernetes", "spark": "spark",
                    "images": "images"}
GROUP_OF_PATH = {"tests/k8s/": "kubernetes", "tests/disaster/test_failover.py": "kubernetes",
                 "tests/disaster/test_namespace_detection.py": "kubernetes",
                 "tests/images/test_cluster_pods.py": "kubernetes",     # before tests/images/: first match wins
                 "tests/spark/": "spark", "tests/images/": "images"}


def group_of(nodeid: str) -> str | None:
    """The group of the test ``nodeid`` (``path::name``), or None: it may run anywhere."""
    path = nodeid.split("::", 1)[0]
    return next((group for prefix, group in GROUP_OF_PATH.items() if path.startswith(prefix)), None)


def misplaced(nodeid: str, fixturenames) -> list[str]:
    """Why the test cannot run where its path puts it: each shared fixture it uses whose
    group is not its own."""
    return [f"{nodeid} uses {name!r}, which only the {GROUP_OF_FIXTURE[name]!r} group's worker may start: "
            f"add its path to GROUP_OF_PATH in tests/support/worker_groups.py"
            for name in fixturenames if name in GROUP_OF_FIXTURE and GROUP_OF_FIXTURE[name] != group_of(nodeid)]
