"""A local run's workers get certificates ``segflow run`` issued: the coordinator that starts
them holds no CA key (it cannot mint a certificate) and never loads ``cryptography``;
each worker gets its own certificate and not the others' keys."""
import json
import subprocess
import sys

import psutil
import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from segflow.coordinator.spawner import WorkerSpawner, local_identities
from segflow.errors import SegflowError
from segflow.launcher.processes import _give_worker_certificates, worker_identities
from segflow.security.identities import Role
from segflow.security.identity_env import CERT_ENV, KEY_ENV, TlsConfigError, workers_line
from support.processes import wait_for
from support.tls import JobCertificates

ENDLESS_JOB = """
def build(env):
    env.generate(lambda i: i % 10, count=None, rate=1000.0).group_by_count().collect()
"""


def common_name(cert_pem: str) -> str:
    cert = x509.load_pem_x509_certificate(cert_pem.encode())
    return cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value


def test_the_workers_certificates_come_back_from_the_line_by_name():
    certs = JobCertificates()
    issued = worker_identities(certs.authority, 3)
    line = workers_line(issued)
    assert line.count("\n") == 1 and line.endswith("\n")
    assert local_identities(3, certs.authority.ca_pem, line) == issued


def test_a_coordinator_given_no_worker_certificates_says_what_it_needs():
    with pytest.raises(TlsConfigError, match="reads its workers' certificates from stdin .* and got nothing"):
        local_identities(2, JobCertificates().authority.ca_pem, "")


@pytest.mark.parametrize("line", ["not json", "[1, 2]", json.dumps({"w0": "a string"}), json.dumps({"w0": {}})])
def test_a_malformed_certificate_line_is_refused(line):
    with pytest.raises(TlsConfigError, match="stdin is not the JSON line of certificates segflow run writes"):
        local_identities(1, JobCertificates().authority.ca_pem, line)


def test_more_workers_than_certificates_names_the_ones_missing():
    certs = JobCertificates()
    line = workers_line({"w0": certs.authority.issue(Role.WORKER, "w0")})
    with pytest.raises(SegflowError, match="no certificate for w1, w2 on stdin"):
        local_identities(3, certs.authority.ca_pem, line)


def test_a_worker_started_again_gets_its_own_certificate_and_no_other_key():
    """The exec'd worker of a recovery (its environment is its own, unlike a forked one's)."""
    certs = JobCertificates()
    issued = worker_identities(certs.authority, 2)
    spawner = WorkerSpawner(2, local_identities(2, certs.authority.ca_pem, workers_line(issued)))
    spawner.announce("127.0.0.1:9")       # nothing listens: the worker keeps trying to register
    try:
        spawner.start("w1")
        worker = psutil.Process(spawner.processes["w1"].pid)
        assert wait_for(lambda: "--coordinator" in worker.cmdline(), timeout=30)   # exec'd: its own environment
        environ = worker.environ()
    finally:
        spawner.stop_all()
    assert "SEGFLOW_TLS_CA_KEY" not in environ
    assert common_name(environ[CERT_ENV]) == "w1"
    assert environ[KEY_ENV] == issued["w1"].key.decode()
    assert issued["w0"].key.decode() not in "".join(environ.values())


def test_a_local_runs_coordinator_never_loads_cryptography(tmp_path, spawn):
    """Read from the running coordinator's memory map: ``cryptography``'s compiled core is
    not in it; and its environment carries no key but its own."""
    job = tmp_path / "endless.py"
    job.write_text(ENDLESS_JOB)
    run = spawn("run", str(job), "--parallelism", "2", "--processes", "--quiet")

    def coordinator() -> psutil.Process | None:
        for child in psutil.Process(run.pid).children():
            if "coordinator" in child.cmdline() and len(child.children()) == 2:
                return child
        return None
    found = wait_for(coordinator, timeout=60)
    assert found is not None, "the local run's coordinator did not start its two workers"
    maps, environ = [m.path for m in found.memory_maps()], found.environ()
    assert any("grpc" in path for path in maps), "not the map of a coordinator that serves"
    assert [path for path in maps if "cryptography" in path] == []
    assert [name for name, value in environ.items() if "PRIVATE KEY" in value] == [KEY_ENV]


def test_a_coordinator_gone_before_it_reads_its_certificates_is_no_error_of_the_launcher():
    """It said why on stdout, which segflow run reads next; more than a pipe's 64 KiB of
    certificates (200 workers) must not hang or raise on the way."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"], stdin=subprocess.PIPE, text=True)
    gone.wait(30)
    _give_worker_certificates(gone, JobCertificates().authority, 200)
    assert gone.stdin.closed
