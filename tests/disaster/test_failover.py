"""Datacenter disasters on two real clusters: the standby restores the job from segment
backup in S3 and finishes it; the output equals a plain-Python oracle exactly."""
import glob
import os
import time
import urllib.parse

import pytest

from segflow_operator.reconcile.times import seconds_between

from partition import connection_error, operator_endpoint
from scenario import NAMESPACE, REDIS_PASSWORD, S3_SECRET, Scenario, wait_namespace_gone
from support.clusters import wait_for


def assert_no_secret_anywhere(site):
    """The credentials reach the pods only as references: no object the operator wrote,
    no event and no log line holds their values."""
    written = [site.cluster.kubectl("get", kind, "-n", NAMESPACE, "-o", "json").stdout
               for kind in ("pods", "configmaps", "streamjobs", "events", "services")]
    logs = []
    for path in glob.glob(os.path.join(site.cluster.pods_dir(), "*", "*.log")):
        with open(path, errors="replace") as f:
            logs.append(f.read())
    assert any("secretRef" in text for text in written) and logs
    for secret in (REDIS_PASSWORD, S3_SECRET):
        assert not [text[:200] for text in written + logs if secret in text], f"{secret} leaked"


@pytest.mark.parametrize("standby", ["warm", "hot", "cold"])
def test_namespace_deletion_fails_over_to_the_standby(sites, redis_server, standby):
    """A warm standby's pods (started, registered, idle) run the job after the takeover:
    the same pods, none created after the fault; a hot one's as well, and its status shows
    what its workers follow. A cold one has none until it takes over."""
    east, west = sites["east"], sites["west"]
    run = Scenario(f"nsdel-{standby}", redis_server.url, REDIS_PASSWORD, standby=standby)
    try:
        run.start(east, west)
        waiting = run.wait_phase(west, "Standby")
        assert waiting["disasterRecovery"]["activeCluster"] == "east"
        if standby in ("warm", "hot"):
            warm = run.wait_warm(west)
            assert len(warm) == 3, warm                       # the coordinator and two workers
            assert f"{standby} standby" in run.status(west)["message"]
        if standby == "hot":
            following = run.wait_following(west)
            assert following["mode"] == "hot" and following["followLagVersions"] >= 0, following
        elif standby == "cold":
            assert not run.running_pods(west) and waiting["disasterRecovery"]["standby"] == {"mode": "cold"}
        east.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        fault = time.monotonic()
        running = run.wait_phase(west, "Running", timeout=60)
        assert time.monotonic() - fault < 30
        if standby in ("warm", "hot"):
            taking_over = {p["metadata"]["name"]: p["metadata"]["uid"] for p in run.pods(west)}
            assert taking_over == warm, "the takeover created pods: the warm standby's should run the job"
            assert "standby" not in running["disasterRecovery"]
        final = run.wait_phase(west, "Completed", "Failed", timeout=120)
        assert final["phase"] == "Completed", final
        assert run.output() == run.expected()
        story = final["disasterRecovery"]
        assert (story["activeCluster"], story["generation"]) == ("west", 2)
        assert story["lastFailover"]["from"] == "east" and story["lastFailover"]["to"] == "west"
        assert 0 < story["lastFailover"]["rtoSeconds"] <= 30, running
        assert story["lastFailover"]["restored"].startswith("b0:v"), story     # segment backup's versions
        wait_namespace_gone(east)
    finally:
        run.delete(west)
        east.restore_namespace()


@pytest.mark.parametrize("standby", ["warm", "hot"])
def test_whole_cluster_loss_fails_over_to_the_standby(sites, redis_server, standby):
    east, west = sites["east"], sites["west"]
    run = Scenario(f"lost-{standby}", redis_server.url, REDIS_PASSWORD, standby=standby)
    try:
        run.start(east, west)
        killed = east.kill()
        assert len(killed) >= 6        # etcd, API server, controller manager, node agent, operator, job pods
        final = run.wait_phase(west, "Completed", "Failed", timeout=150)
        assert final["phase"] == "Completed", final
        assert run.output() == run.expected()
        story = final["disasterRecovery"]
        assert (story["activeCluster"], story["lastFailover"]["from"]) == ("west", "east")
        assert story["lastFailover"]["rtoSeconds"] <= 30
    finally:
        run.delete(west)
        east.rebuild()


@pytest.mark.parametrize("standby", ["warm", "hot"])
def test_a_job_that_completed_before_the_disaster_is_not_run_again_by_the_standby(sites, redis_server, standby):
    """The standby takes the lease of a job whose primary had completed it, and resumes
    from the job's end: its output stream is left as it was, entry ids and all (before,
    it restored the last numbered checkpoint and appended the rest again)."""
    east, west = sites["east"], sites["west"]
    run = Scenario(f"done-{standby}", redis_server.url, REDIS_PASSWORD, events=4000, standby=standby)
    try:
        run.start(east, west, checkpoints=1)
        done = run.wait_phase(east, "Completed", "Failed", timeout=120)
        assert done["phase"] == "Completed", done
        written = run.redis.xrange(run.sink)
        east.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        final = run.wait_phase(west, "Completed", "Failed", timeout=120)
        assert final["phase"] == "Completed", final
        assert run.redis.xrange(run.sink) == written and run.output() == run.expected()
        failover = final["disasterRecovery"]["lastFailover"]
        assert failover["to"] == "west" and "vfinal" in failover.get("restored", ""), failover
        wait_namespace_gone(east)
    finally:
        run.delete(west)
        east.restore_namespace()


