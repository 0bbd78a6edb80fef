"""The web view of a regional recovery (issue 48, item 2), against a real job on worker
processes with its state in moto's S3 server: the linear segment-backup shape at
parallelism 2 placed by segment (source 0 | segment 1-2 | sink 3, each group on two
workers of its own). A worker of the middle segment is SIGKILLed once; the view's JSON
and its page must then name the recovery regional, list the blocks that restarted (the
middle segment and the sink it feeds) and not the source that kept running. Set
``SEGFLOW_SCREENSHOTS`` to a folder to keep the screenshot."""
import collections
import json
import os
import re
import signal
import time
import urllib.request

from selenium.webdriver.support.ui import WebDriverWait

from recovery.jobs.segment_shapes import oracle
from recovery.test_kills import read_lines, workers_of
from recovery.test_standby import standing_by
from support.processes import command_words, wait_for
from support.regional import SHAPES_JOB, placement, slot
from support.servers import new_bucket, server_fixture, start_s3

s3_server = server_fixture("s3_server", start_s3, "moto S3 server")

SOURCE, MIDDLE, SINK = {0}, {1, 2}, {3}
EVENTS, RATE = 36000, 3000          # a run of 12 s


def job_json(url: str) -> dict:
    with urllib.request.urlopen(url.rstrip("/") + "/api/job", timeout=5) as response:
        return json.load(response)


def middle_worker(process, blocks: dict[str, set[int]]):
    """An active worker process whose slot runs the middle segment."""
    for worker in workers_of(process):
        if command_words(worker) and not standing_by(worker) and blocks.get(slot(worker), set()) & MIDDLE:
            return worker
    return None


def test_the_view_names_the_blocks_a_regional_recovery_restarted(job_run, browser, s3_server, monkeypatch,
                                                                tmp_path):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    blocks = placement("linear", 6, tmp_path)
    assert blocks and all(b in (SOURCE, MIDDLE, SINK) for b in blocks.values()), blocks
    process, url = job_run(SHAPES_JOB, "-p", f"output={tmp_path / 'out'}",
                           "-p", "shape=linear", "-p", f"events={EVENTS}", "-p", f"rate={RATE}",
                           "--parallelism", "6", "--placement", "segment", "--checkpoint-protocol", "segment",
                           "--checkpoint-interval", "0.3", "--state", f"s3://{new_bucket()}/jobs")
    assert wait_for(lambda: any(c["complete"] for c in job_json(url)["checkpoints"]), timeout=60), \
        "no checkpoint completed"
    victim = middle_worker(process, blocks)
    assert victim is not None, "no worker of the middle segment runs"
    victim.send_signal(signal.SIGKILL)
    assert wait_for(lambda: job_json(url)["recovery_log"] and job_json(url)["phase"] == "RUNNING", timeout=60), \
        "no recovery started, or the job did not run again"
    job = job_json(url)
    recovery, = job["recovery_log"]
    assert recovery["scope"] == "regional", recovery
    assert {r["block"] for r in recovery["restarted"]} == MIDDLE | SINK, recovery
    assert all(isinstance(r["version"], int) for r in recovery["restarted"]), recovery
    assert set(recovery["kept"]) == SOURCE, recovery
    assert {b["id"] for b in job["blocks"] if b["restarted_last"]} == MIDDLE | SINK

    browser.get(url)
    wait = WebDriverWait(browser, 30, poll_frequency=0.2)
    wait.until(lambda b: b.execute_script("return document.querySelectorAll('#recoveries-table tbody tr').length"))
    scope, restarted, kept = browser.execute_script(
        "const r = document.querySelector('#recoveries-table tbody tr');"
        "return ['scope', 'restarted', 'kept'].map(c => r.querySelector('td.' + c).textContent)")
    assert scope == "regional"
    assert sorted(map(int, re.findall(r"(?:^|; )b(\d+) ", restarted))) == sorted(MIDDLE | SINK), restarted
    assert kept == "b0"
    marked = browser.execute_script(
        "return window.segflowGraph.nodes('.restarted').map(n => n.id())")
    assert sorted(marked) == [f"b{b}" for b in sorted(MIDDLE | SINK)]
    folder = os.environ.get("SEGFLOW_SCREENSHOTS") or str(tmp_path)
    assert browser.save_screenshot(os.path.join(folder, "web-view-regional.png"))

    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert process.returncode == 0, "the job did not end well after the regional recovery"
    counts, = oracle("linear", EVENTS).values()
    assert collections.Counter(read_lines(tmp_path / "out" / "counts")) == counts
