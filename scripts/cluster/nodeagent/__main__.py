"""Run the node agent: ``python scripts/cluster/nodeagent --cluster NAME ...`` (started by
scripts/cluster/cluster.py; SIGTERM stops it and every pod process it started)."""
import argparse
import logging
import signal
import sys

from agent import NodeAgent


def main() -> int:
    parser = argparse.ArgumentParser(description="segflow's node agent (kubelet and scheduler stand-in)")
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--pod-network", required=True)
    parser.add_argument("--state", required=True, help="directory for pod logs and kubeconfigs")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format='{"time":"%(asctime)s","level":"%(levelname)s","msg":"%(message)s"}')
    agent = NodeAgent(args.cluster, args.kubeconfig, args.server, args.ca, args.pod_network, args.state)
    signal.signal(signal.SIGTERM, lambda *_: agent.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: agent.stopping.set())
    agent.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
