"""One HTTP port per process for what people and Prometheus read.

Every worker and coordinator serves ``/metrics`` (Prometheus text format) and ``/healthz``;
the coordinator also serves the web view: its page and assets, and ``/api/job``, the job's
live state as JSON, which the page polls. The server is read-only (GET and HEAD only),
serves a fixed set of files (no path from the request ever reaches the file system), and
sends a Content-Security-Policy that lets the page load nothing from elsewhere.
"""
from __future__ import annotations

import json
import threading
from http import HTTPStatus
import socketserver
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from ..errors import SegflowError

SHUTDOWN_POLL = 0.02      # seconds: how soon stop() returns

WEB_ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    "/vendor/cytoscape.min.js": ("vendor/cytoscape.min.js", "text/javascript; charset=utf-8"),
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


class QuietBindServer(ThreadingHTTPServer):
    """``HTTPServer.server_bind`` asks DNS for the bound address's name (``getfqdn``), only
    for CGI's ``SERVER_NAME``: for a worker's own loopback address (not in /etc/hosts) that
    is a query to the resolver at every start, off this host, and seconds lost where the
    resolver does not answer."""

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        host, self.server_port = self.server_address[:2]
        self.server_name = str(host)         # an AF_INET address: the host is a str


class MetricsPortInUse(SegflowError):
    """The configured metrics port is taken on this address."""


def _asset(name: str) -> bytes:
    return resources.files("segflow.observability").joinpath("web", name).read_bytes()


class ObservabilityServer:
    """``view``: the job's state for ``/api/job`` (the coordinator); without it, the process
    serves metrics and health only."""

    def __init__(self, registry: CollectorRegistry, view: Callable[[], dict] | None = None):
        self.registry = registry
        self.view = view
        self.assets = {path: (_asset(name), kind) for path, (name, kind) in WEB_ASSETS.items()} if view else {}
        self.server: QuietBindServer | None = None

    def route(self, path: str) -> tuple[HTTPStatus, bytes, str]:
        """(status, body, content type) for a request path (its query ignored)."""
        path = path.split("?", 1)[0]
        if path == "/metrics":
            return HTTPStatus.OK, generate_latest(self.registry), CONTENT_TYPE_LATEST
        if path == "/healthz":
            return HTTPStatus.OK, b"ok\n", "text/plain; charset=utf-8"
        if self.view is not None and path == "/api/job":
            body = json.dumps(self.view(), separators=(",", ":")).encode()
            return HTTPStatus.OK, body, "application/json"
        if path in self.assets:
            body, kind = self.assets[path]
            return HTTPStatus.OK, body, kind
        return HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8"

    def start(self, host: str, port: int = 0) -> int:
        """Serve on ``host:port`` (0: a free port; host 0.0.0.0: every interface) in a daemon
        thread; returns the port."""
        route = self.route

        class Handler(BaseHTTPRequestHandler):
            server_version = "segflow"
            sys_version = ""

            def _send(self, with_body: bool) -> None:
                status, body, kind = route(self.path)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                for name, value in SECURITY_HEADERS.items():
                    self.send_header(name, value)
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                self._send(with_body=True)

            def do_HEAD(self) -> None:  # noqa: N802
                self._send(with_body=False)

            def log_message(self, format: str, *args) -> None:   # quiet: requests are not events
                return

        try:
            self.server = QuietBindServer((host, port), Handler)
        except OSError as exc:
            raise MetricsPortInUse(f"cannot serve metrics on {host}:{port}: {exc.strerror}; choose another "
                                   "--metrics-port (0 takes a free one)") from exc
        self.server.daemon_threads = True
        # shutdown() waits for the loop to look again: every 0.5 s by default, which made
        # every run of a job 0.25 s longer on average.
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL},
                         name="http", daemon=True).start()
        return self.server.server_port

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
