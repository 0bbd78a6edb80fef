"""A real Prometheus (Debian's package) scrapes a running job, and every query of the
shipped Grafana dashboard returns data.

The job is Nexmark q3 at parallelism 2 with segment backup (so pending windows exist),
checkpoints every second, on worker processes; Prometheus scrapes the coordinator and both
workers every second at the addresses the web view lists. Each dashboard query is asked
as Grafana would ask it (``$__rate_interval`` replaced by a window). No Grafana can be
installed here, so the picture of the dashboard (kept with ``SEGFLOW_SCREENSHOTS``) is drawn
by ``dashboard_preview.js`` from the dashboard's JSON and the same queries over a range.
"""
import json
import os
import re
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support.processes import ROOT, wait_for

PROMETHEUS = "/usr/bin/prometheus"
Q3 = os.path.join(ROOT, "examples", "nexmark_q3.py")
DASHBOARD = os.path.join(ROOT, "charts", "segflow", "dashboards", "segflow.json")
RATE_WINDOW = "15s"
# Seconds of data in the dashboard's picture: enough for a line in every panel, more for the README's.
PICTURE_SECONDS = 25 if os.environ.get("SEGFLOW_SCREENSHOTS") else 8


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.load(reply)


def dashboard_queries() -> list[tuple[str, str]]:
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    return [(panel["title"], target["expr"].replace("$__rate_interval", RATE_WINDOW))
            for panel in dashboard["panels"] for target in panel["targets"]]


@pytest.fixture
def prometheus(tmp_path):
    """``start(targets) -> base URL`` of a Prometheus scraping ``targets`` every second."""
    started = []

    def start(targets: list[str]) -> str:
        config = tmp_path / "prometheus.yml"
        config.write_text(json.dumps({"global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
                                      "scrape_configs": [{"job_name": "segflow",
                                                          "static_configs": [{"targets": targets}]}]}))
        port = _free_port()
        process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"), stdin=subprocess.DEVNULL)
        started.append(process)
        base = f"http://127.0.0.1:{port}"

        def ready():
            try:
                return urllib.request.urlopen(f"{base}/-/ready", timeout=1).status == 200
            except OSError:
                return False
        assert wait_for(ready, timeout=30, every=0.3), (tmp_path / "prometheus.log").read_text()
        return base

    try:
        yield start
    finally:
        for process in started:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        assert not any(psutil.pid_exists(p.pid) and psutil.Process(p.pid).status() != psutil.STATUS_ZOMBIE
                       for p in started)


def _query(base: str, expr: str) -> list:
    answer = _get_json(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def test_every_dashboard_query_returns_data_from_a_running_job(job_run, prometheus, browser, tmp_path):
    process, web = job_run(Q3, "-p", f"output={tmp_path / 'out'}", "-p", "events=150000", "-p", "rate=3000",
                           "--parallelism", "2", "--checkpoint-protocol", "segment", "--checkpoint-interval", "1",
                           "--state", f"file://{tmp_path / 'state'}")
    job = wait_for(lambda: (lambda j: j if len(j["workers"]) == 2 else None)(_get_json(f"{web}api/job")),
                   timeout=30)
    assert job, "the job's workers did not register"
    coordinator = urllib.parse.urlparse(web).netloc
    targets = [coordinator] + [w["metrics"] for w in job["workers"]]
    base = prometheus(targets)

    def all_up():
        active = _get_json(f"{base}/api/v1/targets")["data"]["activeTargets"]
        return len(active) == 3 and all(t["health"] == "up" for t in active)
    assert wait_for(all_up, timeout=30, every=0.5), _get_json(f"{base}/api/v1/targets")
    scraping_since = time.monotonic()

    queries = dashboard_queries()
    assert len(queries) >= 12

    def every_query_answers():
        return all(_query(base, expr) for _, expr in queries)
    wait_for(every_query_answers, timeout=40, every=1.0)
    empty = [title + ": " + expr for title, expr in queries if not _query(base, expr)]
    assert not empty, "dashboard queries without data:\n" + "\n".join(empty)
    assert process.poll() is None, "the job ended before Prometheus had all the data: raise events"

    throughput = _query(base, queries[0][1])
    assert {r["metric"]["operator"] for r in throughput} >= {"generate"}
    assert any(float(r["value"][1]) > 0 for r in throughput), throughput
    windows = _query(base, "segflow_pending_window_versions")
    assert windows and all("operator" in r["metric"] for r in windows)

    wait_for(lambda: time.monotonic() - scraping_since > PICTURE_SECONDS, timeout=PICTURE_SECONDS + 5)
    assert process.poll() is None, "the job ended before the dashboard's picture: raise events"
    preview = tmp_path / "dashboard.html"
    preview.write_text(dashboard_page(base))
    browser.set_window_size(1400, 1800)
    browser.get(preview.as_uri())
    WebDriverWait(browser, 20).until(lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-drawn"))
    panels = browser.execute_script("return document.querySelectorAll('section.panel').length")
    lines = browser.execute_script("return document.querySelectorAll('section.panel polyline').length")
    assert panels == len(json.load(open(DASHBOARD))["panels"]) and lines >= 10, (panels, lines)
    folder = os.environ.get("SEGFLOW_SCREENSHOTS") or str(tmp_path)
    assert browser.save_screenshot(os.path.join(folder, "dashboard.png"))


def _legend(template: str, labels: dict) -> str:
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), template) or "value"


def dashboard_page(base: str) -> str:
    """The dashboard drawn by tests/web/dashboard_preview.js from the last
    ``PICTURE_SECONDS`` of each panel's queries (Grafana's layout, Prometheus' data)."""
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    end = time.time()
    series = {}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = target["expr"].replace("$__rate_interval", RATE_WINDOW)
            answer = _get_json(f"{base}/api/v1/query_range?" + urllib.parse.urlencode(
                {"query": expr, "start": end - PICTURE_SECONDS, "end": end, "step": 1}))
            for result in answer["data"]["result"]:
                series.setdefault(panel["id"], []).append(
                    {"legend": _legend(target.get("legendFormat", ""), result["metric"]),
                     "points": [[float(t), float(v)] for t, v in result["values"] if v not in ("NaN", "+Inf")]})
    script = os.path.join(os.path.dirname(__file__), "dashboard_preview.js")
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{dashboard["title"]}</title><style>
body {{ margin: 0; background: #111217; color: #ccccdc; font: 12px system-ui, sans-serif; }}
h1 {{ font-size: 16px; margin: 10px 12px; }} #board {{ position: relative; margin: 0 8px; }}
.panel {{ position: absolute; background: #181b1f; border: 1px solid #2c3235; border-radius: 3px; }}
.panel h3 {{ font-size: 12px; margin: 6px 8px; font-weight: 500; }}
.body {{ position: absolute; inset: 26px 6px 4px 6px; overflow: hidden; }}
.axis {{ fill: #8e8e8e; font-size: 10px; }} .grid {{ stroke: #2c3235; }}
.legend span {{ border-left: 10px solid; padding: 0 8px 0 4px; margin-right: 6px; white-space: nowrap; }}
.stat {{ display: inline-block; margin: 6px 18px; }} .stat .value {{ font-size: 30px; color: #73bf69; }}
</style></head><body><h1 id="title"></h1><div id="board"></div>
<script>window.DASHBOARD = {json.dumps(dashboard)}; window.SERIES = {json.dumps(series)};</script>
<script src="{Path(script).as_uri()}"></script></body></html>"""
