"""StreamJobs end to end on the local control plane: the chart installs the operator, jobs
run as pods and give the oracle's output, survive pod kills, suspend and resume, take
savepoints by nonce, clean up when deleted; bad specs fail clearly.

The pods get the job file by a configMap volume and write their output to S3 (the moto
server), which the tests read back: what a user's pods from images do (support.jobfiles)."""
import base64
import collections
import contextlib
import glob
import json
import os
import random
import re
import signal

import psutil
import pytest
import yaml

from segflow.checkpoint.catalog import Catalog
from segflow.state import open_backend
from segflow.state.sealing import Sealer
from support.clusters import installed_operator, wait_for
from support.jobfiles import pod_path, pod_template, publish, s3_lines
from support.podfiles import innermost
from support.processes import ROOT
from support.servers import new_bucket, server_fixture, start_redis, start_s3

NAMESPACE = "jobs-e2e"
WINDOWED = os.path.join(ROOT, "tests", "recovery", "jobs", "windowed_counts.py")
JOB_FILES = "test-jobs"        # the config map with WINDOWED, in each namespace the tests' jobs run in


REDIS_PASSWORD = "k8s-redis-pw-51c2"


s3_server = server_fixture("s3_server", start_s3, "moto S3 server")


redis_server = server_fixture("redis_server", lambda: start_redis(password=REDIS_PASSWORD),
                              "redis-server with a password")


def prepare_namespace(cluster, namespace):
    """The Secret with the state's credentials and the config map with the job file."""
    cluster.kubectl("create", "namespace", namespace, check=False)
    cluster.kubectl("create", "secret", "generic", "segflow-state", "-n", namespace,
                    "--from-literal=AWS_ACCESS_KEY_ID=segflow-k8s",
                    "--from-literal=AWS_SECRET_ACCESS_KEY=k8s-s3-secret",
                    f"--from-literal=SEGFLOW_REDIS_PASSWORD={REDIS_PASSWORD}")
    publish(cluster, namespace, JOB_FILES, WINDOWED)


@pytest.fixture(scope="module")
def operator(cluster, pod_s3_endpoint):
    """State and output live where a real cluster keeps them, on servers reached over the
    network (S3 and Redis on loopback), with credentials from a Secret given to the pods by
    reference."""
    with installed_operator(cluster, NAMESPACE, (pod_s3_endpoint,)):
        for namespace in (NAMESPACE, "doomed"):
            prepare_namespace(cluster, namespace)
        yield cluster
        cluster.kubectl("delete", "namespace", "doomed", "--wait=false", check=False)


@pytest.fixture(scope="module")
def template(pod_s3_endpoint):
    """The jobs' podTemplate: the state Secret, the S3 endpoint their sinks write to, the job file."""
    return pod_template(JOB_FILES, "segflow-state", pod_s3_endpoint)


@pytest.fixture(scope="module")
def windowed(cluster):
    """WINDOWED as the pods see it."""
    return pod_path(cluster, WINDOWED)


class Output:
    """Where a job writes: part objects under a new bucket of the moto server."""

    def __init__(self, endpoint):
        self.url, self.endpoint = f"s3://{new_bucket()}/out", endpoint

    def lines(self) -> collections.Counter:
        return s3_lines(self.url, self.endpoint)


@pytest.fixture
def output(s3_server):
    return Output(s3_server.endpoint)


class State:
    """A job's checkpoint store: a new bucket on the moto server, or the Redis server;
    ``url`` and ``endpoint`` as this process reaches them, ``pod_url`` and ``pod_endpoint``
    as the pods do (the same unless pods have network namespaces of their own)."""

    def __init__(self, url, endpoint="", pod_url="", pod_endpoint=""):
        self.url, self.endpoint = url, endpoint
        self.pod_url, self.pod_endpoint = pod_url or url, pod_endpoint or endpoint

    def checkpointing(self, interval=0.5):
        return {"protocol": "aligned", "intervalSeconds": interval, "stateUrl": self.pod_url,
                **({"s3Endpoint": self.pod_endpoint} if self.pod_endpoint else {})}

    def complete_markers(self, cluster, name):
        """``{checkpoint id: its _COMPLETE record}`` of StreamJob ``name``, checked with the
        key the operator made for it."""
        key = base64.b64decode(cluster.get("secret", f"{name}-state-key", "-n", NAMESPACE)["data"]["key"])
        job = f"{NAMESPACE}.{name}"
        with contextlib.closing(open_backend(self.url, self.endpoint or None)) as store:
            catalog = Catalog(store, job, Sealer(job, key))
            return {i: catalog.metadata(i) for i in catalog.complete_ids()}


