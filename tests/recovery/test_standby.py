"""Standby workers (``--standby-workers``): idle worker processes, registered and ready,
take over a lost worker's replicas instead of a new process. Under every protocol, with
active workers SIGKILLed at random moments, the output equals the oracle exactly, a
standby that was waiting before a kill is the process that takes over, and a killed
worker's new process becomes the next standby."""
import signal
import subprocess

import psutil
import pytest

from recovery.test_kills import PROTOCOLS, assert_word_counts, run_args, run_with_kills, words_file, workers_of
from support.processes import ROOT, command_words, kill_tree, wait_for


def standing_by(process: psutil.Process) -> bool:
    """Started as a standby and not yet given a lost worker's replicas (its title says
    when it takes over)."""
    words = command_words(process)
    return "--standby" in words and "took" not in words


def active(workers):
    return [w for w in workers if command_words(w) and not standing_by(w)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_standby_takes_over_each_lost_worker_and_the_output_is_exact(tmp_path, protocol):
    text, source = words_file(tmp_path, 5, 16000)
    output = tmp_path / "out"
    standbys_seen, took_over = set(), set()

    def victims(workers):
        """Only active workers; notes which processes stood by and which took over."""
        for w in workers:
            if standing_by(w):
                standbys_seen.add(w.pid)
            elif "took" in command_words(w):
                took_over.add(w.pid)
        return active(workers)
    stderr = run_with_kills("slow_wordcount.py", {"input": source, "output": output}, f"file://{tmp_path}/state",
                            protocol, seed=3, extra=("--standby-workers", "1"), victims=victims)
    assert_word_counts(output, text)
    assert stderr.count("takes over") >= 1, stderr[-3000:]
    assert took_over and took_over <= standbys_seen, (took_over, standbys_seen)


def test_a_standby_that_dies_idle_is_started_again(tmp_path):
    text, source = words_file(tmp_path, 2, 30000, vocabulary=50)      # about 10 s: two kills and restarts
    output = tmp_path / "out"
    stderr = run_with_kills("slow_wordcount.py", {"input": source, "output": output}, f"file://{tmp_path}/state",
                            "aligned", seed=4, kills=2, extra=("--standby-workers", "1"),
                            victims=lambda workers: [w for w in workers if standing_by(w)])
    assert "standby worker exited" in stderr and "recovering" not in stderr
    assert_word_counts(output, text)


def test_a_standby_killed_as_the_job_starts_is_started_again(tmp_path):
    """The standby is killed the moment it exists, most often before the coordinator
    listens (then it never registered: it was once forgotten, and the job ran on without
    a standby)."""
    text, source = words_file(tmp_path, 6, 30000, vocabulary=50)
    output = tmp_path / "out"
    args = run_args("slow_wordcount.py", {"input": source, "output": output}, f"file://{tmp_path}/state",
                    "aligned", 2, 0.25, ("--standby-workers", "1"))
    run = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        standbys = wait_for(lambda: [w for w in workers_of(run) if standing_by(w)], timeout=30, every=0.005)
        assert standbys, "no standby worker started"
        standbys[0].send_signal(signal.SIGKILL)
        again = wait_for(lambda: [w for w in workers_of(run) if standing_by(w) and w.pid != standbys[0].pid],
                         timeout=30)
        assert again, "the killed standby was not started again while the job ran"
        _, stderr = run.communicate(timeout=120)
    finally:
        kill_tree(run)
    assert run.returncode == 0, stderr[-3000:]
    assert "standby worker exited" in stderr, stderr[-3000:]
    assert_word_counts(output, text)
