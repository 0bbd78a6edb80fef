"""A hot standby (disasterRecovery.standby: hot) on real processes and a moto S3 server: a
primary cluster's coordinator and workers run the job under the lease; the standby
cluster's coordinator awaits the lease with its workers registered and, when hot, following
the primary's store. The primary is killed, the standby's cluster takes the lease, and the
standby runs the rest of the job. Warm and hot run the same scenario in one test, so their
restore steps are compared on the same machine under the same load."""
import collections
import json
import os
import re
import time
import urllib.request
from dataclasses import replace

import pytest

from segflow.disaster.lease_store import LeaseStore
from segflow.settings import CheckpointSettings
from segflow.state import open_backend
from support.processes import ROOT, kill_tree, wait_for
from support.servers import new_bucket
from support.tls import JobCertificates
from test_warm_coordinator import Renewer, workers_of

JOB = os.path.join(ROOT, "tests", "disaster", "jobs", "many_keys.py")
EVENTS, RATE, KEYS, WIDTH = 60000, 5000, 20000, 20000


def oracle() -> collections.Counter:
    """The job's lines in plain Python: per window of WIDTH events, each key's count."""
    counts: collections.Counter = collections.Counter()
    for i in range(EVENTS):
        counts[(f"k{(i * 7919) % KEYS}", i // WIDTH)] += 1
    return collections.Counter(f"{key}\t{n}" for (key, _), n in counts.items())


def output_lines(output) -> collections.Counter:
    lines: collections.Counter = collections.Counter()
    for part in sorted(p for p in os.listdir(output) if p.startswith("part-")):
        lines.update((output / part).read_text().splitlines())
    return lines


def coordinator(settings: CheckpointSettings, output, certs: JobCertificates, tmp_path, side: str):
    return certs.spawn_coordinator(JOB, settings, tmp_path, {"output": output, "events": EVENTS, "rate": RATE,
                                                             "keys": KEYS, "width": WIDTH}, name=side)


def logged(stderr: str, message: str) -> list[dict]:
    entries = []
    for line in stderr.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if entry.get("msg") == message:
                entries.append(entry)
    return entries


def take_over(s3_server, tmp_path, mode: str, protocol: str = "aligned") -> dict:
    """One disaster: the primary (east) runs, is killed, the standby (west) takes over."""
    job = f"{mode}-{protocol}-takeover"
    url = f"s3://{new_bucket()}/backup"
    endpoint = s3_server.endpoint
    store = LeaseStore(url, job, endpoint)
    backend = open_backend(url, endpoint)
    east = Renewer(store, "east", 1)
    west = None
    output = tmp_path / f"{job}-out"
    base = CheckpointSettings(protocol, 0.5, url, endpoint, 3, job, restore="auto")
    primary = coordinator(replace(base, lease_owner="east", lease_generation=1), output,
                          JobCertificates(f"{job}-east"), tmp_path, f"{job}-east")
    standby = coordinator(replace(base, lease_owner="west", await_lease=True,
                                  follow_interval=0.3 if mode == "hot" else 0.0), output,
                          JobCertificates(f"{job}-west"), tmp_path, f"{job}-west")
    try:
        announced = standby.stdout.readline()
        assert "standing by" in announced
        web = re.search(r"web (http://\S+/)", announced).group(1)
        wait_for(lambda: len(workers_of(standby)) == 2, timeout=30)
        standing = workers_of(standby)
        complete = wait_for(lambda: len([k for k in backend.list(f"jobs/{job}/") if k.endswith("/_COMPLETE")]) >= 3,
                            timeout=60, every=0.2)
        assert complete, "the primary completed fewer than 3 checkpoints in a minute"
        kill_tree(primary)                    # the disaster: east's processes are gone
        east.halt()
        time.sleep(1.0)                       # the standby follows what east left
        before = backend.list_tagged(f"jobs/{job}/")
        with urllib.request.urlopen(web + "api/job", timeout=10) as response:
            shown = json.loads(response.read())
        with urllib.request.urlopen(web, timeout=10) as response:
            page = response.read().decode()
        time.sleep(2.0)                       # ... several follows more
        after = backend.list_tagged(f"jobs/{job}/")
        west = Renewer(store, "west", 2, east.version, previous="east")
        stdout, stderr = standby.communicate(timeout=120)
        assert standby.returncode == 0, stdout[-3000:] + stderr[-3000:]
        return {"shown": shown, "page": page, "unchanged": before == after, "before": before,
                "steps": logged(stderr, "restore step"), "lines": output_lines(output), "standing": standing,
                "stderr": stderr}
    finally:
        east.halt()
        if west is not None:
            west.halt()
        kill_tree(primary)
        kill_tree(standby)


@pytest.mark.timeout(400)
def test_a_hot_standby_writes_nothing_while_it_follows_and_takes_over_from_followed_state_faster_than_warm(
        s3_server, tmp_path):
    warm = take_over(s3_server, tmp_path, "warm")
    hot = take_over(s3_server, tmp_path, "hot")
    expected = oracle()
    for run in (warm, hot):
        assert run["lines"] == expected, (sum(run["lines"].values()), sum(expected.values()))
    assert hot["before"], "the primary left nothing in the store to follow"
    assert hot["unchanged"] and warm["unchanged"], "the store changed while only the standby stood by"
    assert "hot standby takes over from followed state" in hot["stderr"]
    followed_version = max(int(k.split("/chk-")[1].split("/")[0]) for k in hot["before"] if k.endswith("/_COMPLETE"))
    shown = hot["shown"]                      # the standby's web view, while it followed
    assert (shown["phase"], shown["standby_mode"], shown["cluster"]) == ("STANDBY", "hot", "west"), shown
    assert [w["name"] for w in shown["workers"]] == ["w0", "w1"], shown
    assert all(w["following"] and w["version"] == followed_version for w in shown["workers"]), shown
    assert warm["shown"]["standby_mode"] == "warm" and not any(w["following"] for w in warm["shown"]["workers"])
    assert 'id="standby-panel"' in hot["page"]
    assert len(hot["steps"]) == 2 and len(warm["steps"]) == 2, (hot["steps"], warm["steps"])
    assert all(step["followed"] > 0 and step["store_reads"] == 0 for step in hot["steps"]), hot["steps"]
    assert all(step["followed"] == 0 for step in warm["steps"]), warm["steps"]
    hot_seconds = max(step["seconds"] for step in hot["steps"])
    warm_seconds = max(step["seconds"] for step in warm["steps"])
    print(f"restore step: warm {warm_seconds:.4f} s, hot {hot_seconds:.4f} s, ratio {hot_seconds / warm_seconds:.2f}")
    assert hot_seconds < warm_seconds, (hot["steps"], warm["steps"])


@pytest.mark.timeout(300)
def test_under_segment_backup_a_hot_standby_restores_each_blocks_version_and_the_windows_from_followed_state(
        s3_server, tmp_path):
    hot = take_over(s3_server, tmp_path, "hot", "segment")
    assert hot["lines"] == oracle(), (sum(hot["lines"].values()), EVENTS)
    assert hot["unchanged"], "the store changed while only the hot standby followed it"
    windows = [k for k in hot["before"] if "/windows/" in k]
    steps = hot["steps"]
    assert len(steps) == 2 and all(step["store_reads"] == 0 for step in steps), steps
    assert sum(step["followed"] for step in steps) > 0, steps
    print(f"segment: {len(windows)} window parts in the store, restore steps {steps}")
