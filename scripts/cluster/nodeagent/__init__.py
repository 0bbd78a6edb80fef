"""segflow's node agent: registers a Node, schedules pods onto it and runs their
containers as local processes, each pod in a network namespace of its own or on its own
loopback address (podnetwork.py); no kubelet, scheduler or container runtime exists on the
machines the tests run on."""
