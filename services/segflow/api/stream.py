"""Stream and KeyedStream: the fluent pipeline API.

Each method appends an operator to the stream's current block, or closes the block and
opens a new one when records must move between replicas. A stream can be consumed once
(as in Noir); use :meth:`Stream.split` to feed several pipelines from one stream.

On a :class:`KeyedStream` records are ``(key, value)`` pairs and functions receive
``key, value`` as two arguments; the key is kept.
"""
from __future__ import annotations

import inspect
import operator
from typing import TYPE_CHECKING, Any, Callable

from ..errors import PipelineError
from ..plan.graph import BatchMode, BlockSpec, OperatorSpec, Strategy
from ..runtime.operator import Operator, function_name
from ..runtime.operators import aggregate as agg
from ..runtime.operators import stateless as sl
from ..runtime.operators.columnar import Aggregation, KeepRows, LocalColumnarAggregate
from ..runtime.operators.time import AddTimestamps, WatermarkStrategy
from ..runtime.operators.sinks import FileSink, ForEachSink
from .call_site import caller_location

if TYPE_CHECKING:
    from .environment import StreamEnvironment, StreamOutput
    from .windowed import WindowedStream, KeyedWindowedStream
    from .join import JoinBuilder
    from .windows import WindowDescription


def _named(kind: str, fn: Any) -> str:
    return f"{kind}({function_name(fn)})" if fn is not None else kind


def add_pairs(a: tuple, b: tuple) -> tuple:
    """Partial (sum, count) pairs of group_by_avg, added."""
    return a[0] + b[0], a[1] + b[1]


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


