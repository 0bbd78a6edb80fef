"""Issue 49 on a real cluster: the lease holder's operator stalls (SIGSTOP, as a starved
process would) past its lease's deadline and nobody takes over. The job's processes fence
themselves, as they must; the job must not end Failed but recover from its last complete
checkpoint and finish with exactly the oracle's output."""
import glob
import os
import signal
import time

from scenario import NAMESPACE, REDIS_PASSWORD, Scenario

STALL_SECONDS = 1.8          # past the deadline of failoverAfterSeconds 2: renewed_at + 2 - guard(2) = + 1 s


def operator_group(site) -> int:
    """The process group of the operator's pod (the node agent records it per container)."""
    found = glob.glob(os.path.join(site.cluster.pods_dir(), "segflow-system_*", "*.pid"))
    assert len(found) == 1, found
    with open(found[0]) as f:
        return int(f.read().split()[0])


def recoveries_from_a_fence(site) -> list[str]:
    """The job's events that say the operator redeployed it after its coordinator fenced itself."""
    events = site.cluster.kubectl("get", "events", "-n", NAMESPACE, "-o",
                                  "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}").stdout
    return [line for line in events.splitlines() if "fenced itself" in line]


def test_a_late_renewal_with_nobody_taking_over_recovers_the_job_exactly_once(lone_site, redis_server):
    run = Scenario("late", redis_server.url, REDIS_PASSWORD, failover_after=2.0, standby="cold")
    try:
        run.apply(lone_site, "primary")
        run.wait_checkpoints(lone_site, 3, timeout=120)
        group = operator_group(lone_site)
        os.killpg(group, signal.SIGSTOP)
        try:
            time.sleep(STALL_SECONDS)
        finally:
            os.killpg(group, signal.SIGCONT)
        final = run.wait_phase(lone_site, "Completed", "Failed", timeout=180)
        assert final["phase"] == "Completed", final
        assert recoveries_from_a_fence(lone_site), "the stall fenced nothing: the test proved nothing"
        assert final["recoveries"] >= 1, final
        assert final["disasterRecovery"]["generation"] == 1, final["disasterRecovery"]     # no takeover
        assert run.output() == run.expected()
    finally:
        run.delete(lone_site)
