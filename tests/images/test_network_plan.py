"""The node's pod network plan (sandbox/network.py), without root: addresses and the ip
commands that make the bridge and connect a pod."""
import os
import sys

import pytest

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from sandbox.network import PodNetwork, PodNetworkError, attach_commands, node_commands  # noqa: E402


def test_the_gateway_is_the_first_host_and_pods_follow():
    network = PodNetwork("10.101.0.0/16")
    assert network.gateway == "10.101.0.1"
    assert [network.pod_ip(i) for i in (0, 1, 300)] == ["10.101.0.2", "10.101.0.3", "10.101.1.46"]
    assert network.index_of("10.101.1.46") == 300


def test_a_pod_number_beyond_the_range_has_no_address():
    network = PodNetwork("10.9.0.0/29")                     # .1 gateway, .2-.6 pods, .7 broadcast
    assert network.pod_ip(4) == "10.9.0.6"
    with pytest.raises(PodNetworkError, match="pod number 5 has no address in 10.9.0.0/29"):
        network.pod_ip(5)


@pytest.mark.parametrize("cidr", ["127.10.0.0/16", "fd00::/64", "10.0.0.0/30"])
def test_loopback_ipv6_and_tiny_ranges_are_refused(cidr):
    with pytest.raises(PodNetworkError, match="must be an IPv4 range of /29 or more outside 127.0.0.0/8"):
        PodNetwork(cidr).gateway


def test_the_bridge_lives_in_the_nodes_namespace_with_the_gateway_address():
    commands = node_commands("segflow-x-node", PodNetwork("10.101.0.0/16"))
    assert commands[0] == ["ip", "netns", "add", "segflow-x-node"]
    assert all(c[:3] == ["ip", "-n", "segflow-x-node"] for c in commands[1:]), "nothing in the host's namespace"
    assert ["ip", "-n", "segflow-x-node", "addr", "add", "10.101.0.1/16", "dev", "br0"] in commands


def test_a_pod_gets_a_veth_to_the_bridge_its_address_and_no_default_route():
    commands = attach_commands("node", PodNetwork("10.101.0.0/16"), "pod-a", "10.101.0.7")
    assert commands[0] == ["ip", "-n", "node", "link", "add", "veth5", "type", "veth", "peer", "name", "eth0",
                           "netns", "pod-a"]
    assert ["ip", "-n", "pod-a", "addr", "add", "10.101.0.7/16", "dev", "eth0"] in commands
    assert not any("route" in c for c in commands)
    assert all(c[:2] == ["ip", "-n"] for c in commands), "every command names a namespace of ours"
