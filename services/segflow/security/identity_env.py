"""A process's TLS identity (the job's CA, its certificate and key, PEM) in its
environment: the operator fills it from the job's Secret, a local ``segflow run`` from the
ephemeral CA it creates. Apart from :mod:`.tls` because a local coordinator reads it
to start its workers before anything else, without importing gRPC first.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import SegflowError
from .identities import Identity

CA_ENV = "SEGFLOW_TLS_CA"
CERT_ENV = "SEGFLOW_TLS_CERT"
KEY_ENV = "SEGFLOW_TLS_KEY"
AUTHORITY_KEY_ENV = "SEGFLOW_TLS_CA_KEY"     # local runs only: lets the coordinator issue its workers'


class TlsConfigError(SegflowError):
    """A process was started without the certificates mutual TLS needs."""


def identity_env(identity: Identity) -> dict[str, str]:
    return {CA_ENV: identity.ca.decode(), CERT_ENV: identity.cert.decode(), KEY_ENV: identity.key.decode()}


def identity_from_env(environ: Mapping[str, str] = os.environ) -> Identity:
    missing = [name for name in (CA_ENV, CERT_ENV, KEY_ENV) if not environ.get(name)]
    if missing:
        raise TlsConfigError(
            f"no TLS identity: {', '.join(missing)} unset. segflow talks only mutual TLS; `segflow run` and the "
            "operator set these for the processes they start. To start a coordinator or worker by hand, issue "
            "certificates with `segflow certs` and export them")
    return Identity(environ[CA_ENV].encode(), environ[CERT_ENV].encode(), environ[KEY_ENV].encode())
