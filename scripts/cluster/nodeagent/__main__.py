"""Run the node agent (started by scripts/cluster/up.sh, with scripts/cluster on PYTHONPATH):

    python -m nodeagent --cluster NAME --kubeconfig FILE --server URL --ca FILE \\
        --pod-network 127.10.0.0/16 --state DIR --workdir /work/main

SIGTERM (or SIGINT) stops it after it has stopped every pod process it started.
"""
import argparse
import contextlib
import json
import signal
import sys
from urllib.parse import urlparse

from sandbox.network import NodeNetwork, PodNetwork

from .agent import NodeAgent
from .logs import configure
from .pod import Node
from .sandboxed import bundles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nodeagent", description="segflow's node agent (kubelet and scheduler)")
    parser.add_argument("--cluster", required=True, help="cluster name; the node is <cluster>-node")
    parser.add_argument("--kubeconfig", required=True, help="the agent's own credentials")
    parser.add_argument("--server", required=True, help="API server URL given to pods")
    parser.add_argument("--ca", required=True, help="the cluster CA certificate given to pods")
    parser.add_argument("--pod-network", required=True,
                        help="range of pod addresses: loopback, or with --images the node bridge's")
    parser.add_argument("--images", default="", metavar="MANIFEST",
                        help="run pods from the images of this `make images` manifest, each in network, mount and "
                             "pid namespaces of its own on a bridge in the node's network namespace")
    parser.add_argument("--state", required=True, help="directory for pod logs, PID files and kubeconfigs")
    parser.add_argument("--workdir", required=True, help="the project checkout: pods' working directory")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    configure(args.verbose)
    images, network = {}, None
    if args.images:
        with open(args.images) as f:
            images = bundles(json.load(f))
        network = NodeNetwork(f"segflow-cluster-{args.cluster}.node", PodNetwork(args.pod_network))
    node = Node(name=f"{args.cluster}-node", server=args.server, api_port=urlparse(args.server).port or 443,
                ca=args.ca, workdir=args.workdir, state=args.state, images=images, network=network,
                cluster=args.cluster)
    agent = NodeAgent(args.cluster, args.kubeconfig, node, args.pod_network)
    signal.signal(signal.SIGTERM, lambda *_: agent.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: agent.stopping.set())
    with network or contextlib.nullcontext():
        agent.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
