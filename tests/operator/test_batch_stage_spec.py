"""spec.batchStage: parsed and checked, rendered as the coordinator pod's sidecar, and a
sidecar's exit not taken for the coordinator's (pure)."""
import pytest

from segflow.cli.main import _parser
from segflow_operator.manifests import batch_stage_container, coordinator_pod
from segflow_operator.observe import pod_view
from segflow_operator.spec import InvalidSpec, parse, spark_image

CHECKPOINTED = {"protocol": "aligned", "stateUrl": "s3://state/jobs", "s3Endpoint": "http://s3.storage:9000"}
SPEC = {"image": "segflow/engine:0.1.0", "checkpointing": CHECKPOINTED,
        "job": {"module": "examples/lambda/stream.py", "parameters": {"output": "s3://data/bids"}},
        "batchStage": {"module": "examples/lambda/daily.py", "function": "daily", "output": "s3://data/daily"}}
BODY = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob",
        "metadata": {"name": "lambda", "namespace": "jobs", "uid": "u-1"}}


def with_stage(**changes):
    return {**SPEC, "batchStage": {**SPEC["batchStage"], **changes}}


def test_defaults_come_from_the_job():
    stage = parse(SPEC).batch_stage
    assert (stage.input, stage.trigger, stage.spark_master) == ("s3://data/bids", "onCheckpoint", "local[1]")
    assert stage.s3_endpoint == "http://s3.storage:9000"
    assert parse({**SPEC, "batchStage": None}).batch_stage is None


@pytest.mark.parametrize("spec,message", [
    (with_stage(function=""), "spec.batchStage.function is required"),
    (with_stage(output=""), "spec.batchStage.output is required"),
    ({**with_stage(), "job": {"module": "m"}}, "batchStage.input is required when the job has no output"),
    ({**with_stage(), "checkpointing": {"protocol": "none"}}, "completed checkpoints commit"),
    (with_stage(trigger="hourly"), "onCheckpoint or a positive number"),
    (with_stage(trigger="0"), "onCheckpoint or a positive number"),
    (with_stage(output="s3://data/bids/"), "must differ from its input"),
])
def test_unrunnable_stages_say_what_to_change(spec, message):
    with pytest.raises(InvalidSpec, match=message):
        parse(spec)


@pytest.mark.parametrize("job,stage", [
    ("segflow/engine:0.1.0", "segflow/spark:0.1.0"),
    ("registry.example.com:5000/segflow/engine:1.2", "registry.example.com:5000/segflow/spark:1.2"),
    ("segflow/engine", "segflow/spark"),
    ("myorg/etl:3", "myorg/etl:3"),
    ("segflow/engine@sha256:abc", "segflow/engine@sha256:abc"),
])
def test_the_stage_runs_the_spark_image_unless_told_otherwise(job, stage):
    assert spark_image(job) == stage
    assert parse({**SPEC, "image": job}).batch_stage.image == stage
    assert parse({**with_stage(image="mine:1"), "image": job}).batch_stage.image == "mine:1"


def test_a_batch_stage_changes_the_deployment_and_its_absence_does_not():
    plain = {**SPEC, "batchStage": None}
    assert parse(plain).deployment_hash() == parse({k: v for k, v in SPEC.items() if k != "batchStage"}
                                                   ).deployment_hash()
    assert parse(SPEC).deployment_hash() != parse(plain).deployment_hash()
    assert parse(with_stage(trigger="30")).deployment_hash() != parse(SPEC).deployment_hash()


def test_the_sidecar_runs_segflow_batch_stage_until_the_job_is_finished():
    spec = parse(with_stage(trigger="30", sparkMaster="local[2]"))
    pod = coordinator_pod(BODY, spec, 1, "auto")
    coordinator, sidecar = pod["spec"]["containers"]
    assert coordinator["name"] == "coordinator" and sidecar == batch_stage_container(spec, fresh=False)
    assert sidecar["name"] == "batch-stage" and sidecar["image"] == "segflow/spark:0.1.0"
    assert sidecar["command"] == ["segflow"]
    args = _parser().parse_args(sidecar["args"])       # the CLI accepts exactly what the operator renders
    assert (args.command, args.input, args.output, args.module, args.function) == (
        "batch-stage", "s3://data/bids", "s3://data/daily", "examples/lambda/daily.py", "daily")
    assert (args.trigger, args.spark_master, args.s3_endpoint, args.until_finished, args.fresh) == (
        "30", "local[2]", "http://s3.storage:9000", True, False)
    first = coordinator_pod(BODY, spec, 1, "")["spec"]["containers"][1]     # a job from the start
    assert _parser().parse_args(first["args"]).fresh
    assert len(coordinator_pod(BODY, parse({**SPEC, "batchStage": None}), 1, "")["spec"]["containers"]) == 1


def status(*containers):
    return {"metadata": {"name": "lambda-1-coordinator", "labels": {"segflow.io/role": "coordinator",
                                                                    "segflow.io/revision": "1"}},
            "status": {"phase": "Running", "containerStatuses": list(containers)}}


def test_the_pods_exit_code_is_the_coordinators_not_the_sidecars():
    sidecar_done = {"name": "batch-stage", "state": {"terminated": {"exitCode": 137, "reason": "Error"}}}
    running = {"name": "coordinator", "state": {"running": {}}}
    assert pod_view(status(running, sidecar_done)).exit_code is None
    ended = {"name": "coordinator", "state": {"terminated": {"exitCode": 1, "message": "boom"}}}
    view = pod_view(status(ended, sidecar_done))
    assert (view.exit_code, view.message) == (1, "boom")
