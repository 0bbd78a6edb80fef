"""Disaster recovery in a reconcile step (pure): standing by, resuming after a takeover,
a fenced coordinator, and the story status.disasterRecovery tells."""
from dataclasses import replace

from segflow.disaster.lease import Lease, LeaseDecision, Move
from segflow.errors import EXIT_FENCED
from segflow_operator.reconcile import (CoordinatorPhase, CoordinatorView, CreateWorkers, DeletePods, Deploy,
                                       JobStatus, Observed, Phase, PodView, decide)
from segflow_operator.reconcile.disaster import dr_status, standby, standby_status, warm_standby
from segflow_operator.reconcile.status_json import dump
from segflow_operator.spec import parse

SPEC = {"image": "segflow/engine:0.1.0", "job": {"module": "m"}, "parallelism": 1,
        "checkpointing": {"protocol": "segment"},
        "disasterRecovery": {"backupUrl": "s3://b/p", "clusterName": "west", "role": "standby"}}
PODS = (PodView("j-1-coordinator", "coordinator", 1, phase="Running", ip="127.1.0.2"),
        PodView("j-1-worker-0", "worker", 1, phase="Running"), PodView("j-0-worker-0", "worker", 0, deleting=True))


def test_a_cluster_without_the_lease_deletes_every_pod_and_stands_by():
    running = JobStatus(phase=Phase.RUNNING, revision=1)
    d = standby(running, Observed(PODS), LeaseDecision(Move.FENCED, "east took over"))
    assert d.actions == [DeletePods(("j-1-coordinator", "j-1-worker-0"))]
    assert d.changes() == {"phase": "Standby", "resumeFrom": "auto", "message": "east took over"}
    assert d.events[0].warning and d.events[0].reason == "Standby"


def test_taking_the_lease_resumes_the_job_from_the_backup_store_in_a_new_revision():
    d = decide(parse(SPEC), JobStatus.parse({"phase": "Standby", "revision": 3, "resumeFrom": "auto"}), Observed(()))
    assert d.actions == [Deploy(4, "auto")] and d.status.restored == ""


def test_a_first_deployment_of_a_disaster_recovery_job_resumes_whatever_the_store_holds():
    assert decide(parse(SPEC), JobStatus(), Observed(())).actions == [Deploy(1, "auto")]


FENCED_LATE = "fenced: the lease has not been renewed for 1.3 s (past its deadline); this cluster no longer holds " \
    "the job's lease"


def _running(spec, **fields):
    return JobStatus.parse({"phase": "Running", "revision": 1, "deployed": {"hash": spec.deployment_hash()}, **fields})


def test_a_coordinator_that_reports_it_fenced_itself_is_redeployed_from_the_last_checkpoint_not_failed():
    """The loop decides only for the lease's holder: a holder that renewed late has its
    coordinator fence itself, yet still holds the job, so the job recovers (issue 49)."""
    spec = parse(SPEC)
    d = decide(spec, _running(spec, recoveries=2), Observed(PODS[:2], CoordinatorView("FAILED", error=FENCED_LATE)))
    assert d.status.phase == Phase.RECOVERING and d.status.recoveries_base == 3
    assert d.actions == [DeletePods(("j-1-coordinator", "j-1-worker-0")), Deploy(2, "auto")]
    assert "Failed" not in [e.reason for e in d.events] and not d.status.last_error
    assert "fenced" in d.status.message


def test_a_coordinator_pod_that_ended_fenced_is_redeployed_too():
    spec = parse(SPEC)
    gone = (PodView("j-1-coordinator", "coordinator", 1, phase="Failed", exit_code=1,
                    message='{"msg": "job failed", "error": "fenced: cluster \'east\' holds generation 3"}'),)
    d = decide(spec, _running(spec), Observed(gone))
    assert d.status.phase == Phase.RECOVERING and d.status.recoveries_base == 1
    assert d.actions == [DeletePods(("j-1-coordinator",)), Deploy(2, "auto")]
    truncated = (replace(gone[0], exit_code=EXIT_FENCED, message="grpc server stopped"),)
    assert decide(spec, _running(spec), Observed(truncated)).status.phase == Phase.RECOVERING
    failed = (replace(gone[0], message="ValueError: bad record"),)
    assert decide(spec, _running(spec), Observed(failed)).status.phase == Phase.FAILED


