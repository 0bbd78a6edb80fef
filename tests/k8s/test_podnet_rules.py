"""The pure parts of the node agent's ``netns`` pod network: names and addresses, the pods'
/etc/hosts and resolv.conf, the Service -> endpoint forwarding rules, and the sandbox's
command line (no namespace is created here; tests/k8s/test_podnet.py does that)."""
import ipaddress
import os
import sys

import pytest

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent import services  # noqa: E402
from nodeagent.addresses import AddressPool  # noqa: E402
from nodeagent.netplan import PodNetwork, hosts_file, resolv_conf  # noqa: E402
from nodeagent.sandbox import Entry, Sandbox, UnsupportedSandbox, sandboxed  # noqa: E402
from sandbox.process import Process  # noqa: E402

UID = "3db7161e-0c5f-4c4e-9a1b-2f4e5d6c7b8a"


def service(name, namespace="default", cluster_ip="10.96.0.20", ports=(("http", 80),), kind="ClusterIP"):
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterIP": cluster_ip, "type": kind,
                     "ports": [{"name": n, "port": p, "protocol": "TCP"} for n, p in ports]}}


def endpoints(name, addresses, ports=(("http", 8080),), namespace="default", not_ready=()):
    return {"metadata": {"name": name, "namespace": namespace},
            "subsets": [{"addresses": [dict(a) if isinstance(a, dict) else {"ip": a} for a in addresses],
                         "notReadyAddresses": [{"ip": a} for a in not_ready],
                         "ports": [{"name": n, "port": p, "protocol": "TCP"} for n, p in ports]}]}


def test_names_and_addresses_of_a_cluster_network():
    plan = PodNetwork("test", "10.128.0.0/16")
    assert (plan.gateway, plan.prefix, plan.node_namespace) == ("10.128.0.1", 16, "test-node")
    assert plan.pod_namespace(UID) == "test-3db7161e"
    assert plan.node_side_interface(UID) == "veth3db7161e" and len(plan.node_side_interface(UID)) <= 15


def test_pod_addresses_start_after_the_gateway_and_are_reused_last():
    pool = AddressPool("10.128.0.0/30")          # .0 network, .1 gateway, .2 the only pod address, .3 broadcast
    first = pool.allocate()
    assert first == "10.128.0.2" and ipaddress.ip_address(first) != ipaddress.ip_address("10.128.0.1")
    pool.release(first)
    assert pool.allocate() == first


def test_hosts_file_lists_the_pod_then_the_services():
    text = hosts_file("10.128.0.7", "web-0", [("10.96.0.20", "web.default.svc.cluster.local web")])
    lines = text.splitlines()
    assert lines[1:] == ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback", "10.128.0.7\tweb-0",
                         "10.96.0.20\tweb.default.svc.cluster.local web"]
    assert lines[0].startswith("#") and text.endswith("\n")


def test_resolv_conf_searches_the_pods_namespace_first_and_asks_no_server_off_the_pod():
    text = resolv_conf("jobs")
    assert text.splitlines()[0] == "search jobs.svc.cluster.local svc.cluster.local cluster.local"
    assert [line.split()[1] for line in text.splitlines() if line.startswith("nameserver")] == ["127.0.0.1"]


def test_a_cluster_ip_service_resolves_to_its_cluster_ip_short_name_only_in_its_namespace():
    objects = [service("web"), service("db", namespace="data", cluster_ip="10.96.0.30")]
    assert services.host_entries(objects, [], "default") == [
        ("10.96.0.30", "db.data.svc.cluster.local db.data.svc db.data"),
        ("10.96.0.20", "web.default.svc.cluster.local web.default.svc web.default web")]
    assert services.host_entries(objects, [], "data")[0] == (
        "10.96.0.30", "db.data.svc.cluster.local db.data.svc db.data db")


def test_a_headless_service_resolves_to_its_ready_pod_ips_and_pod_hostnames():
    objects = [service("coord", cluster_ip="None"), service("ext", kind="ExternalName", cluster_ip="")]
    ready = endpoints("coord", [{"ip": "10.128.0.9", "hostname": "c-0"}, "10.128.0.4"], not_ready=["10.128.0.5"])
    names = "coord.default.svc.cluster.local coord.default.svc coord.default coord"
    assert services.host_entries(objects, [ready], "default") == [
        ("10.128.0.4", names), ("10.128.0.9", names),
        ("10.128.0.9", "c-0.coord.default.svc.cluster.local c-0.coord.default.svc c-0.coord.default c-0.coord")]


def test_forwards_match_service_ports_to_endpoint_ports_by_name():
    objects = [service("web", ports=(("http", 80), ("admin", 81))), service("headless", cluster_ip="None")]
    found = services.forwards(objects, [endpoints("web", ["10.128.0.3", "10.128.0.2"],
                                                  ports=(("http", 8080), ("admin", 9090)))])
    assert found == [services.Forward("10.96.0.20", 80, "TCP", (("10.128.0.2", 8080), ("10.128.0.3", 8080))),
                     services.Forward("10.96.0.20", 81, "TCP", (("10.128.0.2", 9090), ("10.128.0.3", 9090)))]
    assert services.forwards([service("idle")], []) == [services.Forward("10.96.0.20", 80, "TCP", ())]


def test_the_nat_table_splits_evenly_across_endpoints_and_masquerades_dnat_from_pods():
    rule = services.Forward("10.96.0.20", 80, "TCP", (("10.128.0.2", 8080), ("10.128.0.3", 8080), ("10.128.0.4", 8080)))
    table = services.nat_table([rule, services.Forward("10.96.0.21", 53, "UDP", ())], "10.128.0.0/16")
    lines = table.splitlines()
    assert lines[0] == "*nat" and lines[-1] == "COMMIT"
    assert "-A POSTROUTING -s 10.128.0.0/16 -m conntrack --ctstate DNAT -j MASQUERADE" in lines
    dnat = [line for line in lines if "DNAT --to" in line]
    prefix = "-A SEGFLOW-SERVICES -d 10.96.0.20/32 -p tcp --dport 80"
    odds = "-m statistic --mode random --probability"
    assert dnat == [f"{prefix} {odds} 0.33333 -j DNAT --to-destination 10.128.0.2:8080",
                    f"{prefix} {odds} 0.50000 -j DNAT --to-destination 10.128.0.3:8080",
                    f"{prefix} -j DNAT --to-destination 10.128.0.4:8080"]
    assert "10.96.0.21" not in table          # no ready endpoint: no rule, the connection fails at once


def test_the_sandbox_command_enters_the_pods_namespace_and_host_name():
    assert sandboxed(["segflow", "-V"], Sandbox()) == ["segflow", "-V"]
    command = sandboxed(["segflow", "-V"], Sandbox(netns="test-3db7161e", hostname="web-0"))
    assert command[:4] == ["ip", "netns", "exec", "test-3db7161e"] and command[-3:] == ["web-0", "segflow", "-V"]
    image = Sandbox(entry=Entry("/pods/p/containers/main/root", Process(["segflow"], {}, 10001, 10001, "/app")))
    with pytest.raises(UnsupportedSandbox, match="needs the container running"):
        sandboxed(["segflow"], image)
