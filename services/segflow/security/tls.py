"""Mutual TLS for every gRPC channel of a job, and who is at the other end.

A process gets its identity from the environment (:mod:`.identity_env`). There is no
plaintext mode: a process without an identity refuses to start.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn, Protocol

import grpc

from .identities import DOMAIN, Identity, Role


def server_credentials(identity: Identity) -> grpc.ServerCredentials:
    """Serving credentials that demand a client certificate from the job's CA."""
    return grpc.ssl_server_credentials([(identity.key, identity.cert)], root_certificates=identity.ca,
                                       require_client_auth=True)


def secure_channel(address: str, identity: Identity, server_role: Role,
                   options: Sequence[tuple[str, object]] | None = None) -> grpc.Channel:
    """A channel to a peer that must prove it holds ``server_role`` in this job."""
    credentials = grpc.ssl_channel_credentials(root_certificates=identity.ca, private_key=identity.key,
                                               certificate_chain=identity.cert)
    return grpc.secure_channel(address, credentials,
                               options=[*(options or []), ("grpc.ssl_target_name_override", server_role.host)])


@dataclass(frozen=True)
class Peer:
    role: Role
    name: str


class RpcContext(Protocol):
    """What the servicers use of their ``grpc.ServicerContext``, typed (grpc ships no types)."""

    def abort(self, code: grpc.StatusCode, details: str) -> NoReturn:
        """End the RPC with ``code``: raises, so nothing after it runs."""

    def peer(self) -> str: ...

    def auth_context(self) -> Mapping[str, Iterable[bytes]]: ...


def peer_of(context: RpcContext) -> Peer | None:
    """The authenticated caller of an RPC (None: no certificate of a known role)."""
    auth = context.auth_context()
    names = [n.decode() for n in auth.get("x509_common_name", [])]
    hosts = [h.decode() for h in auth.get("x509_subject_alternative_name", [])]
    roles = [Role(h[: -len(DOMAIN) - 1]) for h in hosts
             if h.endswith("." + DOMAIN) and h[: -len(DOMAIN) - 1] in Role._value2member_map_]
    if len(names) != 1 or len(roles) != 1:
        return None
    return Peer(roles[0], names[0])
