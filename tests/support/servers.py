"""Real servers on loopback for tests: redis-server (Debian's) and moto's S3 server.

Each helper starts one process in its own session and temporary directory, waits until it
answers, and returns a handle whose ``stop()`` ends exactly that process (by PID: SIGTERM,
then SIGKILL after a grace period). Nothing here is ever killed by name.
"""
from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from segflow.launcher.processes import stop_group

INSTALL_HINT = "run scripts/install-test-deps.sh (as root) to install it"


class ServerMissing(RuntimeError):
    """The server program is not installed."""


class ServerFailed(RuntimeError):
    """The server did not come up."""


_bucket_numbers = itertools.count()


def new_bucket() -> str:
    """An S3 bucket name of its own for one test (the moto server is shared)."""
    return f"segflow-test-{os.getpid()}-{next(_bucket_numbers)}"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: str, lines: int = 20) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop_process(process: subprocess.Popen | None) -> None:
    """End a server started in its own session, and whatever it started, by its PID."""
    if process is not None and process.poll() is None:
        stop_group(process)


def _wait_until(ready, process: subprocess.Popen, what: str, log: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerFailed(f"{what} exited with code {process.returncode} while starting; log:\n{_tail(log)}")
        if ready():
            return
        time.sleep(0.05)
    _stop_process(process)
    raise ServerFailed(f"{what} did not answer within {timeout:g} s; log:\n{_tail(log)}")


# -- redis ------------------------------------------------------------------------------------

REDIS_SERVER_FALLBACK = "/usr/bin/redis-server"  # where Debian puts it, for a PATH without /usr/bin


def redis_server_path() -> str:
    path = shutil.which("redis-server")
    if path is None and os.access(REDIS_SERVER_FALLBACK, os.X_OK):
        path = REDIS_SERVER_FALLBACK
    if path is None:
        raise ServerMissing(f"redis-server is not installed: {INSTALL_HINT}")
    return path


def redis_ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith((b"+PONG", b"-NOAUTH"))     # up (NOAUTH: it wants a password)
    except OSError:
        return False


class _LocalServer:
    """A server program the tests run on a loopback port, in a session of its own, with a
    scratch directory for its files and its log: started, stopped and removed by its PID."""

    def __init__(self, name: str, port: int | None, start_timeout: float):
        self.port = port or free_port()
        self.dir = tempfile.mkdtemp(prefix=f"segflow-{name}-")
        self.log = os.path.join(self.dir, f"{name}.log")
        self.start_timeout = start_timeout
        self.process: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def _launch(self, command: list[str], env: dict | None = None) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(command, cwd=self.dir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def stop(self) -> None:
        _stop_process(self.process)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _started(server: _LocalServer):
    """``server`` started, or its directory removed before the failure goes on."""
    try:
        return server.start()
    except BaseException:
        server.cleanup()
        raise


class RedisServer(_LocalServer):
    def __init__(self, port: int | None = None, start_timeout: float = 10.0, password: str = ""):
        self.program = redis_server_path()
        super().__init__("redis", port, start_timeout)
        self.password = password
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError(f"redis-server on port {self.port} is already running (pid {self.pid})")
        self._launch([self.program, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                      "--appendonly", "no", "--daemonize", "no", "--dir", self.dir, "--protected-mode", "yes",
                      *(["--requirepass", self.password] if self.password else [])])
        _wait_until(lambda: redis_ping(self.port), self.process, f"redis-server on port {self.port}",
                    self.log, self.start_timeout)
        return self

    def restart(self) -> None:
        """Stop, then start again on the same port (its data is gone: nothing is saved)."""
        self.stop()
        deadline = time.monotonic() + self.start_timeout
        while True:  # the port can stay busy for a moment after the old process exits
            try:
                self.start()
                return
            except ServerFailed:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def pause(self) -> None:
        """SIGSTOP: the server keeps its port but answers nothing (for timeout tests)."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)


def start_redis(port: int | None = None, password: str = "") -> RedisServer:
    return _started(RedisServer(port, password=password))


# -- S3 (moto) ------------------------------------------------------------------------------

def moto_command(port: int) -> list[str]:
    program = os.path.join(os.path.dirname(sys.executable), "moto_server")
    if os.path.exists(program):
        return [program, "-H", "127.0.0.1", "-p", str(port)]
    try:
        import moto.server  # noqa: F401
    except ImportError:
        raise ServerMissing("moto's server is not installed in this venv: "
                            ".venv/bin/pip install 'moto[server]==5.2.5'") from None
    return [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]


def http_answers(url: str, timeout: float = 0.5) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
    try:
        with opener.open(url, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True  # it answered
    except OSError:
        return False


TEST_S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "segflow-test", "AWS_SECRET_ACCESS_KEY": "segflow-test-secret"}


class S3Server(_LocalServer):
    def __init__(self, port: int | None = None, start_timeout: float = 30.0):
        super().__init__("moto", port, start_timeout)
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def start(self) -> "S3Server":
        # segflow refuses S3 without credentials; moto accepts any pair, so whatever this
        # process starts next (jobs, workers) uses one unless the test set its own
        for name, value in TEST_S3_CREDENTIALS.items():
            os.environ.setdefault(name, value)
        env = dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
        self._launch(moto_command(self.port), env)
        _wait_until(lambda: http_answers(self.endpoint + "/moto-api/"), self.process,
                    f"moto S3 server on port {self.port}", self.log, self.start_timeout)
        # moto loads its S3 backend on the first S3 request: on a loaded machine that took
        # seconds, inside the first job's first checkpoint (a kill test then saw no commit in time)
        _wait_until(lambda: http_answers(self.endpoint + "/", timeout=self.start_timeout), self.process,
                    f"moto S3 server's S3 backend on port {self.port}", self.log, self.start_timeout)
        return self


def start_s3(port: int | None = None) -> S3Server:
    return _started(S3Server(port))


def start_or_fail(starter, what: str):
    """``starter()``, or a test FAILURE (never a skip) saying what to install or what went wrong."""
    import pytest

    try:
        return starter()
    except ServerMissing as exc:
        pytest.fail(f"{what}: {exc}", pytrace=False)
    except ServerFailed as exc:
        pytest.fail(f"{what} did not start: {exc}", pytrace=False)


def serving(starter, what: str):
    """The body of a server fixture: ``yield from serving(start_s3, "moto S3 server")``
    starts the server (or fails the test, see :func:`start_or_fail`) and stops it by PID
    when the fixture's scope ends, whatever the outcome."""
    server = start_or_fail(starter, what)
    try:
        yield server
    finally:
        server.cleanup()


def server_fixture(name: str, starter, what: str, scope: str = "module"):
    """A pytest fixture ``name`` holding one server for ``scope`` (see :func:`serving`):
    ``s3_server = server_fixture("s3_server", start_s3, "moto S3 server")``."""
    import pytest

    def fixture():
        yield from serving(starter, what)
    return pytest.fixture(scope=scope, name=name)(fixture)
