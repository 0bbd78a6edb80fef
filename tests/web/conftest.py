"""A real headless Chromium (Debian's chromium and chromium-driver) driven by Selenium, and
jobs run by ``segflow run`` on worker processes, with their web view's URL."""
import os
import queue
import shutil
import subprocess
import threading
import time

import psutil
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from support.processes import SEGFLOW, kill_tree

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# The machine's network is closed: Chromium's own background traffic is switched off.
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1080"]


@pytest.fixture
def browser(tmp_path):
    for path in (CHROMIUM, CHROMEDRIVER):
        assert shutil.which(path), f"{path} is missing: make test-deps installs chromium and chromium-driver"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path / 'chromium'}"]:
        options.add_argument(flag)
    service = Service(CHROMEDRIVER, log_output=os.devnull)
    driver = webdriver.Chrome(service=service, options=options)
    driver_pid = service.process.pid
    try:
        yield driver
    finally:
        tree = psutil.Process(driver_pid).children(recursive=True) if psutil.pid_exists(driver_pid) else []
        driver.quit()
        for process in tree + ([psutil.Process(driver_pid)] if psutil.pid_exists(driver_pid) else []):
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(tree, timeout=10)


@pytest.fixture
def job_run():
    """``start(*run_args) -> (process, web view URL)``; every run is stopped at the end."""
    started = []

    def start(*args):
        process = subprocess.Popen([SEGFLOW, "run", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, text=True)
        started.append(process)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in process.stderr], daemon=True).start()
        deadline, seen = time.monotonic() + 60, []
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                assert process.poll() is None, f"segflow run ended before its web view: {seen}"
                continue
            seen.append(line)
            if "web view at " in line:
                return process, line.rsplit(" ", 1)[1].strip()
        pytest.fail(f"segflow run printed no web view URL in 60 s: {seen}")

    try:
        yield start
    finally:
        for process in started:
            kill_tree(process)
