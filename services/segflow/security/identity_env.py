"""A process's TLS identity (the job's CA, its certificate and key, PEM) in its
environment: the operator fills it from the job's Secret, a local ``segflow run`` from the
ephemeral CA it creates. Apart from :mod:`.tls` because a local coordinator reads it
to start its workers before anything else, without importing gRPC first.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping

from ..errors import SegflowError
from .identities import Identity

CA_ENV = "SEGFLOW_TLS_CA"
CERT_ENV = "SEGFLOW_TLS_CERT"
KEY_ENV = "SEGFLOW_TLS_KEY"


class TlsConfigError(SegflowError):
    """A process was started without the certificates mutual TLS needs."""


def identity_env(identity: Identity) -> dict[str, str]:
    return {CA_ENV: identity.ca.decode(), CERT_ENV: identity.cert.decode(), KEY_ENV: identity.key.decode()}


def workers_line(identities: Mapping[str, Identity]) -> str:
    """What ``segflow run`` writes to a local coordinator's stdin: its workers' certificates
    and keys by worker name (the CA is its own), as one JSON line. The launcher issues them,
    so the coordinator never holds the CA's key and never loads the library that signs
    certificates; on stdin they are in no process's environment and have no size limit
    (an environment value does: 128 KiB, about 140 workers' worth)."""
    return json.dumps({name: {"cert": i.cert.decode(), "key": i.key.decode()} for name, i in identities.items()}) + "\n"


def workers_from_line(ca: bytes, line: str) -> dict[str, Identity]:
    if not line.strip():
        raise TlsConfigError("--spawn-workers reads its workers' certificates from stdin (one JSON line, which "
                             "segflow run writes) and got nothing")
    try:
        given = json.loads(line)
        return {name: Identity(ca, held["cert"].encode(), held["key"].encode()) for name, held in given.items()}
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise TlsConfigError(f"--spawn-workers: stdin is not the JSON line of certificates segflow run writes "
                             f"({type(exc).__name__}: {exc})") from exc


def identity_from_env(environ: Mapping[str, str] = os.environ) -> Identity:
    missing = [name for name in (CA_ENV, CERT_ENV, KEY_ENV) if not environ.get(name)]
    if missing:
        raise TlsConfigError(
            f"no TLS identity: {', '.join(missing)} unset. segflow talks only mutual TLS; `segflow run` and the "
            "operator set these for the processes they start. To start a coordinator or worker by hand, issue "
            "certificates with `segflow certs` and export them")
    return Identity(environ[CA_ENV].encode(), environ[CERT_ENV].encode(), environ[KEY_ENV].encode())
