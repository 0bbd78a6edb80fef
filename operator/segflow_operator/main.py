"""``segflow-operator``: run the operator (kopf) with health and metrics endpoints."""
from __future__ import annotations

import argparse
import contextlib
import http.server
import logging
import os
import socket
import sys
import threading

import kopf
from prometheus_client import start_http_server

import segflow
from segflow.observability.logs import JsonFormatter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="segflow-operator", description="The segflow StreamJob operator.")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--namespace", action="append", default=[], help="watch this namespace (repeatable)")
    scope.add_argument("--all-namespaces", action="store_true", help="watch every namespace (the default)")
    parser.add_argument("--host", default="0.0.0.0", help="address of the health and metrics endpoints")
    parser.add_argument("--health-port", type=int, default=8080, help="liveness probe at /healthz")
    parser.add_argument("--metrics-port", type=int, default=9090, help="Prometheus metrics at /metrics")
    parser.add_argument("--leader-election", action="store_true",
                        help="with several replicas: reconcile only while holding the Lease segflow-operator in "
                             "$POD_NAMESPACE (identity $POD_NAME)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--version", action="version", version=f"segflow-operator {segflow.__version__}")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, handlers=[log_handler()])
    from . import metrics  # noqa: F401  (the operator's metrics are served from the start, standby or not)
    start_http_server(args.metrics_port, addr=args.host)
    elector = _lead(args.host, args.health_port) if args.leader_election else None
    from . import handlers  # noqa: F401  (registers the handlers with kopf)
    try:
        kopf.run(standalone=True, clusterwide=not args.namespace, namespaces=args.namespace,
                 liveness_endpoint=f"http://{args.host}:{args.health_port}/healthz")
    finally:
        if elector is not None:
            elector.release()
    return 0


def log_handler(stream=None) -> logging.Handler:
    """JSON lines, one per record, whatever the message holds (quotes, newlines, a
    traceback), credentials masked: what a log collector in the cluster parses."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter("operator"))
    return handler


LOST_LEADERSHIP = 3


def _lead(host: str, health_port: int):
    """Wait (answering liveness probes meanwhile) until this replica leads; keep leading in
    the background, and stop the process at once if that ends. Returns the elector."""
    from kubernetes import client

    from .election import Elector
    from .kube import load_configuration

    load_configuration()
    elector = Elector(client.CoordinationV1Api(), os.environ.get("POD_NAMESPACE") or "default",
                      os.environ.get("POD_NAME") or socket.gethostname())
    with _standby_health(host, health_port):
        elector.wait_for_leadership()
    def stop() -> None:
        logging.getLogger("segflow.operator").error("lost the leader lease; stopping")
        os._exit(LOST_LEADERSHIP)
    elector.keep(stop)
    return elector


@contextlib.contextmanager
def _standby_health(host: str, port: int):
    """``/healthz`` while waiting to lead (kopf serves it once it runs)."""
    class Healthy(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/healthz" else 404)
            self.end_headers()

        def log_message(self, *_) -> None:
            return None

    server = http.server.ThreadingHTTPServer((host, port), Healthy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    sys.exit(main())
