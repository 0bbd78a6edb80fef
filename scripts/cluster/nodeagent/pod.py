"""One pod on this node: its address, credentials, containers and reported status."""
from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
from dataclasses import dataclass, field

from controlplane.pki import write_kubeconfig
from kubernetes.client.rest import ApiException
from sandbox.bundle import Bundle
from sandbox.process import ImageConfigError
from sandbox.runner import Volume, VolumeError

from .container import Container
from .events import Recorder
from .kube import Kube
from . import volumedirs, volumes
from .podspec import ContainerConfigError, Lookup, UnknownImage, command_line, environment, expand, repository
from .sandbox import Sandbox, sandboxed
from .sandboxed import image_command
from .status import now, pod_status

log = logging.getLogger("nodeagent")
PASSED_ENVIRONMENT = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR", "JAVA_HOME")
TOKEN_SECONDS = 7 * 24 * 3600     # not refreshed: long enough for any demo or test
SANDBOX_KUBECONFIG = "/run/secrets/segflow/kubeconfig"      # /var/run links to /run in the images


@dataclass(frozen=True)
class Node:
    """What every pod on the node shares. ``server``, ``api_host`` and ``api_port`` are where
    pods reach the API server: the host's loopback, or in ``netns`` mode the relay at the
    ``kubernetes`` Service's cluster IP."""
    name: str
    server: str
    api_host: str
    api_port: int
    ca: str
    workdir: str            # the images' working directory: the project checkout
    state: str              # per-pod directories (logs, PID files, kubeconfigs)
    host_ip: str = "127.0.0.1"
    # With images (repository -> bundle), pods run from their images (in netns mode only);
    # without, as processes of the project's virtualenv.
    images: dict[str, Bundle] = field(default_factory=dict)

    def base_environment(self) -> dict[str, str]:
        """A container's environment before its own ``env``: the project's virtualenv first
        on PATH, the in-cluster API address, and a marker by which scripts/cluster/down.sh
        recognises pod processes the agent could not stop itself."""
        env = {key: os.environ[key] for key in PASSED_ENVIRONMENT if key in os.environ}
        port = str(self.api_port)
        env.update({"PATH": f"{self.workdir}/.venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "PYTHONUNBUFFERED": "1", "KUBERNETES_SERVICE_HOST": self.api_host,
                    "KUBERNETES_SERVICE_PORT": port, "KUBERNETES_SERVICE_PORT_HTTPS": port,
                    "KUBERNETES_PORT": f"tcp://{self.api_host}:{port}", "SEGFLOW_NODE_STATE": self.state})
        return env


def hostname(body: dict) -> str:
    """A pod's host name: ``spec.hostname``, else its name (as the kubelet sets it)."""
    return body["spec"].get("hostname") or body["metadata"]["name"]


