"""``segflow-operator``: run the operator (kopf) with health and metrics endpoints."""
from __future__ import annotations

import argparse
import logging
import sys

import kopf
from prometheus_client import start_http_server

from segflow.observability.logs import RedactingFormatter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="segflow-operator", description="The segflow StreamJob operator.")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--namespace", action="append", default=[], help="watch this namespace (repeatable)")
    scope.add_argument("--all-namespaces", action="store_true", help="watch every namespace (the default)")
    parser.add_argument("--host", default="0.0.0.0", help="address of the health and metrics endpoints")
    parser.add_argument("--health-port", type=int, default=8080, help="liveness probe at /healthz")
    parser.add_argument("--metrics-port", type=int, default=9090, help="Prometheus metrics at /metrics")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter(
        '{"time":"%(asctime)s","level":"%(levelname)s","logger":"%(name)s","msg":"%(message)s"}'))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, handlers=[handler])
    start_http_server(args.metrics_port, addr=args.host)
    from . import handlers  # noqa: F401  (registers the handlers with kopf)
    kopf.run(standalone=True, clusterwide=not args.namespace, namespaces=args.namespace,
             liveness_endpoint=f"http://{args.host}:{args.health_port}/healthz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
