"""A warm standby's coordinator (disasterRecovery.standby: warm): up with its workers
registered while another cluster holds the job's lease, writing nothing to the backup
store; once the lease names its cluster it runs the job in the same processes, fenced
under the lease's generation (real processes, moto)."""
import os
import threading
import time

import psutil

from segflow.checkpoint.catalog import Catalog
from segflow.disaster.lease import Lease
from segflow.disaster.lease_store import LeaseStore
from segflow.settings import CheckpointSettings
from segflow.state import open_backend
from support.processes import ROOT, is_worker, kill_tree, wait_for
from support.servers import new_bucket
from support.tls import JobCertificates

JOB = os.path.join(ROOT, "tests", "recovery", "jobs", "windowed_counts.py")
TTL = 4.0


class Renewer:
    """One cluster's operator renewing its generation of the lease until told to stop."""

    def __init__(self, store, owner, generation, version=None, previous=""):
        self.store, self.owner, self.generation = store, owner, generation
        self.version = store.write(Lease(owner, generation, time.time(), TTL, previous=previous), version)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.renew, daemon=True)
        self.thread.start()

    def renew(self):
        while not self.stop.wait(0.5):
            self.version = self.store.write(Lease(self.owner, self.generation, time.time(), TTL), self.version)

    def halt(self):
        self.stop.set()
        self.thread.join()


def workers_of(process):
    return sorted(p.pid for p in psutil.Process(process.pid).children(recursive=True) if is_worker(p))


def test_a_warm_standby_waits_registered_writes_nothing_and_runs_in_its_own_processes_once_it_holds_the_lease(
        s3_server, tmp_path):
    url = f"s3://{new_bucket()}/backup"
    store = LeaseStore(url, "warm", s3_server.endpoint)
    east = Renewer(store, "east", 1)
    backend = open_backend(url, s3_server.endpoint)
    settings = CheckpointSettings("aligned", 0.3, url, s3_server.endpoint, 100, "warm", restore="auto",
                                  lease_owner="west", await_lease=True)
    output = tmp_path / "out"
    certs = JobCertificates("warm")
    west = None
    process = certs.spawn_coordinator(JOB, settings, tmp_path, {"output": output, "events": 9000, "rate": 3000})
    try:
        assert "standing by" in process.stdout.readline()
        wait_for(lambda: len(workers_of(process)) == 2, timeout=30)
        standing = workers_of(process)
        time.sleep(3)                         # standing by: east renews, nothing of the job's is written
        assert not list(backend.list("jobs/warm/")) and not output.exists()
        assert workers_of(process) == standing and process.poll() is None
        east.halt()
        west = Renewer(store, "west", 2, east.version, previous="east")
        taken = time.monotonic()
        wait_for(lambda: any(k.endswith("/_COMPLETE") for k in backend.list("jobs/warm/")), timeout=30)
        assert workers_of(process) == standing, "the takeover started new worker processes"
        stdout, stderr = process.communicate(timeout=90)
        assert process.returncode == 0, stderr[-3000:]
        assert "lease taken over" in stderr and "listening on" in stdout
        complete = sorted(k for k in backend.list("jobs/warm/") if k.endswith("/_COMPLETE"))
        assert complete, "the job ran without publishing a checkpoint"
        first = int(complete[0].split("/chk-")[1].split("/")[0])
        assert Catalog(store.backend, "warm").metadata(first)["lease"] == {"owner": "west", "generation": 2}
        counts = {}
        for part in sorted(p for p in os.listdir(output) if p.startswith("part-")):
            for line in (output / part).read_text().splitlines():
                key, n = line.split()
                counts[key] = counts.get(key, 0) + int(n)
        assert sum(counts.values()) == 9000, counts
        assert time.monotonic() - taken < 60
    finally:
        east.halt()
        if west is not None:
            west.halt()
        kill_tree(process)
