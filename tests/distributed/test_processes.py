"""The local distributed mode with real coordinator and worker processes on loopback."""
import os
import re
import signal
import subprocess
import time
import urllib.request

import grpc
import psutil
import pytest

from segflow.jobs import run_job
from segflow.net import PROTOCOL_VERSION
from segflow.v1 import control_pb2 as cpb
from segflow.v1 import control_pb2_grpc as cpb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from support.processes import command_words, is_worker, segflow_processes, wait_for
from support.tls import JobCertificates
from segflow.security.identities import Role

SLOW_JOB = """
def build(env, rate="3000"):
    env.generate(lambda i: i % 100, count=None, rate=float(rate)).group_by_count().collect()
"""

COLLECT_JOB = """
def build(env, n="20000"):
    return (env.generate(lambda i: i, count=int(n))
               .map(lambda x: (x % 7, x))
               .group_by(lambda kv: kv[0])
               .fold(0, lambda acc, kv: acc + kv[1])
               .collect())
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("workers", [2, 4])
def test_collect_results_come_back_from_the_workers(tmp_path, workers):
    job = write(tmp_path, "collect_job.py", COLLECT_JOB)
    _, output = run_job(job, {"n": "20000"}, workers, runtime="processes")
    expected = {}
    for x in range(20000):
        expected[x % 7] = expected.get(x % 7, 0) + x
    assert sorted(output.get()) == sorted(expected.items())


LARGE_COLLECT_JOB = """
def build(env):
    return env.generate(lambda i: f"{i:0250d}", count=40000).collect()
"""


def test_collected_results_larger_than_grpcs_default_message_come_back(tmp_path):
    """About 5 MB of results per worker, 10 MB in all: over gRPC's default limit of 4 MB per
    message, which made such a job fail as a lost worker."""
    job = write(tmp_path, "large_collect_job.py", LARGE_COLLECT_JOB)
    _, output = run_job(job, {}, 2, runtime="processes")
    assert sorted(output.get()) == [f"{i:0250d}" for i in range(40000)]


def test_sigkill_of_a_worker_fails_the_run_fast_naming_it(tmp_path, spawn):
    job = write(tmp_path, "slow_job.py", SLOW_JOB)
    run = spawn("run", job, "--parallelism", "3", "--quiet")
    workers = wait_for(lambda: [p for p in segflow_processes(run.pid) if is_worker(p)
                                and "w1" in command_words(p)], timeout=20)
    assert workers, "worker w1 did not start"
    time.sleep(1.5)
    victim = workers[0].pid
    killed_at = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    _, stderr = run.communicate(timeout=15)
    elapsed = time.monotonic() - killed_at
    assert run.returncode != 0
    assert elapsed < 10, f"took {elapsed:.1f} s to notice"
    assert f"lost worker w1 (pid {victim}" in stderr
    assert segflow_processes(run.pid) == []
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"]
                and job in " ".join(p.info["cmdline"])], "a segflow process was left behind"


def test_the_first_workers_are_forked_from_the_coordinator_and_titled_as_workers(tmp_path, spawn):
    """They start with the coordinator's imports instead of importing everything again
    (a third of a second each, on the way of every local run), ps still names them, and a
    worker started again after a loss is a new process of its own."""
    job = write(tmp_path, "slow_job.py", SLOW_JOB)
    run = spawn("run", job, "--parallelism", "2", "--checkpoint-protocol", "aligned", "--checkpoint-interval", "0.3",
                "--state", f"file://{tmp_path / 'state'}", "--quiet")
    tree = _job_started(run, 2)
    coordinator = next(p for p in tree if "coordinator" in command_words(p))
    workers = {command_words(p)[command_words(p).index("--name") + 1]: p for p in tree if is_worker(p)}
    assert sorted(workers) == ["w0", "w1"]
    for name, worker in workers.items():
        assert worker.ppid() == coordinator.pid
        assert worker.cmdline()[0].startswith(f"segflow worker --coordinator - --name {name} "), worker.cmdline()
    lost = workers["w1"].pid
    os.kill(lost, signal.SIGKILL)
    again = wait_for(lambda: [p for p in segflow_processes(run.pid) if is_worker(p) and "w1" in command_words(p)
                              and p.pid != lost], timeout=20)
    assert again, "w1 was not started again"
    assert again[0].cmdline()[2:4] == ["worker", "--coordinator"] and again[0].ppid() == coordinator.pid
    assert run.poll() is None, run.stderr.read()


def _job_started(run: subprocess.Popen, workers: int) -> list[psutil.Process]:
    """The run's coordinator and workers, once all are up (the workers have registered)."""
    def started():
        tree = segflow_processes(run.pid)
        cmdlines = [" ".join(p.cmdline()) for p in tree if p.is_running()]
        if sum(" worker " in c for c in cmdlines) == workers and any(" coordinator " in c for c in cmdlines):
            return tree
        return None
    tree = wait_for(started, timeout=30)
    assert tree, f"the job's {workers} workers did not start"
    time.sleep(1.5)                  # the job is running
    return tree


