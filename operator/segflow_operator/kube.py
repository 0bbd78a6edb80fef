"""The Kubernetes API calls the operator makes, with the errors it expects handled in one
place: a create that finds the object already there, a delete that finds it gone."""
from __future__ import annotations

import logging
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

from segflow.redaction import redact

from . import GROUP, PLURAL, VERSION
from .manifests import JOB_LABEL
from .reconcile.times import rfc3339

log = logging.getLogger("segflow.operator")


def load_configuration() -> None:
    """In a pod: its service account (or the KUBECONFIG the environment names)."""
    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()


def _gone(delete, name: str, namespace: str) -> None:
    """Delete, or find it already gone."""
    try:
        delete(name, namespace)
    except ApiException as exc:
        if exc.status != 404:
            raise


def _redacted(value):
    """Status values with every credential masked (see ``segflow.redaction``)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def now() -> str:
    return rfc3339(time.time())


class Kube:
    def __init__(self) -> None:
        api = client.ApiClient()
        self.api = api
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.networking = client.NetworkingV1Api(api)

    def get_job(self, namespace: str, name: str) -> dict | None:
        try:
            return self.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def pods(self, namespace: str, job: str) -> list[dict]:
        pods = self.core.list_namespaced_pod(namespace, label_selector=f"{JOB_LABEL}={job}")
        return [self.api.sanitize_for_serialization(p) for p in pods.items]

    def create(self, manifest: dict) -> bool:
        """Create; an existing object is left as it is (False), except that a ConfigMap's
        data and a Service's ports follow the manifest (a redeploy of a changed spec
        updates the job's description and its metrics port)."""
        namespace, kind = manifest["metadata"]["namespace"], manifest["kind"]
        create = {"Pod": self.core.create_namespaced_pod, "Service": self.core.create_namespaced_service,
                  "ConfigMap": self.core.create_namespaced_config_map,
                  "Secret": self.core.create_namespaced_secret,
                  "NetworkPolicy": self.networking.create_namespaced_network_policy}[kind]
        try:
            create(namespace, manifest)
        except ApiException as exc:
            if exc.status != 409:
                raise
            name = manifest["metadata"]["name"]
            if kind == "ConfigMap":
                self.core.patch_namespaced_config_map(name, namespace, {"data": manifest["data"]})
            elif kind == "Service":
                self.core.patch_namespaced_service(name, namespace, {"spec": {"ports": manifest["spec"]["ports"]}})
            return False
        return True

    def secret(self, namespace: str, name: str) -> dict | None:
        try:
            return self.api.sanitize_for_serialization(self.core.read_namespaced_secret(name, namespace))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def delete_secret(self, namespace: str, name: str) -> None:
        _gone(self.core.delete_namespaced_secret, name, namespace)

    def delete_pod(self, namespace: str, name: str) -> None:
        _gone(self.core.delete_namespaced_pod, name, namespace)

    def patch_status(self, namespace: str, name: str, status: dict) -> None:
        self.custom.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, name,
                                                         {"status": _redacted(status)})

    def event(self, body: dict, reason: str, message: str, warning: bool = False) -> None:
        meta = body["metadata"]
        stamp = now()
        event = client.CoreV1Event(
            metadata=client.V1ObjectMeta(generate_name=f"{meta['name']}.", namespace=meta["namespace"]),
            involved_object=client.V1ObjectReference(api_version=f"{GROUP}/{VERSION}", kind="StreamJob",
                                                     name=meta["name"], namespace=meta["namespace"],
                                                     uid=meta["uid"]),
            reason=reason, message=redact(message)[:1024], type="Warning" if warning else "Normal",
            source=client.V1EventSource(component="segflow-operator"),
            first_timestamp=stamp, last_timestamp=stamp, count=1)
        self.core.create_namespaced_event(meta["namespace"], event)
