"""A command run over a SPDY session (nodeagent/execstream.py) with a local process in place
of a container's and the test as kubectl (support.spdypeer): the streams' bytes, the end
Status, a terminal and its size, and the client going away."""
import json
import os
import threading

import pytest

from support.clusters import wait_for
from support.spdypeer import TIMEOUT, session_pair
from nodeagent import execstream, spdy  # noqa: I001 (on the path from support.spdypeer)
from nodeagent.execrequest import ExecRequest

ENV = {"PATH": os.environ["PATH"]}


class Exec:
    """execstream.run on a thread of its own, and what the client received by stream."""

    def __init__(self, session, request: ExecRequest, command: list[str]):
        self.code: int | None = None
        self.thread = threading.Thread(target=self._run, args=(session, request, command), daemon=True)
        self.thread.start()

    def _run(self, session, request, command):
        self.code = execstream.run(session, request, command, ENV, "/")


def received(client, names: dict[int, str]) -> dict[str, bytes]:
    """Every stream's data until the server's GOAWAY; each stream must have ended (FIN)."""
    data = {name: b"" for name in names.values()}
    ended = set()
    while not isinstance(frame := client.receive(), spdy.GoAway):
        assert frame is not None, "the connection closed before GOAWAY"
        if isinstance(frame, spdy.Data):
            data[names[frame.stream_id]] += frame.data
            if frame.fin:
                ended.add(names[frame.stream_id])
    assert ended == set(names.values()) - {"stdin", "resize"}, ended
    return data


def test_output_error_output_and_the_exit_code():
    with session_pair() as (session, client):
        run = Exec(session, ExecRequest(("sh",), stdin=True, stdout=True, stderr=True),
                   ["sh", "-c", "wc -c; echo err >&2; exit 3"])
        names = {1: "error", 3: "stdin", 5: "stdout", 7: "stderr"}
        for stream_id, name in names.items():
            client.open(stream_id, name)
        client.send(spdy.Data(3, b"x" * 100_000))
        client.send(spdy.Data(3, b"", fin=True))
        data = received(client, names)
        run.thread.join(TIMEOUT)
    assert run.code == 3
    assert (data["stdout"].strip(), data["stderr"]) == (b"100000", b"err\n")
    status = json.loads(data["error"])
    assert status["reason"] == "NonZeroExitCode" and status["details"]["causes"][0]["message"] == "3"


def test_success_ends_with_a_success_status():
    with session_pair() as (session, client):
        run = Exec(session, ExecRequest(("true",), stdout=True), ["true"])
        client.open(1, "error")
        client.open(3, "stdout")
        data = received(client, {1: "error", 3: "stdout"})
        run.thread.join(TIMEOUT)
    assert run.code == 0 and data["stdout"] == b""
    assert json.loads(data["error"]) == {"metadata": {}, "status": "Success"}


def test_a_terminal_is_the_commands_and_takes_the_clients_size():
    with session_pair() as (session, client):
        run = Exec(session, ExecRequest(("sh",), stdin=True, stdout=True, tty=True),
                   ["sh", "-c", 'test -t 0 && test -t 1 && echo terminal > /dev/tty; '
                                'while [ "$(stty size)" = "0 0" ]; do sleep 0.05; done; stty size'])
        names = {1: "error", 3: "stdin", 5: "stdout", 7: "resize"}
        for stream_id, name in names.items():
            client.open(stream_id, name)
        client.send(spdy.Data(7, b'{"Width":101,"Height":33}\n'))
        data = received(client, names)
        run.thread.join(TIMEOUT)
    assert run.code == 0
    assert data["stdout"].split() == [b"terminal", b"33", b"101"]


def test_the_command_is_killed_when_the_client_goes_away(tmp_path):
    started = tmp_path / "pid"
    with session_pair() as (session, client):
        run = Exec(session, ExecRequest(("sh",), stdout=True), ["sh", "-c", f"echo $$ > {started}; exec sleep 300"])
        client.open(1, "error")
        client.open(3, "stdout")
        pid = int(wait_for(lambda: started.exists() and started.read_text().strip(), TIMEOUT, "the command"))
    run.thread.join(TIMEOUT)                                   # the pair's exit shut the client's end
    assert not run.thread.is_alive() and run.code is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
