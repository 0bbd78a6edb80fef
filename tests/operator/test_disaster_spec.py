"""spec.podTemplate and spec.disasterRecovery: merged into every pod, credentials only by
reference, and the lease generation handed to the coordinator."""
import json

import pytest

from segflow.cli.main import _parser
from segflow_operator.manifests import coordinator_pod, worker_pod
from segflow_operator.spec import InvalidSpec, parse

GOOD = {"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount"}}
BODY = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "j", "namespace": "n",
                                                                                "uid": "u"}}
DR = {"backupUrl": "s3://backup/segflow", "clusterName": "east", "failoverAfterSeconds": 10}
TEMPLATE = {
    "env": [{"name": "AWS_ACCESS_KEY_ID", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "id"}}},
            {"name": "AWS_SECRET_ACCESS_KEY", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "secret"}}},
            {"name": "AWS_ENDPOINT_URL", "value": "http://127.0.0.1:9000"}],
    "envFrom": [{"secretRef": {"name": "redis"}}],
    "volumes": [{"name": "certs", "secret": {"secretName": "certs"}}],
    "volumeMounts": [{"name": "certs", "mountPath": "/certs"}],
    "serviceAccountName": "segflow-job", "nodeSelector": {"zone": "a"},
    "tolerations": [{"key": "dedicated", "operator": "Exists"}], "affinity": {"nodeAffinity": {}},
    "annotations": {"team": "data"}, "labels": {"team": "data"}}


def dr_spec(**changes):
    return parse({**GOOD, "checkpointing": {"protocol": "segment", "intervalSeconds": 1}, "disasterRecovery": DR,
                  **changes})


def test_the_pod_template_reaches_every_container_of_every_pod_after_the_operators_own():
    spec = parse({**GOOD, "checkpointing": {"stateUrl": "s3://b/jobs"}, "podTemplate": TEMPLATE,
                  "batchStage": {"module": "m", "function": "f", "output": "s3://b/out", "input": "s3://b/in"}})
    for pod in (coordinator_pod(BODY, spec, 1, ""), worker_pod(BODY, spec, 1, 0, "127.0.0.1")):
        assert pod["metadata"]["labels"]["team"] == "data" and pod["metadata"]["labels"]["segflow.io/job"] == "j"
        assert pod["metadata"]["annotations"] == {"team": "data"}
        assert pod["spec"]["serviceAccountName"] == "segflow-job" and pod["spec"]["nodeSelector"] == {"zone": "a"}
        assert pod["spec"]["tolerations"] and pod["spec"]["affinity"] == {"nodeAffinity": {}}
        assert pod["spec"]["volumes"][1:] == TEMPLATE["volumes"]
        for container in pod["spec"]["containers"]:
            names = [e["name"] for e in container.get("env", [])]
            assert names[-3:] == ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"]
            assert container["envFrom"] == TEMPLATE["envFrom"]
            assert container["volumeMounts"][1:] == TEMPLATE["volumeMounts"]
    assert len(coordinator_pod(BODY, spec, 1, "")["spec"]["containers"]) == 2


def test_secret_values_appear_nowhere_in_what_the_operator_writes():
    secret = "s3cr3t-value"
    spec = parse({**GOOD, "checkpointing": {"stateUrl": "s3://b/jobs"}, "podTemplate": TEMPLATE})
    written = json.dumps([coordinator_pod(BODY, spec, 1, "auto"), worker_pod(BODY, spec, 1, 0, "1.2.3.4")])
    assert secret not in written and "secretKeyRef" in written


@pytest.mark.parametrize("change,message", [
    ({"podTemplate": {"env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": "x"}]}}, "valueFrom.secretKeyRef"),
    ({"podTemplate": {"env": [{"name": "REDIS_PASSWORD", "value": "x"}]}}, "looks like a credential"),
    ({"podTemplate": {"env": [{"name": "POD_IP", "value": "x"}]}}, "set by the operator"),
    ({"podTemplate": {"labels": {"segflow.io/job": "other"}}}, "operator's own"),
    ({"podTemplate": {"containers": []}}, "unknown fields"),
    ({"checkpointing": {"stateUrl": "redis://:hunter2@redis:6379/0"}}, "carries a password"),
])
def test_credentials_in_the_spec_and_clashing_settings_are_refused(change, message):
    with pytest.raises(InvalidSpec, match=message):
        parse({**GOOD, "checkpointing": {"stateUrl": "s3://b/jobs"}, **change})


def test_a_disaster_recovery_job_keeps_its_state_in_the_backup_store_and_resumes_from_it():
    spec = dr_spec()
    assert spec.checkpointing.state_url == "s3://backup/segflow" and spec.restore_from == "auto"
    assert (spec.disaster_recovery.cluster, spec.disaster_recovery.role, spec.disaster_recovery.failover_after) == \
        ("east", "primary", 10.0)
    assert dr_spec().deployment_hash() == dr_spec(disasterRecovery={**DR, "role": "standby"}).deployment_hash()
    without = parse({**GOOD, "checkpointing": {"protocol": "segment", "intervalSeconds": 1,
                                               "stateUrl": "s3://backup/segflow"}})
    assert without.deployment_hash() != dr_spec().deployment_hash(), "turning DR off must redeploy unfenced pods"