def _stop_leftovers(processes: list[psutil.Process]) -> list[str]:
    """Kill what of ``processes`` still runs; their command lines."""
    left = []
    for p in processes:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                left.append(" ".join(p.cmdline()))
                p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(processes, timeout=10)
    return left


def test_a_run_killed_outright_takes_its_job_with_it(tmp_path, spawn):
    """SIGKILL of `segflow run` runs none of its clean-up; its coordinator (in a session of
    its own) sees it gone and cancels the job, so no job runs on unseen beside the next
    run (a restore of the same job would otherwise share its outputs and checkpoints)."""
    job = write(tmp_path, "slow_job.py", SLOW_JOB)
    run = spawn("run", job, "--parallelism", "2", "--quiet")
    tree = _job_started(run, workers=2)
    try:
        os.kill(run.pid, signal.SIGKILL)
        run.wait(10)
        gone, _ = psutil.wait_procs(tree, timeout=10)
    finally:
        left = _stop_leftovers(tree)
    assert left == [], "processes of the killed run went on"
    assert len(gone) == 3


def test_sigterm_stops_a_run_and_everything_it_started(tmp_path, spawn):
    job = write(tmp_path, "slow_job.py", SLOW_JOB)
    run = spawn("run", job, "--parallelism", "2", "--quiet")
    tree = _job_started(run, workers=2)
    stopped_at = time.monotonic()
    try:
        os.kill(run.pid, signal.SIGTERM)
        _, stderr = run.communicate(timeout=15)
        elapsed = time.monotonic() - stopped_at
        psutil.wait_procs(tree, timeout=5)
    finally:
        left = _stop_leftovers(tree)
    assert left == []
    assert run.returncode == 130
    assert "segflow: interrupted (SIGTERM)" in stderr
    assert "cancelled: interrupted (SIGTERM)" in stderr
    assert elapsed < 5, f"took {elapsed:.1f} s to stop"


