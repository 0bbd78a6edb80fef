"""What ``kubectl exec`` asks the kubelet for and what it is told at the end (pure
functions; kubeletapi.py upgrades the connection, execstream.py runs the command).

The API server proxies ``/api/v1/namespaces/NS/pods/POD/exec?command=..&stdin=..`` to
``/exec/NS/POD/CONTAINER`` with the same query, and kubectl offers the stream protocols it
speaks in ``X-Stream-Protocol-Version``. This agent speaks ``v4.channel.k8s.io`` (kubectl
1.5 and later): streams for stdin, stdout and stderr, and an error stream that ends with a
metav1 Status, whose exit code kubectl exits with.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

PROTOCOL = "v4.channel.k8s.io"


class ExecRequestError(ValueError):
    """The exec request cannot be served as asked (400 Bad Request, with a Status)."""


@dataclass(frozen=True)
class ExecRequest:
    command: tuple[str, ...]
    stdin: bool = False
    stdout: bool = False
    stderr: bool = False

    def streams(self) -> set[str]:
        """The ``streamtype``s the client opens for this request."""
        wanted = {"stdin": self.stdin, "stdout": self.stdout, "stderr": self.stderr}
        return {"error", *(kind for kind, on in wanted.items() if on)}


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[-1].lower() in ("1", "true")


def parse_exec_query(query: dict[str, list[str]]) -> ExecRequest:
    """The parsed query string of ``/exec/...`` (``urllib.parse.parse_qs``)."""
    command = tuple(query.get("command") or ())
    if not command:
        raise ExecRequestError("exec needs a command: kubectl exec POD -- COMMAND [ARG...]")
    if _flag(query, "tty"):
        raise ExecRequestError("a terminal (kubectl exec -t) is not supported by the segflow node agent: "
                               "run the command without -t (stdin with -i still works)")
    request = ExecRequest(command, _flag(query, "input") or _flag(query, "stdin"), _flag(query, "output") or
                          _flag(query, "stdout"), _flag(query, "error") or _flag(query, "stderr"))
    if not (request.stdin or request.stdout or request.stderr):
        raise ExecRequestError("exec needs at least one of stdin, stdout and stderr")
    return request


def negotiate(offered: list[str]) -> str:
    """The stream protocol to answer with, of the ``X-Stream-Protocol-Version`` header
    values the client sent (several headers, or one comma-separated)."""
    protocols = [p.strip() for value in offered for p in value.split(",") if p.strip()]
    if PROTOCOL not in protocols:
        raise ExecRequestError(f"the segflow node agent speaks the exec stream protocol {PROTOCOL} only; "
                               f"the client offered {protocols or 'none'}: use kubectl 1.5 or later")
    return PROTOCOL


def exit_status(command: tuple[str, ...], code: int) -> bytes:
    """The Status that ends the error stream: Success, or the exit code as kubectl reads it
    (reason NonZeroExitCode, cause ExitCode)."""
    if code == 0:
        return json.dumps({"metadata": {}, "status": "Success"}).encode()
    return json.dumps({"metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
                       "message": f"command terminated with non-zero exit code: error executing command "
                                  f"{list(command)}, exit code {code}",
                       "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}).encode()


def failure_status(message: str) -> bytes:
    """The Status that ends the error stream when the command could not be run at all."""
    return json.dumps({"metadata": {}, "status": "Failure", "reason": "InternalError", "message": message}).encode()
