"""The stream environment: where a pipeline is built, and the handle that runs it."""
from __future__ import annotations

import os
from typing import Any, Callable, Generic, Iterable

from ..errors import PipelineError, SegflowError
from ..plan.graph import DEFAULT_BATCH_MODE, BatchMode, BlockSpec, JobGraph, OperatorSpec, Strategy
from ..plan.compact import compact
from ..process_runner import installed as installed_process_runner
from ..runtime.operator import Operator
from ..runtime.operators import sources as src
from ..runtime.operators.sinks import CollectSink
from ..runtime.sentinels import NOTHING
from ..settings import Config
from .call_site import caller_location
from .core import StreamCore, T
from .stream import KeyedStream, Stream


class StreamOutput(Generic[T]):
    """Handle on a ``collect()`` sink: ``get()`` returns its records once the job has run.

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=1)
        >>> out = env.from_iterable([1, 2]).collect()
        >>> _ = env.execute()
        >>> out.get()
        [1, 2]
    """

    def __init__(self, env: "StreamEnvironment", sink_id: int):
        self.env = env
        self.sink_id = sink_id
        self._value: Any = NOTHING     # a marker that survives copies and pickles

    def get(self) -> list[T]:
        """The records the sink received; asked before the job ran, it says so.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> out = env.from_iterable(["a"]).collect()
            >>> out.get()
            Traceback (most recent call last):
            ...
            segflow.errors.SegflowError: the job has not run yet: call env.execute() before output.get()
            >>> _ = env.execute()
            >>> out.get()
            ['a']
        """
        if self._value is NOTHING:
            raise SegflowError("the job has not run yet: call env.execute() before output.get()")
        value: list[T] = self._value
        return value


