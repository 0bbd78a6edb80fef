# The local Kubernetes control plane (scripts/cluster): `make cluster-up` builds what is
# missing (cached in ~/.cache/segflow), starts the cluster $(CLUSTER) and prints its
# kubeconfig path last; `make cluster-down` stops every process it started, by PID.
# CLUSTER=<name> selects another, independent cluster (own ports, pod addresses, state).
CLUSTER ?= local

.PHONY: cluster-build cluster-up cluster-down
cluster-build: setup
	@scripts/cluster/build.sh

# IMAGES=1: the node agent runs pods from the images of `make images` (built first if their
# inputs changed), each in namespaces of its own with a pod IP on the node's bridge.
IMAGES_MANIFEST ?= $(HOME)/.cache/segflow/images/manifest.json
cluster-up: setup
	@if [ -n "$(IMAGES)" ]; then \
		scripts/images/build.sh --manifest "$(IMAGES_MANIFEST)" >&2 \
		&& CLUSTER=$(CLUSTER) scripts/cluster/up.sh --images "$(IMAGES_MANIFEST)"; \
	else CLUSTER=$(CLUSTER) scripts/cluster/up.sh; fi

cluster-down:
	@CLUSTER=$(CLUSTER) scripts/cluster/down.sh
