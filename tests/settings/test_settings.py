"""Settings are one value that crosses process boundaries as JSON: what one process writes,
the next reads back unchanged; bad input is refused with what to do."""
import json
import subprocess
import sys

import pytest

from segflow.checkpoint.protocols import CheckpointProtocol
from segflow.cli.main import _parser
from segflow.errors import SegflowError
from segflow.settings import CheckpointSettings, Config


def test_checkpoint_settings_survive_json_round_trips():
    settings = CheckpointSettings("cic", 0.25, "s3://bucket/prefix", "http://127.0.0.1:9", 4, "job-1", "latest")
    again = CheckpointSettings.from_json(settings.to_json())
    assert again == settings and again.protocol is CheckpointProtocol.CIC
    segment = CheckpointSettings("segment", 1.0, "file:///tmp/s", connectors="2,4")
    assert CheckpointSettings.from_json(segment.to_json()).connectors == "2,4"
    assert json.loads(settings.to_json())["protocol"] == "cic"


def test_the_coordinator_command_line_reads_the_serialised_settings():
    settings = CheckpointSettings("unaligned", 2.0, "file:///tmp/state", job_name="wc", restore="7")
    args = _parser().parse_args(["coordinator", "job.py", "--workers", "2", "--settings", settings.to_json()])
    assert args.settings == settings


@pytest.mark.parametrize("text,message", [
    ("{not json", "checkpoint settings are not JSON"),
    ('{"protocol": "aligned", "state_url": "file:///x", "colour": 1}', r"unknown fields \['colour'\]"),
    ('{"protocol": "magic"}', "unknown checkpoint protocol 'magic'"),
    ('{"protocol": "aligned"}', "needs a state store"),
    ('{"protocol": "aligned", "state_url": "file:///x", "connectors": "1"}', "needs --checkpoint-protocol segment"),
    ('{"protocol": "cic", "state_url": "file:///x", "savepoint_interval": 60}', "the cic protocol takes no savepoints"),
    ('{"protocol": "segment", "state_url": "file:///x", "window_memory_mb": 0}', r"--window-memory .* not 0"),
])
def test_bad_serialised_settings_are_refused(text, message):
    with pytest.raises(SegflowError, match=message):
        CheckpointSettings.from_json(text)


def test_naming_returns_new_settings_and_leaves_the_callers_alone():
    given = CheckpointSettings()
    named = given.named("wordcount")
    assert (given.job_name, named.job_name) == ("", "wordcount")
    assert named.named("other").job_name == "wordcount"


@pytest.mark.parametrize("protocol,coordinated,uncoordinated", [
    ("aligned", True, False), ("unaligned", True, False), ("uncoordinated", False, True),
    ("cic", False, True), ("segment", True, False), ("none", False, False),
])
def test_protocols_say_what_they_are(protocol, coordinated, uncoordinated):
    p = CheckpointProtocol.parse(protocol)
    assert (p.coordinated, p.uncoordinated, p.enabled) == (coordinated, uncoordinated, protocol != "none")


def test_the_runtime_follows_checkpointing_unless_given():
    assert not Config().runs_in_processes
    assert Config(checkpoint_protocol="aligned", state_url="file:///tmp/s").runs_in_processes
    assert Config(parallelism=4, runtime="processes").runs_in_processes
    assert not Config(parallelism=4).runs_in_processes


def test_the_cli_refuses_threads_with_checkpoints_as_the_api_does(tmp_path):
    job = tmp_path / "job.py"
    job.write_text("def build(env):\n    env.from_iterable([1]).collect()\n")
    result = subprocess.run([sys.executable, "-m", "segflow.cli.main", "run", str(job), "--threads",
                             "--checkpoint-protocol", "aligned", "--state", f"file://{tmp_path}/s"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "checkpoints need worker processes" in result.stderr, result.stderr


def test_window_memory_defaults_unless_given():
    assert Config().checkpointing.window_memory_mb == CheckpointSettings().window_memory_mb > 0
    assert Config(window_memory_mb=0.5).checkpointing.window_memory_mb == 0.5
