"""Pods from images on the local cluster (``up.sh --images``): the node agent runs each
pod's containers from their image's bundle in a network namespace of the pod's own, with a
pod IP on the bridge inside the node's namespace (nodeagent/podnetwork.py, the network of
netns mode); probes reach the pod IP; a pod reaches another by its pod IP and by a ClusterIP Service's
name; a container that
cannot start crash-loops as under a kubelet; every namespace goes with its pod and the
cluster; and the chart's operator runs a StreamJob from the engine image."""
import glob
import ipaddress
import json
import os
import subprocess
import sys

import pytest

from nexmark.oracle import nexmark_lines
from support.clusters import TEST_CLUSTER, Cluster, ensure_built, installed_operator, wait_for
from support.containers import BUILD_TIMEOUT, build_images
from support.podfiles import innermost
from support.processes import ROOT

NAME = f"{TEST_CLUSTER}-pods"
EVENTS = 2000


def _namespaces() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(f"{NAME}-")]


# A cluster, so in the kubernetes group (tests/support/worker_groups.py), not the images
# group: the images come through make images' cache and its lock, which on a fresh machine
# may mean waiting for the images group's build.
pytestmark = pytest.mark.timeout(BUILD_TIMEOUT + 600)


@pytest.fixture(scope="module")
def sandbox_cluster(tmp_path_factory):
    manifest = str(tmp_path_factory.mktemp("cluster-images") / "manifest.json")
    build_images(manifest)
    ensure_built()
    cluster = Cluster(NAME)
    try:
        cluster.up("--images", manifest)
        yield cluster
    finally:
        cluster.down()
    assert _namespaces() == [], "the node's and pods' namespaces go with the cluster"


# A second of cleaning up after SIGTERM: ended early, the container would not print.
GRACEFUL = """
import signal, sys, time
def stop(*_):
    time.sleep(1)
    print("stopped cleanly", flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
time.sleep(600)
"""


def _pod(name: str, command: list[str], restart: str = "Always", probe: dict | None = None) -> dict:
    container = {"name": "main", "image": "segflow/engine:0.1.0", "command": command,
                 "terminationMessagePolicy": "FallbackToLogsOnError"}
    if probe:
        container["readinessProbe"] = probe
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": name}},
            "spec": {"restartPolicy": restart, "containers": [container]}}


