"""Containers run from the OCI bundles of scripts/images/build.sh: the image's root
filesystem under a writable layer of the container's own, its user, entrypoint and
environment, in network, mount, pid and UTS namespaces of their own (no crun or runc:
docs/architecture/images.md says why)."""