class Stream:
    """A stream of records, not partitioned by key."""

    keyed = False

    def __init__(self, env: "StreamEnvironment", block: BlockSpec):
        self.env = env
        self.block = block
        self._used_by: str | None = None

    # ---------------------------------------------------------------- plumbing
    def _consume(self, what: str) -> None:
        self.env._check_building(what)
        if self._used_by is not None:
            raise PipelineError(
                f"this stream was already used by {self._used_by}; a stream can feed one "
                f"operator only: call .split(n) to use it for {what} too")
        self._used_by = what

    def _untimed(self) -> "Stream":
        """After an aggregation: its records carry no timestamps (watermarks still pass)."""
        self.block.timestamped = False
        return self

    def _next(self, block: BlockSpec, keyed: bool | None = None) -> "Stream":
        keyed = self.keyed if keyed is None else keyed
        block.keyed = keyed
        return (KeyedStream if keyed else Stream)(self.env, block)

    def _chain(self, name: str, factory: Callable[[], Operator], keyed: bool | None = None,
               stateful: bool = False, clocked: bool = False) -> "Stream":
        self._consume(name)
        self.block.operators.append(OperatorSpec(name, factory, caller_location(), stateful, clocked))
        return self._next(self.block, keyed)

    def _split(self, name: str, strategy: Strategy, keyed: bool | None = None,
               max_parallelism: int | None = None) -> "Stream":
        """Close the current block; continue in a new one reached through ``strategy``."""
        self._consume(name)
        if strategy is Strategy.FORWARD and self.keyed and keyed is not False:
            strategy = Strategy.HASH
        block = self.env._new_block(self.block, max_parallelism=max_parallelism)
        self.env.graph.connect(self.block, block, strategy)
        return self._next(block, keyed)

    # ------------------------------------------------------------- stateless
    def _per_record(self, name: str, fn: Callable, operator: Callable[[Callable, bool], Operator]) -> "Stream":
        """Chain an operator that calls ``fn`` on every record (``fn(key, value)`` when keyed)."""
        keyed = self.keyed
        _record_function(name, fn, keyed)
        return self._chain(_named(name, fn), lambda: operator(fn, keyed))

    def map(self, fn: Callable) -> "Stream":
        """One output record per input record: ``fn(record)``."""
        return self._per_record("map", fn, sl.Map)

    def filter(self, predicate: Callable) -> "Stream":
        """Keep the records for which ``predicate(record)`` is true."""
        return self._per_record("filter", predicate, sl.Filter)

    def flat_map(self, fn: Callable) -> "Stream":
        """Every record becomes the records of the iterable ``fn(record)``."""
        return self._per_record("flat_map", fn, sl.FlatMap)

    def filter_map(self, fn: Callable) -> "Stream":
        """``fn(record)``, dropping the records for which it returns ``None``."""
        return self._per_record("filter_map", fn, sl.FilterMap)

    def flatten(self) -> "Stream":
        """A stream of iterables becomes the stream of their elements."""
        keyed = self.keyed
        return self._chain("flatten", lambda: sl.FlatMap(None, keyed))

    def inspect(self, fn: Callable) -> "Stream":
        """Call ``fn(record)`` for its side effect; records pass unchanged."""
        return self._per_record("inspect", fn, sl.Inspect)

    def _rich(self, mode: str, factory: Callable[[], Callable]) -> "Stream":
        _callable(f"rich_{mode}", factory)
        keyed = self.keyed
        return self._chain(_named(f"rich_{mode}", factory), lambda: sl.Rich(factory, mode, keyed),
                           stateful=True)

    def rich_map(self, factory: Callable[[], Callable]) -> "Stream":
        """A stateful map: ``factory()`` makes the function, once per replica (per key on a
        keyed stream), so it may keep state between records."""
        return self._rich("map", factory)

    def rich_flat_map(self, factory: Callable[[], Callable]) -> "Stream":
        return self._rich("flat_map", factory)

    def rich_filter_map(self, factory: Callable[[], Callable]) -> "Stream":
        return self._rich("filter_map", factory)

    # ---------------------------------------------------------- partitioning
    def shuffle(self) -> "Stream":
        """Spread records evenly over the replicas of the next block."""
        return self._split("shuffle", Strategy.ROUND_ROBIN, keyed=False)

    def key_by(self, key: Callable) -> "KeyedStream":
        """Key records by ``key(record)`` without moving them (they must already be
        partitioned by that key, e.g. by a parallel source that splits on it)."""
        _callable("key_by", key)
        keyed = self._chain(_named("key_by", key), lambda: sl.KeyBy(key), keyed=True)
        keyed.block.keys_in_place = True
        return keyed  # type: ignore[return-value]

    def group_by(self, key: Callable) -> "KeyedStream":
        """Partition records by ``key(record)``: records with equal keys meet in one replica."""
        return self.key_by(key)._split("group_by", Strategy.HASH, keyed=True)  # type: ignore[return-value]

    def max_parallelism(self, n: int) -> "Stream":
        """Continue in a new block with at most ``n`` replicas (until the next split)."""
        if not isinstance(n, int) or n < 1:
            raise PipelineError(f"max_parallelism needs an integer >= 1, got {n!r}")
        return self._split(f"max_parallelism({n})", Strategy.FORWARD, max_parallelism=n)

    def batch_mode(self, mode: BatchMode) -> "Stream":
        """Batching of this block's output and of the blocks after it (right after a source,
        of the source's too: in Noir they are one block)."""
        if not isinstance(mode, BatchMode):
            raise PipelineError("batch_mode needs BatchMode.fixed(n) or BatchMode.adaptive(n, seconds)")
        self.block.batch_mode = mode
        self.env._batch_mode = mode
        graph = self.env.graph
        inputs = graph.inputs_of(self.block.id)
        if len(inputs) == 1 and graph.blocks[inputs[0].src].is_source:
            graph.blocks[inputs[0].src].batch_mode = mode
        return self

    # -------------------------------------------------------------- aggregates
    def _single(self, name: str) -> "Stream":
        return self._split(name, Strategy.FORWARD, keyed=False, max_parallelism=1)

    def fold(self, init: Any, fn: Callable) -> "Stream":
        """``acc = fn(acc, record)`` over the whole stream, from ``init``; one replica does
        it all. Emits ``acc`` at end of stream."""
        _callable("fold", fn)
        return self._single("fold")._chain(_named("fold", fn), lambda: agg.Fold(fn, init), stateful=True)._untimed()

    def reduce(self, fn: Callable) -> "Stream":
        """Like :meth:`fold` with the first record as the initial accumulator."""
        _callable("reduce", fn)
        return self._single("reduce")._chain(_named("reduce", fn), lambda: agg.Fold(fn), stateful=True)._untimed()

    def fold_assoc(self, init: Any, local: Callable, combine: Callable) -> "Stream":
        """Associative fold: each replica folds its records with ``local`` (from ``init``),
        then one replica combines the partial results with ``combine`` (from ``init``)."""
        _callable("fold_assoc", local)
        _callable("fold_assoc", combine)
        partial = self._chain(_named("fold_assoc.local", local), lambda: agg.Fold(local, init, combine),
                              stateful=True)
        return partial._single("fold_assoc")._chain(
            _named("fold_assoc.combine", combine), lambda: agg.Fold(combine, init), stateful=True)._untimed()

    def reduce_assoc(self, fn: Callable) -> "Stream":
        """Associative reduce: a local reduce per replica, then one replica combines."""
        _callable("reduce_assoc", fn)
        partial = self._chain(_named("reduce_assoc.local", fn), lambda: agg.Fold(fn, combine=fn), stateful=True)
        return partial._single("reduce_assoc")._chain(
            _named("reduce_assoc.combine", fn), lambda: agg.Fold(fn), stateful=True)._untimed()

    def _two_stage(self, name: str, local: Callable[[], Operator], combine: Callable[[], Operator],
                   finish: Callable | None = None) -> "KeyedStream":
        partial = self._chain(f"{name} pre-aggregate", local, keyed=True, stateful=True)
        out = partial._split(name, Strategy.HASH, keyed=True)._chain(
            f"{name} final aggregate", combine, keyed=True, stateful=True)._untimed()
        if finish is not None:
            out = out._chain(f"{name} finish", lambda: agg.MapValues(finish), keyed=True)
        return out  # type: ignore[return-value]

    def group_by_fold(self, key: Callable, init: Any, local: Callable, combine: Callable) -> "KeyedStream":
        """Per-key associative fold with local pre-aggregation: ``local(acc, record)`` per
        replica, then ``combine(acc, partial)`` after the shuffle."""
        for fn in (key, local, combine):
            _callable("group_by_fold", fn)
        return self._two_stage(_named("group_by_fold", key), lambda: agg.LocalKeyedFold(key, local, combine, init),
                               lambda: agg.KeyedFold(combine, init))

    def map_batches(self, fn: Callable) -> "Stream":
        """Columnar: ``fn(record_batch)`` returns a record batch (or a pyarrow table) per
        record batch; compute with ``pyarrow.compute`` over whole columns."""
        return self._per_record("map_batches", fn, sl.Map)

    def filter_batches(self, predicate: Callable) -> "Stream":
        """Columnar: keeps the rows of each record batch where ``predicate(record_batch)``, a
        boolean array (e.g. ``pyarrow.compute.greater(batch["price"], 100)``), is true."""
        _record_function("filter_batches", predicate, False)
        return self._chain(_named("filter_batches", predicate), lambda: sl.Map(KeepRows(predicate), False))

    def group_by_aggregate(self, keys: str | list[str], **results: tuple[str, str]) -> "KeyedStream":
        """Columnar: ``(key, {name: value})`` per key of the record batches, e.g.
        ``group_by_aggregate("auction", bids=("price", "count"), total=("price", "sum"))``;
        functions: sum, count (non-null values), min, max, mean. Each replica aggregates
        its record batches with Arrow's kernels; only per-key partials cross the shuffle.
        A key of several columns is a tuple."""
        aggregation = Aggregation.of(keys, results)
        return self._two_stage(f"group_by_aggregate({','.join(aggregation.keys)})",
                               lambda: LocalColumnarAggregate(aggregation),
                               lambda: agg.KeyedFold(aggregation.merge), finish=aggregation.finish)

    def group_by_reduce(self, key: Callable, fn: Callable) -> "KeyedStream":
        """Per-key associative reduce of records, with local pre-aggregation."""
        _callable("group_by_reduce", key)
        _callable("group_by_reduce", fn)
        return self._two_stage(_named("group_by_reduce", key), lambda: agg.LocalKeyedFold(key, fn, fn),
                               lambda: agg.KeyedFold(fn))

    def group_by_count(self, key: Callable | None = None) -> "KeyedStream":
        """``(key, number of records)`` per key; without ``key`` the record is the key."""
        if key is not None:
            _callable("group_by_count", key)
        return self._two_stage(_named("group_by_count", key), lambda: agg.LocalCount(key), agg.KeyedSum)

    def group_by_sum(self, key: Callable, value: Callable | None = None) -> "KeyedStream":
        """``(key, sum of value(record))`` per key (the record itself without ``value``)."""
        _callable("group_by_sum", key)
        get = value if value is not None else (lambda x: x)
        return self._two_stage(_named("group_by_sum", key),
                               lambda: agg.LocalKeyedFold(key, lambda acc, x: acc + get(x), operator.add, 0),
                               agg.KeyedSum)

    def group_by_avg(self, key: Callable, value: Callable | None = None) -> "KeyedStream":
        """``(key, mean of value(record))`` per key."""
        _callable("group_by_avg", key)
        get = value if value is not None else (lambda x: x)
        return self._two_stage(
            _named("group_by_avg", key),
            lambda: agg.LocalKeyedFold(key, lambda acc, x: (acc[0] + get(x), acc[1] + 1), add_pairs, (0, 0)),
            lambda: agg.KeyedFold(add_pairs, (0, 0)),
            finish=lambda p: p[0] / p[1])

    def _extreme_element(self, name: str, key: Callable, by: Callable | None, pick: Callable) -> "KeyedStream":
        _callable(name, key)
        measure = by if by is not None else (lambda x: x)

        def choose(a: Any, b: Any) -> Any:
            return b if pick(measure(b), measure(a)) else a
        return self._two_stage(_named(name, key), lambda: agg.LocalKeyedFold(key, choose, choose),
                               lambda: agg.KeyedFold(choose))

    def group_by_min_element(self, key: Callable, by: Callable | None = None) -> "KeyedStream":
        """Per key, the record with the smallest ``by(record)`` (the first one on ties)."""
        return self._extreme_element("group_by_min_element", key, by, lambda b, a: b < a)

    def group_by_max_element(self, key: Callable, by: Callable | None = None) -> "KeyedStream":
        """Per key, the record with the largest ``by(record)`` (the first one on ties)."""
        return self._extreme_element("group_by_max_element", key, by, lambda b, a: b > a)

    # ----------------------------------------------------------------- windows
    def window_all(self, window: "WindowDescription") -> "WindowedStream":
        """Windows over the whole stream (one replica)."""
        from .windowed import WindowedStream
        from .windows import WindowDescription
        if not isinstance(window, WindowDescription):
            raise PipelineError("window needs CountWindow, EventTimeWindow or ProcessingTimeWindow, "
                                f"not {window!r}")
        return WindowedStream(self._single(f"window_all({window.name})"), window)

    # -------------------------------------------------------------- event time
    def add_timestamps(self, timestamp: Callable, watermark: Callable | WatermarkStrategy | None = None) -> "Stream":
        """Give each record the event time ``timestamp(record)``. Watermarks (no later
        record is older) come from a :class:`~segflow.WatermarkStrategy` (bounded
        out-of-orderness, monotonous, emission interval, idleness), or from
        ``watermark(record, ts)``, which may return one after any record."""
        _callable("add_timestamps", timestamp)
        if watermark is not None and not isinstance(watermark, WatermarkStrategy):
            _callable("add_timestamps' watermark", watermark)
        if self.keyed:
            raise PipelineError("add_timestamps works on a non-keyed stream: call it before group_by")
        idles = isinstance(watermark, WatermarkStrategy) and watermark.idleness is not None
        out = self._chain(_named("add_timestamps", timestamp), lambda: AddTimestamps(timestamp, watermark),
                          clocked=idles)
        out.block.timestamped = True
        return out

    # -------------------------------------------------------------------- joins
    def join_with(self, right: "Stream", key_left: Callable, key_right: Callable) -> "JoinBuilder":
        """Start a join with a choice of ship (hash / broadcast-right) and local (hash /
        sort-merge) strategies; finish it with ``.inner()``, ``.left()`` or ``.outer()``."""
        from .join import JoinBuilder
        return JoinBuilder(self, right, key_left, key_right)

    def join(self, right: "Stream", key_left: Callable, key_right: Callable) -> "KeyedStream":
        """Inner join on ``key_left(l) == key_right(r)``: ``(key, (l, r))``."""
        return self.join_with(right, key_left, key_right).inner()

    def left_join(self, right: "Stream", key_left: Callable, key_right: Callable) -> "KeyedStream":
        """``(key, (l, r))``, and ``(key, (l, None))`` for left records without a match."""
        return self.join_with(right, key_left, key_right).left()

    def outer_join(self, right: "Stream", key_left: Callable, key_right: Callable) -> "KeyedStream":
        """Like :meth:`left_join`, plus ``(key, (None, r))`` for unmatched right records."""
        return self.join_with(right, key_left, key_right).outer()

    def interval_join(self, right: "Stream", lower: Any, upper: Any) -> "Stream":
        """Pairs ``(l, r)`` with ``t(l) - lower <= t(r) <= t(l) + upper`` (inner, one
        replica for non-keyed streams; per key on keyed streams)."""
        from ..runtime.operators.joins import IntervalJoin, unstamped_side
        if self.keyed != right.keyed:
            raise PipelineError("interval_join needs both streams keyed or both not keyed")
        for side, stream in enumerate((self, right)):
            if not stream.block.timestamped:
                raise unstamped_side("interval_join", caller_location(), side)
        keyed = self.keyed
        strategy = Strategy.HASH if keyed else Strategy.FORWARD
        out = self.env._merge("interval_join", [self, right], [strategy, strategy],
                              lambda: IntervalJoin(lower, upper, keyed), keyed=keyed,
                              max_parallelism=None if keyed else 1)
        out.block.timestamped = True
        return out

    # ----------------------------------------------------------- stream shapes
    def split(self, n: int) -> list["Stream"]:
        """``n`` streams with the same records as this one."""
        if not isinstance(n, int) or n < 1:
            raise PipelineError(f"split needs an integer >= 1, got {n!r}")
        self._consume("split")
        outs = []
        for _ in range(n):
            block = self.env._new_block(self.block)
            self.env.graph.connect(self.block, block, Strategy.FORWARD)
            outs.append(self._next(block))
        return outs

    def concat(self, other: "Stream") -> "Stream":
        """The records of both streams (same kind: both keyed or neither)."""
        from ..runtime.operators.joins import Concat
        if self.keyed != other.keyed:
            raise PipelineError("concat needs both streams keyed or both not keyed")
        timestamped = self.block.timestamped
        if timestamped != other.block.timestamped:
            raise PipelineError("concat needs both streams timestamped or neither: call add_timestamps on "
                                f"the {'other' if timestamped else 'first'} stream too")
        strategy = Strategy.HASH if self.keyed else Strategy.FORWARD
        out = self.env._merge("concat", [self, other], [strategy, strategy], Concat, keyed=self.keyed)
        out.block.timestamped = timestamped
        return out

    def zip(self, other: "Stream") -> "Stream":
        """Pairs ``(a, b)`` of the i-th records of both streams (one replica); the longer
        stream's leftovers are dropped."""
        from ..runtime.operators.joins import Zip
        return self.env._merge("zip", [self, other], [Strategy.FORWARD, Strategy.FORWARD], Zip,
                               keyed=False, max_parallelism=1)

    # --------------------------------------------------------------- iterations
    def iterate(self, max_iterations: int, initial_state: Any, body: Callable, local_fold: Callable,
                global_fold: Callable, loop_condition: Callable | None = None,
                delta_init: Any = None) -> tuple["Stream", "Stream"]:
        """Run ``body`` repeatedly, feeding each iteration's output into the next.

        ``body(stream, state)`` builds the loop body (``state.get()`` reads the iteration
        state). Each replica folds the body's output into a delta with
        ``local_fold(delta, record)`` (from ``delta_init``); the leader folds the deltas into
        the state with ``global_fold(state, delta)`` and goes on while
        ``loop_condition(state)`` holds, at most ``max_iterations`` times. The condition is
        called once after every iteration (the last one too) and may update a mutable
        state in place, e.g. to reset what ``global_fold`` accumulates per iteration. Returns
        ``(state stream with the final state, stream of the last iteration's output)``.
        """
        from .iteration import build_iteration
        return build_iteration(self, max_iterations, initial_state, body, local_fold, global_fold,
                               loop_condition, delta_init, replay=False)

    def replay(self, max_iterations: int, initial_state: Any, body: Callable, local_fold: Callable,
               global_fold: Callable, loop_condition: Callable | None = None,
               delta_init: Any = None) -> "Stream":
        """Like :meth:`iterate`, but every iteration replays this stream's records; the
        body's output only updates the state. Returns the state stream."""
        from .iteration import build_iteration
        state, _ = build_iteration(self, max_iterations, initial_state, body, local_fold, global_fold,
                                   loop_condition, delta_init, replay=True)
        return state

    # -------------------------------------------------------------------- sinks
    def collect(self) -> "StreamOutput":
        """Bring every record back to the caller: ``output.get()`` after the job ran."""
        return self.env._collect(self._single("collect"))

    def for_each(self, fn: Callable) -> None:
        """Call ``fn(record)`` for every record, in the replicas."""
        _callable("for_each", fn)
        self._chain(_named("for_each", fn), lambda: ForEachSink(fn))

    def write_text(self, directory: str, format: Callable | None = None) -> None:
        """One line per record, ``format(record)`` or ``str(record)``, in part files
        ``directory/part-NNNNN.txt`` (one per replica)."""
        self._chain(f"write_text({directory})", lambda: FileSink(str(directory), "text", format))

    def write_csv(self, directory: str, format: Callable | None = None, delimiter: str = ",") -> None:
        """One CSV row per record (a sequence, or ``format(record)``), in part files."""
        self._chain(f"write_csv({directory})", lambda: FileSink(str(directory), "csv", format, delimiter))

    def write_jsonl(self, directory: str, format: Callable | None = None) -> None:
        """One JSON document per line per record, in part files."""
        self._chain(f"write_jsonl({directory})", lambda: FileSink(str(directory), "jsonl", format))

    def write_s3(self, url: str, fmt: str = "text", format: Callable | None = None, delimiter: str = ",",
                 endpoint: str | None = None) -> None:
        """Part objects ``part-NNNNN...<ext>`` under ``s3://bucket/prefix`` (one or more per
        replica), in ``fmt`` ``text``, ``jsonl`` or ``csv`` as for the file sinks; exactly once
        with checkpoints. ``endpoint``: an S3-compatible server (else ``AWS_ENDPOINT_URL``)."""
        from ..runtime.operators.s3_sink import S3Sink, check_s3_url
        from ..runtime.operators.two_phase import part_suffix
        check_s3_url(str(url))
        try:
            part_suffix(fmt)
        except KeyError:
            raise PipelineError(f"write_s3: fmt must be 'text', 'jsonl' or 'csv', got {fmt!r}") from None
        if format is not None:
            _callable("write_s3", format)
        self._chain(f"write_s3({url})", lambda: S3Sink(str(url), fmt, format, delimiter, endpoint))

    def write_redis_stream(self, url: str, stream: str, formatter: Callable | None = None) -> None:
        """One entry per record appended to a Redis stream: a dict record (or ``formatter``'s
        dict) gives the entry's fields, anything else the single field ``data``. Exactly once
        with checkpoints (idempotent commits keyed by replica and epoch)."""
        from ..runtime.operators.redis_streams import RedisStreamSink, check_redis_url
        check_redis_url(url, "write_redis_stream")
        if not isinstance(stream, str) or not stream:
            raise PipelineError(f"write_redis_stream needs a stream name, got {stream!r}")
        if formatter is not None:
            _callable("write_redis_stream", formatter)
        self._chain(f"write_redis_stream({stream})", lambda: RedisStreamSink(url, stream, formatter))


