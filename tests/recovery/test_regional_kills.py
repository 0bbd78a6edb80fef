"""Regional recovery under segment backup (issue 48, item 1): with ``--placement segment``
a lost worker restarts only its region, and the segments upstream of it keep running.

A linear, a splitting and a merging (join) topology at parallelism 2 (two workers per
group of blocks): a worker of the middle segment is SIGKILLed at random moments, three
times per run. The committed output must equal the plain-Python oracle exactly, and the
run must show that nothing upstream restarted: the source workers kept their processes,
never started another attempt, never restored a replica, and were rewired once per recovery instead;
no recovery restarted the whole job."""
import collections
import json

import pytest

from recovery.test_kills import run_with_kills
from recovery.test_segment_backup import EVENTS, RATE, assert_oracle, newest_version
from recovery.test_standby import standing_by
from support.processes import command_words
from support.regional import placement, slot

def events(stderr: str, message: str) -> list[dict]:
    return [record for record in (json.loads(line) for line in stderr.splitlines() if line.startswith("{"))
            if record.get("msg") == message]


def run_regional(shape: str, sources: set[int], middle: set[int], tmp_path, seed: int, standby: int = 0):
    """Kill workers running ``middle`` blocks three times; returns the run's stderr, the
    workers that run ``sources`` and the PIDs each slot was seen with."""
    groups = 3 if shape != "split" else 2
    blocks = placement(shape, 2 * groups, tmp_path)
    upstream = {w for w, b in blocks.items() if b <= sources}
    victims_slots = {w for w, b in blocks.items() if b & middle}
    assert upstream and victims_slots and not upstream & victims_slots, blocks
    pids: dict[str, set[int]] = collections.defaultdict(set)

    def victims(workers):
        """Active workers of the middle segment; notes every slot's process."""
        active = [w for w in workers if command_words(w) and not standing_by(w)]
        for w in active:
            pids[slot(w)].add(w.pid)
        return [w for w in active if slot(w) in victims_slots]
    params = {"output": tmp_path / "out", "shape": shape, "events": EVENTS, "rate": RATE}
    extra = ("--placement", "segment") + (("--standby-workers", str(standby)) if standby else ())
    state = f"file://{tmp_path}/state"
    # Kills before every worker has registered only start workers again: the job must run.
    stderr = run_with_kills("segment_shapes.py", params, state, "segment", seed=seed, parallelism=2 * groups,
                            interval=0.3, extra=extra, victims=victims, running=lambda: newest_version(state, "") >= 1)
    assert_oracle(shape, tmp_path / "out")
    return stderr, upstream, pids


def assert_upstream_kept_running(stderr: str, upstream: set[str], sources: set[int], pids) -> None:
    recoveries = events(stderr, "recovering")
    assert recoveries and all("regional" in r for r in recoveries), \
        [(r["lost"], r["reason"], r.get("regional")) for r in recoveries]
    assert all(upstream <= set(r["kept"]) for r in recoveries), [r["kept"] for r in recoveries]
    assert events(stderr, "segment restore") == [], "a recovery restarted the whole job"
    restored = {int(replica[1:].split(".")[0]) for e in events(stderr, "restored segments")
                for replica in e["versions"]}
    assert restored and not restored & sources, f"restored replicas of blocks {sorted(restored)}"
    for worker in upstream:
        assert len(pids[worker]) == 1, f"{worker} ran as processes {sorted(pids[worker])}"
        restarted = [e for e in events(stderr, "restarting for the next attempt") if e["worker"] == worker]
        assert restarted == [], f"{worker} restarted its replicas {len(restarted)} times"
        rewired = [e for e in events(stderr, "rewired") if e["worker"] == worker]
        assert len(rewired) == len(recoveries), f"{worker}: rewired {len(rewired)} times, {len(recoveries)} recoveries"


# shape -> (source blocks, the middle segment's blocks), as `segflow plan` numbers them
SHAPES = {"linear": ({0}, {1, 2}), "split": ({0}, {1, 2, 3}), "merge": ({0, 2}, {1, 3})}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_killing_a_middle_segment_restarts_only_its_region(tmp_path, shape):
    sources, middle = SHAPES[shape]
    stderr, upstream, pids = run_regional(shape, sources, middle, tmp_path, seed=11)
    assert_upstream_kept_running(stderr, upstream, sources, pids)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_standby_takes_over_the_lost_worker_of_the_region(tmp_path, shape):
    """With a standby worker the lost worker's slot goes to it: it restores the region's
    replicas of that slot; upstream is untouched all the same."""
    sources, middle = SHAPES[shape]
    stderr, upstream, pids = run_regional(shape, sources, middle, tmp_path, seed=12, standby=1)
    assert_upstream_kept_running(stderr, upstream, sources, pids)
    took_over = {e["standby"] for e in events(stderr, "standby takes over")}
    restored_by = {e["worker"] for e in events(stderr, "restored segments")}
    assert took_over and took_over <= restored_by, (took_over, restored_by)
