"""A coordinator deployed under a lease generation publishes checkpoints only while its
cluster holds that generation: a takeover, or a lease left unrenewed past its deadline,
ends the job, and nothing is published or committed after that (real processes, moto)."""
import os
import threading
import time

import psutil
import pytest

from segflow.checkpoint import layout
from segflow.checkpoint.catalog import Catalog
from segflow.disaster.lease import Lease, says_fenced
from segflow.disaster.lease_store import LeaseStore
from segflow.errors import EXIT_FENCED
from segflow.settings import CheckpointSettings
from segflow.state import open_backend
from segflow_operator.reconcile import Deploy, JobStatus, Observed, Phase, PodPhase, PodView, decide
from segflow_operator.spec import parse
from support.processes import ROOT, is_worker, kill_tree, wait_for
from support.servers import new_bucket
from support.tls import JobCertificates

JOB = os.path.join(ROOT, "tests", "recovery", "jobs", "windowed_counts.py")
TTL = 4.0


class Holder:
    """The primary's operator, renewing generation 1 of the lease until told to stop, and
    skipping its renewals while ``late`` is set (an operator starved of CPU)."""

    def __init__(self, store):
        self.store = store
        self.version = store.write(Lease("east", 1, time.time(), TTL), None)
        self.stop = threading.Event()
        self.late = threading.Event()
        self.thread = threading.Thread(target=self.renew, daemon=True)
        self.thread.start()

    def renew(self):
        while not self.stop.wait(0.5):
            if not self.late.is_set():
                self.version = self.store.write(Lease("east", 1, time.time(), TTL), self.version)

    def halt(self):
        self.stop.set()
        self.thread.join()


@pytest.fixture
def fenced_job(s3_server, tmp_path):
    url = f"s3://{new_bucket()}/backup"
    store = LeaseStore(url, "fenced", s3_server.endpoint)
    holder = Holder(store)
    settings = CheckpointSettings("aligned", 0.3, url, s3_server.endpoint, 100, "fenced",
                                  lease_owner="east", lease_generation=1)
    output = tmp_path / "out"
    certs = JobCertificates("fenced")
    process = certs.spawn_coordinator(JOB, settings, tmp_path, {"output": output, "events": 400000, "rate": 4000})
    backend = open_backend(url, s3_server.endpoint)

    def complete():
        return {k for k in backend.list("jobs/fenced/") if k.endswith("/_COMPLETE")}

    process.written = lambda: set(backend.list("jobs/fenced/"))
    try:
        yield process, holder, store, complete, output
    finally:
        holder.halt()
        kill_tree(process)


def workers_of(process):
    try:
        return [p for p in psutil.Process(process.pid).children(recursive=True) if is_worker(p)]
    except psutil.NoSuchProcess:
        return []


def parts(output):
    return sorted(p for p in os.listdir(output) if p.startswith("part-")) if output.exists() else []


def test_a_takeover_ends_the_job_and_nothing_is_published_after_it(fenced_job):
    process, holder, store, complete, output = fenced_job
    wait_for(lambda: len(complete()) >= 2, timeout=60)
    west_in_progress = layout.snapshot_key("fenced", 99_999, 0, 0)      # the new holder's checkpoint under way
    store.backend.put(west_in_progress, b"west's part")
    first = int(sorted(complete())[0].split("/chk-")[1].split("/")[0])
    marker = Catalog(store.backend, "fenced").metadata(first)       # checked against its seal
    assert marker["lease"] == {"owner": "east", "generation": 1}
    holder.halt()
    store.write(Lease("west", 2, time.time(), TTL, previous="east"), holder.version)
    time.sleep(0.5)                      # a write that read the lease just before may still land
    published, committed, written = complete(), parts(output), process.written()
    _, stderr = process.communicate(timeout=30)
    assert process.returncode != 0
    assert "fenced" in stderr and "'west' holds generation 2" in stderr
    assert complete() == published and parts(output) == committed
    assert process.written() <= written, "snapshot parts were written after the takeover"
    assert west_in_progress in process.written(), "the fenced coordinator deleted the new holder's checkpoint part"


def test_an_unrenewed_lease_ends_the_job_at_its_deadline_with_nothing_published_after(fenced_job):
    process, holder, store, complete, output = fenced_job
    wait_for(lambda: len(complete()) >= 2, timeout=60)
    holder.halt()
    deadline = store.read()[0].deadline
    wait_for(lambda: not workers_of(process), timeout=deadline + TTL - time.time())
    stopped = time.time()
    _, stderr = process.communicate(timeout=30)
    assert stopped < deadline + 1.5, f"the workers ran on after the lease's deadline {deadline}: {stderr[-3000:]}"
    assert process.returncode == EXIT_FENCED and "past its deadline" in stderr
    published = complete()
    time.sleep(1.0)
    assert complete() == published


def test_a_late_renewal_fences_the_coordinator_and_its_holder_recovers_the_job_instead_of_failing_it(fenced_job):
    """Issue 49: the holder renews past the deadline once and nobody takes over. The
    coordinator must stop (nothing published after the deadline), and end so that the
    operator's rule, reading the pod as Kubernetes shows it, redeploys the job."""
    process, holder, store, complete, output = fenced_job
    wait_for(lambda: len(complete()) >= 2, timeout=60)
    holder.late.set()
    deadline = store.read()[0].deadline
    wait_for(lambda: time.time() > deadline + 1.0, timeout=TTL)
    published = complete()
    holder.late.clear()                  # renewed again, late: the lease is still east's generation 1
    _, stderr = process.communicate(timeout=30)
    wait_for(lambda: store.read()[0].renewed_at > deadline, timeout=5)
    assert store.read()[0].generation == 1 and store.read()[0].owner == "east"
    assert complete() == published, "a checkpoint was published after the lease's deadline"
    assert process.returncode == EXIT_FENCED, stderr[-3000:]
    message = "\n".join(stderr.splitlines()[-80:])[-2048:]      # terminationMessagePolicy FallbackToLogsOnError
    assert says_fenced(message), message
    spec = parse({"image": "segflow/engine:0.1.0", "job": {"module": "m"}, "parallelism": 2,
                  "checkpointing": {"protocol": "aligned"},
                  "disasterRecovery": {"backupUrl": "s3://b/p", "clusterName": "east", "role": "primary"}})
    status = JobStatus.parse({"phase": "Running", "revision": 1, "recoveries": 0,
                              "deployed": {"hash": spec.deployment_hash()}})
    ended = PodView("j-1-coordinator", "coordinator", 1, phase=PodPhase.FAILED, exit_code=process.returncode,
                    message=message)
    decision = decide(spec, status, Observed((ended,)))
    assert decision.status.phase == Phase.RECOVERING and decision.actions[-1] == Deploy(2, "auto")