def _service(name: str, app: str) -> dict:
    """A ClusterIP Service on port 80 for the pods labelled ``app``, at their port 8080."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"app": app}, "ports": [{"port": 80, "targetPort": 8080}]}}


def _log(cluster: Cluster, pod: dict) -> str:
    meta = pod["metadata"]
    directory = os.path.join(cluster.pods_dir(), f"{meta['namespace']}_{meta['name']}_{meta['uid'][:8]}")
    with open(os.path.join(directory, "main.log")) as f:
        return f.read()


def test_pods_run_from_images_with_pod_ips_on_the_nodes_bridge(sandbox_cluster):
    cluster = sandbox_cluster
    network = ipaddress.ip_network(cluster.info()["podNetwork"])
    cluster.kubectl("apply", "-f", "-", input=json.dumps(_pod(
        "server", ["python3", "-m", "http.server", "8080"],
        probe={"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 1})))
    server = wait_for(lambda: (p := cluster.get("pod", "server")) and any(
        c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])) and p,
        60, "the server pod to be Ready by its probe at its pod IP")
    server_ip = server["status"]["podIP"]
    assert ipaddress.ip_address(server_ip) in network
    host_addresses = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout
    assert f" {server_ip}/" not in host_addresses

    cluster.kubectl("apply", "-f", "-", input=json.dumps(_service("web", "server")))
    wait_for(lambda: [e for e in cluster.get("endpoints")["items"]
                      if e["metadata"]["name"] == "web" and (e.get("subsets") or [{}])[0].get("addresses")], 30,
             "the web Service's endpoint (the ready server pod)")
    cluster.kubectl("apply", "-f", "-", input=json.dumps(_pod(
        "client", ["python3", "-c", "import socket, sys, urllib.request; print(socket.gethostname()); "
                   "print(socket.gethostbyname('web')); "
                   "print(urllib.request.urlopen('http://web/', timeout=10).read().decode()); "
                   "print(urllib.request.urlopen(f'http://{sys.argv[1]}:8080/', timeout=10).read().decode())",
                   server_ip], restart="Never")))
    client = wait_for(lambda: (p := cluster.get("pod", "client"))["status"].get("phase") in ("Succeeded", "Failed")
                      and p, 60, "the client pod to end")
    log = _log(cluster, client)
    assert client["status"]["phase"] == "Succeeded", log
    web = cluster.get("service", "web")["spec"]["clusterIP"]
    assert log.startswith(f"client\n{web}\n"), "the Service name resolves to its cluster IP in the pod"
    listings = log.count("<title>Directory listing for /</title>")
    assert listings == 2, "by Service name (DNAT to the pod IP) and by pod IP"
    assert "examples/" in log and "services/" not in log, "/app of the image, not the checkout"

    cluster.kubectl("apply", "-f", "-", input=json.dumps(_pod("broken", ["python3", "/app/missing.py"])))
    broken = wait_for(lambda: (p := cluster.get("pod", "broken"))["status"].get("containerStatuses") and
                      p["status"]["containerStatuses"][0].get("lastState", {}).get("terminated") and p,
                      60, "the broken pod to have crashed once")
    status = broken["status"]["containerStatuses"][0]
    last = status["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (2, "Error")
    assert "can't open file '/app/missing.py'" in last["message"], "FallbackToLogsOnError: the log's end"
    assert "can't open file '/app/missing.py'" in _log(cluster, broken)
    looping = wait_for(lambda: (c := cluster.get("pod", "broken")["status"]["containerStatuses"][0])["state"]
                       .get("waiting", {}).get("reason") == "CrashLoopBackOff" and c["restartCount"] >= 2 and c,
                       30, "CrashLoopBackOff after two restarts")
    assert looping["state"]["waiting"]["message"].startswith("back-off ")
    events = wait_for(lambda: (e := {ev["reason"]: ev for ev in cluster.get(
        "events", "--field-selector", "involvedObject.name=broken")["items"]}).get("BackOff") and e,
        30, "the kubelet's BackOff event")
    assert events["BackOff"]["type"] == "Warning" and events["BackOff"]["count"] >= 2
    assert events["BackOff"]["message"] == "Back-off restarting failed container"
    assert events["BackOff"]["involvedObject"]["fieldPath"] == "spec.containers{main}"
    assert events["Started"]["count"] >= 3 and events["Started"]["source"]["component"] == "kubelet"
    # kubectl logs, proxied by the API server to the node agent's kubelet API: one run each
    crashed = "python3: can't open file '/app/missing.py': [Errno 2] No such file or directory\n"
    assert cluster.kubectl("logs", "broken", "--previous").stdout == crashed
    assert cluster.kubectl("logs", "broken", "-c", "main", "--tail", "1").stdout == crashed

    cluster.kubectl("apply", "-f", "-", input=json.dumps(_pod("graceful", ["python3", "-c", GRACEFUL])))
    graceful = wait_for(lambda: (p := cluster.get("pod", "graceful"))["status"].get("phase") == "Running" and p,
                        60, "the graceful pod to run")
    wait_for(lambda: "ready" in _log(cluster, graceful), 30, "its SIGTERM handler")
    assert cluster.kubectl("logs", "graceful").stdout == "ready\n"
    no_previous = cluster.kubectl("logs", "graceful", "--previous", check=False)
    assert no_previous.returncode != 0 and "previous terminated container not found" in no_previous.stderr
    assert len(_namespaces()) == 5, "the node's and one per pod"
    cluster.kubectl("delete", "service", "web")
    cluster.kubectl("delete", "pod", "server", "client", "broken", "graceful", "--wait=true", timeout=120)
    assert "stopped cleanly" in _log(cluster, graceful), "SIGTERM went to the container's pid 1, not around it"
    wait_for(lambda: _namespaces() == [f"{NAME}-node"], 30, "the pods' namespaces to go")


def test_exec_probes_run_inside_the_container(sandbox_cluster):
    """An exec readiness probe sees the container's own files (Ready once it wrote
    /tmp/ready, in its layer) as its user; a failing exec liveness probe restarts it."""
    cluster = sandbox_cluster
    ready_when_written = {"exec": {"command": ["sh", "-c", 'test -e /tmp/ready && [ "$(id -u)" = 10001 ]']},
                          "periodSeconds": 1, "timeoutSeconds": 5}      # 1 s by default: short on a loaded machine
    pod = _pod("probed", ["sh", "-c", "sleep 2; touch /tmp/ready; exec sleep 600"], probe=ready_when_written)
    pod["spec"]["containers"][0]["livenessProbe"] = {"exec": {"command": ["test", "!", "-e", "/tmp/ready"]},
                                                     "initialDelaySeconds": 4, "periodSeconds": 1,
                                                     "timeoutSeconds": 5, "failureThreshold": 2}
    pod["spec"]["terminationGracePeriodSeconds"] = 1
    cluster.kubectl("apply", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: any(c["type"] == "Ready" and c["status"] == "True"
                         for c in cluster.get("pod", "probed")["status"].get("conditions", [])),
             60, "the probed pod to be Ready by its exec probe")
    restarted = wait_for(lambda: (c := cluster.get("pod", "probed")["status"]["containerStatuses"][0])
                         ["restartCount"] >= 1 and c, 60, "the failing exec liveness probe to restart it")
    assert restarted["lastState"]["terminated"]["exitCode"] == 143, "SIGTERMed when its liveness probe failed (the " \
        "container's process is not its pid namespace's init here: sleep has no handler and ends at once)"
    cluster.kubectl("delete", "pod", "probed", "--wait=true", timeout=120)


# Reads what the kubelet would have mounted, as the image's user, and says what it found.
READ_VOLUMES = """
import json, os
def write(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return "written"
    except OSError as exc:
        return exc.strerror
while not os.path.exists("/shared/from-writer"):
    pass
print(json.dumps({
    "ids": [os.getuid(), os.getgid()], "groups": os.getgroups(), "shared": open("/shared/from-writer").read(),
    "shared_gid": os.stat("/shared").st_gid, "app": open("/etc/app.yaml").read(),
    "token": open("/var/run/creds/token").read(), "token_mode": oct(os.stat("/var/run/creds/token").st_mode & 0o777),
    "name": open("/podinfo/name").read(), "labels": open("/podinfo/labels").read(),
    "projected": sorted(os.listdir("/projected")), "config": write("/config/x"),
    "scratch_ro": write("/scratch-ro/x"), "tmp": write("/tmp/x")}))
"""


def test_volumes_are_mounted_as_a_kubelet_mounts_them(sandbox_cluster):
    """A pod with every supported kind of volume: a second container writes the emptyDir
    the first reads, config map keys and secret items appear at their mount paths (subPath,
    a mount under the image's /var/run link), read-only but for the emptyDir, owned by the
    pod's fsGroup, which the image's user (10001) is a member of; a 0400 secret is readable
    through it."""
    cluster = sandbox_cluster
    cluster.kubectl("create", "configmap", "settings", "--from-literal=app.yaml=a: 1")
    cluster.kubectl("create", "secret", "generic", "creds", "--from-literal=token=s3cret")
    engine = {"image": "segflow/engine:0.1.0"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "volumes", "namespace": "default",
                                                           "labels": {"app": "volumes"}},
           "spec": {"restartPolicy": "Never", "securityContext": {"fsGroup": 4242},
                    "volumes": [{"name": "shared", "emptyDir": {"medium": "Memory"}},
                                {"name": "config", "configMap": {"name": "settings"}},
                                {"name": "creds", "secret": {"secretName": "creds", "defaultMode": 0o400}},
                                {"name": "podinfo", "downwardAPI": {"items": [
                                    {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
                                    {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                                {"name": "projected", "projected": {"sources": [
                                    {"configMap": {"name": "settings"}}, {"secret": {"name": "creds"}}]}}],
                    "containers": [
                        {**engine, "name": "main", "command": ["python3", "-c", READ_VOLUMES],
                         "volumeMounts": [{"name": "shared", "mountPath": "/shared"},
                                          {"name": "shared", "mountPath": "/scratch-ro", "readOnly": True},
                                          {"name": "config", "mountPath": "/config"},
                                          {"name": "config", "mountPath": "/etc/app.yaml", "subPath": "app.yaml"},
                                          {"name": "creds", "mountPath": "/var/run/creds"},
                                          {"name": "podinfo", "mountPath": "/podinfo"},
                                          {"name": "projected", "mountPath": "/projected"}]},
                        {**engine, "name": "writer", "command": ["sh", "-c", "echo hello > /out/from-writer"],
                         "volumeMounts": [{"name": "shared", "mountPath": "/out"}]}]}}
    cluster.kubectl("apply", "-f", "-", input=json.dumps(pod))
    ended = wait_for(lambda: (p := cluster.get("pod", "volumes"))["status"].get("phase") in ("Succeeded", "Failed")
                     and p, 90, "the volumes pod to end")
    log = _log(cluster, ended)
    assert ended["status"]["phase"] == "Succeeded", (log, ended["status"])
    seen = json.loads(log)
    assert seen == {"ids": [10001, 10001], "groups": [4242], "shared": "hello\n", "shared_gid": 4242, "app": "a: 1",
                    "token": "s3cret", "token_mode": "0o440", "name": "volumes", "labels": 'app="volumes"',
                    "projected": ["app.yaml", "token"], "config": "Read-only file system",
                    "scratch_ro": "Read-only file system", "tmp": "written"}
    cluster.kubectl("delete", "pod", "volumes", "--wait=true", timeout=120)
    cluster.kubectl("delete", "configmap", "settings")
    cluster.kubectl("delete", "secret", "creds")


def test_host_path_volumes_are_the_nodes_files_and_a_missing_directory_fails_the_mount(sandbox_cluster, tmp_path):
    """hostPath volumes of an image pod: a directory of the node the container writes into
    (read-only at a second mount, a subPath made on first use), a file made empty by
    FileOrCreate; a Directory that is not there leaves the pod Pending in ContainerCreating
    with the kubelet's FailedMount event, and it starts once the directory exists."""
    cluster = sandbox_cluster
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)                    # the image's user (10001) writes to the node's directory
    (shared / "from-node").write_text("node says hi")
    script = ("import json, os\n"
              "open('/data/from-pod', 'w').write('pod says hi')\n"
              "try:\n    open('/data-ro/x', 'w')\nexcept OSError as e:\n    ro = e.strerror\n"
              "print(json.dumps({'node': open('/data/from-node').read(), 'ro': ro,\n"
              "                  'sub': os.path.isdir('/sub'), 'made': os.path.getsize('/made')}))\n")
    host = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hostpath", "namespace": "default"},
            "spec": {"restartPolicy": "Never",
                     "volumes": [{"name": "data", "hostPath": {"path": str(shared), "type": "Directory"}},
                                 {"name": "made",
                                  "hostPath": {"path": str(tmp_path / "made"), "type": "FileOrCreate"}}],
                     "containers": [{"name": "main", "image": "segflow/engine:0.1.0",
                                     "command": ["python3", "-c", script],
                                     "volumeMounts": [{"name": "data", "mountPath": "/data"},
                                                      {"name": "data", "mountPath": "/data-ro", "readOnly": True},
                                                      {"name": "data", "mountPath": "/sub", "subPath": "new/dir"},
                                                      {"name": "made", "mountPath": "/made"}]}]}}
    cluster.kubectl("apply", "-f", "-", input=json.dumps(host))
    ended = wait_for(lambda: (p := cluster.get("pod", "hostpath"))["status"].get("phase") in ("Succeeded", "Failed")
                     and p, 90, "the hostPath pod to end")
    log = _log(cluster, ended)
    assert ended["status"]["phase"] == "Succeeded", (log, ended["status"])
    assert json.loads(log) == {"node": "node says hi", "ro": "Read-only file system", "sub": True, "made": 0}
    assert (shared / "from-pod").read_text() == "pod says hi" and (shared / "new" / "dir").is_dir()
    assert (tmp_path / "made").is_file()
    cluster.kubectl("delete", "pod", "hostpath", "--wait=true", timeout=120)

    absent = tmp_path / "absent"
    host["metadata"]["name"] = "nodir"
    host["spec"]["volumes"] = [{"name": "data", "hostPath": {"path": str(absent), "type": "Directory"}}]
    host["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    host["spec"]["containers"][0]["command"] = ["sh", "-c", "ls /data"]
    cluster.kubectl("apply", "-f", "-", input=json.dumps(host))
    events = wait_for(lambda: [e for e in cluster.get("events", "--field-selector",
                                                      "involvedObject.name=nodir")["items"]
                               if e["reason"] == "FailedMount"], 60, "the FailedMount event")
    assert events[0]["type"] == "Warning" and events[0]["involvedObject"].get("fieldPath", "") == ""
    assert events[0]["message"] == (f"MountVolume.SetUp failed for volume 'data' : hostPath type check failed: "
                                    f"{absent} is not a directory"), events[0]
    status = cluster.get("pod", "nodir")["status"]
    assert status["phase"] == "Pending", status
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}, status
    assert not absent.exists(), "a Directory hostPath is never made by the node"
    absent.mkdir()                         # the admin makes it: the next try mounts it
    ended = wait_for(lambda: (p := cluster.get("pod", "nodir"))["status"].get("phase") in ("Succeeded", "Failed")
                     and p, 60, "the pod to start once its directory exists")
    assert ended["status"]["phase"] == "Succeeded", ended["status"]
    cluster.kubectl("delete", "pod", "nodir", "--wait=true", timeout=120)


