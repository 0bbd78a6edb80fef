"""The operator's decisions, without a cluster: each StreamJob situation -> what it does."""
from dataclasses import replace

import pytest

from segflow.errors import EXIT_STORE_UNREACHABLE
from segflow_operator.reconcile import (CoordinatorView, CreateWorkers, DeletePods, Deploy, JobStatus, Observed,
                                        Phase, PodView, Savepoint, SavepointView, decide)
from segflow_operator.observe import pod_view
from segflow_operator.reconcile.deployment import revision_spec
from segflow_operator.reconcile.views import Stuck
from segflow_operator.spec import InvalidSpec, parse

BASE = {"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount", "parameters": {"input": "/in"}},
        "parallelism": 2, "checkpointing": {"protocol": "aligned", "stateUrl": "file:///state"}}


def spec(**changes):
    return parse({**BASE, **changes})


def deployed(s, revision=1, **extra):
    """The status of ``s`` deployed and running, as the API returns it (``extra``: more of its keys)."""
    return JobStatus.parse({"phase": "Running", "revision": revision, "deployed": {"hash": s.deployment_hash()},
                            **extra})


def pods(revision=1, workers=2, coordinator_phase="Running", coordinator_exit=None, coordinator_message="",
         **worker_fields):
    coordinator = PodView(f"j-{revision}-coordinator", "coordinator", revision, phase=coordinator_phase, ip="127.9.0.2",
                          exit_code=coordinator_exit, message=coordinator_message)
    return (coordinator,) + tuple(PodView(f"j-{revision}-worker-{i}", "worker", revision, index=i,
                                          **{"phase": "Running", "ready": True, **worker_fields})
                                  for i in range(workers))


def kinds(decision):
    return [type(a).__name__ for a in decision.actions]


def test_a_new_job_deploys_its_first_revision_restoring_what_the_spec_says():
    d = decide(spec(restoreFrom="12"), JobStatus(), Observed())
    assert d.actions == [Deploy(1, "12")]
    assert d.status.phase == "Deploying" and d.status.revision == 1
    assert [e.reason for e in d.events] == ["Deploying"]


def test_workers_are_created_once_the_coordinator_has_an_address():
    s = spec()
    waiting = decide(s, deployed(s, phase="Deploying"), Observed(pods(workers=0)[:1]))
    assert waiting.actions == [CreateWorkers(1, (0, 1), "127.9.0.2")]
    no_ip = (PodView("j-1-coordinator", "coordinator", 1, phase="Pending"),)
    assert decide(s, deployed(s, phase="Deploying"), Observed(no_ip)).actions == []


def test_coordinator_updates_drive_the_phase_and_the_counters():
    s = spec()
    update = CoordinatorView("RECOVERING", recoveries=2, last_checkpoint=7)
    d = decide(s, deployed(s, recoveriesBase=1), Observed(pods(), update, now="2026-11-23T08:00:00Z"))
    assert d.status.phase == "Recovering" and d.status.recoveries == 3
    assert d.changes()["lastCheckpoint"] == {"id": 7, "time": "2026-11-23T08:00:00Z"}
    assert d.status.ready_replicas == 2 and d.status.ready == f"2/{s.parallelism}"
    assert [e.reason for e in d.events] == ["Recovering"] and d.events[0].warning
    again = decide(s, d.status, Observed(pods(), update))
    assert again.events == [] and again.actions == []


def test_segment_backup_windows_reach_the_status_when_they_change():
    s = spec()
    update = CoordinatorView("RUNNING", last_checkpoint=4, windows=((0, 2, 4096, 300, 1),))
    d = decide(s, deployed(s), Observed(pods(), update, now="2026-11-23T08:00:00Z"))
    assert d.changes()["pendingWindows"] == {"0": {"versions": 2, "bytes": 4096, "records": 300, "truncationLag": 1}}
    again = decide(s, d.status, Observed(pods(), update))
    assert "pendingWindows" not in again.changes()


