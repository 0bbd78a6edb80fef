# The local Kubernetes control plane (scripts/cluster): `make cluster-up` builds what is
# missing (cached in ~/.cache/segflow), starts the cluster $(CLUSTER) and prints its
# kubeconfig path last; `make cluster-down` stops every process it started, by PID.
# CLUSTER=<name> selects another, independent cluster (own ports, pod addresses, state).
CLUSTER ?= local

.PHONY: cluster-build cluster-up cluster-down
cluster-build: setup
	@scripts/cluster/build.sh

cluster-up: setup
	@CLUSTER=$(CLUSTER) scripts/cluster/up.sh

cluster-down:
	@CLUSTER=$(CLUSTER) scripts/cluster/down.sh
