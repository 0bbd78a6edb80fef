"""A StreamJob with a batch stage end to end on the local control plane: the coordinator
pod's batch-stage sidecar aggregates each committed epoch of the lambda example into
Parquet, the coordinator pod is deleted mid-run (the operator redeploys it from the last
checkpoint, and the new sidecar continues from the stage's progress), and the combined
totals equal the plain-Python oracle exactly: no epoch twice, none missing."""
import json
import os

import pytest

from support.clusters import installed_operator, wait_for
from support.lambda_oracle import DAILY, STREAM, daily_oracle, parquet_totals
from support.servers import TEST_S3_CREDENTIALS, new_bucket, server_fixture, start_s3

# The jobs are files of this checkout writing to the test's directories: see tests/k8s/conftest.py.
JOBS_FROM_HOST_FILES = True

NAMESPACE = "batch-e2e"
EVENTS = 40000      # 67 s at 600/s: the sidecar's Spark starts first even on a loaded machine


s3_server = server_fixture("s3_server", start_s3, "moto S3 server")


@pytest.fixture(scope="module")
def operator(cluster, pod_s3_endpoint):
    with installed_operator(cluster, NAMESPACE, (pod_s3_endpoint,)):
        cluster.kubectl("create", "secret", "generic", "segflow-state", "-n", NAMESPACE,
                        *(f"--from-literal={name}={value}" for name, value in TEST_S3_CREDENTIALS.items()))
        yield cluster


def status(cluster, name):
    return cluster.get("sj", name, "-n", NAMESPACE).get("status") or {}


def progress(directory):
    path = directory / "_batch_stage" / "progress.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_the_sidecar_processes_each_committed_epoch_once_across_a_lost_coordinator(operator, tmp_path, pod_s3_endpoint):
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "lambda"},
            "spec": {"image": "segflow/engine:0.1.0", "parallelism": 2,
                     "job": {"module": STREAM, "parameters": {"output": str(tmp_path / "bids"),
                                                              "events": str(EVENTS), "rate": "600"}},
                     "checkpointing": {"protocol": "aligned", "intervalSeconds": 0.5,
                                       "stateUrl": f"s3://{new_bucket()}/state",
                                       "s3Endpoint": pod_s3_endpoint},
                     "podTemplate": {"envFrom": [{"secretRef": {"name": "segflow-state"}}]},
                     "batchStage": {"module": DAILY, "function": "daily", "output": str(tmp_path / "daily")}}}
    operator.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(body))
    wait_for(lambda: progress(tmp_path / "daily").get("lastEpoch"), 120, "the sidecar's first run")
    coordinator = operator.get("pods", "-n", NAMESPACE, "-l",
                               "segflow.io/job=lambda,segflow.io/role=coordinator")["items"][0]
    assert [c["name"] for c in coordinator["spec"]["containers"]] == ["coordinator", "batch-stage"]
    assert status(operator, "lambda").get("phase") == "Running", "the job ended before the pod could be lost"
    operator.kubectl("delete", "pod", "-n", NAMESPACE, coordinator["metadata"]["name"], "--wait=false")
    wait_for(lambda: status(operator, "lambda").get("revision") == 2, 60, "the redeploy")
    final = wait_for(lambda: (s := status(operator, "lambda")).get("phase") in ("Completed", "Failed") and s,
                     240, "the job to end")
    assert final["phase"] == "Completed", final
    assert final["recoveries"] >= 1
    shown = wait_for(lambda: (status(operator, "lambda").get("batchStage") or {}).get("lastEpoch") == "end"
                     and status(operator, "lambda")["batchStage"], 120, "the final epoch's batch run")
    assert shown["lastRun"]["error"] == "" and shown["lastRun"]["epochs"].endswith("-end")
    objects = {}
    for directory, _, files in os.walk(tmp_path / "daily"):
        for name in files:
            if name.endswith(".parquet"):
                path = os.path.join(directory, name)
                objects[os.path.relpath(path, tmp_path / "daily")] = open(path, "rb").read()
    assert len(objects) >= 2, objects.keys()       # results from before and after the lost pod
    totals, _ = parquet_totals(objects)
    assert totals == daily_oracle(EVENTS)
