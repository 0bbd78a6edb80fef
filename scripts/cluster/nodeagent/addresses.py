"""Pod addresses: each pod gets its own loopback address from the cluster's range (all of
127.0.0.0/8 reaches this machine on Linux), so two pods can listen on the same port."""
from __future__ import annotations

import ipaddress
from collections import deque


class AddressesExhausted(RuntimeError):
    """Every address of the pod range is taken."""


class AddressPool:
    """Hands out the range's addresses in order; a released address goes to the back of the
    queue, so it is reused as late as possible (its old sockets may linger in TIME_WAIT)."""

    def __init__(self, network: str):
        self.network = ipaddress.ip_network(network)
        self.next = int(self.network.network_address) + 2       # .0.1 is left for the range's own use
        self.released: deque[str] = deque()

    def allocate(self) -> str:
        if self.next < int(self.network.broadcast_address):
            self.next += 1
            return str(ipaddress.ip_address(self.next - 1))
        if self.released:
            return self.released.popleft()
        raise AddressesExhausted(f"all pod addresses of {self.network} are in use")

    def release(self, address: str) -> None:
        self.released.append(address)
