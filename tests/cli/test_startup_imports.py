"""A local run waits for its coordinator to start its workers, and for each worker to
start: the command line those processes go through must not import what only other
commands need (the API and job loader, gRPC, the checkpoint store, the cost model), and a
worker imports only what it runs."""
import json
import subprocess
import sys

import pytest

from segflow.security.identities import Role
from support.tls import JobCertificates

HEAVY = ["segflow.api.environment", "segflow.jobs.loader", "grpc", "segflow.checkpoint.catalog",
         "segflow.checkpoint.segment_cost", "segflow.runtime.local", "segflow.plan.placement", "segflow.state"]


def modules_after(statement: str) -> set[str]:
    probe = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(done.stdout))


def test_the_command_line_and_the_worker_spawner_import_nothing_heavy():
    loaded = modules_after("import segflow.cli.main, segflow.coordinator.spawner, segflow.security.identity_env")
    assert sorted(m for m in HEAVY if m in loaded) == []


def test_a_worker_does_not_import_the_certificate_authority():
    """Workers only read their certificates; issuing them (``cryptography``) is the
    launcher's and the coordinator's."""
    loaded = modules_after("import segflow.cli.main, segflow.worker.service")
    assert sorted(m for m in loaded if m.split(".")[0] == "cryptography" or m == "segflow.security.pki") == []


def test_a_worker_waiting_for_its_coordinators_address_has_not_imported_the_certificate_authority():
    """The real command a local run starts (``segflow worker --coordinator -``), up to the
    point where it reads the address: it reached ``cryptography`` through the spawner's
    module for one constant."""
    command = "import sys; from segflow.cli.main import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", command, "worker", "--coordinator", "-",
                           "--name", "w0", "--host", "127.0.0.9"], input="", capture_output=True, text=True,
                          timeout=60, env=JobCertificates().env(Role.WORKER, "w0"))
    assert done.returncode == 2 and "exited before it told its address" in done.stdout, (done.stdout, done.stderr)
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "segflow.worker.service" in imported
    assert sorted(m for m in imported if m.split(".")[0] == "cryptography" or m == "segflow.security.pki") == []


def test_the_launcher_starts_the_coordinator_before_it_loads_grpc():
    """``segflow run`` at N > 1 spends its start-up before the coordinator's; the gRPC
    client it follows the job with loads while the coordinator starts."""
    assert "grpc" not in modules_after("import segflow.launcher.processes")


@pytest.mark.parametrize("name, home", [("StreamEnvironment", "segflow.api.environment"),
                                        ("Config", "segflow.settings"),
                                        ("WindowResult", "segflow.runtime.operators.windows")])
def test_the_package_imports_a_name_when_it_is_first_used(name, home):
    loaded = modules_after(f"import segflow; assert segflow.{name}.__module__ == {home!r}")
    assert home in loaded


def test_importing_the_package_imports_no_api():
    assert "segflow.api.environment" not in modules_after("import segflow")


def test_a_name_the_package_does_not_export_is_an_attribute_error():
    done = subprocess.run([sys.executable, "-c", "import segflow; segflow.StreamEnviroment"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "has no attribute 'StreamEnviroment'" in done.stderr
