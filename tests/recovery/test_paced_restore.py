"""A paced generator restored after the whole job was down: with ``catch_up`` it produces at
once what its schedule owed (a queue's backlog), then holds its rate; without, it resumes its
schedule where the snapshot left it. On worker processes, killed and restored by the CLI."""
import os
import subprocess
import time

import pytest

from support.processes import ROOT, SEGFLOW, kill_tree, wait_for
from test_kills import JOBS, read_lines
from test_restore import complete_checkpoints

EVENTS, RATE, DOWN = 900, 200.0, 2.0


def start(output, state, protocol, catch_up, *extra):
    return subprocess.Popen(
        [SEGFLOW, "run", os.path.join(JOBS, "paced_stamps.py"), "-p", f"output={output}", "-p", f"events={EVENTS}",
         "-p", f"rate={RATE}", "-p", f"catch_up={'true' if catch_up else 'false'}", "--parallelism", "2",
         "--checkpoint-protocol", protocol, "--checkpoint-interval", "0.2", "--state", state, *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def stamps(output) -> dict[int, float]:
    pairs = [line.split() for line in read_lines(output)]
    got = {int(i): float(t) for i, t in pairs}
    assert len(got) == len(pairs), "a record was committed twice"
    return got


@pytest.mark.parametrize("protocol,catch_up", [("aligned", True), ("segment", True), ("aligned", False)])
def test_a_restored_paced_generator_catches_up_only_when_asked(tmp_path, protocol, catch_up):
    output, state_dir = tmp_path / "out", tmp_path / "state"
    first = start(output, f"file://{state_dir}", protocol, catch_up)
    try:
        assert wait_for(lambda: len(complete_checkpoints(state_dir, "paced_stamps")) >= 3, timeout=30), "no checkpoints"
    finally:
        kill_tree(first)
    time.sleep(DOWN)
    restarted_at = time.time()
    second = start(output, f"file://{state_dir}", protocol, catch_up, "--restore", "latest")
    _, stderr = second.communicate(timeout=60)
    assert second.returncode == 0, stderr[-3000:]
    got = stamps(output)
    assert sorted(got) == list(range(EVENTS))
    began = min(got.values())                      # about when record 0 was due
    restored = {i: t for i, t in got.items() if t >= restarted_at}
    first_restored = min(restored.values())
    owed = [i for i in restored if began + i / RATE < first_restored]
    assert len(owed) > RATE * DOWN / 2, f"only {len(owed)} records were owed at the restart"
    spread = max(restored[i] for i in owed) - first_restored
    if catch_up:
        assert spread < 0.8, f"the backlog took {spread:.2f} s: it was not produced at once"
        early = [i for i, t in restored.items() if t < began + i / RATE - 0.3]
        assert early == [], f"records {early[:5]}... left before their time: the rate no longer held"
    else:
        assert spread > DOWN * 0.8, f"the schedule did not resume at the snapshot: the owed records took {spread:.2f} s"