class StreamEnvironment:
    """Build a pipeline from sources, then ``execute()`` it. The settings are
    :class:`~segflow.Config`'s fields (``parallelism``, ``runtime``, checkpointing...);
    an environment runs once.

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=2, runtime="threads")
        >>> out = env.from_iterable([1, 2, 3]).shuffle().map(lambda x: x + 1).collect()
        >>> _ = env.execute()
        >>> sorted(out.get()), env.config.parallelism
        ([2, 3, 4], 2)
        >>> env.execute()
        Traceback (most recent call last):
        ...
        segflow.errors.SegflowError: this environment has run already; build a new one to run again
    """

    def __init__(self, config: Config | None = None, **settings: Any):
        self.config = config or Config(**settings)
        self.graph = JobGraph()
        self.outputs: list[StreamOutput[Any]] = []
        self._batch_mode: BatchMode = DEFAULT_BATCH_MODE
        self._scopes = 0
        self.result: Any = None
        self.job_spec: Any = None    # set when built from a job module (needed by workers)

    # ------------------------------------------------------------------ sources
    def _source(self, name: str, factory: Callable[[], Operator], single: bool = False,
                expected: int | None = None) -> Stream[Any]:
        """A source opens a block of its own and the stream goes on in the next one, which
        keeps the source's replica cap until the next split, as in Noir; once the graph is
        complete, that block is chained into the source's where it can be
        (``plan.source_chain``). ``expected``: the records it will read, when known
        (progress shows a percentage and an ETA)."""
        self._check_building(name)
        cap = 1 if single else None
        source = self.graph.new_block(is_source=True, batch_mode=self._batch_mode, max_parallelism=cap,
                                      expected_records=expected)
        source.operators.append(OperatorSpec(name, factory, caller_location()))
        first = self.graph.new_block(batch_mode=self._batch_mode, max_parallelism=cap)
        self.graph.connect(source, first, Strategy.FORWARD)
        return Stream(self, first)

    def _require_file(self, kind: str, path: str) -> None:
        if not self.config.planning_only and not os.path.isfile(path):
            raise PipelineError(f"{kind}: no such file: {path}")

    def from_iterable(self, iterable: Iterable[T]) -> Stream[T]:
        """Records of a Python iterable, read by one replica, in order (for tests and
        small inputs; it is rebuilt, not sent, in worker processes).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(range(3)).collect()
            >>> _ = env.execute()
            >>> out.get()
            [0, 1, 2]
        """
        if not hasattr(iterable, "__iter__"):
            raise PipelineError(f"from_iterable needs an iterable, got {type(iterable).__name__}")
        return self._source("from_iterable", lambda: src.IterableSource(iterable), single=True)

    def from_parallel(self, make: Callable[[int, int], Iterable[T]]) -> Stream[T]:
        """Each replica reads ``make(replica_index, replicas)``: a source that splits its
        input itself, e.g. by file or by key.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_parallel(lambda i, n: range(i, 6, n)).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [0, 1, 2, 3, 4, 5]
        """
        if not callable(make):
            raise PipelineError("from_parallel needs a function (replica_index, replicas) -> iterable")
        return self._source("from_parallel", lambda: src.ParallelSource(make))

    def read_text(self, path: str) -> Stream[str]:
        """One record per line (without the newline); replicas read disjoint byte ranges.
        The file must exist at the same path for every worker.

        Examples:
            >>> import pathlib
            >>> _ = pathlib.Path("book.txt").write_text("to be\\nor not\\n")
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.read_text("book.txt").collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            ['or not', 'to be']
        """
        path = os.fspath(path)
        self._require_file("read_text", path)
        return self._source(f"read_text({path})", lambda: src.TextFileSource(path))

    def read_jsonl(self, path: str) -> Stream[Any]:
        """One JSON value per line (blank lines skipped); replicas read disjoint byte ranges.
        A line that is not JSON fails the job with the file and line number.

        Examples:
            >>> import pathlib
            >>> _ = pathlib.Path("orders.jsonl").write_text('{"id": 1, "total": 30}\\n\\n{"id": 2, "total": 5}\\n')
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.read_jsonl("orders.jsonl").map(lambda o: o["total"]).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [5, 30]
        """
        path = os.fspath(path)
        self._require_file("read_jsonl", path)
        return self._source(f"read_jsonl({path})", lambda: src.JsonLinesSource(path))

    def read_csv(self, path: str, delimiter: str = ",", has_headers: bool = True, columnar: bool = False,
                 types: dict[str, Any] | None = None, batch_bytes: int = 1 << 20) -> Stream[Any]:
        """CSV rows (dicts by header name, or lists without headers), read in parallel.

        ``columnar=True``: the records are Arrow record batches instead, one per
        ``batch_bytes`` of the file (columns named by the header, else f0, f1, ...; types
        inferred from the file's first MB, or given as ``types={"column": pyarrow type}``),
        for ``map_batches``, ``filter_batches`` and ``group_by_aggregate``.

        Examples:
            >>> import pathlib
            >>> _ = pathlib.Path("bids.csv").write_text("auction,price\\n1,150\\n2,90\\n")
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.read_csv("bids.csv").collect()
            >>> _ = env.execute()
            >>> sorted(out.get(), key=lambda row: row["auction"])
            [{'auction': '1', 'price': '150'}, {'auction': '2', 'price': '90'}]
        """
        path = os.fspath(path)
        self._require_file("read_csv", path)
        if columnar:
            from ..runtime.operators.columnar import ArrowCsvSource, arrow
            arrow("read_csv(columnar=True)")
            if not isinstance(batch_bytes, int) or batch_bytes < 1:
                raise PipelineError(f"read_csv: batch_bytes must be an integer >= 1, got {batch_bytes!r}")
            return self._source(f"read_csv({path}, columnar)",
                                lambda: ArrowCsvSource(path, delimiter, has_headers, types, batch_bytes))
        if types is not None:
            raise PipelineError("read_csv: types are for columnar=True (rows are read as strings)")
        return self._source(f"read_csv({path})", lambda: src.CsvSource(path, delimiter, has_headers))

    def generate(self, make: Callable[[int], T], count: int | None = None,
                 rate: float | None = None, catch_up: bool = False, arrivals: str = "steady") -> Stream[T]:
        """Records ``make(0), make(1), ...`` (``count`` of them, or without end), spread over
        the replicas; ``rate`` caps records per second. Deterministic, so replayable.

        After a restore a paced generator resumes its schedule where its snapshot left it, as
        if the job had not been down (Flink's rate-limited generators do the same). With
        ``catch_up=True`` it behaves like a queue that kept filling while the job was down:
        the records its schedule owed since the job first started come at once, then the rate
        holds again (what a restore's recovery delay is measured against).

        ``arrivals="poisson"`` spaces a paced generator's records as a Poisson process of
        ``rate`` (exponential gaps, seeded per replica) instead of evenly, as queueing models
        and load tests assume.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.generate(lambda i: i * i, count=4).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [0, 1, 4, 9]
        """
        if not callable(make):
            raise PipelineError("generate needs a function index -> record")
        if count is not None and count < 0:
            raise PipelineError(f"generate: count must be >= 0, got {count}")
        if rate is not None and rate <= 0:
            raise PipelineError(f"generate: rate must be > 0 records/s, got {rate}")
        if catch_up and rate is None:
            raise PipelineError("generate: catch_up applies to a paced generator: give a rate, "
                                "or drop catch_up (an unpaced generator always runs at full speed)")
        if arrivals not in src.ARRIVALS:
            raise PipelineError(f"generate: arrivals must be one of {', '.join(src.ARRIVALS)}, got {arrivals!r}")
        if arrivals != "steady" and rate is None:
            raise PipelineError(f"generate: arrivals={arrivals!r} spaces a paced generator's records: give a rate")
        return self._source("generate", lambda: src.GeneratorSource(make, count, rate, catch_up, arrivals),
                            expected=count)

    def read_redis_stream(self, url: str, stream: str | list[str], until: str | None = None,
                          count: int | None = None, rate: float | None = None) -> Stream[Any]:
        """Entries of a Redis stream as ``(entry_id, fields)`` records, oldest first: up to the
        stream's last entry when the job starts, or up to the entry id ``until``, or the first
        ``count`` entries. Replayable (its position is the last entry id read). One stream is
        read by one replica; a list of streams is spread over the replicas (one key, one
        reader, in order). ``rate`` caps the entries per second of each reading replica.

        Examples:
            The pipeline is built here; running it needs a Redis server, so that line is
            not run:

            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> entries = env.read_redis_stream("redis://127.0.0.1:6379", ["orders-0", "orders-1"], count=100)
            >>> out = entries.map(lambda entry: entry[1]).collect()
            >>> _ = env.execute()  # doctest: +SKIP
        """
        from ..runtime.operators.redis_streams import ENTRY_ID, RedisStreamSource, check_redis_url
        check_redis_url(url, "read_redis_stream")
        streams = [stream] if isinstance(stream, str) else list(stream)
        if not streams or not all(isinstance(s, str) and s for s in streams):
            raise PipelineError(f"read_redis_stream needs a stream name or a list of them, got {stream!r}")
        if until is not None and not ENTRY_ID.match(str(until)):
            raise PipelineError(f"read_redis_stream: until must be an entry id like 1700000000000-0, got {until!r}")
        if count is not None and (not isinstance(count, int) or count < 0):
            raise PipelineError(f"read_redis_stream: count must be an integer >= 0, got {count!r}")
        if rate is not None and rate <= 0:
            raise PipelineError(f"read_redis_stream: rate must be > 0 entries/s, got {rate}")
        until = None if until is None else str(until)
        return self._source(f"read_redis_stream({','.join(streams)})",
                            lambda: RedisStreamSource(url, streams, until, count, rate), single=len(streams) == 1)

    def declare_deterministic(self) -> None:
        """Declare that every function of this pipeline gives the same output, in the same
        order, for the same input: it reads no clock and no random numbers and iterates
        nothing unordered (a set, a dict filled in arrival order) into its output. Under
        ``--checkpoint-protocol segment`` with ``--placement segment``, a block restarted by a
        regional recovery then keeps its consumers running when it has one input channel per
        replica (see docs/guides/segment-backup.md). Off by default: a false declaration
        makes those consumers skip records that were never sent again.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> env.declare_deterministic()
            >>> env.graph.deterministic
            True
        """
        self._check_building("a determinism declaration")
        self.graph.deterministic = True

    # -------------------------------------------------------- graph building
    def _check_building(self, what: str) -> None:
        if self.result is not None:
            raise PipelineError(f"cannot add {what}: this environment has run already; build the next "
                                "pipeline on a new StreamEnvironment")

    def _new_block(self, previous: BlockSpec, **overrides: Any) -> BlockSpec:
        settings = {"batch_mode": self._batch_mode, "scope": previous.scope, "timestamped": previous.timestamped}
        settings.update(overrides)
        return self.graph.new_block(**settings)

    def _new_scope(self) -> int:
        self._scopes += 1
        return self._scopes

    def _merge(self, name: str, streams: list[StreamCore[Any]], strategies: list[Strategy],
               head: Callable[[], Operator], keyed: bool, max_parallelism: int | None = None) -> Stream[Any]:
        """A new block fed by several streams (input i from ``streams[i]``).

        A stream from outside an iteration joining a loop body becomes a side input: it is
        replayed in every iteration.
        """
        scopes = {s.block.scope for s in streams} - {None}
        if len(scopes) > 1:
            raise PipelineError(f"{name}: streams of two different iterations cannot be combined")
        scope = scopes.pop() if scopes else None
        for s in streams:
            s._consume(name)
        block = self.graph.new_block(batch_mode=self._batch_mode, scope=scope,
                                     max_parallelism=max_parallelism, keyed=keyed)
        for i, (s, strategy) in enumerate(zip(streams, strategies)):
            self.graph.connect(s.block, block, strategy, dst_input=i,
                               replay=scope is not None and s.block.scope is None)
        block.operators.append(OperatorSpec(name, head, caller_location(), stateful=True))
        return (KeyedStream if keyed else Stream)(self, block)

    def _collect(self, stream: StreamCore[T]) -> StreamOutput[T]:
        output: StreamOutput[T] = StreamOutput(self, len(self.outputs))
        self.outputs.append(output)
        sink_id = output.sink_id
        stream._chain("collect", lambda: CollectSink(sink_id))
        return output

    # ------------------------------------------------------------------ running
    def _check_segment_backup(self) -> None:
        """Refuse what the coordinator would refuse (a loop, an unknown connector, a
        source or sink that is not one) here, before any process starts: a second sooner,
        and said as the reason rather than as a coordinator that did not start."""
        settings = self.config.checkpointing
        if settings.protocol.segment_backup:
            from ..checkpoint.connectors import segment_topology
            segment_topology(self.graph, settings.connectors)

    def execute(self, on_progress: Callable[[dict[int, int], dict[int, str]], Any] | None = None,
                on_event: Callable[..., Any] | None = None) -> Any:
        """Run the pipeline to the end; ``collect()`` outputs are filled afterwards.

        ``on_progress(records_in, names)`` is called about once a second with the records
        read so far per block id and the blocks' names.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable([1, 2, 3]).reduce(lambda a, b: a + b).collect()
            >>> result = env.execute()
            >>> out.get(), result.records_in[0]
            ([6], 3)
        """
        if self.result is not None:
            raise SegflowError("this environment has run already; build a new one to run again")
        if not self.graph.blocks:
            raise PipelineError("the pipeline is empty: add a source, e.g. env.read_text(path)")
        compact(self.graph)
        if self.config.runs_in_processes:
            if self.job_spec is None:
                raise SegflowError("the multi-process runtime runs job modules (every worker rebuilds the "
                                   "pipeline from the module): use `segflow run JOB` or segflow.jobs.run_job")
            runner = installed_process_runner()
            if runner is None:
                raise SegflowError("no process launcher is installed: import segflow (the package) first")
            self._check_segment_backup()
            self.result = runner(self.job_spec, self.config, on_progress, on_event)
        else:
            from ..runtime.local import LocalRuntime
            self.result = LocalRuntime(self.config.parallelism).execute(self.graph, on_progress=on_progress)
        for output in self.outputs:
            output._value = self.result.results.get(output.sink_id, [])
        return self.result
