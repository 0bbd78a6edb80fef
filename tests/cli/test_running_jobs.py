"""`segflow savepoint` finds local jobs by the entries `segflow run` writes; a run killed
outright leaves its entry behind, which must not pass for a running job."""
import collections
import json
import os
import subprocess
import sys

import pytest

from segflow.errors import SegflowError
from segflow.launcher.processes import registry_path, running_jobs, savepoint
from support.processes import ROOT, SEGFLOW, kill_tree, wait_for

WINDOWED = os.path.join(ROOT, "tests", "recovery", "jobs", "windowed_counts.py")
JOB = f"second-run-{os.getpid()}"


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


def _run(output, state, *extra):
    return subprocess.Popen(
        [SEGFLOW, "run", WINDOWED, "--job-name", JOB, "-p", f"output={output}", "-p", "events=24000",
         "-p", "rate=6000", "--parallelism", "2", "--checkpoint-protocol", "aligned", "--checkpoint-interval",
         "0.3", "--state", state, "--quiet", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _lines(directory):
    return collections.Counter(line for name in sorted(os.listdir(directory)) if name.startswith("part-")
                               for line in open(os.path.join(directory, name), encoding="utf-8").read().splitlines())


def test_a_second_run_against_the_store_of_a_running_job_is_refused(tmp_path):
    """Two runs of one job on one store took each other's checkpoints (the second's
    retention and end deleted the first's). A run whose segflow run was killed outright
    is waited for (its coordinator ends on its own), so a restore right after works."""
    state = f"file://{tmp_path}/state"
    first = _run(tmp_path / "out", state)
    try:
        assert wait_for(lambda: running_jobs().get(JOB), timeout=30), "the first run never registered"
        second = _run(tmp_path / "out2", state, "--restore", "auto")
        _, stderr = second.communicate(timeout=60)
        assert second.returncode == 1 and f"job {JOB!r} already runs against" in stderr, stderr[-2000:]
        assert not (tmp_path / "out2").exists()
        assert wait_for(lambda: list((tmp_path / "state" / "jobs" / JOB).glob("chk-*/_COMPLETE")), timeout=30)
        first.kill()                    # segflow run only: its coordinator is left to notice
        first.wait()
        restored = _run(tmp_path / "out", state, "--restore", "latest")
        _, stderr = restored.communicate(timeout=120)
        assert restored.returncode == 0, stderr[-3000:]
    finally:
        kill_tree(first)
    assert '"msg": "restoring"' in stderr
    assert _lines(tmp_path / "out") == _lines_of_a_whole_run(tmp_path)


def _lines_of_a_whole_run(tmp_path):
    whole = _run(tmp_path / "whole", f"file://{tmp_path}/whole-state")
    _, stderr = whole.communicate(timeout=120)
    assert whole.returncode == 0, stderr[-2000:]
    return _lines(tmp_path / "whole")
