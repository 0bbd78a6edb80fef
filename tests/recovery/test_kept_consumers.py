"""Kept consumers of a restarted block (issue 48; checkpoint.regional's rule 2 exception,
net.positions): a chain that declares itself deterministic, with one input channel per
replica, at parallelism 2 with placement by segment (groups {0}, {1, 2}, {3, 4}). A worker
of the middle group is SIGKILLed three times at random moments: the output must equal the
plain-Python oracle exactly (the store a directory, or moto's S3 server), and the
downstream group must have kept running: its workers kept their PIDs, never restarted an
attempt, never restored a replica, and skipped what the restarted blocks sent again once
per recovery. The same job without the declaration
restarts the downstream group with the middle one (rule 2)."""
import collections
import json
import os

import pytest

from recovery.jobs.kept_chain import oracle
from recovery.test_kills import read_lines, run_with_kills
from recovery.test_stores import s3_server  # noqa: F401 - the moto server, as a fixture
from segflow.checkpoint import layout
from segflow.state import open_backend
from support.processes import ROOT, command_words
from support.regional import placement, slot

JOB = "kept_chain.py"
EVENTS = 30000
RATE = 2500            # events/s: 12 s, time for three kills
CONNECTORS = ("--connectors", "2")
SOURCE, MIDDLE, DOWNSTREAM = {0}, {1, 2}, {3, 4}


def stored(state: str, endpoint: str) -> bool:
    """The store holds a snapshot of the job: kills from now on test recoveries."""
    keys = open_backend(state, endpoint or None).list(layout.checkpoint_prefix("kept_chain"))
    return any(layout.snapshot_of(k) is not None for k in keys)


def events(stderr: str, message: str) -> list[dict]:
    return [record for record in (json.loads(line) for line in stderr.splitlines() if line.startswith("{"))
            if record.get("msg") == message]


def run_kept(tmp_path, seed: int, deterministic: bool, state: str, endpoint: str = ""):
    blocks = placement("", 6, tmp_path, os.path.join(ROOT, "tests", "recovery", "jobs", JOB), CONNECTORS)
    downstream = {w for w, b in blocks.items() if b <= DOWNSTREAM}
    middle = {w for w, b in blocks.items() if b & MIDDLE}
    assert len(downstream) == 2 and len(middle) == 2 and not downstream & middle, blocks
    pids: dict[str, set[int]] = collections.defaultdict(set)

    def victims(workers):
        active = [w for w in workers if command_words(w)]
        for w in active:
            pids[slot(w)].add(w.pid)
        return [w for w in active if slot(w) in middle]
    params = {"output": tmp_path / "out", "events": EVENTS, "rate": RATE, "deterministic": int(deterministic)}
    stderr = run_with_kills(JOB, params, state, "segment", seed=seed, parallelism=6, interval=0.3,
                            extra=("--placement", "segment", *CONNECTORS), victims=victims,
                            running=lambda: stored(state, endpoint))
    for sink, lines in oracle(EVENTS).items():
        got = collections.Counter(read_lines(tmp_path / "out" / sink))
        assert got == lines, (f"{sink}: {sum((got - lines).values())} lines too many, "
                              f"{sum((lines - got).values())} missing")
    return stderr, downstream, pids


@pytest.mark.parametrize("store", ["file", "s3"])
def test_the_consumers_of_a_restarted_block_that_replays_exactly_keep_running(tmp_path, store, request, monkeypatch):
    state, endpoint = f"file://{tmp_path}/state", ""
    if store == "s3":            # moto's S3 server on loopback, as the store
        endpoint = request.getfixturevalue("s3_server").endpoint
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        state = f"s3://segflow-test-kept/{tmp_path.name}"
    stderr, downstream, pids = run_kept(tmp_path, seed=21, deterministic=True, state=state, endpoint=endpoint)
    recoveries = events(stderr, "recovering")
    assert len(recoveries) >= 3 and all("regional" in r for r in recoveries), \
        [(r["lost"], r["reason"], r.get("regional")) for r in recoveries]
    assert events(stderr, "segment restore") == [], "a recovery restarted the whole job"
    kept_every_time = [r for r in recoveries if downstream <= set(r["kept"])]
    assert kept_every_time == recoveries, [(r["regional"], r["kept"]) for r in recoveries]
    restored = {int(replica[1:].split(".")[0]) for e in events(stderr, "restored segments")
                for replica in e["versions"]}
    assert restored == MIDDLE, f"restored replicas of blocks {sorted(restored)}"
    for worker in downstream:
        assert len(pids[worker]) == 1, f"{worker} ran as processes {sorted(pids[worker])}"
        assert [e for e in events(stderr, "restarting for the next attempt") if e["worker"] == worker] == []
        skipped = [e for e in events(stderr, "skipping what restarted senders send again") if e["worker"] == worker]
        assert len(skipped) == len(recoveries), f"{worker}: skipped {len(skipped)} times, {len(recoveries)} recoveries"
        assert all(key.startswith("b2.") and ">b3." in key for e in skipped for key in e["skips"]), skipped


def test_without_the_declaration_the_consumers_restart_with_the_block(tmp_path):
    stderr, downstream, _ = run_kept(tmp_path, seed=22, deterministic=False, state=f"file://{tmp_path}/state")
    recoveries = events(stderr, "recovering")
    assert recoveries and all("regional" in r for r in recoveries)
    assert all(not downstream & set(r["kept"]) for r in recoveries), [r["kept"] for r in recoveries]
    assert events(stderr, "skipping what restarted senders send again") == []
