"""The web view in a real headless browser, against a real job on worker processes.

The job is Nexmark q3 (two sources after a split, a hash join, a sink: five blocks)
generating events at a fixed rate for about half a minute, with aligned checkpoints every
second. The page must load, draw the plan's blocks and edges, show rates that move while
the job runs, and list checkpoints as they complete. Set ``SEGFLOW_SCREENSHOTS`` to a
folder to keep the screenshot (the README's picture is taken this way).
"""
import os
import re
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from segflow.jobs.loader import JobModule, build_job
from segflow.settings import Config
from support.processes import ROOT

Q3 = os.path.join(ROOT, "examples", "nexmark_q3.py")
EVENTS, RATE = 90_000, 3_000


@pytest.fixture
def running_job(job_run, tmp_path):
    return job_run(Q3, "-p", f"output={tmp_path / 'out'}", "-p", f"events={EVENTS}", "-p", f"rate={RATE}",
                   "--parallelism", "2", "--checkpoint-protocol", "aligned", "--checkpoint-interval", "1",
                   "--state", f"file://{tmp_path / 'state'}")


def _plan_of_q3():
    env, _ = build_job(JobModule(Q3, "build", {"output": "/unused", "events": "1"}), Config(parallelism=2))
    return env.graph


def _texts(browser, selector: str) -> list[str]:
    """The text of every element ``selector`` matches, read in one step (the page redraws
    its tables every second, so elements found one call earlier may be gone)."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.textContent)", selector)


def _cell(browser, block: int, kind: str) -> str:
    cells = _texts(browser, f'#blocks tr[data-block="{block}"] td.{kind}')
    return cells[0] if cells else ""


def test_the_web_view_shows_the_running_job(running_job, browser, tmp_path):
    process, url = running_job
    assert url.startswith("http://127.0.0.1:")
    browser.get(url)
    wait = WebDriverWait(browser, 30, poll_frequency=0.2)
    wait.until(lambda b: b.find_element(By.ID, "phase").text == "running")
    assert browser.title == "segflow: nexmark_q3"

    graph = _plan_of_q3()
    nodes = browser.execute_script("return window.segflowGraph.nodes().map(n => n.id())")
    assert sorted(nodes) == sorted(f"b{b.id}" for b in graph.blocks)
    edges = browser.execute_script(
        "return window.segflowGraph.edges().map(e => [e.source().id(), e.target().id(), e.data('label')])")
    assert sorted(map(tuple, edges)) == sorted((f"b{e.src}", f"b{e.dst}", e.strategy.value) for e in graph.edges)
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('#blocks tbody tr')).map(r => r.dataset.block)")
    assert [int(r) for r in rows] == [b.id for b in graph.blocks]

    source = next(b.id for b in graph.blocks if b.is_source)
    first = _cell(browser, source, "records-in")
    wait.until(lambda b: _cell(b, source, "rate-in") not in ("", "0"))
    rates = set()
    for _ in range(4):
        rates.add(_cell(browser, source, "rate-in"))
        time.sleep(1.1)
    assert rates - {"0"}, "the source's rate never showed"
    assert int(_cell(browser, source, "records-in").replace(",", "")) > int(first.replace(",", "")), \
        "records in did not move while the job ran"

    wait.until(lambda b: _texts(b, "#checkpoints td.checkpoint-id"))
    first_ids = [int(text) for text in _texts(browser, "#checkpoints td.checkpoint-id")]
    assert first_ids and first_ids == sorted(first_ids, reverse=True), first_ids
    wait.until(lambda b: int(_texts(b, "#checkpoints td.checkpoint-id")[0]) > first_ids[0])
    assert browser.find_element(By.ID, "no-checkpoints").is_displayed() is False
    delays = [_cell(browser, b.id, "start-delay") for b in graph.blocks]
    assert all(re.fullmatch(r"\d+\.\d", d) for d in delays), f"a block without a checkpoint start delay: {delays}"
    acks = [_cell(browser, b.id, "ack-delay") for b in graph.blocks]
    assert all(re.fullmatch(r"\d+\.\d", d) for d in acks), f"a block without a checkpoint ack delay: {acks}"
    widths = browser.execute_script("const s = document.getElementById('blocks-panel');"
                                    "return [s.scrollWidth, s.clientWidth];")
    assert widths[0] <= widths[1], f"the blocks table is wider than its panel at 1400 px: {widths}"
    assert process.poll() is None, "the job ended before the checks: raise EVENTS"

    folder = os.environ.get("SEGFLOW_SCREENSHOTS") or str(tmp_path)
    assert browser.save_screenshot(os.path.join(folder, "web-view.png"))