@pytest.fixture
def state(s3_server, pod_s3_endpoint):
    return State(f"s3://{new_bucket()}/state", s3_server.endpoint, pod_endpoint=pod_s3_endpoint)


def apply_job(cluster, name, module, parameters, template, parallelism=2, checkpointing=None, **spec):
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": name},
            "spec": {"image": "segflow/engine:0.1.0",
                     "job": {"module": module, "parameters": {k: str(v) for k, v in parameters.items()}},
                     "parallelism": parallelism, "checkpointing": checkpointing or {"protocol": "none"},
                     "podTemplate": template, **spec}}
    cluster.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(body))


def job(cluster, name):
    return cluster.get("sj", name, "-n", NAMESPACE)


def status(cluster, name):
    return job(cluster, name).get("status") or {}


def phase_is(cluster, name, *phases, timeout=90.0):
    return wait_for(lambda: (s := status(cluster, name)).get("phase") in phases and s, timeout,
                    f"{name} in {phases}")


def table_row(cluster, name) -> dict:
    """``kubectl get sj NAME`` as {column: cell}, cut at the header's column starts (a cell
    may be empty, so splitting on spaces would shift the columns)."""
    header, row = cluster.kubectl("get", "sj", name, "-n", NAMESPACE).stdout.splitlines()[:2]
    starts = [i for i, c in enumerate(header) if c != " " and (i == 0 or header[i - 1] == " ")]
    bounds = zip(starts, starts[1:] + [None])
    return {header[a:b].strip(): row[a:b].strip() for a, b in bounds}