def test_a_deleted_worker_pod_is_created_again():
    s = spec()
    gone = pods()[:2] + (PodView("j-1-worker-1", "worker", 1, index=1, deleting=True),)
    d = decide(s, deployed(s), Observed(gone, CoordinatorView("RUNNING")))
    assert d.actions == [CreateWorkers(1, (1,), "127.9.0.2")]


def test_pods_of_older_revisions_are_deleted():
    s = spec()
    d = decide(s, deployed(s, revision=2), Observed(pods(revision=1) + pods(revision=2), CoordinatorView("RUNNING")))
    assert d.actions == [DeletePods(("j-1-coordinator", "j-1-worker-0", "j-1-worker-1"))]


def test_success_completes_and_then_nothing_more_happens():
    s = spec()
    d = decide(s, deployed(s), Observed(pods(), CoordinatorView("SUCCEEDED", last_checkpoint=9)))
    assert d.status.phase == "Completed" and d.actions == []
    after = decide(s, d.status, Observed(pods(coordinator_phase="Succeeded")))
    assert after.actions == [] and after.changes() == {}


def test_a_failed_job_reports_the_coordinators_message_and_stops_its_workers():
    s = spec()
    ended = pods(coordinator_phase="Failed", coordinator_exit=1,
                 coordinator_message="coordinator failed: job module 'nope' not found")
    d = decide(s, deployed(s), Observed(ended))
    assert d.status.phase == "Failed"
    assert d.status.message == "pod j-1-coordinator exited with code 1: coordinator failed: job module 'nope' not found"
    again = decide(s, d.status, Observed(ended))
    assert again.actions == [DeletePods(("j-1-worker-0", "j-1-worker-1"))]


def test_a_crash_looping_pod_is_named_in_the_status_with_its_exit_code_and_log_once_as_an_event():
    s = spec()
    log = "\n".join(f"line {i}" for i in range(15)) + "\nPermissionError: [Errno 13] Permission denied: '/state'"
    looping = Stuck("CrashLoopBackOff", "back-off 4s restarting failed container=worker", restarts=3,
                    last_exit_code=1, last_message=log)
    observed = Observed((*pods()[:2], replace(pods()[2], ready=False, stuck=looping)), CoordinatorView("RUNNING"))
    d = decide(s, deployed(s), observed)
    assert d.status.phase == "Running", "the pod is retried, as Kubernetes retries it: the job has not failed"
    expected = ("pod j-1-worker-1: CrashLoopBackOff, restarted 3 times, last exit code 1; its log ends:\n"
                + "\n".join(f"line {i}" for i in range(6, 15))
                + "\nPermissionError: [Errno 13] Permission denied: '/state'")
    assert d.status.message == d.status.last_error == expected
    assert [(e.reason, e.message, e.warning) for e in d.events] == [("PodFailing", expected, True)]
    assert decide(s, d.status, observed).events == [], "said once"
    config = Stuck("CreateContainerConfigError", "secret 'creds' not found")
    both = Observed((replace(pods()[0], stuck=config), *observed.pods[1:]), CoordinatorView("RUNNING"))
    assert decide(s, d.status, both).status.message == ("pod j-1-coordinator: CreateContainerConfigError: secret "
                                                         "'creds' not found (and 1 more pods)")
    healthy = decide(s, d.status, Observed(pods(), CoordinatorView("RUNNING")))
    assert healthy.status.message == "running" and healthy.events == []


def test_a_pods_waiting_container_is_observed_as_stuck_only_when_it_failed():
    def pod(waiting, last=None):
        container = {"name": "worker", "restartCount": 2, "state": {"waiting": waiting}}
        if last:
            container["lastState"] = {"terminated": last}
        return {"metadata": {"name": "w", "labels": {"segflow.io/role": "worker"}},
                "status": {"phase": "Running", "containerStatuses": [container]}}
    assert pod_view(pod({"reason": "ContainerCreating"})).stuck is None
    view = pod_view(pod({"reason": "CrashLoopBackOff", "message": "back-off"},
                        {"exitCode": 2, "reason": "Error", "message": "no such file"}))
    assert view.stuck == Stuck("CrashLoopBackOff", "back-off", 2, 2, "no such file")


