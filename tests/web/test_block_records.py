"""``segflow_block_records_in``: the coordinator counts what each block received over every
attempt of a job, so that after a recovery it holds more than the current attempt's
count (the web view's), by what the lost attempt had processed: what a recovery takes
again is visible in Prometheus."""
import json
import os
import re
import signal
import time
import urllib.request

import psutil

from support.processes import ROOT, wait_for

PACED = os.path.join(ROOT, "tests", "recovery", "jobs", "paced_stamps.py")
COUNTER = re.compile(r'^segflow_block_records_in_total\{block="(\d+)",operator="[^"]*"\} ([\d.e+]+)$', re.MULTILINE)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return reply.read().decode()


def _counted(base: str) -> tuple[dict[int, int], dict[int, int], int]:
    """(the current attempt's records in per block, the counter per block, recoveries):
    the web view first, so that the counter, which only grows, is read after it."""
    job = json.loads(_get(f"{base}/api/job"))
    current = {b["id"]: b["records_in"] for b in job["blocks"]}
    total = {int(block): int(float(n)) for block, n in COUNTER.findall(_get(f"{base}/metrics"))}
    return current, total, job["recoveries"]


def test_after_a_recovery_the_counter_holds_the_lost_attempts_records_too(job_run, tmp_path):
    process, url = job_run(PACED, "-p", f"output={tmp_path / 'out'}", "-p", "events=6000", "-p", "rate=400",
                           "--parallelism", "2", "--processes", "--checkpoint-protocol", "aligned",
                           "--checkpoint-interval", "0.5", "--state", f"file://{tmp_path / 'state'}")
    base = url.rstrip("/")
    sink = max(_counted(base)[0])
    assert wait_for(lambda: _counted(base)[0][sink] >= 400, timeout=30), "400 records never reached the sink"
    current, total, _ = _counted(base)
    assert total[sink] >= current[sink] > 0         # one attempt: the counter is its count
    before_kill = total[sink]
    titles = {p: " ".join(p.cmdline()).split() for p in psutil.Process(process.pid).children(recursive=True)}
    workers = [p for p, words in titles.items() if "--name" in words and words[words.index("--name") + 1] == "w1"]
    assert len(workers) == 1
    workers[0].send_signal(signal.SIGKILL)
    assert wait_for(lambda: _counted(base)[2] >= 1 and _counted(base)[0].get(sink, 0) > 0, timeout=30), \
        "no recovery's attempt reached the sink in 30 s"
    time.sleep(0.5)
    current, total, _ = _counted(base)
    # what the lost attempt had reported stays counted beside the current attempt's
    assert total[sink] - current[sink] >= before_kill, (total, current, before_kill)