def test_the_operator_from_its_chart_runs_a_streamjob_from_the_engine_image(sandbox_cluster):
    """helm install of the chart: the operator runs from its image (Ready by its probes at
    its pod IP) and deploys a StreamJob whose coordinator and workers run from the engine
    image; the job's output, written to the workers' emptyDir at /tmp, equals the DuckDB
    oracle's. A job told to write where the image's user may not fails, and says why."""
    cluster = sandbox_cluster
    network = ipaddress.ip_network(cluster.info()["podNetwork"])
    with installed_operator(cluster, "jobs"):
        [operator] = cluster.get("pods", "-n", "segflow-system")["items"]
        assert ipaddress.ip_address(operator["status"]["podIP"]) in network
        job = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob",
               "metadata": {"name": "q0", "namespace": "jobs"},
               "spec": {"image": "segflow/engine:0.1.0", "parallelism": 2, "checkpointing": {"protocol": "none"},
                        "job": {"module": "examples.nexmark_q0",
                                "parameters": {"output": "/tmp/q0-out", "events": str(EVENTS)}}}}
        cluster.kubectl("apply", "-f", "-", input=json.dumps(job))
        status = wait_for(lambda: (s := cluster.get("sj", "q0", "-n", "jobs").get("status") or {})
                          .get("phase") in ("Completed", "Failed") and s, 120, "the StreamJob to finish")
        assert status["phase"] == "Completed", status
        assert ipaddress.ip_address(status["coordinatorIP"]) in network
        # The pods' directories, not the API's pods: the operator deletes a worker pod that
        # ended before the coordinator reported the job's end (steady.workers), which a
        # loaded machine sees; the node agent keeps a deleted pod's directory.
        workers = glob.glob(os.path.join(cluster.pods_dir(), "jobs_q0-1-worker-*"))
        lines = []
        for pod in workers:
            output = os.path.join(pod, "volumes", "kubernetes.io~empty-dir", "tmp", "q0-out")  # its emptyDir at /tmp
            for part in os.listdir(output):
                with open(os.path.join(output, part)) as f:
                    lines += f.read().splitlines()
        assert len(workers) == 2 and sorted(lines) == sorted(nexmark_lines("q0", EVENTS))

        # /app is root's in the image: its user (10001) cannot write the output there.
        job["metadata"]["name"], job["spec"]["job"]["parameters"]["output"] = "unwritable", "/app/out"
        cluster.kubectl("apply", "-f", "-", input=json.dumps(job))
        status = wait_for(lambda: (s := cluster.get("sj", "unwritable", "-n", "jobs").get("status") or {})
                          .get("phase") in ("Completed", "Failed") and s, 120, "the unwritable StreamJob to end")
        assert status["phase"] == "Failed"
        assert "PermissionError: [Errno 13] Permission denied: '/app/out'" in status["message"], status
        # A job module the image lacks: the coordinator (restartPolicy Never: the operator
        # decides) fails, and the status names its pod, exit code and log's end.
        job["metadata"]["name"], job["spec"]["job"]["module"] = "missing", "examples.not_in_the_image"
        cluster.kubectl("apply", "-f", "-", input=json.dumps(job))
        status = wait_for(lambda: (s := cluster.get("sj", "missing", "-n", "jobs").get("status") or {})
                          .get("phase") in ("Completed", "Failed") and s, 120, "the missing-module StreamJob to end")
        assert status["message"].startswith("pod missing-1-coordinator exited with code 1: "), status["message"]
        assert "job module 'examples.not_in_the_image' not found" in status["message"], status["message"]

        # Pods that cannot start (a podTemplate's secret volume whose secret does not exist):
        # their containers wait in CreateContainerConfigError, and the status says which pod and why.
        job["metadata"]["name"], job["spec"]["job"]["module"] = "nosecret", "examples.nexmark_q0"
        job["spec"]["podTemplate"] = {"volumes": [{"name": "creds", "secret": {"secretName": "absent"}}],
                                      "volumeMounts": [{"name": "creds", "mountPath": "/creds"}]}
        cluster.kubectl("apply", "-f", "-", input=json.dumps(job))
        status = wait_for(lambda: (s := cluster.get("sj", "nosecret", "-n", "jobs").get("status") or {})
                          .get("message", "").startswith("pod nosecret-1-coordinator: CreateContainerConfigError")
                          and s, 120, "the StreamJob's status to name its pod that cannot start")
        assert "secret 'absent' not found" in status["message"] and status["phase"] == "Deploying", status
        assert status["lastError"] == status["message"]
        events = cluster.get("events", "-n", "jobs", "--field-selector", "involvedObject.name=nosecret")["items"]
        assert any(e["reason"] == "PodFailing" and e["type"] == "Warning" for e in events), events
        cluster.kubectl("delete", "sj", "nosecret", "-n", "jobs", "--wait=true", timeout=120)