def windowed_oracle(events):
    counts = collections.Counter()
    for i in range(events):
        counts[(f"k{(i * 7919) % 13}", i // 100)] += 1
    return collections.Counter(f"{k}\t{n}" for (k, _), n in counts.items())


def test_the_operator_runs_from_the_chart(operator):
    pods = operator.get("pods", "-n", "segflow-system")["items"]
    assert len(pods) == 1 and pods[0]["status"]["phase"] == "Running"
    assert all(c["ready"] for c in pods[0]["status"]["containerStatuses"])


def test_the_operator_serves_health_and_metrics(operator):
    ip = operator.get("pods", "-n", "segflow-system")["items"][0]["status"]["podIP"]
    assert operator.http_get(f"http://{ip}:8080/healthz")[0] == 200
    status, metrics = operator.http_get(f"http://{ip}:9090/metrics")
    assert status == 200 and "segflow_operator_reconciles_total" in metrics


def test_wordcount_runs_to_the_oracles_output(operator, tmp_path, state, output, pod_s3_endpoint):
    rng = random.Random(3)
    words = [f"w{i}" for i in range(120)]
    text = "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))) for _ in range(5000))
    (tmp_path / "in.txt").write_text(text + "\n")
    publish(operator, NAMESPACE, "wordcount-input", str(tmp_path / "in.txt"))
    with open(os.path.join(ROOT, "examples", "k8s", "wordcount.yaml")) as f:
        manifest = yaml.safe_load(f)          # the example as shipped, given this test's input and output
    manifest["spec"]["job"]["parameters"] = {"input": pod_path(operator, str(tmp_path / "in.txt")),
                                             "output": output.url}
    manifest["spec"]["checkpointing"].update(state.checkpointing())
    manifest["spec"]["podTemplate"] = pod_template("wordcount-input", "segflow-state", pod_s3_endpoint)
    operator.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(manifest))
    final = phase_is(operator, "wordcount", "Completed", "Failed")
    assert final["phase"] == "Completed", final
    expected = collections.Counter(text.lower().split())
    assert output.lines() == collections.Counter(f"{w}\t{n}" for w, n in expected.items())
    row = table_row(operator, "wordcount")
    assert list(row) == ["NAME", "PHASE", "READY", "CHECKPOINT", "SAVEPOINT", "RECOVERIES", "AGE", "MESSAGE"]
    assert (row["NAME"], row["PHASE"]) == ("wordcount", "Completed") and row["READY"].endswith("/2"), row
    assert row["MESSAGE"] == "the job finished", row
    reasons = [e["reason"] for e in operator.get("events", "-n", NAMESPACE,
                                                  "--field-selector", "involvedObject.name=wordcount")["items"]]
    assert "Deploying" in reasons and "Completed" in reasons


def test_killed_worker_pods_recover_from_checkpoints_in_redis(operator, output, template, windowed, redis_server,
                                                              pod_redis_url):
    events = 60000
    apply_job(operator, "killed", windowed, {"output": output.url, "events": events, "rate": 4000}, template,
              checkpointing=State(redis_server.url, pod_url=pod_redis_url).checkpointing(0.3))
    phase_is(operator, "killed", "Running")
    for round_ in range(3):
        wait_for(lambda: status(operator, "killed").get("lastCheckpoint"), 30, "a checkpoint")
        pods = [p["metadata"]["name"] for p in operator.get("pods", "-n", NAMESPACE, "-l",
                                                             "segflow.io/job=killed,segflow.io/role=worker")["items"]]
        if round_ % 2 == 0:
            operator.kubectl("delete", "pod", "-n", NAMESPACE, random.Random(round_).choice(pods), "--wait=false")
        else:                  # the worker's own process (in its container), not its pod
            victims = [pid for pid in (innermost(operator, pod, "worker", NAMESPACE) for pod in pods) if pid]
            assert victims, "no worker process of the job found"
            os.kill(victims[0], signal.SIGKILL)
        wait_for(lambda: status(operator, "killed").get("recoveries", 0) >= round_ + 1, 60, "a recovery")
        phase_is(operator, "killed", "Running", "Completed")
        if round_ == 0:
            _web_view_shows_the_recovery(operator, status(operator, "killed"))
    final = phase_is(operator, "killed", "Completed", "Failed", timeout=120)
    assert final["phase"] == "Completed", final
    assert set(final) <= typed_status_fields(), set(final) - typed_status_fields()
    assert final["recoveries"] == 3
    assert output.lines() == windowed_oracle(events)


def typed_status_fields() -> set:
    with open(os.path.join(ROOT, "charts", "segflow", "crds", "streamjobs.segflow.io.yaml")) as f:
        crd = yaml.safe_load(f)
    return set(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"])


def _web_view_shows_the_recovery(cluster, job_status: dict) -> None:
    """The coordinator's web view, on the pod's metrics port (the one status.webUrl names
    through the job's Service), lists the recovery and the checkpoints before it."""
    assert job_status["webUrl"] == f"http://killed-coordinator.{NAMESPACE}.svc:9400/"
    view = _api_job(cluster, job_status["coordinatorIP"])
    assert view["recoveries"] >= 1 and view["recovery_log"], view
    assert view["checkpoints"] and all(c["complete"] for c in view["checkpoints"][:1]), view["checkpoints"]
    assert len(view["blocks"]) >= 2 and view["protocol"] == "aligned"


def windowed_job_with_a_checkpoint(operator, name: str, module: str, template: dict, output: Output, events: int,
                                   state) -> None:
    """Apply the windowed job paced at 5,000 events/s, and return once it runs and has a
    completed checkpoint: where the tests that change a checkpointed job's spec begin."""
    apply_job(operator, name, module, {"output": output.url, "events": events, "rate": 5000}, template,
              checkpointing=state.checkpointing())
    phase_is(operator, name, "Running")
    wait_for(lambda: status(operator, name).get("lastCheckpoint"), 30, "a checkpoint")


def test_suspend_and_resume_through_a_savepoint(operator, output, template, windowed, state):
    events = 40000
    windowed_job_with_a_checkpoint(operator, "pausing", windowed, template, output, events, state)
    operator.kubectl("patch", "sj", "pausing", "-n", NAMESPACE, "--type", "merge", "-p",
                     '{"spec":{"state":"suspended"}}')
    suspended = phase_is(operator, "pausing", "Suspended")
    assert suspended["resumeFrom"] == str(suspended["savepoint"]["id"])
    wait_for(lambda: not operator.get("pods", "-n", NAMESPACE, "-l", "segflow.io/job=pausing")["items"], 30,
             "the pods to go")
    operator.kubectl("patch", "sj", "pausing", "-n", NAMESPACE, "--type", "merge", "-p",
                     '{"spec":{"state":"running"}}')
    final = phase_is(operator, "pausing", "Completed", "Failed", timeout=120)
    assert final["phase"] == "Completed", final
    assert final["deployed"]["restoredFrom"] == suspended["resumeFrom"]
    assert output.lines() == windowed_oracle(events)


def test_parallelism_change_redeploys_from_a_savepoint(operator, output, template, windowed, state):
    events = 50000
    windowed_job_with_a_checkpoint(operator, "growing", windowed, template, output, events, state)
    scale = operator.get("sj", "growing", "-n", NAMESPACE, "--subresource", "scale")
    assert scale["spec"]["replicas"] == 2
    assert scale["status"]["selector"] == "segflow.io/job=growing,segflow.io/role=worker"
    operator.kubectl("scale", "sj", "growing", "-n", NAMESPACE, "--replicas", "3")    # the scale subresource
    redeployed = wait_for(lambda: (s := status(operator, "growing")).get("revision") == 2 and s, 60, "the redeploy")
    assert redeployed["deployed"]["parallelism"] == 3
    assert redeployed["deployed"]["restoredFrom"] == str(redeployed["savepoint"]["id"])
    workers = wait_for(lambda: len(operator.get("pods", "-n", NAMESPACE, "-l",
                                                "segflow.io/job=growing,segflow.io/role=worker,segflow.io/revision=2")
                                   ["items"]) == 3, 60, "three workers")
    assert workers
    config = operator.get("configmap", "growing-job", "-n", NAMESPACE)      # follows the changed spec
    assert json.loads(config["data"]["job.json"])["parallelism"] == 3
    columns = wait_for(lambda: (row := table_row(operator, "growing"))["READY"] == "3/3" and row, 60,
                       "READY 3/3 in kubectl get sj")
    assert list(columns)[:5] == ["NAME", "PHASE", "READY", "CHECKPOINT", "SAVEPOINT"] and list(columns)[-1] == "MESSAGE"
    assert columns["SAVEPOINT"] == str(redeployed["savepoint"]["id"])
    final = phase_is(operator, "growing", "Completed", "Failed", timeout=120)
    assert final["phase"] == "Completed", final
    assert output.lines() == windowed_oracle(events)


def test_an_upgrade_that_would_lose_the_state_is_refused_and_the_job_runs_on(operator, output, template, windowed,
                                                                             state):
    """aligned to cic: cic cannot restore aligned's savepoints or checkpoints, and the
    redeploy started the job again from the beginning of its input. The operator refuses
    it, the running revision goes on (a lost worker comes back with its image, though the
    changed spec names another); the change undone, the refusal clears."""
    events = 40000
    windowed_job_with_a_checkpoint(operator, "switching", windowed, template, output, events, state)
    cic = {**state.checkpointing(), "protocol": "cic"}
    operator.kubectl("patch", "sj", "switching", "-n", NAMESPACE, "--type", "merge", "-p",
                     json.dumps({"spec": {"checkpointing": cic, "image": "segflow/engine:9.9.9"}}))
    refused = wait_for(lambda: (s := status(operator, "switching")).get("upgradeRefused") and s, 30, "the refusal")
    assert "changed from aligned to cic" in refused["upgradeRefused"], refused
    assert refused["revision"] == 1 and refused["phase"] in ("Running", "Completed"), refused
    warnings = operator.get("events", "-n", NAMESPACE, "--field-selector", "reason=UpgradeRefused")["items"]
    assert warnings and warnings[0]["type"] == "Warning"
    # a worker lost meanwhile comes back as the running revision's (its image), not the changed spec's
    selector = "segflow.io/job=switching,segflow.io/role=worker"
    lost = operator.get("pods", "-n", NAMESPACE, "-l", selector)["items"][0]
    operator.kubectl("delete", "pod", lost["metadata"]["name"], "-n", NAMESPACE, "--wait=false")
    replaced = wait_for(lambda: [p for p in operator.get("pods", "-n", NAMESPACE, "-l", selector)["items"]
                                 if p["metadata"]["uid"] != lost["metadata"]["uid"]
                                 and p["metadata"]["name"] == lost["metadata"]["name"]], 60, "the replacement")
    assert replaced[0]["spec"]["containers"][0]["image"] == "segflow/engine:0.1.0"
    operator.kubectl("patch", "sj", "switching", "-n", NAMESPACE, "--type", "merge", "-p",
                     json.dumps({"spec": {"checkpointing": state.checkpointing(), "image": "segflow/engine:0.1.0"}}))
    final = phase_is(operator, "switching", "Completed", "Failed", timeout=120)
    assert final["phase"] == "Completed" and final["revision"] == 1 and not final.get("upgradeRefused"), final
    assert output.lines() == windowed_oracle(events)


def test_a_savepoint_by_nonce_then_deletion_removes_every_owned_object(operator, output, template, windowed, state):
    apply_job(operator, "saving", windowed, {"output": output.url, "events": 200000, "rate": 5000}, template,
              checkpointing=state.checkpointing())
    phase_is(operator, "saving", "Running")
    operator.kubectl("patch", "sj", "saving", "-n", NAMESPACE, "--type", "merge", "-p",
                     '{"spec":{"savepointTriggerNonce":7}}')
    saved = wait_for(lambda: (s := status(operator, "saving")).get("lastSavepointNonce") == 7 and s, 60,
                     "the savepoint")
    savepoint = saved["savepoint"]["id"]
    assert state.complete_markers(operator, "saving")[savepoint]["savepoint"] is True
    assert re.search(rf"/chk-0*{savepoint}/?$", saved["savepoint"]["location"]), saved["savepoint"]
    assert saved["savepoints"] == [saved["savepoint"]]
    assert set(saved) <= typed_status_fields(), set(saved) - typed_status_fields()
    explained = operator.kubectl("explain", "streamjobs.status.savepoints", "-n", NAMESPACE).stdout
    assert "newest first" in explained, explained
    owned = {kind: [o["metadata"]["name"] for o in operator.get(kind, "-n", NAMESPACE, "-l",
                                                                "segflow.io/job=saving")["items"]]
             for kind in ("pods", "services", "configmaps")}
    assert len(owned["pods"]) == 3 and len(owned["services"]) == 2 and len(owned["configmaps"]) == 1
    operator.kubectl("delete", "sj", "saving", "-n", NAMESPACE)
    wait_for(lambda: all(not operator.get(kind, "-n", NAMESPACE, "-l", "segflow.io/job=saving")["items"]
                         for kind in owned), 60, "the owned objects to be collected")


def test_deleting_a_running_job_with_final_savepoint_keeps_its_state(operator, output, template, windowed, state):
    apply_job(operator, "final", windowed, {"output": output.url, "events": 200000, "rate": 5000}, template,
              checkpointing=state.checkpointing(), finalSavepointOnDelete=True)
    phase_is(operator, "final", "Running")
    operator.kubectl("delete", "sj", "final", "-n", NAMESPACE, "--wait=true", timeout=120)
    savepoints = [i for i, record in state.complete_markers(operator, "final").items() if record.get("savepoint")]
    assert len(savepoints) == 1
    reasons = [e["reason"] for e in operator.get("events", "-n", NAMESPACE,
                                                  "--field-selector", "involvedObject.name=final")["items"]]
    assert "Savepoint" in reasons


def test_deleting_a_namespace_with_a_running_job_terminates_it(operator, output, template, windowed, state):
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "doomed"},
            "spec": {"image": "segflow/engine:0.1.0", "parallelism": 2, "checkpointing": state.checkpointing(),
                     "podTemplate": template,
                     "job": {"module": windowed, "parameters": {"output": output.url, "events": "200000",
                                                                 "rate": "5000"}}}}
    operator.kubectl("apply", "-n", "doomed", "-f", "-", input=json.dumps(body))
    wait_for(lambda: (operator.get("sj", "doomed", "-n", "doomed").get("status") or {}).get("phase") == "Running",
             90, "the job to run")
    operator.kubectl("delete", "namespace", "doomed", "--wait=false")
    wait_for(lambda: operator.kubectl("get", "namespace", "doomed", check=False).returncode != 0, 120,
             "the namespace to be gone")
    leftovers = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"]
                 and output.url in " ".join(p.info["cmdline"])]
    assert leftovers == []