def test_a_lost_coordinator_redeploys_from_the_last_checkpoint_and_counts_a_recovery():
    s = spec()
    killed = pods(coordinator_phase="Failed", coordinator_exit=137)
    d = decide(s, deployed(s, recoveries=2), Observed(killed))
    assert d.actions == [DeletePods(tuple(p.name for p in killed)), Deploy(2, "auto")]
    assert d.status.phase == "Recovering" and d.status.recoveries_base == 3


def test_a_coordinator_that_could_not_reach_the_store_is_redeployed_not_failed():
    s = spec()
    waited = pods(coordinator_phase="Failed", coordinator_exit=EXIT_STORE_UNREACHABLE,
                  coordinator_message="coordinator failed: S3 state store ... cannot reach the endpoint")
    d = decide(s, deployed(s), Observed(waited))
    assert Deploy(2, "auto") in d.actions and d.status.phase == "Recovering"
    assert "could not reach the state store" in d.status.message


def test_a_deployment_recorded_but_not_made_is_made_before_anything_else():
    s = spec()
    status = deployed(s, revision=2, pendingDeploy={"revision": 2, "restore": "auto"})
    d = decide(s, status, Observed(pods()))                  # only revision 1's pods exist
    assert d.actions == [DeletePods(tuple(p.name for p in pods())), Deploy(2, "auto")]
    assert d.changes() == {}


def test_a_lost_coordinator_without_checkpointing_starts_over():
    s = spec(checkpointing={"protocol": "none"})
    d = decide(s, deployed(s), Observed(pods()[1:]))
    assert Deploy(2, "") in d.actions


@pytest.mark.parametrize("mode,first", [("savepoint", Savepoint("127.9.0.2", "redeploy")),
                                        ("last-state", Deploy(2, "auto")), ("stateless", Deploy(2, ""))])
def test_a_changed_spec_redeploys_as_upgrade_mode_says(mode, first):
    old = spec(upgradeMode=mode)
    new = spec(upgradeMode=mode, parallelism=3)
    d = decide(new, deployed(old), Observed(pods(), CoordinatorView("RUNNING")))
    assert first in d.actions


def test_savepoint_upgrade_of_a_job_that_is_not_running_falls_back_to_the_last_checkpoint():
    old, new = spec(), spec(image="segflow/engine:0.2.0")
    d = decide(new, deployed(old), Observed(pods(), CoordinatorView("RECOVERING")))
    assert Deploy(2, "auto") in d.actions


def in_progress(then, nonce=0, revision=1):
    return {"savepointInProgress": {"then": then, "nonce": nonce, "revision": revision, "since": "t0"}}


def taken(then, savepoint_id, nonce=0, revision=1):
    return SavepointView(then, nonce, revision, savepoint_id=savepoint_id,
                         location=f"s3://bucket/jobs/default/wc/chk-{savepoint_id}")


def test_a_savepoint_is_asked_for_and_recorded_as_in_progress_in_the_same_step():
    old, new = spec(), spec(parallelism=3)
    d = decide(new, deployed(old), Observed(pods(), CoordinatorView("RUNNING"), now="t1"))
    assert d.actions == [Savepoint("127.9.0.2", "redeploy")]
    assert d.changes()["savepointInProgress"] == {"then": "redeploy", "nonce": 0, "revision": 1, "since": "t1"}


def test_after_a_redeploy_savepoint_the_new_revision_restores_it():
    old, new = spec(), spec(parallelism=3)
    d = decide(new, deployed(old, **in_progress("redeploy")),
               Observed(pods(), CoordinatorView("RUNNING"), savepoint=taken("redeploy", 14)))
    assert d.actions == [DeletePods(tuple(p.name for p in pods())), Deploy(2, "14")]
    assert d.status.deployed.parallelism == 3 and d.status.savepoint.id == 14
    assert d.status.savepoint_in_progress is None


