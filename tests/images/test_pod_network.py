"""Containers from images on the node's bridge (nodeagent/netns.py, the one pod network of
the local cluster): two containers of the engine image, each in its own pod namespace with
a pod IP, talk by address and by a name from the pod's /etc/hosts (/etc/netns/<pod>/hosts,
mounted as the node agent mounts it), while the host's own namespace gets no address or
route of the pod network."""
import os
import subprocess
import sys
import time

from support.containers import run_container
from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent.netns import Namespaces  # noqa: E402
from nodeagent.netplan import PodNetwork  # noqa: E402
from sandbox import runner  # noqa: E402
from sandbox.process import process_of  # noqa: E402

SERVER = """
import socket
server = socket.socket()
server.bind(("0.0.0.0", 8080))
server.listen()
print("listening", flush=True)
while True:
    connection, _ = server.accept()
    connection.sendall(socket.gethostname().encode())
    connection.close()
"""
CLIENT = """
import socket, sys
for target in sys.argv[1:]:
    with socket.create_connection((target, 8080), timeout=5) as connection:
        print(target, connection.recv(100).decode())
"""


def _ip(*args: str) -> str:
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True).stdout


def _wait_for(path, text: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} not in {path} after {timeout} s: {path.read_text() if path.exists() else ''}")


def test_two_pods_reach_each_other_by_pod_ip_and_by_name_on_the_nodes_bridge(images, tmp_path):
    engine = images["engine"]
    plan = PodNetwork(f"segflow-t{os.getpid()}", "10.250.0.0/24")
    namespaces = Namespaces(plan, str(tmp_path / "netns"))
    server_ip, client_ip = "10.250.0.2", "10.250.0.3"
    log = tmp_path / "server.log"
    server = process_of(engine.image(), {"command": ["python3", "-c", SERVER]}, {}, engine.read("/etc/passwd"),
                        engine.read("/etc/group"))
    try:
        namespaces.create_node("10.250.1.1")
        hosts = {"hosts": f"127.0.0.1\tlocalhost\n{client_ip}\tpod-b\n{server_ip}\tpod-a\n"}
        server_ns = namespaces.create_pod("aaaaaaaa-1", server_ip, hosts)
        client_ns = namespaces.create_pod("bbbbbbbb-2", client_ip, hosts)
        with open(log, "wb") as output:
            started = runner.start(engine, server, server_ns, str(tmp_path / "a"), "pod-a", output)
        try:
            _wait_for(log, "listening")
            ran = run_container(engine, {"command": ["python3", "-c", CLIENT, server_ip, "pod-a"]},
                                str(tmp_path / "b"),
                                (runner.Volume(f"/etc/netns/{client_ns}/hosts", "/etc/hosts", read_only=True),),
                                netns=client_ns, hostname="pod-b")
            client_routes = _ip("-n", client_ns, "route")
        finally:
            runner.kill(started)
        host_addresses, host_routes = _ip("-o", "addr"), _ip("route")
    finally:
        namespaces.delete_recorded()
    assert ran.exit_code == 0, ran.output
    assert ran.output == f"{server_ip} pod-a\npod-a pod-a\n"
    assert client_routes.split() == ["default", "via", "10.250.0.1", "dev", "eth0",
                                     "10.250.0.0/24", "dev", "eth0", "proto", "kernel", "scope", "link", "src",
                                     client_ip], "the pod network, and the node's bridge as the only way out"
    assert "10.250.0." not in host_addresses and "10.250.0." not in host_routes
    assert plan.node_namespace not in _ip("netns", "list")