@pytest.mark.parametrize("standby", ["warm", "hot"])
def test_a_partitioned_primary_stops_and_commits_nothing_once_the_standby_holds_the_lease(sites, redis_server,
                                                                                         east_partition, standby):
    """East is cut off from west and from S3 by filter rules in its node namespace: a pod of
    east then reaches neither west's operator pod nor the S3 relay, and both again after
    the heal, which leaves none of the partition's rules behind."""
    east, west = sites["east"], sites["west"]
    east_pod, _, _ = operator_endpoint(east.cluster)
    _, west_ip, west_port = operator_endpoint(west.cluster)
    store = urllib.parse.urlsplit(east.s3_endpoint)
    paths = {"west's operator pod": (west_ip, west_port), "S3": (store.hostname, store.port)}
    assert {what: connection_error(east_pod, *to) for what, to in paths.items()} == {what: "" for what in paths}
    run = Scenario(f"cut-{standby}", redis_server.url, REDIS_PASSWORD, standby=standby)
    try:
        run.start(east, west)
        assert_no_secret_anywhere(east)
        ran_with = run.status(east)["revision"]
        east_partition.cut()
        refused = {what: connection_error(east_pod, *to) for what, to in paths.items()}
        assert all("ConnectionRefusedError" in error or "unreachable" in error for error in refused.values()), refused
        fenced = run.wait_phase(east, "Standby", timeout=30)
        assert "lease" in fenced["message"]
        wait_for(lambda: not run.running_pods(east, ran_with), 30, "the cut-off primary's pods to end")
        final = run.wait_phase(west, "Completed", "Failed", timeout=150)
        assert final["phase"] == "Completed", final
        east_partition.heal()
        assert east_partition.rules_left() == ""
        assert {what: connection_error(east_pod, *to) for what, to in paths.items()} == {what: "" for what in paths}
        healed = wait_for(lambda: (s := run.status(east)).get("disasterRecovery", {}).get("activeCluster") == "west"
                          and s, 30, "the healed primary to see the standby's lease")
        assert healed["phase"] == "Standby" and not run.running_pods(east, ran_with)
        if run.standby in ("warm", "hot"):
            run.wait_warm(east)             # the healed side stands by warm, with pods of a new revision
        assert run.output() == run.expected()
        assert final["disasterRecovery"]["generation"] == 2
    finally:
        east_partition.heal()
        run.delete(east, west)


@pytest.mark.parametrize("standby", ["warm", "hot"])
def test_failing_over_twice_east_west_east_loses_and_duplicates_nothing(sites, redis_server, standby):
    east, west = sites["east"], sites["west"]
    run = Scenario(f"twice-{standby}", redis_server.url, REDIS_PASSWORD, events=30000, rate=600,
                   standby=standby)
    try:
        run.start(east, west)
        east.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        restored = run.wait_phase(west, "Running", timeout=60)
        east.restore_namespace()
        run.apply(east, "standby")
        run.wait_checkpoints(west, (restored.get("lastCheckpoint") or {}).get("id", 0) + 2)
        assert run.wait_phase(east, "Standby")["disasterRecovery"]["activeCluster"] == "west"
        west.cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
        final = run.wait_phase(east, "Completed", "Failed", timeout=150)
        assert final["phase"] == "Completed", final
        assert run.output() == run.expected()
        story = final["disasterRecovery"]
        assert (story["generation"], story["lastFailover"]["from"], story["lastFailover"]["to"]) == (3, "west", "east")
        wait_namespace_gone(west)
    finally:
        run.delete(east)
        for site in (east, west):
            site.restore_namespace()


@pytest.mark.parametrize("standby", ["warm", "hot"])
def test_a_planned_switch_over_takes_a_savepoint_and_hands_over_without_waiting(sites, redis_server, standby):
    east, west = sites["east"], sites["west"]
    # 30 s of events: time for a savepoint asked again after a failed one (the operator retries)
    run = Scenario(f"switch-{standby}", redis_server.url, REDIS_PASSWORD, events=24000, standby=standby)
    try:
        run.start(east, west)
        ran_with = run.status(east)["revision"]
        patch = '{"spec":{"disasterRecovery":{"role":"%s"}}}'
        west.cluster.kubectl("patch", "sj", run.name, "-n", NAMESPACE, "--type", "merge", "-p", patch % "primary")
        east.cluster.kubectl("patch", "sj", run.name, "-n", NAMESPACE, "--type", "merge", "-p", patch % "standby")
        handed = run.wait_phase(east, "Standby", timeout=60)
        assert handed["savepoint"]["id"] and handed["disasterRecovery"]["activeCluster"] in ("", "west")
        running = run.wait_phase(west, "Running", timeout=30)
        failover = running["disasterRecovery"]["lastFailover"]
        assert (failover["from"], failover["to"], failover["generation"]) == ("east", "west", 2)
        # East released the lease as it handed over: west took it at once, not after the
        # failoverAfterSeconds (10 s) a silent primary is given (pods starting on a loaded
        # machine may still make the whole recovery longer than that)
        waited = seconds_between(failover["previousRenewal"], failover["time"])
        assert waited < run.failover_after / 2, f"the new primary waited {waited} s as if the old one had failed"
        assert failover["rtoSeconds"] is not None
        final = run.wait_phase(west, "Completed", "Failed", timeout=120)
        assert final["phase"] == "Completed", final
        assert run.output() == run.expected()
        assert not run.running_pods(east, ran_with)
    finally:
        run.delete(east, west)
