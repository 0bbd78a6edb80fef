"""A standby worker whose job ends while it stands by exits 0, at once: in a pod, an exit
code of 2 (what it gave before) reads as a failed worker, and a standby that retried its
registration against a coordinator that had gone kept its pod for two minutes."""
import json
import re
import subprocess
import urllib.request

from segflow.security.identities import Role
from support.processes import ROOT, SEGFLOW, kill_tree, wait_for
from support.servers import free_port
from support.tls import JobCertificates

JOB = "def build(env):\n    return env.from_iterable(range(2000)).map(lambda x: 2 * x).collect()\n"


def standing_by(web: str) -> list[str]:
    """The standby workers the coordinator's web view lists."""
    with urllib.request.urlopen(f"{web}api/job", timeout=5) as reply:
        return [worker["name"] for worker in json.load(reply).get("standby", [])]


def test_a_standby_exits_0_when_the_job_ends_while_it_stands_by(tmp_path):
    job = tmp_path / "job.py"
    job.write_text(JOB)
    certs = JobCertificates("standby-exit")
    address = f"127.0.0.1:{free_port()}"
    coordinator = subprocess.Popen(
        [SEGFLOW, "coordinator", str(job), "--workers", "1", "--standby-workers", "1", "--listen", address],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env=certs.env(Role.COORDINATOR, "coordinator"))
    workers = []

    def worker(name: str, *options: str) -> subprocess.Popen:
        workers.append(subprocess.Popen(
            [SEGFLOW, "worker", "--coordinator", address, "--name", name, "--host", "127.0.0.1", *options],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
            env=certs.env(Role.WORKER, name)))
        return workers[-1]

    try:
        web = re.search(r"web (http://\S+)", coordinator.stdout.readline()).group(1)
        standby = worker("w1", "--standby")
        wait_for(lambda: standing_by(web) == ["w1"], timeout=60)    # registered before the job can start
        active = worker("w0")
        assert active.wait(timeout=60) == 0, active.communicate()[1][-2000:]
        assert standby.wait(timeout=5) == 0, standby.communicate()[1][-2000:]
        out, _ = standby.communicate()
        assert "standing by" in out and "the job ended while it stood by" in out, out
    finally:
        for process in (coordinator, *workers):
            kill_tree(process)
