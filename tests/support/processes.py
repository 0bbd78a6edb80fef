"""Finding, waiting for and cleaning up segflow processes started by tests."""
import os
import re
import subprocess
import sys
import time

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEGFLOW = os.path.join(os.path.dirname(sys.executable), "segflow")


def segflow_processes(root_pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(root_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def command_words(process: psutil.Process) -> list[str]:
    """A process's command line as words. A local run forks its first workers and gives each
    the title ``segflow worker --name wN ...`` (setproctitle), which ``cmdline()`` returns as
    one string. A process that has ended (a zombie its parent has not reaped yet included)
    has no words: a killed worker is one until the coordinator's monitor reaps it."""
    try:
        return " ".join(process.cmdline()).split()
    except psutil.NoSuchProcess:
        return []


def is_worker(process: psutil.Process) -> bool:
    return "worker" in command_words(process)


def kill_tree(process: subprocess.Popen) -> None:
    """Stop a run and everything it started (a coordinator has its own session)."""
    tree = segflow_processes(process.pid)
    for p in tree:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    if process.poll() is None:
        process.kill()
    process.wait()
    psutil.wait_procs(tree, timeout=10)


def wait_for(predicate, timeout: float, every: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    return predicate()


def segflow_savepoint(job_name: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``segflow savepoint job_name``, once the job's ``segflow run`` has registered it: the
    run does so after its coordinator listens, so on a loaded machine the job may already
    have checkpointed when it is not registered yet."""
    from segflow.launcher.processes import running_jobs
    assert wait_for(lambda: job_name in running_jobs(), timeout=30), f"job {job_name!r} was never registered"
    return subprocess.run([SEGFLOW, "savepoint", job_name], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def savepoint_taken(stdout: str) -> tuple[int, str]:
    """``(id, location)`` from what ``segflow savepoint`` prints: ``savepoint N at LOCATION``."""
    match = re.fullmatch(r"savepoint (\d+) at (\S+)", stdout.strip())
    assert match, f"segflow savepoint printed {stdout!r}"
    return int(match.group(1)), match.group(2)
