"""What a job leaves behind when it ends: only complete checkpoints stay in the state
store, and a sink's output is marked final (``_SUCCESS``) only when the job succeeded; a
failed run's output says it is not the whole output, and a restore completes it exactly."""
import json
import os
import subprocess

from recovery.test_kills import JOBS, read_lines
from segflow.runtime.elements import FINAL_CHECKPOINT
from support.processes import ROOT, SEGFLOW

POISONED = os.path.join(JOBS, "poisoned.py")


def run(output, state, poison, *extra):
    return subprocess.run([SEGFLOW, "run", POISONED, "-p", f"output={output}", "-p", f"poison={poison}",
                           "--parallelism", "2", "--checkpoint-protocol", "aligned", "--checkpoint-interval", "0.2",
                           "--state", f"file://{state}", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def checkpoints(state):
    """checkpoint directory -> whether it is complete (the job's other records aside)."""
    root = os.path.join(state, "jobs", "poisoned")
    return {name: os.path.exists(os.path.join(root, name, "_COMPLETE")) for name in sorted(os.listdir(root))
            if name.startswith("chk-")}


def test_a_failed_run_leaves_complete_checkpoints_only_and_output_marked_unfinished(tmp_path):
    state, output, poison = tmp_path / "state", tmp_path / "out", tmp_path / "poison"
    poison.write_text("fail at record 3000")
    stale = state / "jobs" / "poisoned" / f"chk-{FINAL_CHECKPOINT:08d}"    # garbage collection leaves it
    stale.mkdir(parents=True)
    (stale / "b1.r0").write_bytes(b"a part of an earlier run's final checkpoint, which never completed")

    failed = run(output, state, poison)
    assert failed.returncode != 0 and "record 3000 is poisoned" in failed.stderr
    left = checkpoints(state)
    assert left and all(left.values()), left
    names = os.listdir(output)
    assert "_SUCCESS" not in names
    markers = [json.loads((output / "_committed" / n).read_text()) for n in os.listdir(output / "_committed")]
    committed = min(m["epoch"] for m in markers)
    assert all(int(name.split("-e")[1].split(".")[0]) <= max(m["epoch"] for m in markers)
               for name in names if name.startswith("part-"))
    assert committed > 0

    poison.unlink()
    restored = run(output, state, poison, "--restore", "latest")
    assert restored.returncode == 0, restored.stderr[-2000:]
    assert json.loads((output / "_SUCCESS").read_text()) == {"checkpointed": True, "replicas": 2}
    assert sorted(map(int, read_lines(output))) == list(range(5000))
    assert all(checkpoints(state).values())


def test_a_new_run_withdraws_the_success_mark_until_it_succeeds(tmp_path):
    state, output, poison = tmp_path / "state", tmp_path / "out", tmp_path / "poison"
    assert run(output, state, poison, "-p", "n=200").returncode == 0
    assert (output / "_SUCCESS").exists()
    poison.write_text("fail")
    assert run(output, state, poison, "-p", "n=4000").returncode != 0
    assert not (output / "_SUCCESS").exists()
