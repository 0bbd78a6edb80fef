"""The local control plane and its node agent: pods really run, from their images in a
network namespace of their own with a pod IP (or, with SEGFLOW_TEST_PODS=loopback, as host
processes on a 127.x address of their own), with their resolved environment, restart, follow their readiness probe,
die when deleted, act as their service account under RBAC, and a second cluster runs
beside the first."""
import fcntl
import ipaddress
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from support.clusters import Cluster, wait_for
from support.podfiles import container_log, container_path, container_processes, innermost
from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from sandbox.bundle import Bundle  # noqa: E402

VENV_BIN = os.path.join(ROOT, ".venv", "bin")


def apply(cluster, manifest: str, namespace: str = "default") -> None:
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input=textwrap.dedent(manifest))


def apply_shell_pod(cluster, name: str, script: str, pod: dict | None = None, **main: object) -> None:
    """Apply a pod whose one container (segflow's engine image) runs ``sh -c script``;
    ``pod`` adds to the pod's spec and keywords to the container."""
    container = {"name": "main", "image": "segflow/engine", "command": ["sh", "-c", script], **main}
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {**(pod or {}), "containers": [container]}}
    apply(cluster, json.dumps(manifest))          # JSON is YAML


def pod_status(cluster, name: str, namespace: str = "default") -> dict:
    return client.CoreV1Api(cluster.api).read_namespaced_pod_status(name, namespace).to_dict()["status"]


def container(status: dict) -> dict:
    return (status.get("container_statuses") or [{}])[0]


def condition(status: dict, kind: str) -> str:
    return next((c["status"] for c in status.get("conditions") or [] if c["type"] == kind), "")


def pod_uid(cluster, name: str) -> str:
    return client.CoreV1Api(cluster.api).read_namespaced_pod(name, "default").metadata.uid


def delete_and_wait(cluster, name: str, namespace: str = "default") -> None:
    cluster.kubectl("delete", "pod", name, "-n", namespace, "--wait=true", timeout=60)


def pod_network(cluster) -> ipaddress.IPv4Network:
    return ipaddress.ip_network(cluster.info()["podNetwork"])


def expected_start(cluster) -> tuple[str, str]:
    """The first directory of a container's PATH and its working directory: the engine
    image's (its Env and WorkingDir) for pods from images, else the host's virtualenv and
    the checkout (loopback mode)."""
    images = cluster.info()["images"]
    if not images:
        return VENV_BIN, ROOT
    with open(images) as f:
        image = Bundle(json.load(f)["engine"]["bundle"]).image()
    path = next(v for v in image["Env"] if v.startswith("PATH="))[len("PATH="):]
    return path.split(":")[0], image["WorkingDir"]


