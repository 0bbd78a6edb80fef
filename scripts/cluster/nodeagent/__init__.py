"""segflow's node agent: registers a Node, schedules pods onto it and runs their
containers as local processes, each pod on its own loopback address (no kubelet,
scheduler or container runtime exists on the machines the tests run on)."""
