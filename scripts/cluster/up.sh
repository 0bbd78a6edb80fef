#!/usr/bin/env bash
# Starts the local Kubernetes cluster $CLUSTER (default `local`): builds what is missing
# first (cached in ~/.cache/segflow), then etcd, kube-apiserver, kube-controller-manager and
# the node agent on loopback. Prints the admin kubeconfig's path as the last line.
#
#   CLUSTER=name scripts/cluster/up.sh [--fresh]     (--fresh: forget a stopped cluster's objects)
#   export KUBECONFIG="$(scripts/cluster/up.sh | tail -1)"
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
if [ ! -x "$ROOT/.venv/bin/python" ]; then
    echo "cluster: $ROOT/.venv is missing: run \`make setup\` first" >&2
    exit 1
fi
# Build output goes to stderr: stdout carries only the kubeconfig path.
"$ROOT/scripts/cluster/build.sh" >&2
PYTHONPATH="$ROOT/scripts/cluster" exec "$ROOT/.venv/bin/python" -m controlplane up "${CLUSTER:-local}" "$@"
