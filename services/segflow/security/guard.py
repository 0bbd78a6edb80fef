"""Refuses every RPC whose caller's certificate does not grant a role the method allows,
before the servicer sees the request (and so before any payload is decoded)."""
from __future__ import annotations

import logging
from collections.abc import Mapping

import grpc

from ..observability.logs import event
from .pki import Role
from .tls import Peer, peer_of

log = logging.getLogger("segflow.security")

ANY_ROLE = frozenset(Role)


def refuse(context: grpc.ServicerContext, why: str) -> None:
    """End the RPC as PERMISSION_DENIED, and say so in the log."""
    event(log, logging.WARNING, "refused a caller", peer=context.peer(), reason=why)
    context.abort(grpc.StatusCode.PERMISSION_DENIED, why)


def authorize(context: grpc.ServicerContext, roles: frozenset[Role], method: str) -> Peer:
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
    serializers = {"request_deserializer": handler.request_deserializer,
                   "response_serializer": handler.response_serializer}
    if handler.unary_unary:
        inner = handler.unary_unary

        def unary_unary(request, context):
            authorize(context, roles, method)
            return inner(request, context)
        return grpc.unary_unary_rpc_method_handler(unary_unary, **serializers)
    if handler.unary_stream:
        inner = handler.unary_stream

        def unary_stream(request, context):
            authorize(context, roles, method)
            yield from inner(request, context)
        return grpc.unary_stream_rpc_method_handler(unary_stream, **serializers)
    if handler.stream_unary:
        inner = handler.stream_unary

        def stream_unary(requests, context):
            authorize(context, roles, method)
            return inner(requests, context)
        return grpc.stream_unary_rpc_method_handler(stream_unary, **serializers)
    inner = handler.stream_stream

    def stream_stream(requests, context):
        authorize(context, roles, method)
        yield from inner(requests, context)
    return grpc.stream_stream_rpc_method_handler(stream_stream, **serializers)