def test_suspend_takes_a_savepoint_then_resume_restores_it():
    s = spec(state="suspended")
    d = decide(s, deployed(spec()), Observed(pods(), CoordinatorView("RUNNING")))
    assert d.actions == [Savepoint("127.9.0.2", "suspend")]
    done = decide(s, d.status,
                  Observed(pods(), CoordinatorView("RUNNING"), savepoint=taken("suspend", 5)))
    assert done.status.phase == "Suspended" and done.status.resume_from == "5"
    resumed = decide(spec(), done.status, Observed())
    assert resumed.actions == [Deploy(2, "5")]
    assert "resuming from savepoint 5" in resumed.status.message


def test_a_savepoint_nonce_is_served_once():
    s = spec(savepointTriggerNonce=3)
    d = decide(s, deployed(s), Observed(pods(), CoordinatorView("RUNNING")))
    assert Savepoint("127.9.0.2", "record", 3) in d.actions
    done = decide(s, d.status,
                  Observed(pods(), CoordinatorView("RUNNING"), savepoint=taken("record", 8, nonce=3)))
    assert done.status.last_savepoint_nonce == 3 and done.actions == []
    served = decide(s, replace(done.status, savepoint_in_progress=None),
                    Observed(pods(), CoordinatorView("RUNNING")))
    assert not any(isinstance(a, Savepoint) for a in served.actions)


def test_savepoints_are_listed_newest_first_with_their_location():
    s = spec(savepointTriggerNonce=3)
    history = [{"id": n, "time": f"t{n}", "nonce": n, "location": f"s3://b/chk-{n}"} for n in range(12, 2, -1)]
    d = decide(s, deployed(s, **in_progress("record", 3), savepoints=history),
               Observed(pods(), CoordinatorView("RUNNING"), savepoint=taken("record", 20, nonce=3), now="t20"))
    newest = {"id": 20, "time": "t20", "nonce": 3, "location": "s3://bucket/jobs/default/wc/chk-20"}
    assert d.changes()["savepoint"] == newest
    assert d.changes()["savepoints"] == [newest] + history[:9]
    assert [e.message for e in d.events if e.reason == "Savepoint"] == \
        ["savepoint 20 taken at s3://bucket/jobs/default/wc/chk-20"]


def test_while_a_savepoint_is_taken_no_other_is_asked_for_and_lost_workers_are_replaced():
    s = spec(state="suspended", savepointTriggerNonce=2)
    status = deployed(spec(), **in_progress("suspend"))
    lost_one = pods()[:2]
    d = decide(s, status, Observed(lost_one, CoordinatorView("RUNNING"), savepoint=SavepointView("suspend", 0, 1)))
    assert d.actions == [CreateWorkers(1, (1,), "127.9.0.2")]
    assert "savepointInProgress" not in d.changes() and d.status.phase == "Running"


def test_a_savepoint_asked_for_by_an_operator_that_restarted_is_asked_for_again():
    s = spec(state="suspended")
    status = deployed(spec(), **in_progress("suspend"))
    again = decide(s, status, Observed(pods(), CoordinatorView("RUNNING")))
    assert Savepoint("127.9.0.2", "suspend") in again.actions
    stopped = decide(s, status, Observed(pods(), CoordinatorView("RECOVERING")))
    assert stopped.status.savepoint_in_progress is None
    assert any(e.reason == "SavepointFailed" and e.warning for e in stopped.events)


def test_a_restarted_operator_waits_to_hear_from_the_coordinator_before_giving_up_a_savepoint():
    s = spec(state="suspended")
    asked = {"savepointInProgress": {"then": "suspend", "nonce": 0, "revision": 1, "since": "2026-11-27T18:40:00Z"}}
    status = deployed(spec(), **asked)
    soon = decide(s, status, Observed(pods(), None, now="2026-11-27T18:40:02Z"))
    assert "savepointInProgress" not in soon.changes() and not soon.events and not soon.actions
    heard = decide(s, status, Observed(pods(), CoordinatorView("RUNNING"), now="2026-11-27T18:40:03Z"))
    assert Savepoint("127.9.0.2", "suspend") in heard.actions
    silent = decide(s, status, Observed(pods(), None, now="2026-11-27T18:41:01Z"))
    assert silent.status.savepoint_in_progress is None
    assert [e.reason for e in silent.events] == ["SavepointFailed"]


