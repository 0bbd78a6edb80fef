"""Command line of the local control plane (used by up.sh and down.sh):

    python -m controlplane up [NAME] [--fresh]   # prints the admin kubeconfig's path last
    python -m controlplane down [NAME]
    python -m controlplane kubeconfig [NAME]

NAME defaults to $CLUSTER, else ``local``. Run with scripts/cluster on PYTHONPATH.
"""
import argparse
import contextlib
import fcntl
import os
import sys
from typing import Iterator

from .cluster import ClusterError, down, say, up
from .layout import ClusterNameError, layout_for
from .pki import CertificateError


class ClusterBusy(RuntimeError):
    """Another process is starting or stopping the same cluster."""


@contextlib.contextmanager
def exclusive(c) -> Iterator[None]:
    """One up or down of a cluster at a time: two at once would each generate credentials
    and start servers on the same ports, leaving a cluster that rejects its own components."""
    os.makedirs(c.home, mode=0o700, exist_ok=True)
    with open(c.path(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ClusterBusy(f"another process is starting or stopping cluster {c.name}: wait for it, or "
                              "use another name (CLUSTER=..., or SEGFLOW_TEST_CLUSTER=... for the tests)") from None
        yield


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="controlplane", description="segflow's local Kubernetes control plane")
    parser.add_argument("action", choices=["up", "down", "kubeconfig"])
    parser.add_argument("name", nargs="?", default=os.environ.get("CLUSTER") or "local")
    parser.add_argument("--fresh", action="store_true", help="up: forget the stopped cluster's objects and pods")
    parser.add_argument("--images", default="", metavar="MANIFEST",
                        help="up: run pods from the images of this `make images` manifest (scripts/images/build.sh "
                             "--manifest), each in namespaces of its own with an address on the node's bridge")
    args = parser.parse_args(argv)
    try:
        c = layout_for(args.name)
    except ClusterNameError as exc:
        say(str(exc))
        return 2
    if args.action == "kubeconfig":
        print(c.kubeconfig)
        return 0
    try:
        with exclusive(c):
            return _up_or_down(c, args)
    except ClusterBusy as exc:
        say(str(exc))
        return 1


def _up_or_down(c, args: argparse.Namespace) -> int:
    try:
        if args.action == "up":
            print(up(c, fresh=args.fresh, images=args.images), flush=True)
        else:
            down(c)
    except (ClusterError, CertificateError, OSError) as exc:
        say(f"{c.name}: {exc}")
        if args.action == "up":
            say("stopping what was started")
            down(c)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
