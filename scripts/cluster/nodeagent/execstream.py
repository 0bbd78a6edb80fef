"""Running a ``kubectl exec`` command over a SPDY session (spdysession.py): the process's
stdin, stdout and stderr are pumped to and from the client's streams, its exit code ends
the error stream as a Status (execrequest.py).

The process is the command entered into the running container as its exec probes are
(container.Container.entered): in the container's namespaces and root, as its user with its
groups and environment. If the client goes away first, the process's group is killed.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
from typing import IO

from .execrequest import ExecRequest, exit_status, failure_status
from .spdysession import Session, SessionClosed, Stream

log = logging.getLogger("nodeagent")
STREAMS_TIMEOUT = 30.0      # as the kubelet's stream creation timeout
READ_SIZE = 32768
POLL_SECONDS = 0.2
PUMP_JOIN_SECONDS = 10.0
CLOSE_SECONDS = 5.0         # for the client to close the connection once it has the status


def _pump_out(session: Session, pipe: IO[bytes], stream: Stream) -> None:
    """Send what the process writes to ``pipe`` on ``stream``, then end the stream."""
    try:
        while chunk := os.read(pipe.fileno(), READ_SIZE):
            session.send(stream, chunk)
        session.send(stream, b"", fin=True)
    except SessionClosed:
        pass
    finally:
        pipe.close()


def _pump_in(session: Session, stream: Stream, pipe: IO[bytes]) -> None:
    """Write what the client sends on ``stream`` to the process's stdin, giving the window
    back as it goes; close stdin at the client's end. A process that stopped reading makes
    the rest be consumed unwritten."""
    while (chunk := stream.inbound.get()) is not None:
        try:
            if not pipe.closed:
                pipe.write(chunk)
                pipe.flush()
        except BrokenPipeError:
            pipe.close()
        session.consumed(stream, len(chunk))
    try:
        pipe.close()
    except BrokenPipeError:
        pass


def _finish(session: Session, error: Stream, status: bytes) -> None:
    try:
        session.send(error, status, fin=True)
    except SessionClosed:
        pass
    session.go_away()


def run(session: Session, request: ExecRequest, command: list[str], env: dict[str, str], cwd: str) -> int | None:
    """Wait for the client's streams, run ``command`` with them and report how it ended;
    its exit code, or None when it was not run or the client went away first."""
    streams = session.wait_for(request.streams(), STREAMS_TIMEOUT)
    try:
        process = subprocess.Popen(command, env=env, cwd=cwd, start_new_session=True,
                                   stdin=subprocess.PIPE if request.stdin else subprocess.DEVNULL,
                                   stdout=subprocess.PIPE if request.stdout else subprocess.DEVNULL,
                                   stderr=subprocess.PIPE if request.stderr else subprocess.DEVNULL)
    except OSError as exc:
        _finish(session, streams["error"], failure_status(f"cannot enter the container: {exc.strerror}"))
        return None
    pumps = [threading.Thread(target=_pump_out, args=(session, pipe, streams[kind]), daemon=True)
             for kind, pipe in (("stdout", process.stdout), ("stderr", process.stderr)) if pipe is not None]
    if process.stdin is not None:
        threading.Thread(target=_pump_in, args=(session, streams["stdin"], process.stdin), daemon=True).start()
    for pump in pumps:
        pump.start()
    while True:
        try:
            code = process.wait(POLL_SECONDS)
            break
        except subprocess.TimeoutExpired:
            if session.closed:
                log.info("exec client went away: killing the command", extra={"fields": {"command": command[-1]}})
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    for pump in pumps:
        pump.join(PUMP_JOIN_SECONDS)
    if session.closed:
        return None
    code = 128 - code if code < 0 else code
    _finish(session, streams["error"], exit_status(request.command, code))
    return code
