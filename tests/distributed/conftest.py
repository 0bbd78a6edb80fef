import subprocess

import psutil
import pytest

from support.processes import ROOT, SEGFLOW, segflow_processes


@pytest.fixture
def spawn():
    """Start segflow commands; every one is stopped (with its children) at the end."""
    started: list[subprocess.Popen] = []

    def start(*args: str, **kwargs) -> subprocess.Popen:
        process = subprocess.Popen([SEGFLOW, *args], cwd=ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs)
        started.append(process)
        return process

    yield start
    for process in started:
        children = segflow_processes(process.pid)
        for p in [process, *children]:
            try:
                p.kill()
            except (psutil.NoSuchProcess, ProcessLookupError):
                pass
        process.wait(10)
        psutil.wait_procs(children, timeout=10)
