"""A StreamJob's files as pods from images get them, the way a user's cluster does: a job
file of this checkout through a configMap volume (the pods see nothing of the host's
filesystem, and the job pods' podTemplate may not take a hostPath: Pod Security
'restricted'), and the job's output in S3 (the module's moto server), read back here.
Used by tests/k8s and tests/disaster."""
from __future__ import annotations

import collections
import contextlib
import os

from segflow.state import open_backend
from support.clusters import Cluster

JOB_MOUNT = "/jobs"          # where the pods find the job files (a configMap volume)


def publish(cluster: Cluster, namespace: str, config_map: str, *paths: str) -> None:
    """The files ``paths`` as the keys of ``config_map`` in ``namespace``, replacing one
    there (created, not applied: apply's annotation would hold a copy of every file, and an
    input text of a few hundred kB would pass the annotations' 256 kB limit)."""
    cluster.kubectl("delete", "configmap", config_map, "-n", namespace, "--ignore-not-found")
    cluster.kubectl("create", "configmap", config_map, "-n", namespace, *(f"--from-file={path}" for path in paths))


def mounted(path: str) -> str:
    """Where a published file is inside the pods that mount its config map (``files_volume``)."""
    return os.path.join(JOB_MOUNT, os.path.basename(path))


def pod_path(cluster: Cluster, path: str) -> str:
    """A published file as the cluster's pods see it: in the configMap volume for pods from
    images; its own path for loopback pods, which are host processes (and mount no volume)."""
    return mounted(path) if cluster.info()["images"] else path


def files_volume(config_map: str) -> dict:
    """The podTemplate's part that mounts ``config_map`` read-only at JOB_MOUNT."""
    return {"volumes": [{"name": "jobs", "configMap": {"name": config_map}}],
            "volumeMounts": [{"name": "jobs", "mountPath": JOB_MOUNT, "readOnly": True}]}


def pod_template(config_map: str, secret: str, s3_endpoint: str) -> dict:
    """A StreamJob's podTemplate for jobs whose files are in ``config_map`` and whose sinks
    write to S3 at ``s3_endpoint`` (as the pods reach it) with the credentials of ``secret``."""
    return {"envFrom": [{"secretRef": {"name": secret}}], "env": [{"name": "AWS_ENDPOINT_URL", "value": s3_endpoint}],
            **files_volume(config_map)}


def s3_objects(url: str, endpoint: str) -> dict[str, bytes]:
    """Every object under ``url`` (s3://bucket/prefix), by its key below the prefix."""
    with contextlib.closing(open_backend(url, endpoint)) as store:
        return {key: store.get(key) or b"" for key in store.list("")}


def s3_lines(url: str, endpoint: str) -> collections.Counter:
    """The lines of the sink's part objects under ``url``, counted (not its commit markers,
    ``_committed/part-N``)."""
    lines: collections.Counter = collections.Counter()
    for key, data in s3_objects(url, endpoint).items():
        if key.startswith("part-"):
            lines.update(data.decode().splitlines())
    return lines
