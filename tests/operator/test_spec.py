"""StreamJob specs: what the schema cannot reject is rejected here, with what to change."""
import pytest

from segflow_operator.spec import InvalidSpec, parse

GOOD = {"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount"}}


def test_defaults():
    s = parse({**GOOD, "checkpointing": {"stateUrl": "s3://bucket/jobs"}})
    assert (s.function, s.parallelism, s.state, s.upgrade_mode) == ("build", 1, "running", "savepoint")
    assert (s.checkpointing.protocol, s.checkpointing.interval, s.checkpointing.retain) == ("aligned", 5.0, 3)


@pytest.mark.parametrize("spec,message", [
    ({"job": {"module": "m"}}, "spec.image is required"),
    ({"image": "i", "job": {}}, "spec.job.module is required"),
    ({**GOOD, "parallelism": 0}, "between 1 and 256"),
    ({**GOOD, "job": {"module": "m", "parameters": {"n": 3}}}, "must be strings"),
    ({**GOOD, "checkpointing": {"protocol": "aligned"}}, "needs checkpointing.stateUrl"),
    ({**GOOD, "checkpointing": {"protocol": "none", "intervalSeconds": 0}}, "must be positive"),
    ({**GOOD, "checkpointing": {"protocol": "none"}, "restoreFrom": "3"}, "restoreFrom needs checkpointing"),
])
def test_unrunnable_specs_say_what_to_change(spec, message):
    with pytest.raises(InvalidSpec, match=message):
        parse(spec)


def test_the_deployment_hash_changes_with_what_a_redeploy_needs_and_only_that():
    s = parse({**GOOD, "checkpointing": {"protocol": "none"}})
    same = parse({**GOOD, "checkpointing": {"protocol": "none"}, "savepointTriggerNonce": 4, "state": "suspended"})
    assert s.deployment_hash() == same.deployment_hash()
    for change in ({"parallelism": 2}, {"image": "segflow/engine:0.2.0"}, {"restartNonce": 1},
                   {"job": {"module": "examples.wordcount", "parameters": {"a": "b"}}}):
        assert parse({**GOOD, "checkpointing": {"protocol": "none"}, **change}).deployment_hash() != s.deployment_hash()


def test_a_segment_backup_spec_reaches_the_coordinator_as_the_cli_reads_it():
    from segflow.cli.main import _parser
    from segflow_operator.manifests import coordinator_pod
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "j", "namespace": "n",
                                                                                    "uid": "u"}}
    spec = parse({**GOOD, "checkpointing": {"protocol": "segment", "stateUrl": "s3://b/jobs", "connectors": "2,4"}})
    args = _parser().parse_args(coordinator_pod(body, spec, 4, "auto")["spec"]["containers"][0]["args"])
    assert (args.settings.protocol.value, args.settings.connectors, args.settings.restore) == ("segment", "2,4", "auto")
    assert args.settings.revision == 4          # its checkpoint ids stay apart from other revisions
    plain = parse({**GOOD, "checkpointing": {"protocol": "segment", "stateUrl": "s3://b/jobs"}})
    assert plain.deployment_hash() != spec.deployment_hash()
    with pytest.raises(InvalidSpec, match="needs --checkpoint-protocol segment"):
        parse({**GOOD, "checkpointing": {"stateUrl": "s3://b/jobs", "connectors": "2"}})


def test_placement_and_window_memory_reach_the_coordinator_and_shape_the_deployment():
    from segflow.cli.main import _parser
    from segflow_operator.manifests import coordinator_pod
    body = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "j", "namespace": "n",
                                                                                    "uid": "u"}}
    segment = {"protocol": "segment", "stateUrl": "s3://b/jobs"}
    spec = parse({**GOOD, "checkpointing": {**segment, "placement": "segment", "windowMemoryMiB": 8}})
    settings = _parser().parse_args(coordinator_pod(body, spec, 1, "auto")["spec"]["containers"][0]["args"]).settings
    assert (settings.placement, settings.window_memory_mb) == ("segment", 8.0)
    plain = parse({**GOOD, "checkpointing": segment})
    assert (plain.checkpointing.placement, plain.checkpointing.window_memory_mb) == ("spread", 64.0)
    assert plain.deployment_hash() == parse({**GOOD, "checkpointing": {**segment, "placement": "spread",
                                                                        "windowMemoryMiB": 64}}).deployment_hash()
    assert spec.deployment_hash() != plain.deployment_hash()
    with pytest.raises(InvalidSpec, match="needs --checkpoint-protocol segment"):
        parse({**GOOD, "checkpointing": {"stateUrl": "s3://b/jobs", "placement": "segment"}})
    with pytest.raises(InvalidSpec, match="window-memory"):
        parse({**GOOD, "checkpointing": {**segment, "windowMemoryMiB": 0}})


def test_restore_from_another_jobs_savepoint_keeps_the_jobs_own_store():
    location = "s3://backups/segflow/jobs/default-wordcount/chk-00000042/"
    spec = parse({"image": "i", "job": {"module": "m"}, "restoreFrom": location,
                  "checkpointing": {"stateUrl": "s3://state/jobs-b"}})
    assert spec.restore_from == location and spec.checkpointing.state_url == "s3://state/jobs-b"
    with pytest.raises(InvalidSpec, match="restoreFrom carries a password"):
        parse({"image": "i", "job": {"module": "m"}, "restoreFrom": "redis://:pw@r:6379/0/jobs/a/chk-1/",
               "checkpointing": {"stateUrl": "s3://state/jobs-b"}})
