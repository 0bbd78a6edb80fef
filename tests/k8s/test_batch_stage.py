"""A StreamJob with a batch stage end to end on the local control plane: the coordinator
pod's batch-stage sidecar aggregates each committed epoch of the lambda example into
Parquet, the coordinator pod is deleted mid-run (the operator redeploys it from the last
checkpoint, and the new sidecar continues from the stage's progress), and the combined
totals equal the plain-Python oracle exactly: no epoch twice, none missing. With pods from
images the sidecar runs from the Spark image (spec.spark_image), the example's files come by
a configMap volume, and the bids and the Parquet output are in S3 (the moto server)."""
import json

import pytest

from support.clusters import installed_operator, wait_for
from support.jobfiles import pod_path, pod_template, publish, s3_objects
from support.lambda_oracle import DAILY, STREAM, daily_oracle, parquet_totals
from support.servers import TEST_S3_CREDENTIALS, new_bucket, server_fixture, start_s3

NAMESPACE = "batch-e2e"
JOB_FILES = "lambda-example"
EVENTS = 40000      # 67 s at 600/s: the sidecar's Spark starts first even on a loaded machine


s3_server = server_fixture("s3_server", start_s3, "moto S3 server")


def _s3_secret(cluster, namespace: str) -> None:
    cluster.kubectl("create", "secret", "generic", "segflow-state", "-n", namespace,
                    *(f"--from-literal={name}={value}" for name, value in TEST_S3_CREDENTIALS.items()))


@pytest.fixture(scope="module")
def operator(cluster, pod_s3_endpoint):
    """The operator reads the stage's progress from S3 for status.batchStage: it gets the
    credentials through the chart's envFrom, the pods through their podTemplate's."""
    cluster.kubectl("create", "namespace", "segflow-system", check=False)
    _s3_secret(cluster, "segflow-system")
    try:
        with installed_operator(cluster, NAMESPACE, (pod_s3_endpoint,),
                                extra=("--set", "envFrom[0].secretRef.name=segflow-state")):
            _s3_secret(cluster, NAMESPACE)
            publish(cluster, NAMESPACE, JOB_FILES, STREAM, DAILY)
            yield cluster
    finally:
        cluster.kubectl("delete", "secret", "segflow-state", "-n", "segflow-system", check=False)


def status(cluster, name):
    return cluster.get("sj", name, "-n", NAMESPACE).get("status") or {}


def progress(daily: str, endpoint: str) -> dict:
    found = s3_objects(daily, endpoint).get("_batch_stage/progress.json")
    return json.loads(found) if found else {}


def test_the_sidecar_processes_each_committed_epoch_once_across_a_lost_coordinator(operator, s3_server,
                                                                                   pod_s3_endpoint):
    bucket = new_bucket()
    daily = f"s3://{bucket}/daily"
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "lambda"},
            "spec": {"image": "segflow/engine:0.1.0", "parallelism": 2,
                     "job": {"module": pod_path(operator, STREAM),
                             "parameters": {"output": f"s3://{bucket}/bids", "events": str(EVENTS), "rate": "600"}},
                     "checkpointing": {"protocol": "aligned", "intervalSeconds": 0.5,
                                       "stateUrl": f"s3://{bucket}/state", "s3Endpoint": pod_s3_endpoint},
                     "podTemplate": pod_template(JOB_FILES, "segflow-state", pod_s3_endpoint),
                     "batchStage": {"module": pod_path(operator, DAILY), "function": "daily", "output": daily}}}
    operator.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps(body))
    wait_for(lambda: progress(daily, s3_server.endpoint).get("lastEpoch"), 120, "the sidecar's first run")
    coordinator = operator.get("pods", "-n", NAMESPACE, "-l",
                               "segflow.io/job=lambda,segflow.io/role=coordinator")["items"][0]
    assert [c["name"] for c in coordinator["spec"]["containers"]] == ["coordinator", "batch-stage"]
    assert coordinator["spec"]["containers"][1]["image"] == "segflow/spark:0.1.0"     # Java for the Spark session
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
    objects = {key: data for key, data in s3_objects(daily, s3_server.endpoint).items() if key.endswith(".parquet")}
    assert len(objects) >= 2, objects.keys()       # results from before and after the lost pod
    totals, _ = parquet_totals(objects)
    assert totals == daily_oracle(EVENTS)