def test_a_pod_the_api_server_refuses_is_reported_and_created_once_allowed(operator, output, template, windowed):
    """A ResourceQuota admits the coordinator but not the workers: the refusal shows in
    the status and an event (not only in the operator's log), and once the quota is gone
    the operator's next try deploys the workers and the job completes."""
    namespace, events = "quota-e2e", 20000
    prepare_namespace(operator, namespace)
    operator.kubectl("create", "quota", "one-pod", "-n", namespace, "--hard=pods=1")
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "squeezed"},
            "spec": {"image": "segflow/engine:0.1.0", "parallelism": 2, "checkpointing": {"protocol": "none"},
                     "podTemplate": template,
                     "job": {"module": windowed, "parameters": {"output": output.url,
                                                                 "events": str(events), "rate": "10000"}}}}
    try:
        operator.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(body))

        def refused():
            found = operator.get("sj", "squeezed", "-n", namespace).get("status") or {}
            return "exceeded quota" in found.get("lastError", "") and found
        refusal = wait_for(refused, 90, "the refusal in the status")
        assert "refused to create Pod squeezed-1-worker-" in refusal["lastError"]
        reasons = [e["reason"] for e in operator.get("events", "-n", namespace, "--field-selector",
                                                      "involvedObject.name=squeezed")["items"]]
        assert "CreateRefused" in reasons
        operator.kubectl("delete", "quota", "one-pod", "-n", namespace)
        final = wait_for(lambda: (s := operator.get("sj", "squeezed", "-n", namespace).get("status") or {})
                         .get("phase") in ("Completed", "Failed") and s, 120, "the job to end")
        assert final["phase"] == "Completed", final
        assert output.lines() == windowed_oracle(events)
    finally:
        operator.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


