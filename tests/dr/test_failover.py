"""Datacenter disasters on two real clusters: the standby restores the job from segment
backup in S3 and finishes it; the output equals a plain-Python oracle exactly."""
import time

from conftest import NAMESPACE, REDIS_PASSWORD
from scenario import Scenario, wait_namespace_gone


def test_namespace_deletion_fails_over_to_the_standby(sites, redis_server):
    east, west = sites["east"], sites["west"]
    run = Scenario("nsdel", redis_server.url, REDIS_PASSWORD)
    try:
        run.apply(west, "standby")
        run.apply(east, "primary")
        run.wait_checkpoints(east, 3)
        assert run.wait_phase(west, "Standby")["disasterRecovery"]["activeCluster"] == "east"
        assert not run.running_pods(west)
        east.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        fault = time.monotonic()
        running = run.wait_phase(west, "Running", timeout=60)
        assert time.monotonic() - fault < 30
        final = run.wait_phase(west, "Completed", "Failed", timeout=120)
        assert final["phase"] == "Completed", final
        assert run.output() == run.expected()
        story = final["disasterRecovery"]
        assert (story["activeCluster"], story["generation"]) == ("west", 2)
        assert story["lastFailover"]["from"] == "east" and story["lastFailover"]["to"] == "west"
        assert 0 < story["lastFailover"]["rtoSeconds"] <= 30, running
        wait_namespace_gone(east)
    finally:
        run.delete(west)
        if east.cluster.kubectl("get", "namespace", NAMESPACE, check=False).returncode != 0:
            east.namespace()