def test_a_fenced_coordinator_is_not_redeployed_until_the_lease_is_renewed():
    """Past its deadline the holder may be cut off and lose the lease at its next step:
    it creates no pod until a renewal (then it redeploys) or the loss (then it stands by)."""
    spec = parse(SPEC)
    fenced = CoordinatorView("FAILED", error=FENCED_LATE)
    waiting = decide(spec, _running(spec), Observed(PODS[:2], fenced, lease_current=False))
    assert waiting.actions == [] and waiting.status.phase == Phase.RUNNING and not waiting.status.last_error
    assert "waiting until this cluster renews" in waiting.status.message
    renewed = decide(spec, waiting.status, Observed(PODS[:2], fenced))
    assert renewed.status.phase == Phase.RECOVERING and renewed.actions[-1] == Deploy(2, "auto")


def test_a_fenced_message_fails_a_job_without_disaster_recovery_as_any_error_would():
    spec = parse({**SPEC, "disasterRecovery": None, "checkpointing": {"protocol": "aligned", "stateUrl": "s3://b/p"}})
    d = decide(spec, _running(spec), Observed(PODS[:2], CoordinatorView("FAILED", error=FENCED_LATE)))
    assert d.status.phase == Phase.FAILED and d.status.last_error == FENCED_LATE


def test_a_cluster_whose_lease_another_cluster_took_stands_by_however_its_coordinator_ended():
    running = JobStatus(phase=Phase.RUNNING, revision=1)
    ended = (PodView("j-1-coordinator", "coordinator", 1, phase="Failed", exit_code=1, message=FENCED_LATE),)
    d = standby(running, Observed(ended), LeaseDecision(Move.FENCED, "cluster 'east' took the job over"))
    assert d.status.phase == Phase.STANDBY and not any(isinstance(a, Deploy) for a in d.actions)


def test_the_status_tells_the_failover_and_its_recovery_time_once_the_job_runs():
    taken = Lease("west", 2, 1000.0, 10.0, previous="east", taken_at=1000.0, previous_renewed_at=989.0)
    deploying = dr_status("west", "standby", None, taken, taken, Phase.DEPLOYING, 1001.0)
    assert deploying.active_cluster == "west" and deploying.generation == 2
    assert deploying.last_failover.from_ == "east" and deploying.last_failover.rto_seconds is None
    running = dr_status("west", "standby", deploying, taken, taken, Phase.RUNNING, 1004.5, "b0:v7 b2:v6")
    assert running.last_failover.rto_seconds == 15.5 and running.last_failover.restored == "b0:v7 b2:v6"
    later = dr_status("west", "standby", running, taken, taken, Phase.RUNNING, 1100.0, "b0:v9")
    assert later.last_failover == running.last_failover
    assert dump(running) == {"clusterName": "west", "role": "standby", "activeCluster": "west", "generation": 2,
                             "lastRenewal": "1970-01-01T00:16:40Z",
                             "lastFailover": {"time": "1970-01-01T00:16:40Z", "from": "east", "to": "west",
                                              "generation": 2, "previousRenewal": "1970-01-01T00:16:29Z",
                                              "rtoSeconds": 15.5, "restored": "b0:v7 b2:v6"}}


