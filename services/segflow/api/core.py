"""What every stream operation is built from: the stream's environment and current block,
using a stream once, chaining an operator into the block or splitting into a new one.

Each family of operations (``segflow.api.ops``) is a class over :class:`StreamCore`, in
one module with its checks and docs; :class:`~segflow.api.stream.Stream` is the sum of the
families. Why classes rather than functions attached to ``Stream`` by a decorator (as
Bytewax's ``@operator`` does): an attached function is invisible to mypy and to editors, so
each one would need a second, static declaration; a family's class is seen as it is, and
adding an operation to a family touches that family's module only.
"""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable, Generic, Literal, Self, TypeVar, overload

from ..errors import PipelineError
from ..plan.graph import BlockSpec, OperatorSpec, Strategy
from ..runtime.operator import Operator, function_name
from ..runtime.operators import aggregate as agg
from .call_site import caller_location

if TYPE_CHECKING:
    from .environment import StreamEnvironment
    from .stream import KeyedStream, Stream

T = TypeVar("T")        # a stream's records
U = TypeVar("U")        # the records a function makes of them
K = TypeVar("K")        # a keyed stream's keys
V = TypeVar("V")        # a keyed stream's values
A = TypeVar("A")        # an accumulator


def _named(kind: str, fn: Any) -> str:
    return f"{kind}({function_name(fn)})" if fn is not None else kind


def _callable(what: str, fn: Any) -> None:
    if not callable(fn):
        raise PipelineError(f"{what} needs a function, got {type(fn).__name__}: {fn!r}")


def _record_function(what: str, fn: Any, keyed: bool) -> None:
    """A per-record function: one argument on a Stream, ``(key, value)`` on a KeyedStream."""
    _callable(what, fn)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):       # some builtins have none: let them run
        return
    try:
        signature.bind(*range(2 if keyed else 1))
    except TypeError:
        name = function_name(fn)
        if keyed:
            raise PipelineError(
                f"{what}({name}): on a KeyedStream the function receives key and value as two "
                f"arguments, but {name}{signature} cannot take two: write it as "
                "lambda key, value: ..., or call .drop_key() (values) or .unkey() ((key, value) "
                "records) first") from None
        raise PipelineError(
            f"{what}({name}): on a Stream the function receives each record as one argument, "
            f"but {name}{signature} cannot take one: key the stream first with "
            ".group_by(key) or .key_by(key) to get (key, value) arguments") from None


class StreamCore(Generic[T]):
    """A stream's place in the graph being built; the operations are its subclasses'."""

    keyed = False

    def __init__(self, env: "StreamEnvironment", block: BlockSpec):
        self.env = env
        self.block = block
        self._used_by: str | None = None

    def _consume(self, what: str) -> None:
        self.env._check_building(what)
        if self._used_by is not None:
            raise PipelineError(
                f"this stream was already used by {self._used_by}; a stream can feed one "
                f"operator only: call .split(n) to use it for {what} too")
        self._used_by = what

    def _untimed(self) -> Self:
        """After an aggregation: its records carry no timestamps (watermarks still pass)."""
        self.block.timestamped = False
        return self

    # The stream going on: a KeyedStream when ``keyed`` (default: as this one), else a Stream.
    @overload
    def _next(self, block: BlockSpec, keyed: Literal[True]) -> "KeyedStream[Any, Any]": ...
    @overload
    def _next(self, block: BlockSpec, keyed: bool | None = None) -> "Stream[Any]": ...

    def _next(self, block: BlockSpec, keyed: bool | None = None) -> "Stream[Any]":
        from .stream import KeyedStream, Stream   # cycle: stream.py is the sum of the families built on this
        keyed = self.keyed if keyed is None else keyed
        block.keyed = keyed
        return (KeyedStream if keyed else Stream)(self.env, block)

    @overload
    def _chain(self, name: str, factory: Callable[[], Operator], keyed: Literal[True],
               stateful: bool = False, clocked: bool = False) -> "KeyedStream[Any, Any]": ...
    @overload
    def _chain(self, name: str, factory: Callable[[], Operator], keyed: Literal[False] | None = None,
               stateful: bool = False, clocked: bool = False) -> "Stream[Any]": ...

    def _chain(self, name: str, factory: Callable[[], Operator], keyed: bool | None = None,
               stateful: bool = False, clocked: bool = False) -> "Stream[Any]":
        self._consume(name)
        self.block.operators.append(OperatorSpec(name, factory, caller_location(), stateful, clocked))
        return self._next(self.block, keyed)

    @overload
    def _split(self, name: str, strategy: Strategy, keyed: Literal[True],
               max_parallelism: int | None = None) -> "KeyedStream[Any, Any]": ...
    @overload
    def _split(self, name: str, strategy: Strategy, keyed: Literal[False] | None = None,
               max_parallelism: int | None = None) -> "Stream[Any]": ...

    def _split(self, name: str, strategy: Strategy, keyed: bool | None = None,
               max_parallelism: int | None = None) -> "Stream[Any]":
        """Close the current block; continue in a new one reached through ``strategy``."""
        self._consume(name)
        if strategy is Strategy.FORWARD and self.keyed and keyed is not False:
            strategy = Strategy.HASH
        block = self.env._new_block(self.block, max_parallelism=max_parallelism)
        self.env.graph.connect(self.block, block, strategy)
        return self._next(block, keyed)

    def _single(self, name: str) -> "Stream[T]":
        return self._split(name, Strategy.FORWARD, keyed=False, max_parallelism=1)

    def _per_record(self, name: str, fn: Callable[..., Any],
                    operator: Callable[[Callable[..., Any], bool], Operator]) -> "Stream[Any]":
        """Chain an operator that calls ``fn`` on every record (``fn(key, value)`` when keyed)."""
        keyed = self.keyed
        _record_function(name, fn, keyed)
        return self._chain(_named(name, fn), lambda: operator(fn, keyed))

    def _two_stage(self, name: str, local: Callable[[], Operator], combine: Callable[[], Operator],
                   finish: Callable[[Any], Any] | None = None) -> "KeyedStream[Any, Any]":
        """A keyed aggregation in two stages: ``local`` per replica, then ``combine`` per key
        after the shuffle (then ``finish`` of each result)."""
        partial = self._chain(f"{name} pre-aggregate", local, keyed=True, stateful=True)
        out = partial._split(name, Strategy.HASH, keyed=True)._chain(
            f"{name} final aggregate", combine, keyed=True, stateful=True)._untimed()
        if finish is not None:
            out = out._chain(f"{name} finish", lambda: agg.MapValues(finish), keyed=True)
        return out
