"""``segflow checkpoints ls|show|rm`` on a store a real job wrote."""
import json
import os
import subprocess

import pytest

from segflow.checkpoint.layout import complete_key
from segflow.checkpoint.catalog import Catalog
from segflow.checkpoint.local_records import StoredLine
from segflow.cli.checkpoints import describe, describe_line
from segflow.runtime.elements import FINAL_CHECKPOINT
from segflow.state import open_backend
from support.processes import ROOT, SEGFLOW

JOB = "windowed_counts"


def segflow(*args):
    return subprocess.run([SEGFLOW, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A state store holding a finished run's checkpoints (the newest 5 and the final one)."""
    root = tmp_path_factory.mktemp("checkpoints")
    url = f"file://{root}/state"
    run = segflow("run", os.path.join(ROOT, "tests", "recovery", "jobs", f"{JOB}.py"), "-p", f"output={root}/out",
                  "-p", "events=8000", "-p", "rate=4000", "--parallelism", "2", "--checkpoint-protocol", "aligned",
                  "--checkpoint-interval", "0.2", "--retain", "5", "--state", url, "--quiet")
    assert run.returncode == 0, run.stderr[-2000:]
    return url


def rows(stdout):
    header, *lines = stdout.splitlines()
    assert header.split() == ["JOB", "ID", "KIND", "TIME", "BYTES", "SECONDS"]
    return [line.split() for line in lines]


def test_ls_lists_every_checkpoint_of_every_job(store):
    listed = rows(segflow("checkpoints", "ls", "--state", store).stdout)
    ids = [row[1] for row in listed]
    assert {row[0] for row in listed} == {JOB}
    assert ids[-1] == "final" and len(ids) == 6
    assert all(row[2] == "checkpoint" for row in listed)
    assert [int(i) for i in ids[:-1]] == sorted(int(i) for i in ids[:-1])


def test_show_prints_the_record_the_location_and_the_objects(store):
    newest = rows(segflow("checkpoints", "ls", "--state", store, "--job", JOB).stdout)[-2][1]
    shown = segflow("checkpoints", "show", newest, "--state", store, "--job", JOB)
    assert shown.returncode == 0, shown.stderr
    record = json.loads(shown.stdout)
    assert record["record"]["id"] == int(newest) and record["kind"] == "checkpoint"
    assert record["location"] == f"{store}/jobs/{JOB}/chk-{int(newest):08d}/"
    assert f"jobs/{JOB}/chk-{int(newest):08d}/_COMPLETE" in record["objects"]
    assert sum(key.endswith((".r0", ".r1")) for key in record["objects"]) >= 2


def test_a_marker_that_fails_its_check_is_listed_so_and_rm_removes_checkpoints(store):
    listed = [row[1] for row in rows(segflow("checkpoints", "ls", "--state", store).stdout)]
    damaged, doomed = int(listed[0]), int(listed[1])
    backend = open_backend(store)
    backend.put(complete_key(JOB, damaged), b"{}")
    after = {row[1]: row[2:] for row in rows(segflow("checkpoints", "ls", "--state", store).stdout)}
    assert after[str(damaged)][:3] == ["integrity", "check", "failed"]
    removed = segflow("checkpoints", "rm", str(doomed), str(damaged), "--state", store, "--job", JOB)
    assert removed.returncode == 0, removed.stderr
    assert f"removed checkpoint {doomed} of {JOB}" in removed.stdout
    left = [row[1] for row in rows(segflow("checkpoints", "ls", "--state", store).stdout)]
    assert str(doomed) not in left and str(damaged) not in left and len(left) == len(listed) - 2
    assert backend.list(f"jobs/{JOB}/chk-{doomed:08d}/") == []


@pytest.mark.parametrize("args, said", [
    (["rm", "99999", "--job", JOB], "has no checkpoint 99999"),
    (["show", "1", "--job", "no_such_job"], "no job 'no_such_job'"),
    (["show", "one", "--job", JOB], "a checkpoint id or 'final'"),
])
def test_mistakes_are_clear_and_remove_nothing(store, args, said):
    before = segflow("checkpoints", "ls", "--state", store).stdout
    result = segflow("checkpoints", *args, "--state", store)
    assert result.returncode != 0 and said in result.stderr and "Traceback" not in result.stderr
    assert segflow("checkpoints", "ls", "--state", store).stdout == before


def test_an_empty_store_says_so(tmp_path):
    result = segflow("checkpoints", "ls", "--state", f"file://{tmp_path}/none")
    assert result.returncode == 0 and result.stdout.startswith("no checkpoints in file://")


def test_describe():
    assert describe(FINAL_CHECKPOINT, True, {"savepoint": False, "bytes": 2500, "seconds": 0.5, "time": 0}, False) \
        == {"id": "final", "kind": "checkpoint", "time": "", "bytes": "2.5kB", "seconds": "0.50"}
    assert describe(7, True, {"savepoint": True, "time": 86400}, False)["kind"] == "savepoint"
    assert describe(7, True, {"savepoint": True, "time": 86400}, False)["time"] == "1970-01-02 00:00:00"
    assert describe(7, False, None, False)["kind"] == "incomplete"
    assert describe(7, True, None, True)["kind"] == "integrity check failed"


def test_an_uncoordinated_jobs_stored_line_is_listed_and_shown(tmp_path, store):
    """``ls`` lists the stable line an uncoordinated job stores (what ``--restore latest``
    restores: it has no complete checkpoints but its final one), ``show line`` its local
    checkpoints, each in the store; a line that fails its check is listed as such."""
    url = f"file://{tmp_path}/state"
    run = segflow("run", os.path.join(ROOT, "tests", "recovery", "jobs", f"{JOB}.py"), "-p", f"output={tmp_path}/out",
                  "-p", "events=4000", "-p", "rate=4000", "--parallelism", "2", "--checkpoint-protocol", "cic",
                  "--checkpoint-interval", "0.2", "--state", url, "--quiet")
    assert run.returncode == 0, run.stderr[-2000:]
    listed = rows(segflow("checkpoints", "ls", "--state", url).stdout)
    assert [row[1:4] for row in listed if row[1] == "line"] == [["line", "recovery", "line"]]
    assert len(listed[-1]) == 6 and listed[-1][4].startswith("20"), listed      # its date and time
    shown = segflow("checkpoints", "show", "line", "--state", url, "--job", JOB)
    assert shown.returncode == 0, shown.stderr
    line = json.loads(shown.stdout)
    assert sorted(line["line"]) == ["b0.r0", "b0.r1", "b1.r0", "b1.r1"]
    assert line["location"] == f"{url}/jobs/{JOB}/unc/_STABLE"
    backend = open_backend(url)
    assert all(backend.get(key) is not None for key in line["objects"]) and len(line["objects"]) == 4
    backend.put(Catalog(backend, JOB).stable_line_key(), b"{}")
    assert [row[2:5] for row in rows(segflow("checkpoints", "ls", "--state", url).stdout) if row[1] == "line"] \
        == [["integrity", "check", "failed"]]
    missing = segflow("checkpoints", "show", "line", "--state", store, "--job", JOB)
    assert missing.returncode == 1 and "has no stored stable line" in missing.stderr, missing.stderr


def test_describe_line():
    assert describe_line(StoredLine([], ["b0.r0"], 86400.0, None), False) == \
        {"id": "line", "kind": "recovery line", "time": "1970-01-02 00:00:00", "bytes": "", "seconds": ""}
    assert describe_line(StoredLine([], ["b0.r0"], None, None), False)["time"] == ""
    assert describe_line(None, False)["kind"] == "unreadable"
    assert describe_line(None, True)["kind"] == "integrity check failed"


def test_periodic_savepoints_are_taken_and_the_oldest_let_go(tmp_path):
    """--savepoint-interval keeps a checkpoint as a savepoint about every 0.6 s of a 4-s job;
    --savepoint-retain 2 deletes all but the newest two; plain checkpoints follow --retain."""
    url = f"file://{tmp_path}/state"
    run = segflow("run", os.path.join(ROOT, "tests", "recovery", "jobs", f"{JOB}.py"), "-p", f"output={tmp_path}/out",
                  "-p", "events=16000", "-p", "rate=4000", "--parallelism", "2", "--checkpoint-protocol", "aligned",
                  "--checkpoint-interval", "0.2", "--retain", "1", "--savepoint-interval", "0.6",
                  "--savepoint-retain", "2", "--state", url, "--quiet")
    assert run.returncode == 0, run.stderr[-2000:]
    listed = rows(segflow("checkpoints", "ls", "--state", url).stdout)
    kinds = [row[2] for row in listed]
    assert kinds.count("savepoint") == 2, listed
    savepoints = [int(row[1]) for row in listed if row[2] == "savepoint"]
    checkpoints = [int(row[1]) for row in listed if row[2] == "checkpoint" and row[1] != "final"]
    assert len(checkpoints) <= 1 and max(savepoints) > 4, listed      # the newest ones, not the first two


def test_savepoint_options_are_checked():
    run = segflow("run", os.path.join(ROOT, "tests", "recovery", "jobs", f"{JOB}.py"), "-p", "output=/tmp/x",
                  "--savepoint-interval", "5")
    assert run.returncode == 1 and "--savepoint-interval makes some checkpoints savepoints" in run.stderr
