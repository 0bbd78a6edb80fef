"""The node agent: registers a Node, binds pending pods to it (the scheduler's job) and runs
their containers as local processes (the kubelet's), each pod on its own loopback
address. It polls the API server: the clusters it serves are small."""
from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import logging
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request

from kubernetes import client, config
from kubernetes.client.rest import ApiException
from podspec import (ContainerRun, PodSpecError, entrypoint, environment, expand, pod_status,
                     restarts_after)

log = logging.getLogger("nodeagent")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
VENV_BIN = os.path.join(ROOT, ".venv", "bin")
PASSED_ENVIRONMENT = ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "JAVA_HOME", "SPARK_HOME")
POLL_SECONDS = 0.3
MAX_BACKOFF = 10.0
MAX_GRACE = 10.0


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Container:
    """One container's process, restarts and readiness."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.run = ContainerRun(spec["name"], spec.get("image", ""))
        self.process: subprocess.Popen | None = None
        self.log_path = ""
        self.next_start = 0.0
        self.next_probe = 0.0

    def tail(self, limit: int = 2048) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - limit))
                return f.read().decode(errors="replace").strip()
        except OSError:
            return ""


class Pod:
    def __init__(self, body: dict, ip: str):
        self.body = body
        self.uid = body["metadata"]["uid"]
        self.ip = ip
        self.started = now()
        self.containers = [Container(c) for c in body["spec"]["containers"]]
        self.policy = body["spec"].get("restartPolicy", "Always")
        self.reported = ""
        self.terminating = False

    @property
    def key(self) -> str:
        meta = self.body["metadata"]
        return f"{meta['namespace']}/{meta['name']}"


class NodeAgent:
    def __init__(self, cluster: str, kubeconfig: str, server: str, ca: str, pod_network: str, state: str):
        config.load_kube_config(kubeconfig)
        self.api = client.ApiClient()
        self.core = client.CoreV1Api(self.api)
        self.node = f"{cluster}-node"
        self.server, self.ca, self.state = server, ca, state
        self.free = [str(ip) for ip in list(ipaddress.ip_network(pod_network).hosts())[1:4000]]
        self.pods: dict[str, Pod] = {}
        self.stopping = threading.Event()

    # ------------------------------------------------------------------ node
    def register(self) -> None:
        body = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.node, "labels": {"kubernetes.io/hostname": self.node,
                                                           "kubernetes.io/os": "linux"}}}
        try:
            self.core.create_node(body)
        except ApiException as exc:
            if exc.status != 409:
                raise
        self.heartbeat()

    def heartbeat(self) -> None:
        stamp = now()
        status = {"conditions": [{"type": "Ready", "status": "True", "reason": "NodeAgentReady",
                                  "message": "segflow node agent", "lastHeartbeatTime": stamp,
                                  "lastTransitionTime": stamp}],
                  "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                                {"type": "Hostname", "address": self.node}],
                  "capacity": {"cpu": str(os.cpu_count()), "memory": "16Gi", "pods": "500"},
                  "allocatable": {"cpu": str(os.cpu_count()), "memory": "16Gi", "pods": "500"},
                  "nodeInfo": {"kubeletVersion": "v1.20.2-segflow", "operatingSystem": "linux",
                               "architecture": "amd64", "containerRuntimeVersion": "local://1",
                               "kernelVersion": "", "osImage": "", "kubeProxyVersion": "", "machineID": "",
                               "systemUUID": "", "bootID": ""}}
        self.core.patch_node_status(self.node, {"status": status})

    # ------------------------------------------------------------------ loop
    def run(self) -> None:
        self.register()
        last_heartbeat = time.monotonic()
        while not self.stopping.is_set():
            try:
                self.step()
                if time.monotonic() - last_heartbeat > 10:
                    self.heartbeat()
                    last_heartbeat = time.monotonic()
            except ApiException as exc:
                log.warning("API error: %s %s", exc.status, exc.reason)
            except OSError as exc:
                log.warning("I/O error: %s", exc)
            self.stopping.wait(POLL_SECONDS)
        for pod in list(self.pods.values()):
            self.kill(pod, grace=2.0)
        log.info("node agent stopped")

    def step(self) -> None:
        listed = [self.api.sanitize_for_serialization(p) for p in self.core.list_pod_for_all_namespaces().items]
        seen = set()
        for body in listed:
            meta, spec = body["metadata"], body["spec"]
            if not spec.get("nodeName"):
                self.bind(body)
                continue
            if spec["nodeName"] != self.node:
                continue
            seen.add(meta["uid"])
            pod = self.pods.get(meta["uid"])
            if meta.get("deletionTimestamp"):
                if pod is None:
                    self.forget(body)
                elif not pod.terminating:
                    pod.terminating = True
                    grace = min(float(meta.get("deletionGracePeriodSeconds") or 0), MAX_GRACE)
                    threading.Thread(target=self.terminate, args=(pod, grace), daemon=True).start()
                continue
            if pod is None:
                if (body.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    continue           # ended before this agent started: nothing to run
                pod = self.pods[meta["uid"]] = Pod(body, self.free.pop(0))
            pod.body = body
            self.tend(pod)
        for uid in [u for u in list(self.pods) if u not in seen]:
            self.kill(self.pods[uid], grace=0.0)

    def bind(self, body: dict) -> None:
        meta = body["metadata"]
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": self.node}}
        try:
            self.core.create_namespaced_pod_binding(meta["name"], meta["namespace"], binding,
                                                    _preload_content=False)
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise

    # ------------------------------------------------------------- containers
    def tend(self, pod: Pod) -> None:
        moment = time.monotonic()
        for c in pod.containers:
            if c.process is not None and c.process.poll() is not None:
                self.exited(pod, c)
            if c.process is None and c.run.exit_code is None and moment >= c.next_start:
                self.start(pod, c)
            if c.process is not None and moment >= c.next_probe:
                self.probe(pod, c)
        self.report(pod)

    def exited(self, pod: Pod, c: Container) -> None:
        """The container's main process ended: like a container runtime, end the rest of
        its process group too, then apply the restart policy."""
        try:
            os.killpg(c.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        code = c.process.returncode
        code = 128 - code if code < 0 else code          # killed by signal N -> 128 + N
        policy = c.spec.get("terminationMessagePolicy", "File")
        message = c.tail() if policy == "FallbackToLogsOnError" and code != 0 else ""
        terminated = {"exitCode": code, "reason": "Completed" if code == 0 else "Error", "message": message,
                      "startedAt": c.run.running_since, "finishedAt": now()}
        c.process, c.run.running_since, c.run.ready = None, "", False
        if restarts_after(pod.policy, code):
            c.run.last = terminated
            c.run.restarts += 1
            backoff = min(MAX_BACKOFF, 0.5 * 2 ** min(c.run.restarts - 1, 5))
            c.next_start = time.monotonic() + backoff
            c.run.exit_code = None
            c.run.waiting = ("CrashLoopBackOff", f"back-off {backoff:.1f}s restarting failed container") \
                if code != 0 else ("ContainerCreating", "")
        else:
            c.run.exit_code, c.run.reason, c.run.message = code, terminated["reason"], message
            c.run.started_at, c.run.finished_at = terminated["startedAt"], terminated["finishedAt"]
        log.info("%s container %s exited %s", pod.key, c.run.name, code)

    def start(self, pod: Pod, c: Container) -> None:
        try:
            env = environment(pod.body, c.spec, pod.ip, "127.0.0.1", self.lookup(pod))
            command = [expand(part, env) for part in entrypoint(c.spec)]
        except PodSpecError as exc:
            c.run.waiting = (exc.reason, str(exc))
            c.next_start = time.monotonic() + 2.0
            return
        full_env = {k: os.environ[k] for k in PASSED_ENVIRONMENT if k in os.environ}
        full_env.update({"PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin", "SEGFLOW_POD_IP": pod.ip,
                         "HOSTNAME": pod.body["metadata"]["name"], "PYTHONUNBUFFERED": "1"})
        if pod.body["spec"].get("automountServiceAccountToken", True):
            full_env["KUBECONFIG"] = self.pod_kubeconfig(pod)
        full_env.update(env)
        directory = os.path.join(self.state, f"{pod.body['metadata']['namespace']}_{pod.body['metadata']['name']}"
                                             f"_{pod.uid[:8]}")
        os.makedirs(directory, exist_ok=True)
        c.log_path = os.path.join(directory, f"{c.run.name}.log")
        try:
            with open(c.log_path, "ab") as out:
                c.process = subprocess.Popen(command, env=full_env, cwd=c.spec.get("workingDir") or ROOT,
                                             stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                             start_new_session=True)
        except OSError as exc:
            c.run.waiting = ("RunContainerError", f"cannot run {command[0]!r}: {exc.strerror}")
            c.next_start = time.monotonic() + 2.0
            return
        c.run.waiting, c.run.running_since = None, now()
        probe = c.spec.get("readinessProbe")
        c.run.ready = probe is None
        c.next_probe = time.monotonic() + float((probe or {}).get("initialDelaySeconds", 0))
        log.info("%s container %s started: pid %s on %s", pod.key, c.run.name, c.process.pid, pod.ip)

    def probe(self, pod: Pod, c: Container) -> None:
        probe = c.spec.get("readinessProbe")
        if probe is None:
            return
        c.next_probe = time.monotonic() + float(probe.get("periodSeconds", 10))
        c.run.ready = self.check(pod, c, probe)

    def check(self, pod: Pod, c: Container, probe: dict) -> bool:
        timeout = float(probe.get("timeoutSeconds", 1))
        ports = {p.get("name"): p["containerPort"] for p in c.spec.get("ports") or []}
        try:
            if "tcpSocket" in probe:
                port = probe["tcpSocket"]["port"]
                with socket.create_connection((pod.ip, int(ports.get(port, port))), timeout=timeout):
                    return True
            if "httpGet" in probe:
                get = probe["httpGet"]
                port = int(ports.get(get["port"], get["port"]))
                with urllib.request.urlopen(f"http://{pod.ip}:{port}{get.get('path', '/')}", timeout=timeout) as r:
                    return 200 <= r.status < 400
            if "exec" in probe:
                return subprocess.run(probe["exec"]["command"], cwd=ROOT, timeout=timeout,
                                      capture_output=True).returncode == 0
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return False
        return False

    def lookup(self, pod: Pod):
        namespace = pod.body["metadata"]["namespace"]

        def read(kind: str, name: str, key: str) -> str | None:
            try:
                obj = (self.core.read_namespaced_config_map if kind == "configmap"
                       else self.core.read_namespaced_secret)(name, namespace)
            except ApiException as exc:
                if exc.status == 404:
                    return None
                raise
            return (obj.data or {}).get(key)
        return read

    def pod_kubeconfig(self, pod: Pod) -> str:
        """The pod's service account, as a kubeconfig: clients inside it authenticate as
        that account, so RBAC applies to them as on a real node."""
        meta = pod.body["metadata"]
        account = pod.body["spec"].get("serviceAccountName") or "default"
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"expirationSeconds": 86400,
                            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": meta["name"],
                                               "uid": meta["uid"]}}}
        reply = self.core.create_namespaced_service_account_token(account, meta["namespace"], request,
                                                                  _preload_content=False)
        token = json.loads(reply.data)["status"]["token"]
        with open(self.ca, "rb") as f:
            ca = base64.b64encode(f.read()).decode()
        path = os.path.join(self.state, f"{meta['namespace']}_{meta['name']}_{pod.uid[:8]}.kubeconfig")
        with open(path, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "pod",
                       "clusters": [{"name": "cluster", "cluster": {"server": self.server,
                                                                    "certificate-authority-data": ca}}],
                       "users": [{"name": account, "user": {"token": token}}],
                       "contexts": [{"name": "pod", "context": {"cluster": "cluster", "user": account,
                                                                "namespace": meta["namespace"]}}]}, f)
        os.chmod(path, 0o600)
        return path

    # ------------------------------------------------------------------ status
    def report(self, pod: Pod) -> None:
        runs = [c.run for c in pod.containers]
        status = pod_status(pod.policy, runs, pod.ip, "127.0.0.1", pod.started, now())
        comparable = json.dumps({**status, "conditions": [(c["type"], c["status"]) for c in status["conditions"]]},
                                sort_keys=True)
        if comparable == pod.reported:
            return
        meta = pod.body["metadata"]
        try:
            self.core.patch_namespaced_pod_status(meta["name"], meta["namespace"], {"status": status})
            pod.reported = comparable
        except ApiException as exc:
            if exc.status != 404:
                raise

    # ------------------------------------------------------------------ ending
    def terminate(self, pod: Pod, grace: float) -> None:
        self.kill(pod, grace)
        meta = pod.body["metadata"]
        try:
            self.core.delete_namespaced_pod(meta["name"], meta["namespace"], grace_period_seconds=0,
                                            body=client.V1DeleteOptions(grace_period_seconds=0,
                                                                        preconditions={"uid": pod.uid}))
        except ApiException as exc:
            if exc.status not in (404, 409):
                log.warning("could not delete %s: %s", pod.key, exc.reason)

    def forget(self, body: dict) -> None:
        meta = body["metadata"]
        try:
            self.core.delete_namespaced_pod(meta["name"], meta["namespace"], grace_period_seconds=0)
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise

    def kill(self, pod: Pod, grace: float) -> None:
        """SIGTERM each container's process group, SIGKILL what is left after ``grace``."""
        processes = [c.process for c in pod.containers if c.process is not None]
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGTERM if grace > 0 else signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        for process in processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        if self.pods.pop(pod.uid, None) is not None:
            self.free.append(pod.ip)
        log.info("%s stopped", pod.key)
