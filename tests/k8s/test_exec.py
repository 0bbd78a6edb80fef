"""``kubectl exec`` into pods from images: the API server proxies it to the node agent's
kubelet API, which speaks SPDY/3.1 (nodeagent/spdy.py, spdysession.py) and runs the command
inside the running container as its exec probes do (nodeagent/execstream.py)."""
import json
import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time

import pytest

from support.clusters import wait_for
from support.processes import ROOT

STDIN_BYTES = 300_000          # more than SPDY's initial 64 KB window, on the stream and the session
EXEC_TIMEOUT = 60


def _pod(cluster, name: str, containers: list[dict]) -> None:
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": containers}}
    cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))

    def running():
        pod = cluster.get("pod", name)
        statuses = pod["status"].get("containerStatuses") or []
        return len(statuses) == len(containers) and all("running" in s["state"] for s in statuses)
    wait_for(running, 60, f"pod {name} running")


def _sleeper(name: str) -> dict:
    return {"name": name, "image": "segflow/engine", "command": ["sh", "-c", "exec sleep 600"]}


@pytest.fixture(scope="module")
def sleeper(cluster):
    """A pod of two containers from the engine image that sleep."""
    _pod(cluster, "exec-target", [_sleeper("main"), _sleeper("side")])
    yield "exec-target"
    cluster.kubectl("delete", "pod", "exec-target", "--wait=true", timeout=60)


def kubectl_exec(cluster, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["kubectl", "exec", *args], env=cluster.env(), input=input, capture_output=True,
                          timeout=EXEC_TIMEOUT)


def test_exec_prints_the_pods_hostname(cluster, sleeper):
    done = kubectl_exec(cluster, sleeper, "--", "cat", "/etc/hostname")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == sleeper


def test_exec_runs_as_the_images_user_in_its_filesystem(cluster, sleeper):
    checkout = os.path.join(ROOT, "pyproject.toml")
    done = kubectl_exec(cluster, sleeper, "--", "sh", "-c", f"id -u; id -g; pwd; ls {checkout} || echo none; ls /")
    assert done.returncode == 0, done.stderr
    uid, gid, cwd, seen, *root = done.stdout.decode().split()
    assert (uid, gid, cwd) == ("10001", "10001", "/app")          # images/engine.Dockerfile's USER and WORKDIR
    assert seen == "none" and "app" in root                       # the image's root, no checkout inside


def test_stdin_larger_than_the_window_reaches_the_command(cluster, sleeper):
    data = os.urandom(STDIN_BYTES)
    done = kubectl_exec(cluster, "-i", sleeper, "--", "sh", "-c", "wc -c", input=data)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == STDIN_BYTES


def test_output_larger_than_the_window_reaches_kubectl(cluster, sleeper):
    done = kubectl_exec(cluster, sleeper, "--", "head", "-c", str(STDIN_BYTES), "/dev/urandom")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) == STDIN_BYTES


def test_stdin_round_trips_byte_for_byte(cluster, sleeper):
    data = os.urandom(100_000)
    done = kubectl_exec(cluster, "-i", sleeper, "--", "cat", input=data)
    assert done.returncode == 0, done.stderr
    assert done.stdout == data


def test_the_exit_code_and_stderr_reach_kubectl(cluster, sleeper):
    done = kubectl_exec(cluster, sleeper, "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    assert done.returncode == 3, done.stderr
    assert done.stdout == b"out\n"
    assert "err" in done.stderr.decode().splitlines(), done.stderr      # after kubectl's "Defaulted container"


def test_a_missing_command_is_an_error_not_a_hang(cluster, sleeper):
    done = kubectl_exec(cluster, sleeper, "--", "no-such-command")
    assert done.returncode == 127, done
    assert "cannot run 'no-such-command'" in done.stderr.decode()


def test_exec_into_a_named_container(cluster, sleeper):
    """Each container has its own mount namespace: a file written in one is not in the other."""
    written = kubectl_exec(cluster, sleeper, "-c", "side", "--", "sh", "-c", "echo side > /tmp/which && cat /tmp/which")
    assert written.returncode == 0 and written.stdout == b"side\n", written.stderr
    other = kubectl_exec(cluster, sleeper, "-c", "main", "--", "cat", "/tmp/which")
    assert other.returncode != 0 and b"No such file" in other.stderr, other


def container_runs(cluster, pod: str, command: str) -> bool:
    """Whether a process whose command line is ``command`` runs in the pod's main container
    (seen from inside it: its pid namespace's /proc)."""
    found = kubectl_exec(cluster, pod, "-c", "main", "--", "sh", "-c",
                         "for f in /proc/[0-9]*/cmdline; do "
                         f"[ \"$(tr '\\0' ' ' < $f 2>/dev/null)\" = '{command} ' ] && echo $f; done; true")
    return bool(found.stdout.strip())


def test_the_command_is_killed_when_kubectl_goes_away(cluster, sleeper):
    kubectl = subprocess.Popen(["kubectl", "exec", sleeper, "-c", "main", "--", "sleep", "301"], env=cluster.env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: container_runs(cluster, sleeper, "sleep 301"), 30, "sleep 301 in the container")
    finally:
        kubectl.kill()
        kubectl.wait()
    wait_for(lambda: not container_runs(cluster, sleeper, "sleep 301"), 30, "sleep 301 killed")


def read_terminal(terminal: int, timeout: float) -> bytes:
    """What was written to a pseudo-terminal's other side until its last writer closed it."""
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([terminal], [], [], 0.2)[0]:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:                        # EIO: no writer left
                return out
            if not chunk:
                return out
            out += chunk
    raise AssertionError(f"the terminal was not closed within {timeout:g}s; it showed {out!r}")


def test_a_terminal_of_the_clients_size(cluster, sleeper):
    """kubectl asks for a terminal when its stdin is one, and sends the size of its stdout's
    (here a pseudo-terminal of 33 rows and 101 columns) on the resize stream; the command
    waits for it (the terminal is 0 x 0 until the first size arrives). The terminal is the
    command's controlling one: /dev/tty."""
    terminal, kubectl_side = pty.openpty()
    fcntl.ioctl(kubectl_side, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    try:
        kubectl = subprocess.Popen(["kubectl", "exec", "-it", sleeper, "-c", "main", "--", "sh", "-c",
                                    "test -t 0 && test -t 1 && echo terminal > /dev/tty; "
                                    'while [ "$(stty size)" = "0 0" ]; do sleep 0.1; done; stty size; exit 4'],
                                   env=cluster.env(), stdin=kubectl_side, stdout=kubectl_side, stderr=subprocess.PIPE)
        os.close(kubectl_side)
        try:
            shown = read_terminal(terminal, EXEC_TIMEOUT)
            code = kubectl.wait(EXEC_TIMEOUT)
        finally:
            kubectl.kill()
            kubectl.wait()
            stderr = kubectl.stderr.read()
            kubectl.stderr.close()
    finally:
        os.close(terminal)
    assert code == 4, (shown, stderr)
    assert shown.decode().split() == ["terminal", "33", "101"], (shown, stderr)
