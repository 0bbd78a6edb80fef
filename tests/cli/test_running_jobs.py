"""`segflow savepoint` finds local jobs by the entries `segflow run` writes; a run killed
outright leaves its entry behind, which must not pass for a running job."""
import json
import os
import subprocess
import sys

import pytest

from segflow.errors import SegflowError
from segflow.launcher.processes import registry_path, running_jobs, savepoint


def _entry(name: str, text: str) -> str:
    path = registry_path(name)
    with open(path, "w") as f:
        f.write(text)
    return path


def _reaped() -> int:
    """The pid of a process that has ended (and been waited for)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGFLOW_CACHE", str(tmp_path))
    (tmp_path / "run").mkdir()
    return tmp_path / "run"


def test_only_jobs_whose_coordinator_runs_are_listed_and_stale_entries_go(registry):
    _entry("live", json.dumps({"pid": os.getpid(), "coordinator": "127.0.0.1:1"}))
    stale = _entry("killed", json.dumps({"pid": _reaped(), "coordinator": "127.0.0.1:2"}))
    garbled = _entry("garbled", "{not json")
    assert list(running_jobs()) == ["live"]
    assert not os.path.exists(stale)
    assert os.path.exists(garbled)


def test_a_savepoint_of_the_only_job_does_not_pick_a_stale_entry(registry):
    _entry("killed", json.dumps({"pid": _reaped(), "coordinator": "127.0.0.1:2"}))
    with pytest.raises(SegflowError, match="running jobs are none"):
        savepoint()