def test_a_pod_runs_on_its_own_address_with_its_environment(cluster):
    cluster.kubectl("create", "configmap", "settings", "--from-literal=color=blue")
    cluster.kubectl("create", "secret", "generic", "password", "--from-literal=word=s3cret")
    out, release = f"/tmp/env-{os.getpid()}.json", f"/tmp/release-{os.getpid()}"
    script = ("import json, os, socket, time; s = socket.socket(); s.bind((os.environ['SEGFLOW_POD_IP'], 0)); "
              f"json.dump({{'env': dict(os.environ), 'cwd': os.getcwd(), 'bound': s.getsockname()[0]}}, "
              f"open('{out}.tmp', 'w')); os.rename('{out}.tmp', '{out}'); "
              f"[time.sleep(0.1) for _ in iter(lambda: os.path.exists('{release}'), True)]")
    apply(cluster, f"""
        apiVersion: v1
        kind: Pod
        metadata: {{name: envpod, labels: {{tier: demo}}, annotations: {{note: hello}}}}
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: registry.example.com/segflow/engine:0.1.0
            command: [python, -c, "{script}"]
            env:
            - {{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}
            - {{name: NAME, valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}}}
            - {{name: NAMESPACE, valueFrom: {{fieldRef: {{fieldPath: metadata.namespace}}}}}}
            - {{name: UID, valueFrom: {{fieldRef: {{fieldPath: metadata.uid}}}}}}
            - {{name: TIER, valueFrom: {{fieldRef: {{fieldPath: "metadata.labels['tier']"}}}}}}
            - {{name: NOTE, valueFrom: {{fieldRef: {{fieldPath: "metadata.annotations['note']"}}}}}}
            - {{name: NODE, valueFrom: {{fieldRef: {{fieldPath: spec.nodeName}}}}}}
            - {{name: ACCOUNT, valueFrom: {{fieldRef: {{fieldPath: spec.serviceAccountName}}}}}}
            - {{name: COLOR, valueFrom: {{configMapKeyRef: {{name: settings, key: color}}}}}}
            - {{name: WORD, valueFrom: {{secretKeyRef: {{name: password, key: word}}}}}}
            - {{name: GREETING, value: "$(NAME) in $(COLOR)"}}
        """)
    running = wait_for(lambda: (s := pod_status(cluster, "envpod"))["phase"] == "Running" and s, 30, "Running")
    report = container_path(cluster, "envpod", out)
    seen = json.loads(wait_for(lambda: os.path.exists(report) and open(report).read(), 30, "the pod's report"))
    env, ip = seen["env"], running["pod_ip"]
    assert ipaddress.ip_address(ip) in pod_network(cluster) and seen["bound"] == ip == env["SEGFLOW_POD_IP"]
    uid = client.CoreV1Api(cluster.api).read_namespaced_pod("envpod", "default").metadata.uid
    assert {k: env[k] for k in ("POD_IP", "NAME", "NAMESPACE", "UID", "TIER", "NOTE", "NODE", "ACCOUNT", "COLOR",
                                "WORD", "GREETING")} == {
        "POD_IP": ip, "NAME": "envpod", "NAMESPACE": "default", "UID": uid, "TIER": "demo", "NOTE": "hello",
        "NODE": f"{cluster.name}-node", "ACCOUNT": "default", "COLOR": "blue", "WORD": "s3cret",
        "GREETING": "envpod in blue"}
    assert (env["PATH"].split(":")[0], seen["cwd"]) == expected_start(cluster)
    in_cluster = f"https://{env['KUBERNETES_SERVICE_HOST']}:{env['KUBERNETES_SERVICE_PORT']}"
    assert os.path.exists(container_path(cluster, "envpod", env["KUBECONFIG"]))
    assert in_cluster == cluster.info()["podApiServer"]
    assert condition(running, "Ready") == "True"
    with open(container_path(cluster, "envpod", release), "w"):
        pass
    done = wait_for(lambda: (s := pod_status(cluster, "envpod"))["phase"] != "Running" and s, 30, "the pod to end")
    assert done["phase"] == "Succeeded"
    assert container(done)["state"]["terminated"]["exit_code"] == 0
    assert condition(done, "Ready") == "False"


def test_a_killed_container_is_restarted(cluster):
    """The container's own process (the image's pid 1 for pods from images) is killed."""
    apply_shell_pod(cluster, "phoenix", "exec sleep 300", {"restartPolicy": "Always"})
    wait_for(lambda: container(pod_status(cluster, "phoenix")).get("state", {}).get("running"), 30, "running")
    first = wait_for(lambda: innermost(cluster, "phoenix"), 30, "the container's process")
    os.kill(first, signal.SIGKILL)
    second = wait_for(lambda: (pid := innermost(cluster, "phoenix")) not in (0, first) and pid, 30,
                      "the restarted container's process")
    assert psutil.pid_exists(second)
    restarted = wait_for(lambda: (c := container(pod_status(cluster, "phoenix")))["restart_count"] == 1
                         and c["state"]["running"] and c, 30, "the restart to be reported")
    assert restarted["last_state"]["terminated"]["exit_code"] == 137
    assert pod_status(cluster, "phoenix")["phase"] == "Running"
    delete_and_wait(cluster, "phoenix")


def test_deleting_a_pod_stops_its_processes(cluster):
    apply_shell_pod(cluster, "doomed", "sleep 300 & wait")
    pids = wait_for(lambda: (found := container_processes(cluster, "doomed")) and
                    any(psutil.Process(p).name() == "sleep" for p in found) and found, 30, "the pod's processes")
    processes = [psutil.Process(pid) for pid in pids]
    assert all(p.is_running() for p in processes)
    delete_and_wait(cluster, "doomed")
    for p in processes:                    # the main process and its child: the whole group
        assert not p.is_running() or p.status() == psutil.STATUS_ZOMBIE, p
    with pytest.raises(ApiException) as gone:
        client.CoreV1Api(cluster.api).read_namespaced_pod("doomed", "default")
    assert gone.value.status == 404