BAD_SCHEMA = [
    ({"parallelism": 0}, "spec.parallelism"),
    ({"parallelism": -2}, "spec.parallelism"),
    ({"parallelism": "two"}, "spec.parallelism"),
    ({"image": ""}, "spec.image"),
    ({"job": {}}, "spec.job.module"),
    ({"job": {"module": "examples.wordcount", "parameters": {"n": 3}}}, "spec.job.parameters"),
    ({"job": {"module": "bad module!"}}, "spec.job.module"),
    ({"job": {"module": "m", "function": "1x"}}, "spec.job.function"),
    ({"checkpointing": {"protocol": "chandy-lamport"}}, "spec.checkpointing.protocol"),
    ({"checkpointing": {"protocol": "aligned", "stateUrl": "ftp://x"}}, "spec.checkpointing.stateUrl"),
    ({"checkpointing": {"intervalSeconds": -1}}, "spec.checkpointing.intervalSeconds"),
    ({"checkpointing": {"retain": 0}}, "spec.checkpointing.retain"),
    ({"state": "paused"}, "spec.state"),
    ({"upgradeMode": "yolo"}, "spec.upgradeMode"),
    ({"restoreFrom": "yesterday"}, "spec.restoreFrom"),
    ({"savepointTriggerNonce": "x"}, "spec.savepointTriggerNonce"),
]
BAD_AT_RUN = [
    ({"job": {"module": "examples.no_such_job"}}, "examples.no_such_job"),
    ({"job": {"module": "examples.wordcount", "function": "missing"}}, "no function missing"),
    ({"job": {"module": "examples.wordcount"}}, "input"),
    ({"checkpointing": {"protocol": "aligned"}}, "needs checkpointing.stateUrl"),
    ({"checkpointing": {"protocol": "aligned", "stateUrl": "file:///tmp/x", "intervalSeconds": 0}},
     "intervalSeconds must be positive"),
]


