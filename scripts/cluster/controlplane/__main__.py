"""Command line of the local control plane (used by up.sh and down.sh):

    python -m controlplane up [NAME] [--fresh]   # prints the admin kubeconfig's path last
    python -m controlplane down [NAME]
    python -m controlplane kubeconfig [NAME]

NAME defaults to $CLUSTER, else ``local``. Run with scripts/cluster on PYTHONPATH.
"""
import argparse
import os
import sys

from .cluster import ClusterError, down, say, up
from .layout import ClusterNameError, layout_for
from .pki import CertificateError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="controlplane", description="segflow's local Kubernetes control plane")
    parser.add_argument("action", choices=["up", "down", "kubeconfig"])
    parser.add_argument("name", nargs="?", default=os.environ.get("CLUSTER") or "local")
    parser.add_argument("--fresh", action="store_true", help="up: forget the stopped cluster's objects and pods")
    args = parser.parse_args(argv)
    try:
        c = layout_for(args.name)
    except ClusterNameError as exc:
        say(str(exc))
        return 2
    try:
        if args.action == "up":
            print(up(c, fresh=args.fresh), flush=True)
        elif args.action == "down":
            down(c)
        else:
            print(c.kubeconfig)
    except (ClusterError, CertificateError, OSError) as exc:
        say(f"{c.name}: {exc}")
        if args.action == "up":
            say("stopping what was started")
            down(c)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
