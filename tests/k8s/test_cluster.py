"""The local control plane and its node agent: pods really run, restart, get their own
address and environment, are ready when their probe says so, and die when deleted."""
import os
import signal
import textwrap

import psutil
import pytest
from conftest import Cluster, wait_for


def apply(cluster, manifest: str):
    cluster.kubectl("apply", "-f", "-", input=textwrap.dedent(manifest))


def pod(cluster, name):
    return cluster.get("pod", name)


def pid_of(cluster, name):
    """The PID of the pod's container process (its command line names the pod's marker)."""
    for p in psutil.process_iter(["cmdline"]):
        if p.info["cmdline"] and f"marker={name}" in " ".join(p.info["cmdline"]):
            return p.pid
    return None


def test_a_pod_runs_with_its_address_and_resolved_environment(cluster, tmp_path):
    cluster.kubectl("create", "configmap", "settings", "--from-literal=color=blue")
    out = tmp_path / "env.txt"
    apply(cluster, f"""
        apiVersion: v1
        kind: Pod
        metadata: {{name: envpod, labels: {{tier: demo}}}}
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: segflow/engine:0.1.0
            command: [sh, -c, 'echo "$POD_IP $NAME $TIER $COLOR $(NAME)" > {out}']
            env:
            - {{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}
            - {{name: NAME, valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}}}
            - {{name: TIER, valueFrom: {{fieldRef: {{fieldPath: "metadata.labels['tier']"}}}}}}
            - {{name: COLOR, valueFrom: {{configMapKeyRef: {{name: settings, key: color}}}}}}
        """)
    body = wait_for(lambda: (p := pod(cluster, "envpod"))["status"].get("phase") == "Succeeded" and p,
                    30, "the pod to succeed")
    ip = body["status"]["podIP"]
    assert ip.startswith("127.") and ip != "127.0.0.1"
    assert out.read_text().split() == [ip, "envpod", "demo", "blue", "envpod"]


def test_a_killed_container_restarts_and_a_deleted_pod_stops_its_process(cluster):
    apply(cluster, """
        apiVersion: v1
        kind: Pod
        metadata: {name: sleeper}
        spec:
          restartPolicy: Always
          containers:
          - name: main
            image: segflow/engine:0.1.0
            command: [python3, -c, "import time; time.sleep(300)", "marker=sleeper"]
        """)
    first = wait_for(lambda: pid_of(cluster, "sleeper"), 30, "the container process")
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: pod(cluster, "sleeper")["status"]["containerStatuses"][0]["restartCount"] == 1, 30,
             "a restart")
    status = pod(cluster, "sleeper")["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 137
    second = wait_for(lambda: (p := pid_of(cluster, "sleeper")) != first and p, 30, "the new process")
    cluster.kubectl("delete", "pod", "sleeper", "--wait=true", timeout=60)
    assert not psutil.pid_exists(second) or psutil.Process(second).status() == psutil.STATUS_ZOMBIE
    assert cluster.kubectl("get", "pod", "sleeper", check=False).returncode != 0


def test_readiness_follows_the_probe(cluster, tmp_path):
    flag = tmp_path / "open"
    apply(cluster, f"""
        apiVersion: v1
        kind: Pod
        metadata: {{name: prober}}
        spec:
          containers:
          - name: main
            image: segflow/engine:0.1.0
            command: [sh, -c, 'while [ ! -e {flag} ]; do sleep 0.2; done; exec python3 -m http.server 8099 --bind $POD_IP']
            env: [{{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}]
            readinessProbe: {{tcpSocket: {{port: 8099}}, periodSeconds: 1}}
        """)
    wait_for(lambda: pod(cluster, "prober")["status"].get("phase") == "Running", 30, "running")
    ready = [c for c in pod(cluster, "prober")["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["status"] == "False"
    flag.write_text("")
    wait_for(lambda: [c for c in pod(cluster, "prober")["status"]["conditions"]
                      if c["type"] == "Ready"][0]["status"] == "True", 30, "ready")
    cluster.kubectl("delete", "pod", "prober", "--wait=true")


def test_an_unknown_image_is_reported_not_run(cluster):
    apply(cluster, """
        apiVersion: v1
        kind: Pod
        metadata: {name: stranger}
        spec:
          containers: [{name: main, image: nginx:1.25}]
        """)
    waiting = wait_for(lambda: (pod(cluster, "stranger")["status"].get("containerStatuses") or [{}])[0]
                       .get("state", {}).get("waiting", {}).get("reason") == "ErrImagePull"
                       and pod(cluster, "stranger")["status"]["containerStatuses"][0]["state"]["waiting"],
                       30, "the image error")
    assert "nginx:1.25" in waiting["message"] and "unknown to the node agent" in waiting["message"]
    assert pod(cluster, "stranger")["status"]["phase"] == "Pending"
    cluster.kubectl("delete", "pod", "stranger", "--wait=true")


def test_pods_act_as_their_service_account_under_rbac(cluster, tmp_path):
    out = tmp_path / "can.txt"
    cluster.kubectl("create", "serviceaccount", "reader")
    cluster.kubectl("create", "role", "pod-reader", "--verb=list", "--resource=pods")
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
            image: segflow/engine:0.1.0
            command: [sh, -c, 'kubectl auth can-i list pods > {out}; kubectl auth can-i delete pods >> {out}; true']
        """)
    wait_for(lambda: pod(cluster, "rbac")["status"].get("phase") == "Succeeded", 30, "the pod to finish")
    assert out.read_text().split() == ["yes", "no"]


@pytest.mark.slow
def test_a_second_cluster_runs_beside_the_first(cluster):
    other = Cluster("pytest-b")
    try:
        other.up()
        nodes = {n["metadata"]["name"] for n in other.get("nodes")["items"]}
        assert nodes == {"pytest-b-node"}
        assert {n["metadata"]["name"] for n in cluster.get("nodes")["items"]} == {"pytest-node"}
        assert other.kubeconfig != cluster.kubeconfig
    finally:
        other.down()