class Pod:
    """A pod's runtime: created when the pod is first seen on this node, dropped once its
    processes are gone and the API object is deleted."""

    def __init__(self, body: dict, ip: str, node: Node, sandbox: Sandbox):
        meta, spec = body["metadata"], body["spec"]
        self.body, self.uid, self.ip, self.node, self.sandbox = body, meta["uid"], ip, node, sandbox
        self.namespace, self.name = meta["namespace"], meta["name"]
        self.directory = os.path.join(node.state, f"{self.namespace}_{self.name}_{self.uid[:8]}")
        os.makedirs(self.directory, exist_ok=True)
        policy = spec.get("restartPolicy") or "Always"
        grace = float(spec.get("terminationGracePeriodSeconds", 30))
        self.containers = [Container(c, self.directory, policy, grace, f"{self.namespace}/{self.name}")
                           for c in spec["containers"]]
        self.policy, self.start_time = policy, now()
        self.failure = self._unrunnable()
        self.kubeconfig = ""
        self.deleting = False
        self.reported = ""
        self.phase = ""
        self.error = ""             # the last API error about this pod, to log each only once
        self.conditions: dict[str, dict] = {}

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _unrunnable(self) -> tuple[str, str] | None:
        """Why the pod can never run here (it then fails at once), or None."""
        if self.body["spec"].get("initContainers"):
            return "InitContainersUnsupported", "the segflow node agent does not run init containers"
        for c in self.containers:
            try:
                command_line(c.spec)
                if self.node.images and repository(c.spec.get("image") or "") not in self.node.images:
                    raise UnknownImage(f"image {c.spec.get('image')!r} was not built by `make images` "
                                       f"(built: {', '.join(sorted(self.node.images))})")
            except UnknownImage as exc:
                c.state.waiting = ("UnknownImage", str(exc))
                return "UnknownImage", str(exc)
        return None

    # ------------------------------------------------------------ lifecycle
    def tick(self, kube: Kube, recorder: Recorder) -> None:
        if not self.deleting and self.failure is None:
            for c in self.containers:
                if c.due():
                    self._start(c, kube)
        for c in self.containers:
            c.tick(self.deleting)
        self.report(kube)
        for c in self.containers:
            for event in c.events:
                recorder.record(kube, self.body, event)
            c.events.clear()

    def delete(self, grace: float) -> None:
        """The pod is being deleted: stop its containers within ``grace`` seconds."""
        if not self.deleting:
            self.deleting = True
            log.info("pod stopping", extra={"fields": {"pod": self.key, "grace": grace}})
        for c in self.containers:
            c.stop(grace)

    @property
    def stopped(self) -> bool:
        return self.deleting and not any(c.running for c in self.containers)

    def kill_now(self) -> None:
        for c in self.containers:
            c.kill_now()

    def _start(self, c: Container, kube: Kube) -> None:
        try:
            command, env, cwd, sandbox = self._from_image(c, kube) if self.node.images else self._local(c, kube)
        except volumes.MountFailed as exc:
            c.mount_failed(str(exc))
            return
        except (ContainerConfigError, ImageConfigError, VolumeError) as exc:
            c.config_error("CreateContainerConfigError", str(exc))
            return
        except ApiException as exc:
            c.config_error("CreateContainerConfigError", f"API error while preparing the container: "
                                                         f"{exc.status} {exc.reason}")
            return
        c.start(command, env, cwd, self.ip, sandbox)

    def _local(self, c: Container, kube: Kube) -> tuple[list[str], dict[str, str], str, Sandbox]:
        """The container as a process of the project's virtualenv, in the checkout, in the
        pod's sandbox (the host's network, or the pod's namespace in ``netns`` mode)."""
        env = self._environment(c, kube)
        command = [expand(part, env) for part in command_line(c.spec)]
        return sandboxed(command, self.sandbox), env, c.spec.get("workingDir") or self.node.workdir, self.sandbox

    def _from_image(self, c: Container, kube: Kube) -> tuple[list[str], dict[str, str], str, Sandbox]:
        """The container from its image, in the pod's network namespace: the image brings
        PATH, HOME and the rest; the node adds the API server's address (its cluster IP,
        relayed) and, unless the pod opts out, its service account's kubeconfig, read-only."""
        port = str(self.node.api_port)
        base = {"HOSTNAME": self.sandbox.hostname, "SEGFLOW_POD_IP": self.ip,
                "KUBERNETES_SERVICE_HOST": self.node.api_host, "KUBERNETES_SERVICE_PORT": port,
                "KUBERNETES_SERVICE_PORT_HTTPS": port}
        mounts = []
        if self.body["spec"].get("automountServiceAccountToken", True):
            kubeconfig = self._credentials(kube)
            os.chmod(kubeconfig, 0o644)          # the image's user reads it; the pods' directory is root's
            mounts.append(Volume(kubeconfig, SANDBOX_KUBECONFIG, read_only=True))
            base["KUBECONFIG"] = SANDBOX_KUBECONFIG
        lookup = functools.partial(kube.data, self.namespace)
        env = environment(self.body, c.spec, self.ip, self.node.host_ip, lookup, base)
        mounts.extend(self._volume_mounts(c, lookup, env))
        bundle = self.node.images[repository(c.spec["image"])]
        command, env, entry = image_command(bundle, self.body, c.spec, env, self.sandbox, self.directory,
                                            tuple(mounts))
        return command, env, "/", dataclasses.replace(self.sandbox, entry=entry)

    def _volume_mounts(self, c: Container, lookup: Lookup, env: dict[str, str]) -> list[Volume]:
        """The pod's volumes written under its directory (owned by its fsGroup) and the
        container's mounts of them."""
        root = os.path.join(self.directory, "volumes")
        fs_group = (self.body["spec"].get("securityContext") or {}).get("fsGroup")
        pod_volumes = volumes.pod_volumes(self.body, lookup)
        for volume in pod_volumes.values():
            volumedirs.materialize(volume, root, fs_group)
        mounts = volumes.container_mounts(c.spec, pod_volumes, env)
        return [Volume(volumedirs.mount_source(m, root), m.target, m.read_only) for m in mounts]

    def _environment(self, c: Container, kube: Kube) -> dict[str, str]:
        base = self.node.base_environment()
        base.update({"HOSTNAME": hostname(self.body), "SEGFLOW_POD_IP": self.ip})
        if self.body["spec"].get("automountServiceAccountToken", True):
            base["KUBECONFIG"] = self._credentials(kube)
        return environment(self.body, c.spec, self.ip, self.node.host_ip,
                           lambda kind, name: kube.data(self.namespace, kind, name), base)

    def _credentials(self, kube: Kube) -> str:
        """A kubeconfig with a token of the pod's service account (TokenRequest API), so
        that clients inside the pod act as that account and RBAC applies to them."""
        if not self.kubeconfig:
            account = self.body["spec"].get("serviceAccountName") or "default"
            token = kube.service_account_token(self.namespace, account, self.name, self.uid, TOKEN_SECONDS)
            self.kubeconfig = write_kubeconfig(os.path.join(self.directory, "kubeconfig"), self.node.server,
                                               self.node.ca, f"system:serviceaccount:{self.namespace}:{account}",
                                               token, namespace=self.namespace, context="in-cluster")
        return self.kubeconfig

    # ---------------------------------------------------------------- status
    def report(self, kube: Kube) -> None:
        """Patch the pod's status when it changed since the last report."""
        status = pod_status(self.policy, [c.state for c in self.containers], self.ip, self.node.host_ip,
                            self.start_time, self.conditions, self.failure)
        text = json.dumps(status, sort_keys=True)
        if text == self.reported:
            return
        try:
            kube.patch_pod_status(self.namespace, self.name, status)
        except ApiException as exc:
            if exc.status != 404:          # 404: deleted meanwhile; the watch tells us
                raise
        self.reported = text
        self.conditions = {c["type"]: c for c in status["conditions"]}
        if status["phase"] != self.phase:
            self.phase = status["phase"]
            log.info("pod phase", extra={"fields": {"pod": self.key, "phase": self.phase, "ip": self.ip,
                                                    **({"reason": self.failure[0]} if self.failure else {})}})
