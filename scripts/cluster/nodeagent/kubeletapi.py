"""The node's kubelet API, for ``kubectl logs`` and ``kubectl exec``: the API server proxies
``/api/v1/namespaces/NS/pods/POD/log`` to ``https://<node InternalIP>:<daemonEndpoints.
kubeletEndpoint.Port>/containerLogs/NS/POD/CONTAINER``, and ``.../exec`` to
``/exec/NS/POD/CONTAINER``. Served over HTTPS on the host's loopback only, to the API server
only (a client certificate of the cluster CA named ``kube-apiserver-kubelet-client``, as the
API server is configured to present).

``/exec`` upgrades the connection to SPDY/3.1 (spdysession.py; execstream.py runs the
command). A websocket upgrade (kubectl 1.30 and later try it first) is refused with a
Status, on which kubectl falls back to SPDY. ``/attach`` and ``/portForward`` answer 501.
"""
from __future__ import annotations

import json
import logging
import os
import ssl
import threading
import time
from collections.abc import Callable
from typing import IO, Any
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from controlplane.pki import KUBELET_CLIENT

from . import execstream
from .container import Container, ContainerNotRunning
from .containerlogs import LogQueryError, NoSuchRun, parse_query, run_span, select
from .execrequest import ExecRequestError, negotiate, parse_exec_query
from .pod import Pod
from .spdysession import Session, StreamsMissing

log = logging.getLogger("nodeagent")
FOLLOW_POLL_SECONDS = 0.2
STREAMING = ("attach", "portForward", "run")


