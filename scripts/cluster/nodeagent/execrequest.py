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
    tty: bool = False           # a terminal: its output comes on stdout alone, its size on a resize stream

    def streams(self) -> set[str]:
        """The ``streamtype``s the client opens for this request."""
        wanted = {"stdin": self.stdin, "stdout": self.stdout, "stderr": self.stderr, "resize": self.tty}
        return {"error", *(kind for kind, on in wanted.items() if on)}


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[-1].lower() in ("1", "true")


def parse_exec_query(query: dict[str, list[str]]) -> ExecRequest:
    """The parsed query string of ``/exec/...`` (``urllib.parse.parse_qs``)."""
    command = tuple(query.get("command") or ())
    if not command:
        raise ExecRequestError("exec needs a command: kubectl exec POD -- COMMAND [ARG...]")
    tty = _flag(query, "tty")
    request = ExecRequest(command, _flag(query, "input") or _flag(query, "stdin"),
                          _flag(query, "output") or _flag(query, "stdout"),
                          not tty and (_flag(query, "error") or _flag(query, "stderr")), tty)
    if not (request.stdin or request.stdout or request.stderr):
        raise ExecRequestError("exec needs at least one of stdin, stdout and stderr")
    if tty and not request.stdout:
        raise ExecRequestError("a terminal (kubectl exec -t) needs stdout, where its output goes")
    return request


def terminal_sizes(buffer: bytes) -> tuple[list[tuple[int, int]], bytes]:
    """The terminal sizes (columns, rows) in what the resize stream has sent so far (JSON
    objects ``{"Width": .., "Height": ..}`` one after another), and the bytes of an object
    not yet complete."""
    decoder, sizes, text = json.JSONDecoder(), [], buffer.decode("utf-8", errors="replace")
    offset = 0
    while offset < len(text):
        if text[offset].isspace():
            offset += 1
            continue
        try:
            size, offset = decoder.raw_decode(text, offset)
        except json.JSONDecodeError:
            break
        if not isinstance(size, dict) or not all(isinstance(size.get(k), int) for k in ("Width", "Height")):
            raise ExecRequestError(f"a terminal size is {{\"Width\": W, \"Height\": H}}, not {size!r}")
        sizes.append((size["Width"], size["Height"]))
    return sizes, text[offset:].encode()


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
