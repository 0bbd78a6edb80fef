"""Running a ``kubectl exec`` command over a SPDY session (spdysession.py): the process's
stdin, stdout and stderr (or its terminal, ``-t``) are pumped to and from the client's
streams, and its exit code ends the error stream as a Status (execrequest.py).

The process is the command entered into the running container as its exec probes are
(container.Container.entered): in the container's namespaces and root, as its user with its
groups and environment. A terminal is a pseudo-terminal of the node's, the process's
controlling terminal (``setsid --ctty``), sized as the client's resize stream says. If
the client goes away first, the process's group is killed.
"""
from __future__ import annotations

import errno
import fcntl
import logging
import os
import signal
import struct
import subprocess
import termios
import threading
from collections.abc import Callable
from typing import IO

from .container import signal_group
from .execrequest import ExecRequest, ExecRequestError, exit_status, failure_status, terminal_sizes
from .spdysession import Session, SessionClosed, Stream

log = logging.getLogger("nodeagent")
STREAMS_TIMEOUT = 30.0      # as the kubelet's stream creation timeout
READ_SIZE = 32768
POLL_SECONDS = 0.2
PUMP_JOIN_SECONDS = 10.0
CLOSE_SECONDS = 5.0         # for the client to close the connection once it has the status


def _pump_out(session: Session, source: int, stream: Stream) -> None:
    """Send what the process writes to file descriptor ``source`` (which this closes) on
    ``stream``, then end the stream. A terminal whose last writer has gone reads as EIO."""
    try:
        while True:
            try:
                chunk = os.read(source, READ_SIZE)
            except OSError as exc:
                if exc.errno != errno.EIO:
                    raise
                chunk = b""
            if not chunk:
                break
            session.send(stream, chunk)
        session.send(stream, b"", fin=True)
    except SessionClosed:
        pass
    finally:
        os.close(source)


def _pump_in(session: Session, stream: Stream, write: Callable[[bytes], None], end: Callable[[], None]) -> None:
    """Hand what the client sends on ``stream`` to ``write``, giving the window back as it
    goes, and call ``end`` at the client's end. Once the process stops reading (a broken
    pipe), the rest is consumed unwritten."""
    reading = True
    while (chunk := stream.inbound.get()) is not None:
        if reading:
            try:
                write(chunk)
            except OSError:             # BrokenPipeError, or EIO of a terminal
                reading = False
        session.consumed(stream, len(chunk))
    try:
        end()
    except OSError:
        pass


def _write_pipe(pipe: IO[bytes]) -> Callable[[bytes], None]:
    def write(chunk: bytes) -> None:
        pipe.write(chunk)
        pipe.flush()
    return write


def _write_terminal(terminal: int) -> Callable[[bytes], None]:
    def write(chunk: bytes) -> None:
        view = memoryview(chunk)
        while view:
            view = view[os.write(terminal, view):]
    return write


def _pump_resize(session: Session, stream: Stream, terminal: int) -> None:
    """Size the terminal (file descriptor ``terminal``, which this closes) as the client's
    resize stream says, each time it changes."""
    pending = b""
    try:
        while (chunk := stream.inbound.get()) is not None:
            session.consumed(stream, len(chunk))
            try:
                sizes, pending = terminal_sizes(pending + chunk)
            except ExecRequestError as exc:
                log.info("exec resize ignored", extra={"fields": {"reason": str(exc)}})
                sizes, pending = [], b""
            for columns, rows in sizes:
                fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    finally:
        os.close(terminal)


def _daemon(target: Callable[..., None], *args: object) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def _with_pipes(session: Session, request: ExecRequest, streams: dict[str, Stream], command: list[str],
                env: dict[str, str], cwd: str) -> tuple[subprocess.Popen[bytes], list[threading.Thread]]:
    """The process with a pipe for each stream the client opened (the others: /dev/null);
    the threads that pump its output."""
    process = subprocess.Popen(command, env=env, cwd=cwd, start_new_session=True,
                               stdin=subprocess.PIPE if request.stdin else subprocess.DEVNULL,
                               stdout=subprocess.PIPE if request.stdout else subprocess.DEVNULL,
                               stderr=subprocess.PIPE if request.stderr else subprocess.DEVNULL)
    if process.stdin is not None:
        _daemon(_pump_in, session, streams["stdin"], _write_pipe(process.stdin), process.stdin.close)
    pumps = []
    for kind, pipe in (("stdout", process.stdout), ("stderr", process.stderr)):
        if pipe is not None:
            source = os.dup(pipe.fileno())
            pipe.close()
            pumps.append(_daemon(_pump_out, session, source, streams[kind]))
    return process, pumps


def _in_terminal(session: Session, request: ExecRequest, streams: dict[str, Stream], command: list[str],
                 env: dict[str, str], cwd: str) -> tuple[subprocess.Popen[bytes], list[threading.Thread]]:
    """The process on a new pseudo-terminal, its controlling terminal and its session's
    (so that its group is the session: killed as one); the thread that pumps the terminal's
    output. Each pump has a descriptor of the terminal of its own and closes it at its end
    (none can write to a number another thread has reused)."""
    terminal, replica = os.openpty()
    try:
        process = subprocess.Popen(["setsid", "--ctty", *command], env=env, cwd=cwd,
                                   stdin=replica, stdout=replica, stderr=replica)
    except OSError:
        os.close(terminal)
        raise
    finally:
        os.close(replica)
    _daemon(_pump_resize, session, streams["resize"], os.dup(terminal))
    if request.stdin:
        writer = os.dup(terminal)
        _daemon(_pump_in, session, streams["stdin"], _write_terminal(writer), lambda: os.close(writer))
    return process, [_daemon(_pump_out, session, terminal, streams["stdout"])]


def _finish(session: Session, error: Stream, status: bytes) -> None:
    try:
        session.send(error, status, fin=True)
    except SessionClosed:
        pass
    session.go_away()


def _wait(session: Session, process: subprocess.Popen[bytes]) -> int:
    """The process's exit code (128 + N for signal N); its group is killed if the client
    goes away first."""
    while True:
        try:
            code = process.wait(POLL_SECONDS)
            return 128 - code if code < 0 else code
        except subprocess.TimeoutExpired:
            if session.closed:
                signal_group(process.pid, signal.SIGKILL)


def run(session: Session, request: ExecRequest, command: list[str], env: dict[str, str], cwd: str) -> int | None:
    """Wait for the client's streams, run ``command`` with them and report how it ended;
    its exit code, or None when it was not run or the client went away first."""
    streams = session.wait_for(request.streams(), STREAMS_TIMEOUT)
    start = _in_terminal if request.tty else _with_pipes
    try:
        process, pumps = start(session, request, streams, command, env, cwd)
    except OSError as exc:
        _finish(session, streams["error"], failure_status(f"cannot enter the container: {exc.strerror}"))
        return None
    code = _wait(session, process)
    for pump in pumps:
        pump.join(PUMP_JOIN_SECONDS)
    if session.closed:
        log.info("exec client went away: the command was killed", extra={"fields": {"command": command[-1]}})
        return None
    _finish(session, streams["error"], exit_status(request.command, code))
    return code