@pytest.mark.parametrize("change,field", BAD_SCHEMA, ids=[f for _, f in BAD_SCHEMA])
def test_malformed_specs_are_rejected_by_the_api_server(operator, change, field):
    spec = {"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount"}, **change}
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "bad"}, "spec": spec}
    result = operator.kubectl("apply", "--validate=false", "-n", NAMESPACE, "-f", "-", input=json.dumps(body),
                              check=False)          # the API server, not kubectl, must refuse it
    operator.kubectl("delete", "sj", "bad", "-n", NAMESPACE, "--ignore-not-found")
    assert result.returncode != 0 and field in result.stderr, result.stderr


@pytest.mark.parametrize("change,message", BAD_AT_RUN, ids=[m for _, m in BAD_AT_RUN])
def test_unrunnable_specs_fail_with_a_clear_status(operator, tmp_path, change, message):
    name = f"unrunnable-{BAD_AT_RUN.index((change, message))}"
    spec = {"image": "segflow/engine:0.1.0", "checkpointing": {"protocol": "none"},
            "job": {"module": "examples.wordcount", "parameters": {"output": str(tmp_path)}}, **change}
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": name}, "spec": spec}
    operator.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(body))
    failed = phase_is(operator, name, "Failed", "Completed", timeout=60)
    assert failed["phase"] == "Failed" and message in failed["message"], failed
    operator.kubectl("delete", "sj", name, "-n", NAMESPACE)
    assert test_the_operator_runs_from_the_chart(operator) is None      # the operator is still running


