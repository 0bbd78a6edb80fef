"""Refuses every RPC whose caller's certificate does not grant a role the method allows,
before the servicer sees the request (and so before any payload is decoded)."""
from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import NoReturn

import grpc

from ..observability.logs import event
from .identities import Role
from .tls import Peer, RpcContext, peer_of

log = logging.getLogger("segflow.security")

ANY_ROLE = frozenset(Role)


def refuse(context: RpcContext, why: str) -> NoReturn:
    """End the RPC as PERMISSION_DENIED, and say so in the log."""
    event(log, logging.WARNING, "refused a caller", peer=context.peer(), reason=why)
    context.abort(grpc.StatusCode.PERMISSION_DENIED, why)


def authorize(context: RpcContext, roles: frozenset[Role], method: str) -> Peer:
    peer = peer_of(context)
    if peer is None or peer.role not in roles:
        refuse(context, f"{method} is not open to {peer.role.value + ' ' + peer.name if peer else 'this caller'}")
    return peer


class RoleGuard(grpc.ServerInterceptor):
    """``allowed``: full method name (``/segflow.v1.Coordinator/Cancel``) -> roles that may
    call it. Methods not named are refused to everyone."""

    def __init__(self, allowed: Mapping[str, frozenset[Role]]):
        self.allowed = dict(allowed)

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        return _guarded(handler, self.allowed.get(method, frozenset()), method.rpartition("/")[2])


def _guarded(handler: grpc.RpcMethodHandler, roles: frozenset[Role], method: str) -> grpc.RpcMethodHandler:
    """``handler`` with the role check in front of its behaviour, whatever its kind."""
    def checked(inner, streams_out: bool):
        if streams_out:
            def behaviour(request, context):
                authorize(context, roles, method)
                yield from inner(request, context)
        else:
            def behaviour(request, context):
                authorize(context, roles, method)
                return inner(request, context)
        return behaviour

    for kind, make, streams_out in _KINDS:
        inner = getattr(handler, kind)
        if inner:
            return make(checked(inner, streams_out), request_deserializer=handler.request_deserializer,
                        response_serializer=handler.response_serializer)
    raise ValueError(f"{method}: a handler of no known kind")


_KINDS = (("unary_unary", grpc.unary_unary_rpc_method_handler, False),
          ("unary_stream", grpc.unary_stream_rpc_method_handler, True),
          ("stream_unary", grpc.stream_unary_rpc_method_handler, False),
          ("stream_stream", grpc.stream_stream_rpc_method_handler, True))
