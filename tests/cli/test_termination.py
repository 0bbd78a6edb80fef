"""`segflow run` turns SIGTERM and SIGHUP into an interruption (the job cancelled, its
processes stopped) while it runs, and only then: the handlers it replaced come back, and
called from a thread it changes nothing (signal handlers belong to the main thread)."""
import os
import signal
import subprocess
import threading

from segflow.cli.main import main
from support.wordcount import ROOT, SEGFLOW

PAGERANK = os.path.join(ROOT, "examples", "pagerank.py")

JOB = """
import os
import signal
import subprocess


def _name(handler):
    return getattr(handler, "__name__", str(handler))


def build(env, seen):
    with open(seen, "w") as f:
        f.write(" ".join(_name(signal.getsignal(s)) for s in (signal.SIGTERM, signal.SIGHUP)))
    return env.from_iterable([1, 2, 3]).collect()
"""


def test_the_run_interrupts_on_sigterm_and_sighup_while_it_runs_and_then_puts_the_handlers_back(tmp_path):
    job, seen = tmp_path / "job.py", tmp_path / "seen"
    job.write_text(JOB, encoding="utf-8")
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    assert main(["run", str(job), "-p", f"seen={seen}", "--quiet"]) == 0
    # a signal this process ignores (started by nohup, say) stays ignored
    assert seen.read_text() == " ".join("interrupt" if b is signal.SIG_DFL else str(b) for b in before)
    assert signal.SIG_DFL in before, "neither signal is at its default here: nothing was tested"
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before


def test_a_run_from_another_thread_leaves_the_handlers_alone(tmp_path):
    job, seen = tmp_path / "job.py", tmp_path / "seen"
    job.write_text(JOB, encoding="utf-8")
    codes = []
    runner = threading.Thread(target=lambda: codes.append(main(["run", str(job), "-p", f"seen={seen}", "--quiet"])))
    runner.start()
    runner.join(60)
    assert codes == [0]
    assert "interrupt" not in seen.read_text()


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    """`segflow plan JOB | head -1`: the pipe closes before the plan is printed; the command
    ends as a shell tool killed by SIGPIPE would, with no traceback."""
    plan = subprocess.Popen([SEGFLOW, "plan", PAGERANK, "--parallelism", "16"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    plan.stdout.close()
    error = plan.stderr.read().decode()
    plan.stderr.close()
    assert plan.wait(timeout=60) == 128 + signal.SIGPIPE, error
    assert "Traceback" not in error and "BrokenPipe" not in error, error
