"""The node agent's ``netns`` pod network on a cluster of its own: each pod in a network
namespace of its own with an IP from the private pod range, one pod reaching another by
Service name (ClusterIP through the node's forwarding rules, headless straight to the pod
IP), the API server through the relay, readiness probed at the pod IP, and nothing left of
the namespaces, veth pairs or processes once the cluster is down."""
import ipaddress
import json
import os
import subprocess
import textwrap

import psutil
import pytest

from support.clusters import TEST_CLUSTER, Cluster, wait_for

SERVER = """
import http.server, os, socket
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = socket.gethostname().encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("0.0.0.0", 8099), Hello).serve_forever()
"""

CLIENT = """
import json, os, socket, subprocess, sys, urllib.request
def peer_and_body(host, port):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n")
    reply = b"".join(iter(lambda: s.recv(4096), b""))
    return s.getpeername()[0], reply.split(b"\\r\\n\\r\\n", 1)[1].decode()
report = {"pid": os.getpid(), "hostname": socket.gethostname(),
          "service": socket.gethostbyname("b"), "headless": socket.gethostbyname("b-direct"),
          "qualified": socket.gethostbyname("b.default.svc.cluster.local"),
          "via_service": peer_and_body("b", 80), "via_headless": peer_and_body("b-direct", 8099),
          "api": subprocess.run(["kubectl", "get", "pod", "b", "-o", "jsonpath={.status.podIP}"],
                                capture_output=True, text=True).stdout}
out = sys.argv[1]
json.dump(report, open(out + ".tmp", "w")); os.rename(out + ".tmp", out)
__import__("time").sleep(300)
"""


CLUSTER = f"{TEST_CLUSTER}-net"


def namespaces() -> set[str]:
    """This module's cluster's network namespaces (other checkouts' come and go meanwhile)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in listed.splitlines() if line.startswith(f"{CLUSTER}-")}


def links(*namespace: str) -> set[str]:
    """Interface names in the host's network namespace, or in ``namespace``."""
    listed = subprocess.run(["ip", *(["-n", *namespace] if namespace else []), "-o", "link"], capture_output=True,
                            text=True, check=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in listed.splitlines()}


def veth(uid: str) -> str:
    """The node-side end of a pod's veth pair (nodeagent/netplan.py)."""
    return f"veth{uid.replace('-', '')[:8]}"


@pytest.fixture(scope="module")
def netns_cluster():
    c = Cluster(CLUSTER, pod_network="netns")
    try:
        c.up()
        yield c
    finally:
        c.down()


@pytest.mark.slow
def test_a_pod_reaches_another_by_service_name_at_a_pod_ip(netns_cluster, tmp_path):
    cluster = netns_cluster
    info = cluster.info()
    pods = ipaddress.ip_network(info["podNetwork"])
    assert info["podNetworkMode"] == "netns" and not pods.overlaps(ipaddress.ip_network("127.0.0.0/8"))
    rbac = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "default-view"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                               "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}]}
    server = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "labels": {"app": "b"}},
              "spec": {"containers": [{"name": "main", "image": "segflow/engine",
                                       "command": ["python", "-c", textwrap.dedent(SERVER)],
                                       "ports": [{"name": "http", "containerPort": 8099}],
                                       "readinessProbe": {"httpGet": {"port": "http", "path": "/"},
                                                          "periodSeconds": 1}}]}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"},
               "spec": {"selector": {"app": "b"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}
    headless = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b-direct"},
                "spec": {"clusterIP": "None", "selector": {"app": "b"}, "ports": [{"name": "http", "port": 8099}]}}
    out = tmp_path / "report.json"
    client = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
              "spec": {"containers": [{"name": "main", "image": "segflow/engine",
                                       "command": ["python", "-c", textwrap.dedent(CLIENT), str(out)]}]}}
    items = {"apiVersion": "v1", "kind": "List", "items": [rbac, server, service, headless]}
    cluster.kubectl("apply", "-f", "-", input=json.dumps(items))
    ready = wait_for(lambda: (p := cluster.get("pod", "b")) and any(
        c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or []) and p,
        60, "pod b to be Ready (probed at its pod IP)")
    b_ip = ready["status"]["podIP"]
    wait_for(lambda: cluster.get("endpoints", "b-direct").get("subsets"), 30, "b's endpoints")
    cluster.kubectl("apply", "-f", "-", input=json.dumps(client))
    report = json.loads(wait_for(lambda: out.exists() and out.read_text(), 60, "pod a's report"))
    a_ip = cluster.get("pod", "a")["status"]["podIP"]
    service_ip = cluster.get("service", "b")["spec"]["clusterIP"]

    assert ipaddress.ip_address(a_ip) in pods and ipaddress.ip_address(b_ip) in pods and a_ip != b_ip
    assert ipaddress.ip_address(service_ip) in ipaddress.ip_network(info["serviceNetwork"])
    assert report["hostname"] == "a"
    assert report["service"] == report["qualified"] == service_ip       # ClusterIP: by name to the cluster IP
    assert report["via_service"] == [service_ip, "b"]                   # forwarded to b, which answers
    assert report["headless"] == b_ip and report["via_headless"] == [b_ip, "b"]
    assert report["api"] == b_ip                                        # kubectl inside the pod, via the relay
    assert cluster.http_get(f"http://{b_ip}:8099/") == (200, "b")        # from the node namespace

    a_namespace = f"{cluster.name}-{cluster.get('pod', 'a')['metadata']['uid'][:8]}"
    assert {a_namespace, f"{cluster.name}-node"} <= namespaces()
    ours = os.readlink("/proc/self/ns/net")
    assert os.readlink(f"/proc/{report['pid']}/ns/net") != ours         # a's process is not in the host's network
    host_routes = subprocess.run(["ip", "route"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert not [r for r in host_routes if "/" in r.split()[0] and ipaddress.ip_network(r.split()[0]).subnet_of(pods)]
    a_uid = cluster.get("pod", "a")["metadata"]["uid"]
    assert {"segbr0", veth(a_uid)} <= links(f"{cluster.name}-node")       # in the node's namespace ...
    assert not {"segbr0", veth(a_uid)} & links()                         # ... and not in the host's
    process = psutil.Process(report["pid"])

    cluster.kubectl("delete", "pod", "a", "--wait=true", timeout=60)
    assert a_namespace not in namespaces() and not os.path.exists(f"/etc/netns/{a_namespace}")
    assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE

    cluster.down()
    assert namespaces() == set() and not {"segbr0", veth(a_uid)} & links()
    assert not os.listdir(os.path.join(cluster.home, "netns"))


@pytest.mark.slow
def test_down_deletes_the_namespaces_a_killed_node_agent_left(netns_cluster):
    cluster = netns_cluster
    cluster.up()
    cluster.kubectl("run", "left", "--image=segflow/engine", "--command", "--", "sleep", "300")
    pod = wait_for(lambda: (p := cluster.get("pod", "left"))["status"].get("podIP") and p, 30, "the pod's IP")
    left = {f"{cluster.name}-node", f"{cluster.name}-{pod['metadata']['uid'][:8]}"}
    assert left <= namespaces()
    os.kill(cluster.pids()["node-agent"], 9)
    wait_for(lambda: "node-agent" not in cluster.pids() or not psutil.pid_exists(cluster.pids()["node-agent"])
             or psutil.Process(cluster.pids()["node-agent"]).status() == psutil.STATUS_ZOMBIE, 10, "the agent's end")
    assert left <= namespaces()                                         # nobody removed them yet
    cluster.down()
    assert namespaces() == set()
    assert not any(os.path.exists(f"/etc/netns/{name}") for name in left)
