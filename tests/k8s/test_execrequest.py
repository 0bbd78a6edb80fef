"""What ``kubectl exec`` asks the kubelet and the Status it ends with
(nodeagent/execrequest.py, pure)."""
import json
import os
import sys

import pytest

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent.execrequest import (PROTOCOL, ExecRequest, ExecRequestError, exit_status,  # noqa: E402
                                   failure_status, negotiate, parse_exec_query, terminal_sizes)


def test_the_query_as_the_api_server_sends_it():
    """The 1.20 API server names the streams input, output and error."""
    request = parse_exec_query({"command": ["sh", "-c", "wc -c"], "input": ["1"], "output": ["1"], "error": ["1"]})
    assert request == ExecRequest(("sh", "-c", "wc -c"), stdin=True, stdout=True, stderr=True)
    assert request.streams() == {"error", "stdin", "stdout", "stderr"}
    request = parse_exec_query({"command": ["true"], "stdout": ["true"], "tty": ["false"]})
    assert request.streams() == {"error", "stdout"}


def test_a_terminal_has_a_resize_stream_and_no_stderr():
    request = parse_exec_query({"command": ["sh"], "input": ["1"], "output": ["1"], "error": ["1"], "tty": ["1"]})
    assert request == ExecRequest(("sh",), stdin=True, stdout=True, stderr=False, tty=True)
    assert request.streams() == {"error", "stdin", "stdout", "resize"}


def test_terminal_sizes_as_the_resize_stream_sends_them():
    assert terminal_sizes(b'{"Width":80,"Height":24}\n{"Width":101,') == ([(80, 24)], b'{"Width":101,')
    assert terminal_sizes(b'{"Width":101,' + b'"Height":33}\n') == ([(101, 33)], b"")
    assert terminal_sizes(b" \n") == ([], b"")
    with pytest.raises(ExecRequestError, match="a terminal size is"):
        terminal_sizes(b'{"Width":"wide","Height":3}')


@pytest.mark.parametrize("query, message", [
    ({"output": ["1"]}, "exec needs a command"),
    ({"command": ["true"]}, "at least one of stdin, stdout and stderr"),
    ({"command": ["sh"], "input": ["1"], "tty": ["1"]}, r"terminal \(kubectl exec -t\) needs stdout"),
])
def test_requests_that_cannot_be_served(query, message):
    with pytest.raises(ExecRequestError, match=message):
        parse_exec_query(query)


def test_the_protocol_is_v4_of_what_the_client_offers():
    assert negotiate(["v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"]) == PROTOCOL
    assert negotiate(["channel.k8s.io, v4.channel.k8s.io"]) == PROTOCOL
    with pytest.raises(ExecRequestError, match=r"offered \['v3.channel.k8s.io'\]"):
        negotiate(["v3.channel.k8s.io"])
    with pytest.raises(ExecRequestError, match="offered none"):
        negotiate([])


def test_the_status_carries_the_exit_code_as_kubectl_reads_it():
    assert json.loads(exit_status(("true",), 0)) == {"metadata": {}, "status": "Success"}
    failed = json.loads(exit_status(("sh", "-c", "exit 3"), 3))
    assert (failed["status"], failed["reason"]) == ("Failure", "NonZeroExitCode")
    assert failed["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]
    assert "exit code 3" in failed["message"]
    broken = json.loads(failure_status("cannot enter the container: No such process"))
    assert (broken["status"], broken["reason"]) == ("Failure", "InternalError")
    assert "details" not in broken