class _Handler(BaseHTTPRequestHandler):
    server: KubeletServer
    protocol_version = "HTTP/1.0"        # the body ends when the connection closes (follow streams)

    def log_message(self, format: str, *args: object) -> None:     # noqa: A002 (the base class's name)
        """Quiet: the agent logs lifecycle events only."""

    def _refuse(self, status: HTTPStatus, message: str, as_status: bool = False,
                reason: str = "NotImplemented") -> None:
        """Answer ``message`` as text, or (``as_status``) as a metav1 Status, which is what
        kubectl shows of a refused stream upgrade."""
        body = message.encode() + b"\n"
        kind = "text/plain; charset=utf-8"
        if as_status:
            body = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                               "message": message, "reason": reason, "code": int(status)}).encode()
            kind = "application/json"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:       # noqa: N802 (http.server's name)
        if not self._from_api_server():
            return
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        if parts == ["healthz"]:
            self._refuse(HTTPStatus.OK, "ok")
        elif parts[0] == "containerLogs" and len(parts) == 4:
            self._logs(parts[1], parts[2], parts[3], parse_qs(url.query))
        elif parts[0] == "exec" and len(parts) == 4:
            self._exec(parts[1], parts[2], parts[3], parse_qs(url.query))
        elif parts[0] in STREAMING:
            self._refuse(HTTPStatus.NOT_IMPLEMENTED, f"{parts[0]} is not supported by the segflow node agent (it "
                         "serves exec only): run the command with kubectl exec", as_status=True)
        else:
            self._refuse(HTTPStatus.NOT_FOUND, f"{url.path}: the segflow node agent serves only /containerLogs")

    do_POST = do_GET

    def _from_api_server(self) -> bool:
        peer: dict[str, Any] = (self.connection.getpeercert() if isinstance(self.connection, ssl.SSLSocket)
                                else None) or {}
        names = [pair[1] for field in peer.get("subject", ()) for pair in field if pair[0] == "commonName"]
        if names != [KUBELET_CLIENT]:
            self._refuse(HTTPStatus.FORBIDDEN, f"only the API server ({KUBELET_CLIENT}) may use this kubelet API")
            return False
        return True

    def _container(self, namespace: str, name: str, container: str) -> Container | None:
        pod = next((p for p in self.server.pods() if (p.namespace, p.name) == (namespace, name)), None)
        runtime = next((c for c in pod.containers if c.state.name == container), None) if pod else None
        if runtime is None:
            self._refuse(HTTPStatus.NOT_FOUND, f"container {container!r} of pod {namespace}/{name} is not on this node",
                         as_status=True, reason="NotFound")
        return runtime

    def _exec(self, namespace: str, name: str, container: str, query: dict[str, list[str]]) -> None:
        """Upgrade to SPDY/3.1 and run the command in the container until it ends."""
        upgrade = self.headers.get("Upgrade", "").lower()
        if upgrade == "websocket":
            log.info("exec websocket upgrade refused (kubectl falls back to SPDY/3.1)",
                     extra={"fields": {"pod": f"{namespace}/{name}"}})
            self._refuse(HTTPStatus.BAD_REQUEST, "websocket streams are not supported by the segflow node agent: "
                         "kubectl falls back to SPDY/3.1", as_status=True, reason="BadRequest")
            return
        runtime = self._container(namespace, name, container)
        if runtime is None:
            return
        try:
            if upgrade != "spdy/3.1":
                raise ExecRequestError(f"exec needs a connection upgrade to SPDY/3.1, not {upgrade or 'none'}")
            request = parse_exec_query(query)
            protocol = negotiate(self.headers.get_all("X-Stream-Protocol-Version") or [])
            command, env, cwd = runtime.entered(list(request.command))
        except (ExecRequestError, ContainerNotRunning) as exc:
            self._refuse(HTTPStatus.BAD_REQUEST, str(exc), as_status=True, reason="BadRequest")
            return
        session, reader = self._switch_to_spdy(protocol)
        try:
            code = execstream.run(session, request, command, env, cwd)
        except StreamsMissing as exc:
            log.info("exec abandoned", extra={"fields": {"pod": f"{namespace}/{name}", "reason": str(exc)}})
            return
        log.info("exec ended", extra={"fields": {"pod": f"{namespace}/{name}", "container": container,
                                                 "exit_code": code}})
        reader.join(execstream.CLOSE_SECONDS)

    def _switch_to_spdy(self, protocol: str) -> tuple[Session, threading.Thread]:
        """Answer 101 with the negotiated stream protocol; the SPDY session on this
        connection from then on, and the thread that reads its frames. The connection ends
        with the request."""
        self.close_connection = True
        self.wfile.write(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
                         b"X-Stream-Protocol-Version: " + protocol.encode() + b"\r\n\r\n")
        self.wfile.flush()
        session = Session(self.rfile, self.connection)
        reader = threading.Thread(target=session.serve, name="exec-session", daemon=True)
        reader.start()
        return session, reader

    def _logs(self, namespace: str, name: str, container: str, query: dict[str, list[str]]) -> None:
        runtime = self._container(namespace, name, container)
        if runtime is None:
            return
        try:
            request = parse_query(query)
            runs = list(runtime.runs)
            size = os.path.getsize(runtime.log_path) if runs else 0
            start, end = run_span(runs, size, request.previous)
        except LogQueryError as exc:
            self._refuse(HTTPStatus.BAD_REQUEST, str(exc))
            return
        except NoSuchRun as exc:
            self._refuse(HTTPStatus.BAD_REQUEST, f"{exc}: container {container!r} in pod {namespace}/{name}")
            return
        with open(runtime.log_path, "rb") as f:
            f.seek(start)
            data = select(f.read(end - start), request)
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(data)
            if request.follow and not request.previous:
                self._follow(f, runtime, len(runs), request.limit_bytes, len(data))

    def _follow(self, f: IO[bytes], runtime: Container, run: int, limit: int | None, sent: int) -> None:
        """Send what the run appends until it ends (a later run begins or the process is
        gone) or the client goes away."""
        while limit is None or sent < limit:
            chunk = f.read(65536)
            if chunk:
                chunk = chunk[:limit - sent] if limit is not None else chunk
                self.wfile.write(chunk)
                self.wfile.flush()
                sent += len(chunk)
                continue
            if len(runtime.runs) != run or not runtime.running or self.server.stopping.is_set():
                return
            time.sleep(FOLLOW_POLL_SECONDS)


class KubeletServer(ThreadingHTTPServer):
    """The HTTPS server, in threads of its own; ``pods`` lists this node's pods (read
    without a lock: each request takes a snapshot of the agent's pods)."""
    daemon_threads = True

    def __init__(self, port: int, cert: str, key: str, ca: str, pods: Callable[[], list[Pod]]):
        super().__init__(("127.0.0.1", port), _Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        context.load_verify_locations(ca)
        context.verify_mode = ssl.CERT_REQUIRED
        self.socket = context.wrap_socket(self.socket, server_side=True)
        self.pods = pods
        self.stopping = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self.serve_forever, name="kubelet-api", daemon=True).start()
        log.info("kubelet API serving", extra={"fields": {"port": self.server_address[1]}})

    def stop(self) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()
