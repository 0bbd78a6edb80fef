"""Run the node agent (started by scripts/cluster/up.sh, with scripts/cluster on PYTHONPATH):

    python -m nodeagent --cluster NAME --kubeconfig FILE --server URL --ca FILE \\
        --pod-network 127.10.0.0/16 --state DIR --workdir /work/main

SIGTERM (or SIGINT) stops it after it has stopped every pod process it started.
"""
import argparse
import contextlib
import dataclasses
import json
import signal
import sys
from urllib.parse import urlparse

from sandbox.network import NodeNetwork, PodNetwork
from sandbox.relay import Relay

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
    api = urlparse(args.server)
    node = Node(name=f"{args.cluster}-node", server=args.server, api_port=api.port or 443, ca=args.ca,
                workdir=args.workdir, state=args.state)
    with contextlib.ExitStack() as stack:
        if args.images:
            # Pods reach the API server at the bridge's gateway, relayed to its loopback address.
            network = stack.enter_context(NodeNetwork(f"segflow-cluster-{args.cluster}.node",
                                                      PodNetwork(args.pod_network)))
            gateway = network.network.gateway
            stack.enter_context(Relay(network.node, (gateway, 443), (api.hostname or "127.0.0.1", node.api_port)))
            with open(args.images) as f:
                node = dataclasses.replace(node, server=f"https://{gateway}:443", api_port=443, host_ip=gateway,
                                           images=bundles(json.load(f)), network=network, cluster=args.cluster)
        agent = NodeAgent(args.cluster, args.kubeconfig, node, args.pod_network)
        signal.signal(signal.SIGTERM, lambda *_: agent.stopping.set())
        signal.signal(signal.SIGINT, lambda *_: agent.stopping.set())
        agent.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