def test_a_coordinator_deleted_for_a_savepoints_outcome_by_an_operator_killed_midway_is_not_lost():
    # The previous operator took the suspend savepoint and was killed while deleting the
    # pods for it: the coordinator's went, the workers' did not, "Suspended" was never
    # written. The job is suspended next, not redeployed as if its coordinator were lost.
    s = spec(state="suspended")
    status = deployed(spec(), **in_progress("suspend"), recoveries=1)
    coordinator, *workers = pods()
    halfway = (replace(coordinator, deleting=True), *workers)
    first = decide(s, status, Observed(halfway, None, now="2026-11-27T18:40:06Z"))
    assert not any(isinstance(a, Deploy) for a in first.actions), first.actions
    assert "recoveriesBase" not in first.changes() and first.status.savepoint_in_progress is None
    second = decide(s, first.status, Observed(halfway, None, now="2026-11-27T18:40:07Z"))
    assert not any(isinstance(a, Deploy) for a in second.actions) and "recoveriesBase" not in second.changes()
    assert second.status.phase == "Suspended"
    assert DeletePods(tuple(w.name for w in workers)) in second.actions


def test_a_failed_savepoint_is_reported_and_its_nonce_asked_for_again_at_the_next_step():
    s = spec(savepointTriggerNonce=4)
    failed = SavepointView("record", 4, 1, error="savepoint failed: the state store is unreachable")
    d = decide(s, deployed(s, **in_progress("record", 4)), Observed(pods(), CoordinatorView("RUNNING"),
                                                                     savepoint=failed))
    assert d.status.savepoint_in_progress is None and "lastSavepointNonce" not in d.changes()
    assert [e.message for e in d.events if e.reason == "SavepointFailed"] == [failed.error]
    retry = decide(s, d.status, Observed(pods(), CoordinatorView("RUNNING")))
    assert Savepoint("127.9.0.2", "record", 4) in retry.actions


def test_a_savepoint_of_a_replaced_revision_is_forgotten():
    s = spec()
    d = decide(s, deployed(s, revision=2, **in_progress("record", 1, revision=1)),
               Observed(pods(revision=2), CoordinatorView("RUNNING")))
    assert d.status.savepoint_in_progress is None and not any(isinstance(a, Savepoint) for a in d.actions)


def test_a_savepoint_nonce_without_checkpointing_is_refused_with_an_event():
    s = spec(savepointTriggerNonce=1, checkpointing={"protocol": "none"})
    d = decide(s, deployed(s), Observed(pods(), CoordinatorView("RUNNING")))
    assert d.status.last_savepoint_nonce == 1
    assert any(e.reason == "SavepointRefused" and e.warning for e in d.events)


UNCOORDINATED = {"protocol": "cic", "stateUrl": "file:///state"}


def test_an_uncoordinated_job_upgrades_and_suspends_from_its_stable_line_without_asking_for_a_savepoint():
    """Its coordinator has no savepoints to give (they would wait out their timeout): the
    redeploy and the resume restore the stored stable line (restore auto)."""
    old = spec(checkpointing=UNCOORDINATED)
    upgraded = decide(spec(checkpointing=UNCOORDINATED, parallelism=3), deployed(old),
                      Observed(pods(), CoordinatorView("RUNNING")))
    assert Deploy(2, "auto") in upgraded.actions and not any(isinstance(a, Savepoint) for a in upgraded.actions)
    suspended = decide(spec(checkpointing=UNCOORDINATED, state="suspended"), deployed(old),
                       Observed(pods(), CoordinatorView("RUNNING")))
    assert not any(isinstance(a, Savepoint) for a in suspended.actions)
    assert suspended.status.phase == "Suspended" and suspended.status.resume_from == "auto"
    assert "the cic protocol takes none" in suspended.status.message


