"""A job's certificates for tests that start coordinators and workers by hand."""
from __future__ import annotations

import os
import pathlib
import subprocess

import grpc

from segflow.launcher.processes import worker_identities
from segflow.security.identities import Role
from segflow.security.pki import Authority
from segflow.security.identity_env import identity_env, workers_line
from segflow.security.tls import secure_channel
from segflow.settings import CheckpointSettings
from support.processes import ROOT, SEGFLOW


class JobCertificates:
    """One CA, as ``segflow run`` or the operator would make for a job."""

    def __init__(self, job: str = "test-job"):
        self.authority = Authority.create(job)

    def env(self, role: Role, name: str) -> dict[str, str]:
        """The environment of a process holding ``name``'s certificate."""
        return {**os.environ, **identity_env(self.authority.issue(role, name))}

    def workers_line(self, workers: int) -> str:
        """What a coordinator started with ``--spawn-workers --workers N`` reads from stdin:
        its workers' certificates, as ``segflow run`` writes them."""
        return workers_line(worker_identities(self.authority, workers))

    def channel(self, address: str, server_role: Role, role: Role = Role.CLIENT, name: str = "client",
                **kwargs) -> grpc.Channel:
        return secure_channel(address, self.authority.issue(role, name), server_role, **kwargs)

    def spawn_coordinator(self, job: str, settings: CheckpointSettings, directory: pathlib.Path,
                          params: dict[str, object], workers: int = 2, name: str = "coordinator") -> subprocess.Popen:
        """A coordinator started as ``segflow run`` starts it (``--spawn-workers``, the workers'
        certificates on its stdin, a session of its own so that a test can kill its tree)."""
        line = directory / f"{name}-workers.json"
        line.write_text(self.workers_line(workers))
        with line.open() as stdin:
            return subprocess.Popen(
                [SEGFLOW, "coordinator", job, "--workers", str(workers), "--spawn-workers", "--settings",
                 settings.to_json(), *(word for key, value in params.items() for word in ("-p", f"{key}={value}"))],
                cwd=ROOT, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True, env=self.env(Role.COORDINATOR, "coordinator"))
