# The local Kubernetes control plane (scripts/cluster): `make cluster-up` builds what is
# missing (cached in ~/.cache/segflow), starts the cluster $(CLUSTER) and prints its
# kubeconfig path last; `make cluster-down` stops every process it started.
CLUSTER ?= local

.PHONY: cluster-build cluster-up cluster-down
cluster-build: setup
	scripts/cluster/build.sh

cluster-up: cluster-build
	@$(BIN)/python scripts/cluster/cluster.py up $(CLUSTER)

cluster-down:
	@$(BIN)/python scripts/cluster/cluster.py down $(CLUSTER)
