"""Run the node agent (started by scripts/cluster/up.sh, with scripts/cluster on PYTHONPATH):

    python -m nodeagent --cluster NAME --kubeconfig FILE --server URL --ca FILE \\
        --pod-network 127.10.0.0/16 --state DIR --workdir /work/main \\
        [--pod-network-mode netns --service-ip 10.96.0.1 --netns-records DIR [--images MANIFEST]] \\
        [--kubelet-port PORT --kubelet-cert FILE --kubelet-key FILE]

SIGTERM (or SIGINT) stops it after it has stopped every pod process it started.
"""
import argparse
import json
import signal
import sys
from urllib.parse import urlparse

from .agent import KubeletEndpoint, NodeAgent
from .logs import configure
from .netplan import PodNetwork
from .pod import Node
from .podnetwork import API_SERVICE_PORT, MODES, LoopbackNetwork, NamespaceNetwork
from .sandboxed import bundles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nodeagent", description=__doc__.split("\n")[0])
    parser.add_argument("--cluster", required=True, help="cluster name (the node is <cluster>-node)")
    parser.add_argument("--kubeconfig", required=True, help="the agent's own kubeconfig")
    parser.add_argument("--server", required=True, help="API server URL given to pods")
    parser.add_argument("--ca", required=True, help="the cluster CA certificate given to pods")
    parser.add_argument("--pod-network", required=True,
                        help="range of pod addresses (loopback; private in netns mode)")
    parser.add_argument("--pod-network-mode", choices=MODES, default="loopback",
                        help="loopback: pods share the host's network; netns: each its own (podnetwork.py)")
    parser.add_argument("--service-ip", help="netns: the kubernetes Service's cluster IP, where pods reach the API")
    parser.add_argument("--netns-records", help="netns: directory recording the network namespaces created")
    parser.add_argument("--images", default="", metavar="MANIFEST",
                        help="netns: run pods from the images of this `make images` manifest, each container in "
                             "its image's root filesystem (sandboxed.py), in the pod's network namespace")
    parser.add_argument("--state", required=True, help="directory for pod logs, PID files and kubeconfigs")
    parser.add_argument("--workdir", required=True, help="the project checkout: pods' working directory")
    parser.add_argument("--kubelet-port", type=int, default=0,
                        help="serve the kubelet API (kubectl logs) on this loopback port (0: not at all)")
    parser.add_argument("--kubelet-cert", help="the kubelet API's serving certificate (of the cluster CA)")
    parser.add_argument("--kubelet-key", help="its key")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    configure(args.verbose)
    api_port = urlparse(args.server).port or 443
    network: LoopbackNetwork | NamespaceNetwork = LoopbackNetwork()
    server, api_host, pod_api_port = args.server, "127.0.0.1", api_port
    if args.pod_network_mode == "netns":
        if not (args.service_ip and args.netns_records):
            parser.error("--pod-network-mode netns needs --service-ip and --netns-records")
        network = NamespaceNetwork(PodNetwork(args.cluster, args.pod_network), args.netns_records, args.service_ip,
                                   api_port)
        server, api_host, pod_api_port = f"https://{args.service_ip}:{API_SERVICE_PORT}", args.service_ip, \
            API_SERVICE_PORT
    elif args.images:
        parser.error("--images needs --pod-network-mode netns (pods from images get network namespaces)")
    images = {}
    if args.images:
        with open(args.images) as f:
            images = bundles(json.load(f))
    node = Node(name=f"{args.cluster}-node", server=server, api_host=api_host, api_port=pod_api_port, ca=args.ca,
                workdir=args.workdir, state=args.state, images=images)
    kubelet = None
    if args.kubelet_port:
        if not (args.kubelet_cert and args.kubelet_key):
            parser.error("--kubelet-port needs --kubelet-cert and --kubelet-key")
        kubelet = KubeletEndpoint(args.kubelet_port, args.kubelet_cert, args.kubelet_key)
    agent = NodeAgent(args.cluster, args.kubeconfig, node, args.pod_network, network, kubelet)
    signal.signal(signal.SIGTERM, lambda *_: agent.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: agent.stopping.set())
    agent.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