def test_a_job_pod_sees_only_its_image_and_finds_the_coordinator_by_its_service_at_a_pod_ip(sandbox_cluster):
    """While a StreamJob runs, one of its worker containers, seen through its own root and
    environment: the image's filesystem (its /app, its Python), none of the host's (no
    checkout, no virtualenv); the coordinator's headless Service name resolves in the pod
    to the coordinator's pod IP, which is where the worker was told to reach it, in the
    cluster's pod network and not a loopback address."""
    cluster = sandbox_cluster
    network = ipaddress.ip_network(cluster.info()["podNetwork"])
    with installed_operator(cluster, "isolated"):
        job = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob",
               "metadata": {"name": "slow", "namespace": "isolated"},
               "spec": {"image": "segflow/engine:0.1.0", "parallelism": 1, "checkpointing": {"protocol": "none"},
                        "job": {"module": "examples.nexmark_q0",
                                "parameters": {"output": "/tmp/out", "events": "100000", "rate": "1000"}}}}
        cluster.kubectl("apply", "-f", "-", input=json.dumps(job))
        worker = wait_for(lambda: next((p["metadata"]["name"] for p in cluster.get("pods", "-n", "isolated")["items"]
                                        if "worker" in p["metadata"]["name"] and
                                        p["status"].get("phase") == "Running"), None), 120, "a running worker pod")
        pid = wait_for(lambda: innermost(cluster, worker, "worker", "isolated"), 30, "the worker's process")
        root = f"/proc/{pid}/root"
        assert os.readlink(root) != "/", "the worker runs in a root of its own"
        assert os.path.isdir(f"{root}/app/examples"), "the engine image's /app"
        for host_path in (ROOT, os.path.join(ROOT, ".venv"), sys.prefix):
            assert not os.path.exists(root + host_path), f"{host_path} of the host is visible in the pod"
        with open(f"/proc/{pid}/cmdline") as f:
            argv = f.read().split("\0")
        coordinator = argv[argv.index("--coordinator") + 1].rsplit(":", 1)[0]
        assert ipaddress.ip_address(coordinator) in network and not ipaddress.ip_address(coordinator).is_loopback
        with open(f"{root}/etc/hosts") as f:
            names = {name: line.split()[0] for line in f if not line.startswith("#") for name in line.split()[1:]}
        assert names["slow-coordinator"] == coordinator, "the Service name resolves to the coordinator's pod IP"
        assert names["slow-coordinator.isolated.svc.cluster.local"] == coordinator
        cluster.kubectl("delete", "sj", "slow", "-n", "isolated", "--wait=true", timeout=120)
