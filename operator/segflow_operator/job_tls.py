"""Each deployment revision of a job gets its own certificate authority.

The operator issues the CA and every certificate the revision needs (its coordinator,
one per worker, and a client certificate for itself) into one Secret, owned by the
StreamJob; a pod's environment takes only its own key pair from it (``secretKeyRef``),
so no key appears in a pod spec. A pod of an older revision, still lingering, holds a
certificate of another CA and cannot talk to the new revision's pods. The CA key is not
kept: every certificate a revision needs is issued at once.
"""
from __future__ import annotations

import base64

from segflow.security.identities import Identity, Role
from segflow.security.pki import Authority
from segflow.security.identity_env import CA_ENV, CERT_ENV, KEY_ENV

CA_KEY = "ca.crt"
CLIENT = "client"


def secret_name(job: str, revision: int) -> str:
    return f"{job}-{revision}-tls"


def tls_secret(metadata: dict, job: str, revision: int, workers: int) -> dict:
    """The Secret of ``revision``: ``metadata`` carries name, namespace, labels and owner."""
    authority = Authority.create(f"{metadata['namespace']}/{job} r{revision}")
    holders = [(Role.COORDINATOR, "coordinator"), (Role.CLIENT, CLIENT),
               *((Role.WORKER, f"w{i}") for i in range(workers))]
    data = {CA_KEY: authority.ca_pem}
    for role, name in holders:
        identity = authority.issue(role, name)
        data[f"{name}.crt"], data[f"{name}.key"] = identity.cert, identity.key
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": metadata,
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()}}


def identity_env(job: str, revision: int, holder: str) -> list[dict]:
    """Environment entries giving a pod ``holder``'s identity from the revision's Secret."""
    name = secret_name(job, revision)
    return [{"name": env, "valueFrom": {"secretKeyRef": {"name": name, "key": key}}}
            for env, key in ((CA_ENV, CA_KEY), (CERT_ENV, f"{holder}.crt"), (KEY_ENV, f"{holder}.key"))]


def client_identity(secret: dict) -> Identity:
    """The operator's own identity for talking to a revision's coordinator."""
    data = {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}
    return Identity(data[CA_KEY], data[f"{CLIENT}.crt"], data[f"{CLIENT}.key"])
