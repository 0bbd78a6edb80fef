"""Containers of the images built from images/*.Dockerfile (scripts/images/build.sh), run
by scripts/cluster/sandbox: each image starts and reports pyproject's version, the engine
runs the word count from its image alone, and nothing of the host's checkout, virtualenv,
files, processes or network is visible inside."""
import json
import os
import socket
import subprocess
import sys
import time
import tomllib

import pytest

from support.containers import isolated, namespace_pids, run_container
from support.processes import ROOT
from support.wordcount import oracle, read_parts, write_corpus

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from sandbox import runner  # noqa: E402
from sandbox.process import process_of  # noqa: E402

with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
    VERSION = tomllib.load(f)["project"]["version"]


@pytest.mark.parametrize("name", ["engine", "operator", "spark"])
def test_each_image_starts_its_entrypoint_and_reports_the_projects_version(images, name, tmp_path):
    bundle = images[name]
    ran = run_container(bundle, {"args": ["--version"]}, str(tmp_path))
    assert ran.exit_code == 0, ran.output
    assert ran.output == f"{bundle.image()['Entrypoint'][0]} {VERSION}\n"


def test_the_spark_image_has_a_java_runtime(images, tmp_path):
    ran = run_container(images["spark"], {"command": ["java", "-version"]}, str(tmp_path))
    assert ran.exit_code == 0 and 'version "17.' in ran.output, ran.output


def test_the_engine_runs_the_word_count_from_its_image_alone(images, tmp_path):
    """The example and segflow come from the image; only the corpus and the output directory
    are the host's, through a volume (as an emptyDir would be)."""
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o777)                               # the image's user (10001) writes the output
    corpus = write_corpus(str(data))
    ran = run_container(images["engine"], {"args": ["run", "examples/wordcount.py", "-p", "input=/data/in.txt",
                                                    "-p", "output=/data/out", "--parallelism", "2", "--quiet"]},
                        str(tmp_path), (runner.Volume(str(data), "/data"),), timeout=180)
    assert ran.exit_code == 0, ran.output
    assert dict(read_parts(str(data / "out"))) == dict(oracle(corpus))


PROBE = """
import json, os, socket, segflow
print(json.dumps({"segflow": segflow.__file__, "uid": os.getuid(), "gid": os.getgid(), "cwd": os.getcwd(),
                  "hostname": socket.gethostname(), "interfaces": sorted(os.listdir("/sys/class/net")),
                  "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), "self": os.getpid(),
                  "visible": [p for p in json.loads(os.environ["HOST_PATHS"]) if os.path.lexists(p)]}))
"""


def test_nothing_of_the_host_is_visible_inside(images, tmp_path):
    """The checkout, the test's virtualenv and a file the test just wrote do not exist
    inside; segflow is the image's; the network, process tree and hostname are the
    container's own."""
    marker = tmp_path / "host-only"
    marker.write_text("the host's")
    host_paths = [ROOT, os.path.join(ROOT, ".venv"), sys.prefix, sys.executable, str(marker)]
    ran = run_container(images["engine"], {"command": ["python3", "-c", PROBE]}, str(tmp_path),
                        env={"HOST_PATHS": json.dumps(host_paths)})
    assert ran.exit_code == 0, ran.output
    seen = json.loads(ran.output)
    assert seen["visible"] == []
    assert seen["segflow"].startswith("/usr/local/lib/python3.11/site-packages/segflow/")
    assert (seen["uid"], seen["gid"], seen["cwd"]) == (10001, 10001, "/app")
    assert seen["interfaces"] == ["lo"]
    assert seen["hostname"] == "test-pod" != socket.gethostname()
    # a pid namespace of its own: its init (the runner's setup shell, which passes on the
    # container's exit status) and the container's process, nothing of the host's
    assert seen["pids"] == sorted({1, seen["self"]}), seen["pids"]


def test_the_process_has_the_pods_groups_and_a_missing_command_exits_127(images, tmp_path):
    """The fsGroup and supplementalGroups are the process's supplementary groups (util-linux's
    unshare cannot set them; the runner's last step does); a command the image lacks ends
    the container with 127 and says so."""
    engine = images["engine"]
    process = process_of(engine.image(), {"command": ["id", "-G"]}, {}, engine.read("/etc/passwd"),
                         engine.read("/etc/group"), {"fsGroup": 4242, "supplementalGroups": [5000]})
    name = f"segflow-test-{os.getpid()}-groups"
    with isolated(str(tmp_path / "netns"), name):
        started = runner.start(engine, process, name, str(tmp_path / "container"), "test-pod", subprocess.PIPE)
        output, _ = started.communicate(timeout=60)
        assert runner.kill(started) == 0
        assert sorted(output.split()) == [b"10001", b"4242", b"5000"]      # the kernel keeps them sorted
    missing = run_container(engine, {"command": ["no-such-command"]}, str(tmp_path / "missing"))
    assert missing.exit_code == 127
    assert "cannot run 'no-such-command' in the container: No such file or directory" in missing.output