def test_a_run_that_ignores_sighup_keeps_ignoring_it(tmp_path, spawn):
    """`nohup segflow run` outlives its terminal: a SIGHUP ignored when the run starts is
    not turned into an interruption (SIGTERM still is)."""
    job = write(tmp_path, "slow_job.py", SLOW_JOB)
    run = spawn("run", job, "--quiet", preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    time.sleep(2)
    os.kill(run.pid, signal.SIGHUP)
    time.sleep(1)
    assert run.poll() is None, run.stderr.read()
    os.kill(run.pid, signal.SIGTERM)
    _, stderr = run.communicate(timeout=15)
    assert run.returncode == 130
    assert "segflow: interrupted (SIGTERM)" in stderr


BACKPRESSURE_JOB = """
import time
from segflow import BatchMode

def slow(x):
    if x[0] % 50 == 0:
        time.sleep(0.004)
    return x[0]

def build(env, output, n="150000"):
    (env.generate(lambda i: (i, "x" * 2000), count=int(n))
        .batch_mode(BatchMode.fixed(64))
        .shuffle()
        .map(slow)
        .write_text(output))
"""


def test_slow_sink_keeps_worker_memory_bounded_and_loses_nothing(tmp_path, spawn):
    job = write(tmp_path, "bp_job.py", BACKPRESSURE_JOB)
    output = tmp_path / "out"
    run = spawn("run", job, "-p", f"output={output}", "--parallelism", "2", "--quiet")
    peak = 0
    while run.poll() is None:
        for p in segflow_processes(run.pid):
            try:
                if is_worker(p):
                    peak = max(peak, p.memory_info().rss)
            except psutil.NoSuchProcess:
                pass
        time.sleep(0.2)
    assert run.returncode == 0, run.stderr.read()
    produced = 150000 * 2000
    ceiling = 200 * 2**20
    assert peak < ceiling, f"a worker reached {peak / 2**20:.0f} MiB for {produced / 2**20:.0f} MiB of data"
    assert (output / "_SUCCESS").exists()
    got = sorted(int(line) for part in output.glob("part-*") for line in part.read_text().split())
    assert got == list(range(150000))


def test_registration_with_another_protocol_version_is_refused(tmp_path, spawn):
    job = write(tmp_path, "slow_job.py", SLOW_JOB)
    certs = JobCertificates()
    coordinator = spawn("coordinator", job, "--workers", "1", "--listen", "127.0.0.1:0",
                        env=certs.env(Role.COORDINATOR, "coordinator"))
    line = coordinator.stdout.readline()
    address = re.search(r"listening on (\S+)", line).group(1)
    with certs.channel(address, Role.COORDINATOR, Role.WORKER, "old") as channel:
        stub = cpb_grpc.CoordinatorStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.Register(cpb.RegisterRequest(protocol_version=PROTOCOL_VERSION + 1, worker="old",
                                              data_address="127.0.0.9:1"), timeout=10)
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "incompatible protocol version" in info.value.details()
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING


def test_a_worker_told_no_address_exits_saying_why(spawn):
    """A worker started before its coordinator listened (``--coordinator -``, as the
    coordinator of a local run starts its first workers) reads the address from stdin:
    if the coordinator dies first, the worker leaves at once instead of waiting forever."""
    worker = spawn("worker", "--coordinator", "-", "--name", "w0", "--host", "127.0.0.7",
                   stdin=subprocess.PIPE, env=JobCertificates().env(Role.WORKER, "w0"))
    stdout, _ = worker.communicate(input="", timeout=60)   # stdin closed, no address
    assert worker.returncode == 2
    assert "the coordinator exited before it told its address" in stdout


FAILING_JOB = """
def build(env):
    raise RuntimeError("the job cannot be built")
"""


def test_a_coordinator_that_fails_before_listening_stops_the_workers_it_started(tmp_path, spawn):
    job = write(tmp_path, "failing_job.py", FAILING_JOB)
    certs = JobCertificates()
    coordinator = spawn("coordinator", job, "--workers", "2", "--spawn-workers", stdin=subprocess.PIPE,
                        env=certs.env(Role.COORDINATOR, "coordinator"))
    _, stderr = coordinator.communicate(input=certs.workers_line(2), timeout=60)
    assert coordinator.returncode != 0
    assert "the job cannot be built" in stderr

    def in_its_group(process):
        try:
            return os.getpgid(process.pid) == coordinator.pid
        except ProcessLookupError:
            return False
    assert [p.info["cmdline"] for p in psutil.process_iter(["cmdline"]) if in_its_group(p)] == []


def test_worker_serves_health_and_prometheus_metrics(tmp_path, spawn):
    job = write(tmp_path, "slow_job.py", SLOW_JOB)
    certs = JobCertificates()
    coordinator = spawn("coordinator", job, "--workers", "1", "--listen", "127.0.0.1:0",
                        env=certs.env(Role.COORDINATOR, "coordinator"))
    address = re.search(r"listening on (\S+)", coordinator.stdout.readline()).group(1)
    worker = spawn("worker", "--coordinator", address, "--name", "w0", "--host", "127.0.0.7",
                   env=certs.env(Role.WORKER, "w0"))
    proc = psutil.Process(worker.pid)

    def listening():
        ports = [c.laddr.port for c in proc.net_connections(kind="tcp")
                 if c.status == psutil.CONN_LISTEN and c.laddr.ip in ("127.0.0.7", "::ffff:127.0.0.7")]
        return ports if len(ports) >= 2 else None

    ports = wait_for(listening, timeout=20)
    assert ports, "the worker did not open its data-plane and metrics ports on 127.0.0.7"

    def scrape():
        for port in ports:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.7:{port}/metrics", timeout=2).read().decode()
            except Exception:
                continue
            if "segflow_records_in" in body and re.search(r'segflow_records_in_total\{block="0"[^}]*\} [1-9]', body):
                return body
        return None

    body = wait_for(scrape, timeout=20, every=0.5)
    assert body, "no records counted in the worker's metrics"
    assert "segflow_end_to_end_latency_seconds_bucket" in body
    assert "segflow_backpressure_seconds_total" in body and "segflow_barrier_seconds_total" in body
    data_port = next(p for p in ports if _is_grpc(p))
    with certs.channel(f"127.0.0.7:{data_port}", Role.WORKER) as channel:
        status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5).status
    assert status == health_pb2.HealthCheckResponse.SERVING


def _is_grpc(port: int) -> bool:
    try:
        urllib.request.urlopen(f"http://127.0.0.7:{port}/metrics", timeout=2)
        return False
    except Exception:
        return True