class KeyedStream(Stream):
    """A stream of ``(key, value)`` records partitioned by key."""

    keyed = True

    def fold(self, init: Any, fn: Callable) -> "KeyedStream":  # type: ignore[override]
        """Per key: ``acc = fn(acc, value)`` from ``init``; emits ``(key, acc)`` at end."""
        _callable("fold", fn)
        return self._chain(_named("fold", fn), lambda: agg.KeyedFold(fn, init),  # type: ignore[return-value]
                           stateful=True)._untimed()

    def reduce(self, fn: Callable) -> "KeyedStream":  # type: ignore[override]
        """Per key: ``acc = fn(acc, value)`` from the key's first value."""
        _callable("reduce", fn)
        return self._chain(_named("reduce", fn), lambda: agg.KeyedFold(fn),  # type: ignore[return-value]
                           stateful=True)._untimed()

    def window(self, window: "WindowDescription") -> "KeyedWindowedStream":
        """Windows per key. After ``key_by`` (records keyed where they are) the records are
        first partitioned by the key, as ``group_by`` does: a window per key and replica
        would emit one partial result per replica that saw the key."""
        from .windowed import KeyedWindowedStream
        keyed = self._split("group_by", Strategy.HASH, keyed=True) if self.block.keys_in_place else self
        return KeyedWindowedStream(keyed, window)  # type: ignore[arg-type]

    def unkey(self) -> Stream:
        """A plain stream of the ``(key, value)`` pairs (nothing moves)."""
        self._consume("unkey")
        return self._next(self.block, keyed=False)

    def drop_key(self) -> Stream:
        """A plain stream of the values (nothing moves)."""
        return self._chain("drop_key", sl.DropKey, keyed=False)

    def shuffle(self) -> Stream:
        return self.unkey().shuffle()

    def key_by(self, key: Callable) -> "KeyedStream":
        raise PipelineError("the stream is keyed already: call .unkey() or .drop_key() first")

    def group_by(self, key: Callable) -> "KeyedStream":
        raise PipelineError("the stream is keyed already: call .unkey() or .drop_key() first")

    def window_all(self, window: "WindowDescription") -> "WindowedStream":
        return self.drop_key().window_all(window)