def test_the_coordinator_gets_the_lease_generation_it_runs_under():
    args = _parser().parse_args(coordinator_pod(BODY, dr_spec(), 1, "auto", 3)["spec"]["containers"][0]["args"])
    assert (args.settings.lease_owner, args.settings.lease_generation, args.settings.job_name) == ("east", 3, "n.j")


def test_a_warm_standby_is_the_default_and_its_pods_wait_for_the_lease_they_will_run_under():
    """No generation held (a warm standby deploys before its cluster takes the lease): the
    coordinator awaits its cluster's lease and its workers wait for it as long; a cold
    standby's workers (made only once the lease is held) keep the usual registration limit."""
    assert dr_spec().disaster_recovery.standby == "warm"
    args = _parser().parse_args(coordinator_pod(BODY, dr_spec(), 1, "auto")["spec"]["containers"][0]["args"])
    assert (args.settings.lease_owner, args.settings.lease_generation, args.settings.await_lease) == ("east", 0, True)
    held = _parser().parse_args(coordinator_pod(BODY, dr_spec(), 1, "auto", 3)["spec"]["containers"][0]["args"])
    assert (held.settings.lease_generation, held.settings.await_lease) == (3, False)
    warm_spec = dr_spec(disasterRecovery={**DR, "standby": "warm"})
    warm = _parser().parse_args(worker_pod(BODY, warm_spec, 1, 0, "10.0.0.1")["spec"]["containers"][0]["args"])
    cold = _parser().parse_args(worker_pod(BODY, dr_spec(disasterRecovery={**DR, "standby": "cold"}), 1, 0,
                                           "10.0.0.1")["spec"]["containers"][0]["args"])
    assert warm.await_lease and not cold.await_lease
    assert dr_spec().deployment_hash() == dr_spec(disasterRecovery={**DR, "standby": "cold"}).deployment_hash()


def test_a_hot_standby_deploys_as_warm_and_its_workers_follow_the_store_its_coordinator_will_restore_from():
    """Hot: the same pods as warm; the workers get the job's settings to follow (the backup
    store, the job's name in it, its protocol, every followSeconds), and the coordinator
    stops following once its cluster holds the lease (a generation held: nothing to follow)."""
    hot_spec = dr_spec(disasterRecovery={**DR, "standby": "hot", "followSeconds": 0.5})
    coordinator = _parser().parse_args(coordinator_pod(BODY, hot_spec, 1, "auto")["spec"]["containers"][0]["args"])
    worker = _parser().parse_args(worker_pod(BODY, hot_spec, 1, 0, "10.0.0.1")["spec"]["containers"][0]["args"])
    assert worker.await_lease and worker.follow is not None
    assert (worker.follow.state_url, worker.follow.job_name, worker.follow.follow_interval) == \
        (coordinator.settings.state_url, coordinator.settings.job_name, 0.5)
    assert worker.follow.protocol == coordinator.settings.protocol and coordinator.settings.follow_interval == 0.5
    held = _parser().parse_args(coordinator_pod(BODY, hot_spec, 1, "auto", 3)["spec"]["containers"][0]["args"])
    assert (held.settings.await_lease, held.settings.follow_interval) == (False, 0.0)
    warm = _parser().parse_args(worker_pod(BODY, dr_spec(), 1, 0, "10.0.0.1")["spec"]["containers"][0]["args"])
    assert warm.follow is None and dr_spec().disaster_recovery.warm and hot_spec.disaster_recovery.warm
    with_standby = dr_spec(standbyWorkers=1, disasterRecovery={**DR, "standby": "hot"})
    standby_worker = _parser().parse_args(worker_pod(BODY, with_standby, 1, with_standby.parallelism,
                                                     "10.0.0.1")["spec"]["containers"][0]["args"])
    assert standby_worker.standby and standby_worker.follow is None, "a standby worker may wait the job long"


@pytest.mark.parametrize("change,message", [
    ({"disasterRecovery": {**DR, "standby": "lukewarm"}}, "cold, warm or hot"),
    ({"disasterRecovery": {**DR, "standby": "hot", "followSeconds": 0.01}}, "between 0.1 and 60"),
    ({"disasterRecovery": {**DR, "backupUrl": "file:///x"}}, "must be s3://"),
    ({"disasterRecovery": {**DR, "clusterName": "East_1"}}, "DNS label"),
    ({"disasterRecovery": {**DR, "role": "leader"}}, "primary or standby"),
    ({"disasterRecovery": {**DR, "failoverAfterSeconds": 1}}, "at least 2"),
    ({"checkpointing": {"protocol": "segment", "stateUrl": "s3://other/x"}}, "must be left out"),
    ({"checkpointing": {"protocol": "none"}}, "needs checkpoints"),
])
def test_unusable_disaster_recovery_specs_say_what_to_change(change, message):
    with pytest.raises(InvalidSpec, match=message):
        dr_spec(**change)


def test_restore_from_a_store_url_makes_it_the_jobs_state_store():
    spec = parse({**GOOD, "checkpointing": {"protocol": "segment"}, "restoreFrom": "s3://backup/segflow/latest"})
    assert (spec.checkpointing.state_url, spec.restore_from) == ("s3://backup/segflow", "latest")
    with pytest.raises(InvalidSpec, match="names the store"):
        parse({**GOOD, "checkpointing": {"stateUrl": "s3://a/b"}, "restoreFrom": "s3://backup/segflow/latest"})