def test_a_savepoint_nonce_of_an_uncoordinated_job_is_refused_with_an_event():
    s = spec(savepointTriggerNonce=1, checkpointing=UNCOORDINATED)
    d = decide(s, deployed(s), Observed(pods(), CoordinatorView("RUNNING")))
    assert d.status.last_savepoint_nonce == 1 and not any(isinstance(a, Savepoint) for a in d.actions)
    assert any(e.reason == "SavepointRefused" and "takes no savepoints" in e.message for e in d.events)


def test_a_failed_job_redeploys_when_its_spec_changes():
    old, new = spec(), spec(job={"module": "examples.wordcount_assoc"})
    d = decide(new, deployed(old, phase="Failed"), Observed())
    assert d.actions[-1] == Deploy(2, "auto")


def test_periodic_savepoints_the_coordinator_reports_join_the_history():
    periodic = {**BASE["checkpointing"], "savepoints": {"intervalSeconds": 60, "retain": 5, "maxAgeSeconds": 86400}}
    s = spec(checkpointing=periodic)
    settings = s.checkpointing
    assert (settings.savepoint_interval, settings.savepoint_retain, settings.savepoint_max_age) == (60, 5, 86400)
    assert s.deployment_hash() != spec().deployment_hash()       # the coordinator takes them at deploy
    earlier = [{"id": 3, "time": "t3", "nonce": 1, "location": "file:///state/jobs/n-j/chk-00000003/"}]
    update = CoordinatorView("RUNNING", last_checkpoint=9, last_savepoint=9,
                             last_savepoint_location="file:///state/jobs/n-j/chk-00000009/")
    d = decide(s, deployed(s, savepoint=earlier[0], savepoints=earlier), Observed(pods(), update, now="t9"))
    newest = {"id": 9, "time": "t9", "nonce": 0, "location": "file:///state/jobs/n-j/chk-00000009/"}
    assert d.changes()["savepoint"] == newest and d.changes()["savepoints"] == [newest] + earlier
    again = decide(s, d.status, Observed(pods(), update, now="t10"))
    assert "savepoint" not in again.changes()


@pytest.mark.parametrize("savepoints", [{"intervalSeconds": -1}, {"retain": "many"}])
def test_bad_periodic_savepoint_settings_are_refused(savepoints):
    with pytest.raises(InvalidSpec, match="spec.checkpointing"):
        spec(checkpointing={**BASE["checkpointing"], "savepoints": savepoints})


def deployed_by_operator(s, **extra):
    """The status this operator writes when it deploys ``s`` (the protocol, store and
    parallelism recorded), then running."""
    return replace(decide(s, JobStatus(), Observed()).status, **{"phase": Phase.RUNNING, **extra})


SEGMENT = {"protocol": "segment", "stateUrl": "file:///state"}