def test_readiness_follows_a_tcp_probe(cluster):
    flag = f"/tmp/open-{os.getpid()}"
    apply_shell_pod(cluster, "prober",
                    f"while [ ! -e {flag} ]; do sleep 0.1; done; "
                    "exec python -m http.server 8099 --bind $SEGFLOW_POD_IP",
                    readinessProbe={"tcpSocket": {"port": "http"}, "periodSeconds": 1},
                    ports=[{"name": "http", "containerPort": 8099}])
    wait_for(lambda: pod_status(cluster, "prober")["phase"] == "Running", 30, "Running")
    wait_for(lambda: container(pod_status(cluster, "prober"))["state"]["running"], 30, "the process")
    for _ in range(3):                     # several probe periods pass: still not ready
        status = pod_status(cluster, "prober")
        assert condition(status, "Ready") == "False" and not container(status)["ready"]
        time.sleep(0.7)
    with open(container_path(cluster, "prober", flag), "w"):
        pass
    ready = wait_for(lambda: (s := pod_status(cluster, "prober")) and condition(s, "Ready") == "True" and s, 30,
                     "Ready")
    assert cluster.http_get(f"http://{ready['pod_ip']}:8099/")[0] == 200
    delete_and_wait(cluster, "prober")


def test_an_unknown_image_fails_the_pod(cluster):
    apply(cluster, """
        apiVersion: v1
        kind: Pod
        metadata: {name: stranger}
        spec:
          containers: [{name: main, image: "nginx:1.25"}]
        """)
    failed = wait_for(lambda: (s := pod_status(cluster, "stranger"))["phase"] == "Failed" and s, 30, "Failed")
    assert failed["reason"] == "UnknownImage"
    assert "'nginx:1.25' is unknown" in failed["message"] and "segflow/engine" in failed["message"]
    assert container(failed)["state"]["waiting"]["reason"] == "UnknownImage"
    assert not os.path.exists(os.path.join(cluster.pods_dir(), f"default_stranger_{pod_uid(cluster, 'stranger')[:8]}",
                                           "main.pid"))
    delete_and_wait(cluster, "stranger")


# Python's Kubernetes client (in the operator's image): the engine's has no kubectl.
RBAC_CHECKS = """
from kubernetes import client, config
config.load_kube_config()
api, authz = client.CoreV1Api(), client.AuthorizationV1Api()
for verb, resource in (("list", "pods"), ("delete", "pods"), ("list", "secrets")):
    review = {"spec": {"resourceAttributes": {"namespace": "default", "verb": verb, "resource": resource}}}
    print("yes" if authz.create_self_subject_access_review(review).status.allowed else "no")
print("pod/" + api.read_namespaced_pod("rbac", "default").metadata.name, "get-pod-ok")
try:
    api.list_namespaced_secret("default")
except client.ApiException as exc:
    print("secrets-forbidden" if exc.status == 403 else exc.status)
"""