def test_manifests_pass_server_side_dry_run(operator):
    for manifest in sorted(glob.glob(os.path.join(ROOT, "examples", "k8s", "*.yaml"))):
        result = operator.kubectl("apply", "--dry-run=server", "-n", NAMESPACE, "-f", manifest, check=False)
        assert result.returncode == 0, (manifest, result.stderr)
    rendered = operator.helm("template", "segflow", os.path.join(ROOT, "charts", "segflow"), "--namespace",
                             "segflow-system").stdout
    result = operator.kubectl("apply", "--dry-run=server", "-f", "-", input=rendered, check=False)
    assert result.returncode == 0, result.stderr


def _api_job(cluster, ip: str) -> dict:
    """The coordinator's /api/job, fetched from where pod IPs are reachable."""
    code, body = cluster.http_get(f"http://{ip}:9400/api/job")
    assert code == 200, (code, body)
    return json.loads(body)


def test_a_standby_worker_pod_takes_over_a_deleted_worker_pod(operator, output, template, windowed, redis_server,
                                                              pod_redis_url):
    """spec.standbyWorkers: 1 keeps a third worker pod registered and idle; when a worker's
    pod is deleted, the standby runs its replicas (the web view names the slot it runs),
    the deleted pod's replacement stands by, and the output equals the oracle."""
    events = 40000
    apply_job(operator, "standby", windowed, {"output": output.url, "events": events, "rate": 4000}, template,
              checkpointing=State(redis_server.url, pod_url=pod_redis_url).checkpointing(0.3), standbyWorkers=1)
    running = phase_is(operator, "standby", "Running")
    wait_for(lambda: status(operator, "standby").get("lastCheckpoint"), 30, "a checkpoint")
    ip = status(operator, "standby")["coordinatorIP"]
    view = wait_for(lambda: (v := _api_job(operator, ip))["standby"] and v, 30, "a registered standby")
    assert [w["name"] for w in view["standby"]] == ["w2"] and sorted(w["name"] for w in view["workers"]) == ["w0", "w1"]
    operator.kubectl("delete", "pod", "-n", NAMESPACE, f"standby-{running['revision']}-worker-1", "--wait=false")
    wait_for(lambda: status(operator, "standby").get("recoveries", 0) >= 1, 60, "a recovery")
    took_over = wait_for(lambda: [w for w in _api_job(operator, ip)["workers"]
                                  if w["name"] == "w2" and w["slot"] == "w1"], 30, "the standby running w1's replicas")
    assert took_over
    wait_for(lambda: [w["name"] for w in _api_job(operator, ip)["standby"]] == ["w1"], 60,
             "the new pod of w1 standing by")
    final = phase_is(operator, "standby", "Completed", "Failed", timeout=120)
    assert final["phase"] == "Completed", final
    assert final["recoveries"] == 1
    assert output.lines() == windowed_oracle(events)