@pytest.mark.parametrize("old, new, why", [
    ({}, {"checkpointing": UNCOORDINATED}, "changed from aligned to cic: cic restores only its own stored stable line"),
    ({"checkpointing": UNCOORDINATED}, {}, "changed from cic to aligned: aligned restores only complete checkpoints"),
    ({}, {"checkpointing": {"protocol": "none"}}, "changed from aligned to none"),
    ({}, {"checkpointing": {"protocol": "aligned", "stateUrl": "s3://other/jobs"}}, "stateUrl changed"),
    ({"checkpointing": UNCOORDINATED}, {"checkpointing": UNCOORDINATED, "parallelism": 3},
     "parallelism changed from 2 to 3: the cic protocol restores at the parallelism the job ran with"),
    ({"checkpointing": SEGMENT}, {"checkpointing": SEGMENT, "parallelism": 3}, "the segment protocol restores at"),
])
def test_an_upgrade_that_would_lose_the_state_is_refused_and_the_running_revision_kept(old, new, why):
    """Before, aligned to cic redeployed with restore auto and started again from the
    beginning of the input; cic to aligned asked the cic coordinator for a savepoint at
    every step; the others failed after the running revision was stopped."""
    for mode in ("savepoint", "last-state"):
        status = deployed_by_operator(spec(**old, upgradeMode=mode))
        wanted = spec(**new, upgradeMode=mode)
        observed = Observed(pods(), CoordinatorView("RUNNING"))
        d = decide(wanted, status, observed)
        assert not any(isinstance(a, (Deploy, Savepoint, DeletePods, CreateWorkers)) for a in d.actions), d.actions
        assert why in d.status.upgrade_refused and "upgradeMode: stateless" in d.status.upgrade_refused
        assert [e.reason for e in d.events] == ["UpgradeRefused"] and d.events[0].warning
        assert d.status.phase == "Running" and d.status.ready == "2/2"
        again = decide(wanted, d.status, observed)
        assert again.events == [] and again.actions == [] and "upgradeRefused" not in again.changes()
        undone = decide(spec(**old, upgradeMode=mode), d.status, observed)
        assert undone.status.upgrade_refused == "" and undone.actions == []
    stateless = decide(spec(**new, upgradeMode="stateless"), deployed_by_operator(spec(**old)),
                       Observed(pods(), CoordinatorView("RUNNING")))
    assert Deploy(2, "") in stateless.actions and not stateless.status.upgrade_refused


def test_an_upgrade_that_keeps_the_state_is_not_refused():
    """aligned rescales and restores under unaligned and segment; a new image changes no state."""
    for new in ({"parallelism": 3}, {"checkpointing": SEGMENT}, {"image": "segflow/engine:0.2.0"}):
        d = decide(spec(**new), deployed_by_operator(spec()), Observed(pods(), CoordinatorView("RUNNING")))
        assert d.actions == [Savepoint("127.9.0.2", "redeploy")] and not d.status.upgrade_refused, new


def test_a_suspended_job_whose_resume_would_lose_its_state_stays_suspended():
    status = deployed_by_operator(spec(), phase=Phase.SUSPENDED, resume_from="7")
    d = decide(spec(checkpointing=UNCOORDINATED), status, Observed())
    assert d.actions == [] and "changed from aligned to cic" in d.status.upgrade_refused
    assert d.status.phase == Phase.SUSPENDED
    resumed = decide(spec(image="segflow/engine:0.2.0"), status, Observed())
    assert resumed.actions == [Deploy(2, "7")]


def test_a_savepoint_is_asked_only_of_a_revision_whose_protocol_takes_one():
    """A job deployed without checkpoints upgraded to aligned: its coordinator has no
    savepoint to give (it refused every request, one per step), so the new revision starts
    from its last checkpoint (none: the start)."""
    d = decide(spec(), deployed_by_operator(spec(checkpointing={"protocol": "none"})),
               Observed(pods(), CoordinatorView("RUNNING")))
    assert Deploy(2, "auto") in d.actions and not any(isinstance(a, Savepoint) for a in d.actions)


def test_a_refusal_is_cleared_when_the_change_is_undone_after_the_job_finished():
    status = deployed_by_operator(spec(), phase=Phase.COMPLETED)
    refused = decide(spec(checkpointing=UNCOORDINATED), status, Observed())
    assert refused.actions == [] and "changed from aligned to cic" in refused.status.upgrade_refused
    undone = decide(spec(), refused.status, Observed())
    assert undone.actions == [] and undone.status.upgrade_refused == ""


def test_pods_of_the_deployed_revision_are_built_from_the_spec_it_was_deployed_from():
    deployed_spec = spec(podTemplate={"env": [{"name": "MODE", "value": "old"}]})
    status = deployed_by_operator(deployed_spec)
    changed = spec(image="segflow/engine:0.2.0", checkpointing=UNCOORDINATED)
    assert revision_spec(status, changed) == deployed_spec
    assert revision_spec(status, changed).deployment_hash() == status.deployed.hash
    assert revision_spec(deployed(deployed_spec), changed) == changed           # recorded before the spec was
    garbled = replace(status, deployed=replace(status.deployed, spec="{not json"))
    assert revision_spec(garbled, changed) == changed