def test_a_failover_to_a_job_that_completes_before_any_reconcile_sees_it_running_is_told_too():
    """A job the primary had completed resumes at its end and may finish between two
    reconciles: its completion ends the failover."""
    taken = Lease("west", 2, 1000.0, 10.0, previous="east", taken_at=1000.0, previous_renewed_at=989.0)
    deploying = dr_status("west", "standby", None, taken, taken, Phase.DEPLOYING, 1001.0)
    done = dr_status("west", "standby", deploying, taken, taken, Phase.COMPLETED, 1003.0, "vfinal")
    assert done.last_failover.rto_seconds == 14.0 and done.last_failover.restored == "vfinal"
    unsaid = dr_status("west", "standby", deploying, taken, taken, Phase.COMPLETED, 1003.0)
    assert unsaid.last_failover.restored == "not reported before the job completed"
    failed = dr_status("west", "standby", deploying, taken, taken, Phase.FAILED, 1003.0)
    assert failed.last_failover.rto_seconds is None


def test_the_restored_versions_reach_the_status_from_the_coordinator():
    spec = parse({**SPEC, "disasterRecovery": None, "checkpointing": {"protocol": "aligned", "stateUrl": "s3://b/p"}})
    status = JobStatus.parse({"phase": "Running", "revision": 1, "deployed": {"hash": spec.deployment_hash()}})
    d = decide(spec, status, Observed(PODS[:2], CoordinatorView("RUNNING", restored="checkpoint 4")))
    assert d.changes()["restored"] == "checkpoint 4"


WAITING = LeaseDecision(Move.STAND_BY, "east holds the job's lease")
WARM = {**SPEC, "disasterRecovery": {**SPEC["disasterRecovery"], "standby": "warm"}}


def test_a_warm_standby_first_clears_what_ran_then_keeps_its_own_pods_started():
    """A cluster that just lost the lease (or steps for the first time) deletes every pod
    as a cold one does; standing by, it deploys a revision that restores the store's latest
    state once it runs, creates its workers once the coordinator has an address, and
    shows Standby throughout, with how many workers are ready."""
    spec = parse(WARM)
    first = warm_standby(spec, JobStatus(phase=Phase.RUNNING, revision=1), Observed(PODS), WAITING)
    assert first.actions == [DeletePods(("j-1-coordinator", "j-1-worker-0"))] and first.status.phase == Phase.STANDBY
    empty = warm_standby(spec, first.status, Observed(()), WAITING)
    assert empty.actions == [Deploy(2, "auto")] and empty.status.phase == Phase.STANDBY
    assert "warm standby" in empty.status.message
    deployed = JobStatus.parse({**dump(empty.status), "pendingDeploy": None})
    coordinator = (PodView("j-2-coordinator", "coordinator", 2, phase="Running", ip="127.1.0.9", ready=True),)
    started = warm_standby(spec, deployed, Observed(coordinator), WAITING)
    assert started.actions == [CreateWorkers(2, (0,), "127.1.0.9")] and started.status.phase == Phase.STANDBY
    ready = coordinator + (PodView("j-2-worker-0", "worker", 2, phase="Running", ready=True),)
    steady = warm_standby(spec, deployed, Observed(ready), WAITING)
    assert steady.actions == [] and steady.status.ready == "1/1" and "1/1 workers ready" in steady.status.message
    assert standby_status(spec, steady.status).ready_workers == "1/1"
    gone = (PodView("j-2-coordinator", "coordinator", 2, phase="Failed", exit_code=1),) + ready[1:]
    assert Deploy(3, "auto") in warm_standby(spec, deployed, Observed(gone), WAITING).actions


def test_taking_the_lease_with_a_warm_standby_runs_the_job_in_its_pods_not_new_ones():
    spec = parse(WARM)
    status = JobStatus.parse({"phase": "Standby", "revision": 2, "resumeFrom": "auto",
                              "deployed": {"hash": spec.deployment_hash()}})
    ready = (PodView("j-2-coordinator", "coordinator", 2, phase="Running", ip="127.1.0.9", ready=True),
             PodView("j-2-worker-0", "worker", 2, phase="Running", ready=True))
    taken = decide(spec, status, Observed(ready, CoordinatorView(CoordinatorPhase.RUNNING)))
    assert not [a for a in taken.actions if isinstance(a, (Deploy, DeletePods))]
    assert taken.status.phase == Phase.RUNNING and taken.status.revision == 2
    assert standby_status(spec, taken.status) is None
