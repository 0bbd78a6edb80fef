"""Waiting for a child's exit: the exit code once it ends, a timeout while it runs, the
same for a worker the coordinator forked as for a started process."""
import os
import signal
import subprocess
import sys
import time

import pytest

from segflow.coordinator.child_exit import exited_within, wait_exit
from segflow.coordinator.spawner import ForkedWorker


def test_the_exit_code_of_a_child_that_ends():
    child = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(0.3); sys.exit(7)"])
    assert wait_exit(child, 30) == 7
    assert child.returncode == 7


def test_a_child_still_running_is_a_timeout_and_keeps_running():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            wait_exit(child, 0.2)
        assert time.monotonic() - started >= 0.2
        assert child.poll() is None
    finally:
        child.kill()
        assert wait_exit(child, 30) == -signal.SIGKILL


def test_a_child_that_ended_before_the_wait_is_not_waited_for():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while not exited_within(child.pid, 30):
        pass
    started = time.monotonic()
    assert wait_exit(child, 0) == 0
    assert time.monotonic() - started < 1


def test_a_forked_worker_is_waited_for_the_same_way():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.read(read, 1)
        os._exit(3)
    os.close(read)
    worker = ForkedWorker(pid, os.fdopen(write, "wb"))
    with pytest.raises(subprocess.TimeoutExpired):
        wait_exit(worker, 0.1)
    worker.stdin.write(b"x")
    worker.stdin.close()
    assert wait_exit(worker, 30) == 3