def test_a_pod_acts_as_its_service_account_under_rbac(cluster):
    cluster.kubectl("create", "serviceaccount", "reader")
    cluster.kubectl("create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
    cluster.kubectl("create", "rolebinding", "reader-pods", "--role=pod-reader", "--serviceaccount=default:reader")
    apply(cluster, f"""
        apiVersion: v1
        kind: Pod
        metadata: {{name: rbac}}
        spec:
          restartPolicy: Never
          serviceAccountName: reader
          containers:
          - name: main
            image: segflow/operator
            command: [python, -c, {json.dumps(RBAC_CHECKS)}]
        """)
    wait_for(lambda: pod_status(cluster, "rbac")["phase"] in ("Succeeded", "Failed"), 30, "the pod to finish")
    assert container_log(cluster, "rbac").split() == ["yes", "no", "no", "pod/rbac", "get-pod-ok",
                                                      "secrets-forbidden"]


@pytest.mark.slow
def host_routes_to(address) -> bool:
    """Whether the host's own namespace has a route to ``address`` (asks the kernel; sends
    nothing)."""
    return subprocess.run(["ip", "route", "get", str(address)], capture_output=True).returncode == 0


def test_a_second_cluster_runs_beside_the_first(cluster):
    other = Cluster(f"{cluster.name}-b")
    recorded = {}
    try:
        other.up()
        assert other.kubeconfig != cluster.kubeconfig
        servers = {other.info()["server"], cluster.info()["server"]}
        assert len(servers) == 2 and all(s.startswith("https://127.0.0.1:") for s in servers)
        ours, theirs = client.CoreV1Api(cluster.api), client.CoreV1Api(other.api)
        assert [n.metadata.name for n in theirs.list_node().items] == [f"{other.name}-node"]
        assert [n.metadata.name for n in ours.list_node().items] == [f"{cluster.name}-node"]
        theirs.create_namespaced_config_map("default", {"metadata": {"name": "only-there"}})
        assert "only-there" not in {m.metadata.name for m in ours.list_namespaced_config_map("default").items}
        apply(other, """
            apiVersion: v1
            kind: Pod
            metadata: {name: there}
            spec:
              restartPolicy: Never
              containers:
              - {name: main, image: segflow/engine, command: [sh, -c, 'echo $SEGFLOW_POD_IP']}
            """)
        wait_for(lambda: pod_status(other, "there")["phase"] == "Succeeded", 30, "the pod")
        ip = ipaddress.ip_address(container_log(other, "there").strip())
        assert ip in pod_network(other) and ip not in pod_network(cluster)
        recorded = other.pids()
        assert set(recorded) == {"etcd", "kube-apiserver", "kube-controller-manager", "node-agent"}
        services = ipaddress.ip_network(other.info()["serviceNetwork"])
        assert not host_routes_to(services[1]), "the host would route a Service address off the machine"
    finally:
        other.down()
    assert host_routes_to(services[1]), "cluster down left its unreachable route behind"
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
                   for pid in recorded.values())
    assert [n.metadata.name for n in ours.list_node().items] == [f"{cluster.name}-node"]   # the first still answers


def test_a_failed_container_reports_its_exit_code_and_log_tail(cluster):
    apply_shell_pod(cluster, "failing", 'echo starting; echo "boom: no such job" >&2; exit 3',
                    {"restartPolicy": "Never"},
                    terminationMessagePolicy="FallbackToLogsOnError")
    failed = wait_for(lambda: (s := pod_status(cluster, "failing"))["phase"] == "Failed" and s, 30, "Failed")
    ended = container(failed)["state"]["terminated"]
    assert ended["exit_code"] == 3 and ended["reason"] == "Error"
    assert ended["message"] == "starting\nboom: no such job"
    # kubectl logs: the API server asks the node agent's kubelet API (certificates both ways)
    assert cluster.kubectl("logs", "failing").stdout == "starting\nboom: no such job\n"
    assert cluster.kubectl("logs", "failing", "--tail", "1", "--limit-bytes", "4").stdout == "boom"
    refused = cluster.kubectl("logs", "failing", "--timestamps", check=False)
    assert refused.returncode != 0 and "timestamps are not supported" in refused.stderr, refused.stderr
    delete_and_wait(cluster, "failing")


def test_kubectl_attach_is_refused_with_the_reason(cluster):
    """The node agent serves exec (tests/k8s/test_exec.py) but not attach: kubectl attach says
    so instead of hanging."""
    apply_shell_pod(cluster, "sleeper", "exec sleep 600", {"terminationGracePeriodSeconds": 1})
    wait_for(lambda: pod_status(cluster, "sleeper")["phase"] == "Running", 30, "Running")
    attached = cluster.kubectl("attach", "sleeper", check=False, timeout=30)
    assert attached.returncode != 0 and "attach is not supported by the segflow node agent" in attached.stderr, \
        attached
    delete_and_wait(cluster, "sleeper")


def test_a_second_up_of_a_cluster_being_started_fails_clearly(cluster):
    with open(os.path.join(cluster.home, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)       # as an up.sh in progress holds it
        with pytest.raises(Exception) as busy:
            cluster._script("up.sh", timeout=120)
    assert "another process is starting or stopping cluster" in str(busy.value)
    assert cluster.pids() and all(psutil.pid_exists(pid) for pid in cluster.pids().values())
