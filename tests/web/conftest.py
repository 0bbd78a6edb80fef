"""A real headless Chromium (Debian's chromium and chromium-driver) driven by Selenium."""
import os
import shutil

import psutil
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

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