def test_a_command_entered_into_a_running_container_runs_as_its_user_in_its_root(images, tmp_path):
    """What an exec probe runs: inside the container's namespaces and root, as its user
    with its groups, in its working directory, seeing what the container wrote."""
    engine = images["engine"]
    process = process_of(engine.image(), {"command": ["sh", "-c", "echo mine > /tmp/written && exec sleep 600"]}, {},
                         engine.read("/etc/passwd"), engine.read("/etc/group"), {"fsGroup": 4242})
    name = f"segflow-test-{os.getpid()}-enter"
    with isolated(str(tmp_path / "netns"), name):
        directory = str(tmp_path / "container")
        started = runner.start(engine, process, name, directory, "test-pod", subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(os.path.join(directory, "upper", "tmp", "written")) \
                    and time.monotonic() < deadline:
                time.sleep(0.1)
            command = runner.enter_command(runner.container_init(started.pid), runner.Layout(directory).merged,
                                           process, ["sh", "-c", "cat /tmp/written; id -u; id -G; pwd; hostname; "
                                                     "test ! -e " + ROOT])
            entered = subprocess.run(command, env=process.env, capture_output=True, text=True, timeout=30)
        finally:
            runner.kill(started)
    assert entered.returncode == 0, entered.stderr
    written, uid, groups, cwd, hostname = entered.stdout.splitlines()
    assert (written, uid, sorted(groups.split()), cwd, hostname) == ("mine", "10001", ["10001", "4242"], "/app",
                                                                      "test-pod")


def test_each_container_writes_to_a_layer_of_its_own(images, tmp_path):
    """A file one container writes is neither in the next container of the same image nor
    in the image's unpacked root filesystem."""
    engine = images["engine"]
    first = run_container(engine, {"command": ["sh", "-c", "echo mine > /tmp/written && cat /tmp/written"]},
                          str(tmp_path / "first"))
    assert (first.exit_code, first.output) == (0, "mine\n")
    second = run_container(engine, {"command": ["sh", "-c", "test ! -e /tmp/written"]}, str(tmp_path / "second"))
    assert second.exit_code == 0, second.output
    assert not os.path.exists(os.path.join(engine.rootfs, "tmp", "written"))
    assert os.path.exists(tmp_path / "first" / "container" / "upper" / "tmp" / "written")


def test_killing_a_container_ends_every_process_in_it(images, tmp_path):
    """A container whose pid 1 left a child running in the background: after ``kill``, no
    process remains in its network namespace (which is then deleted)."""
    engine = images["engine"]
    process = process_of(engine.image(), {"command": ["sh", "-c", "sleep 600 & sleep 600"]}, {},
                         engine.read("/etc/passwd"), engine.read("/etc/group"))
    name = f"segflow-test-{os.getpid()}-kill"
    with isolated(str(tmp_path / "netns"), name):
        started = runner.start(engine, process, name, str(tmp_path / "container"), "test-pod", subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while len(namespace_pids(name)) < 4 and time.monotonic() < deadline:   # outer unshare, sh, two sleeps
                time.sleep(0.1)
            assert len(namespace_pids(name)) >= 4
        finally:
            runner.kill(started)
        assert namespace_pids(name) == []
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_a_volume_under_a_symbolic_link_of_the_image_lands_inside_the_root(images, tmp_path):
    """/var/run is a link to /run in the image: a volume at /var/run/x is mounted at /run/x
    of the container's root (the link followed inside it, as runtimes do), not at the host's."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "file").write_text("from the volume")
    ran = run_container(images["engine"], {"command": ["cat", "/run/x/file", "/var/run/x/file"]},
                        str(tmp_path / "container"), (runner.Volume(str(source), "/var/run/x"),))
    assert (ran.exit_code, ran.output) == (0, "from the volume" * 2), ran.output
    assert not os.path.exists("/run/x")
