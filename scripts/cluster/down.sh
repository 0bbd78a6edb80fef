#!/usr/bin/env bash
# Stops the local Kubernetes cluster $CLUSTER (default `local`): every process up.sh started,
# by the PIDs it recorded (the node agent first, which stops the pods' processes). Its state
# (objects, certificates, logs) stays in ~/.cache/segflow/clusters/$CLUSTER.
#
#   CLUSTER=name scripts/cluster/down.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHON="$ROOT/.venv/bin/python"
[ -x "$PYTHON" ] || PYTHON=python3      # stopping needs only the standard library
PYTHONPATH="$ROOT/scripts/cluster" exec "$PYTHON" -m controlplane down "${CLUSTER:-local}"
