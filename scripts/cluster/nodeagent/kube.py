"""The API calls the node agent makes, on plain dicts (the agent never needs the client's
models, and raw JSON keeps every field a newer API server might add)."""
from __future__ import annotations

import json
from collections.abc import Iterator

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

WATCH_SECONDS = 55                 # the server ends each watch after this; we resume from the last version
REQUEST_TIMEOUT = (5, 30)          # (connect, read) seconds for ordinary requests
STATUS_PATCH = "application/strategic-merge-patch+json"


LISTS = {"pods": "list_pod_for_all_namespaces", "services": "list_service_for_all_namespaces",
         "endpoints": "list_endpoints_for_all_namespaces"}


class WatchExpired(Exception):
    """The resource version is too old (410 Gone): list again, then watch from the list."""


class Kube:
    """A CoreV1 client from a kubeconfig. One per thread: each has its own connection pool."""

    def __init__(self, kubeconfig: str):
        self.api = config.new_client_from_config(kubeconfig)
        self.core = client.CoreV1Api(self.api)

    # ----------------------------------------------------- pods, services
    def list(self, kind: str, field_selector: str) -> tuple[list[dict], str]:
        """All ``kind`` objects (a key of LISTS) matching ``field_selector``, and the list's
        resource version."""
        reply = getattr(self.core, LISTS[kind])(field_selector=field_selector, _preload_content=False,
                                                _request_timeout=REQUEST_TIMEOUT)
        body = json.loads(reply.data)
        return body.get("items") or [], body["metadata"]["resourceVersion"]

    def watch(self, kind: str, field_selector: str, resource_version: str) -> Iterator[tuple[str, dict]]:
        """(type, object) events after ``resource_version`` until the server ends the watch;
        BOOKMARK events carry only a newer resource version."""
        stream = watch.Watch().stream(getattr(self.core, LISTS[kind]), field_selector=field_selector,
                                      resource_version=resource_version, allow_watch_bookmarks=True,
                                      timeout_seconds=WATCH_SECONDS, deserialize=False,
                                      _request_timeout=(5, WATCH_SECONDS + 15))
        try:
            for event in stream:
                yield event["type"], event["object"]
        except ApiException as exc:
            if exc.status == 410:
                raise WatchExpired(str(exc.reason)) from exc
            raise

    def bind(self, namespace: str, name: str, node: str) -> None:
        """The scheduler's one write: bind the pod to ``node``."""
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        self.core.create_namespaced_pod_binding(name, namespace, body, _preload_content=False,
                                                _request_timeout=REQUEST_TIMEOUT)

    def patch_pod_status(self, namespace: str, name: str, status: dict) -> None:
        self.core.patch_namespaced_pod_status(name, namespace, {"status": status}, _content_type=STATUS_PATCH,
                                              _preload_content=False, _request_timeout=REQUEST_TIMEOUT)

    def delete_pod_now(self, namespace: str, name: str, uid: str) -> None:
        """Delete with grace period 0 (the processes are gone); only this incarnation (uid)."""
        options = {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}}
        try:
            self.core.delete_namespaced_pod(name, namespace, body=options, grace_period_seconds=0,
                                            _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        except ApiException as exc:
            if exc.status not in (404, 409):          # gone already, or a new pod of that name
                raise

    # ------------------------------------------------------- pod dependencies
    def data(self, namespace: str, kind: str, name: str) -> dict[str, str] | None:
        """A config map's or secret's data; None when it does not exist."""
        read = self.core.read_namespaced_config_map if kind == "configmap" else self.core.read_namespaced_secret
        try:
            reply = read(name, namespace, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return json.loads(reply.data).get("data") or {}

    def service_account_token(self, namespace: str, account: str, pod: str, uid: str, seconds: int) -> str:
        """A token for the pod's service account, bound to the pod (TokenRequest API): it
        stops working when the pod is deleted, as a kubelet-mounted token does."""
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"expirationSeconds": seconds,
                            "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid}}}
        reply = self.core.create_namespaced_service_account_token(account, namespace, request, _preload_content=False,
                                                                  _request_timeout=REQUEST_TIMEOUT)
        return json.loads(reply.data)["status"]["token"]

    # ---------------------------------------------------------------- events
    def create_event(self, namespace: str, body: dict) -> None:
        self.core.create_namespaced_event(namespace, body, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)

    def patch_event(self, namespace: str, name: str, fields: dict) -> None:
        self.core.patch_namespaced_event(name, namespace, fields, _preload_content=False,
                                         _request_timeout=REQUEST_TIMEOUT)

    # ------------------------------------------------------------------ node
    def register_node(self, name: str, labels: dict[str, str]) -> None:
        body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
        try:
            self.core.create_node(body, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        except ApiException as exc:
            if exc.status != 409:
                raise
            self.core.patch_node(name, {"metadata": {"labels": labels}}, _preload_content=False,
                                 _request_timeout=REQUEST_TIMEOUT)

    def patch_node_status(self, name: str, status: dict) -> None:
        self.core.patch_node_status(name, {"status": status}, _content_type=STATUS_PATCH, _preload_content=False,
                                    _request_timeout=REQUEST_TIMEOUT)
