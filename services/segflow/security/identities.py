"""Who is who in a job's mutual TLS: the roles a certificate names, and the PEM texts a
process holds. Apart from :mod:`.pki` (which issues them with ``cryptography``) because
a worker or coordinator only reads them: it starts sooner without importing that.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

DOMAIN = "segflow.internal"


class Role(str, Enum):
    COORDINATOR = "coordinator"
    WORKER = "worker"
    CLIENT = "client"          # the CLI and the operator: watch, cancel, savepoint

    @property
    def host(self) -> str:
        return f"{self.value}.{DOMAIN}"


@dataclass(frozen=True)
class Identity:
    """PEM texts a process needs for mutual TLS: the job's CA and its own key pair."""
    ca: bytes
    cert: bytes
    key: bytes
